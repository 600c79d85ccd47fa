/* The op schema: what each op in op_list.h means, with no backend in it.
 * Backends keep their own tables indexed by q8_op_id (prepare, run,
 * scratch); see docs/adding-an-op.md. */
#ifndef Q8_OP_H
#define Q8_OP_H

#include "graph.h"
#include "op_list.h"

enum {
    /* Output 0 may share its buffer with an input of the same byte size that
     * dies at this node: out[i] only depends on in[i] at the same index. */
    Q8_OPF_INPLACE = 1u << 0,
    /* Output 0 holds exactly the bytes of input 0 (Reshape, Squeeze, ...):
     * the planner makes it a view and no backend runs it. */
    Q8_OPF_VIEW = 1u << 1,
    /* Only input shapes are read (Shape, Size): always folded. */
    Q8_OPF_SHAPE_ONLY = 1u << 2,
    /* Never fold, even with constant inputs. */
    Q8_OPF_NO_FOLD = 1u << 3,
};

/* What an op is, independent of any backend: infer validates a node, sets
 * its outputs' dtype and shape and parses its attributes and constant
 * inputs into node->params (a struct the backends read). Everything that can
 * go wrong with a node is caught here, so backends' run never fails. */
typedef struct q8_op_schema {
    q8_status (*infer)(q8_graph *g, q8_node *n, q8_error *err);
    unsigned flags;
} q8_op_schema;

#define Q8_OP_DECLARE_(ID, sym, domain, name) extern const q8_op_schema q8_schema_##sym;
Q8_OP_LIST(Q8_OP_DECLARE_)
#undef Q8_OP_DECLARE_

/* The schema of a valid id (not Q8_OP_NONE). */
const q8_op_schema *q8_op_schema_of(q8_op_id id);
static inline unsigned q8_op_flags(q8_op_id id) { return q8_op_schema_of(id)->flags; }
/* ONNX op type and domain ("" for ai.onnx) of an id. */
const char *q8_op_name(q8_op_id id);
const char *q8_op_domain(q8_op_id id);
/* Id of (domain, op_type); Q8_OP_NONE if q8 does not know it. "ai.onnx"
 * and "" are the same domain. Internal forms (q8.DropoutMask) are found
 * too. */
q8_op_id q8_op_lookup(const char *domain, const char *op_type);

/* Shared infer helpers. */
q8_status q8_check_io(const q8_node *n, int min_in, int max_in, int min_out,
                      int max_out, q8_error *err);
/* Whether optional input i is given: i < n_inputs and not an empty name. */
static inline bool q8_has_input(const q8_node *n, int i) {
    return i < n->n_inputs && n->inputs[i] >= 0;
}
/* Require input i present with a known shape and (if dtype != 0) that dtype. */
q8_status q8_check_input(const q8_graph *g, const q8_node *n, int i,
                         q8_dtype dtype, q8_error *err);
/* Multidirectional (numpy) broadcast of a and b into out. */
q8_status q8_broadcast_shape(const q8_node *n, const int64_t *a, int na,
                             const int64_t *b, int nb, int64_t *out, int *nout,
                             q8_error *err);
/* x seen as outer x len x inner around axis (normalized): the products of
 * the dims before it, the dim itself, the product of the dims after it. */
void q8_axis_split(const q8_tensor *x, int axis, int64_t *outer, int64_t *len, int64_t *inner);
/* Set output i's dtype and shape. */
q8_status q8_set_output(q8_graph *g, const q8_node *n, int i, q8_dtype dtype,
                        const int64_t *dims, int ndim, q8_error *err);
/* Allocate n->params (zeroed, freed with the node). */
void *q8_node_params(q8_node *n, size_t bytes, q8_error *err);

#endif
