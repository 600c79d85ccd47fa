/* The op interface: every supported op is one q8_op_def, defined in its own
 * file under kernels/. infer validates a node and sets its outputs' dtype and
 * shape (and may parse attributes into node->params); run computes. run never
 * fails: everything that can go wrong is caught by infer. */
#ifndef Q8_OP_H
#define Q8_OP_H

#include "graph.h"
#include "threadpool.h"

/* What run sees: the graph (shapes, params) and one data pointer per tensor. */
typedef struct q8_exec {
    const q8_graph *g;
    void *const *ptr;       /* per tensor index: data, or NULL if unused */
    q8_pool *pool;          /* may be NULL: run serially */
    void *scratch;          /* the node's scratch_bytes, 64-byte aligned */
} q8_exec;

enum {
    /* Output 0 may share its buffer with an input of the same byte size that
     * dies at this node: out[i] only depends on in[i] at the same index. */
    Q8_OP_INPLACE = 1u << 0,
    /* Output 0 holds exactly the bytes of input 0 (Reshape, Squeeze, ...):
     * the planner makes it a view and run is not called. */
    Q8_OP_VIEW = 1u << 1,
    /* Only input shapes are read (Shape, Size): always folded. */
    Q8_OP_SHAPE_ONLY = 1u << 2,
    /* Never fold, even with constant inputs. */
    Q8_OP_NO_FOLD = 1u << 3,
};

typedef struct q8_op_def {
    const char *name;   /* ONNX op_type */
    const char *domain; /* "" for ai.onnx, else e.g. "com.microsoft" */
    q8_status (*infer)(q8_graph *g, q8_node *n, q8_error *err);
    void (*run)(const q8_exec *x, const q8_node *n);
    size_t (*scratch_bytes)(const q8_graph *g, const q8_node *n, int n_threads);
    unsigned flags;
} q8_op_def;

/* Lookup by (domain, op_type); NULL if unsupported. */
const q8_op_def *q8_op_find(const char *domain, const char *op_type);

/* Data pointer of input / output i of n. */
#define Q8_IN_PTR(x, n, i) ((x)->ptr[(n)->inputs[i]])
#define Q8_OUT_PTR(x, n, i) ((x)->ptr[(n)->outputs[i]])

/* Shared infer helpers. */
q8_status q8_check_io(const q8_node *n, int min_in, int max_in, int min_out,
                      int max_out, q8_error *err);
/* Require input i present with a known shape and (if dtype != 0) that dtype. */
q8_status q8_check_input(const q8_graph *g, const q8_node *n, int i,
                         q8_dtype dtype, q8_error *err);
/* Multidirectional (numpy) broadcast of a and b into out. */
q8_status q8_broadcast_shape(const q8_node *n, const int64_t *a, int na,
                             const int64_t *b, int nb, int64_t *out, int *nout,
                             q8_error *err);
/* Set output i's dtype and shape. */
q8_status q8_set_output(q8_graph *g, const q8_node *n, int i, q8_dtype dtype,
                        const int64_t *dims, int ndim, q8_error *err);
/* Allocate n->params (zeroed, freed with the node). */
void *q8_node_params(q8_node *n, size_t bytes, q8_error *err);

#endif
