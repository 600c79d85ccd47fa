/* The IR: a graph of nodes over named tensors, with static shapes once the
 * passes have run. Tensors and nodes are referred to by index. */
#ifndef Q8_GRAPH_H
#define Q8_GRAPH_H

#include "common.h"
#include "op_list.h"

/* The ai.onnx opset whose forms the op schemas read. ONNX import runs
 * q8_pass_canonicalize (src/passes), which rewrites the nodes of older
 * opsets into these forms; 21 is the newest opset the importer takes, and
 * no op q8 supports changed its inputs or attributes after 18 but DFT (its
 * axis an input at 20), so graphs of opsets 18 to 21 are already in this
 * form but for opset 18-19 DFT nodes. */
#define Q8_OPSET_CANONICAL 21

typedef enum q8_attr_type {
    Q8_ATTR_FLOAT,
    Q8_ATTR_INT,
    Q8_ATTR_STRING,
    Q8_ATTR_TENSOR,
    Q8_ATTR_GRAPH,
    Q8_ATTR_FLOATS,
    Q8_ATTR_INTS,
    Q8_ATTR_STRINGS,
} q8_attr_type;

struct q8_graph;
struct q8_tensor;

typedef struct q8_attr {
    char *name;
    q8_attr_type type;
    float f;
    int64_t i;
    char *s;
    int n;                  /* element count of the list forms */
    float *floats;
    int64_t *ints;
    char **strings;
    struct q8_tensor *t;    /* Q8_ATTR_TENSOR: a standalone constant */
    struct q8_graph *g;     /* Q8_ATTR_GRAPH: a subgraph (If branches) */
} q8_attr;

/* Quantization parameters of a tensor (filled by the quantizer). */
typedef struct q8_qparams {
    int axis;               /* -1: per tensor; else the channel axis */
    int n;                  /* number of scales */
    float *scale;           /* n scales (owned) */
    int32_t zero_point;     /* symmetric INT8: always 0 */
} q8_qparams;

typedef struct q8_tensor {
    char *name;
    q8_dtype dtype;
    int ndim;
    int64_t dims[Q8_MAX_DIMS];
    char *dim_param[Q8_MAX_DIMS]; /* symbolic names of unknown dims, or NULL */
    bool shape_known;
    void *data;             /* constant value, or NULL for activations */
    bool owns_data;         /* data was allocated by q8_aligned_alloc */
    uint8_t layout;         /* q8_layout (layout.h): how data arranges an INT8 weight;
                               0, row-major, except for weights a .q8 stores kernel-ready */
    int producer;           /* index of the producing node, -1 if none */
    bool outer;             /* subgraphs: a name taken from the enclosing graph */
    q8_qparams q;           /* quantization, when q.n > 0 */
    /* graph inputs / outputs of a float16 model: the dtype callers exchange
     * (Q8_F16) while the graph computes in float32 (src/passes/fp16.c);
     * Q8_UNDEFINED: dtype itself */
    q8_dtype io_dtype;
} q8_tensor;

typedef struct q8_node {
    char *name;
    char *op_type;
    char *domain;
    q8_op_id op;            /* resolved during shape inference */
    int *inputs;            /* tensor indices; -1 marks an absent optional input */
    int n_inputs;
    int *outputs;
    int n_outputs;
    q8_attr *attrs;
    int n_attrs;
    void *params;           /* the op's params (src/core/ops/<op>.h), made by its
                               schema's infer; read by every backend */
    bool dead;              /* marked for removal by a pass */
    int scope;              /* 0: the graph itself; S > 0: a branch of the q8.If whose
                               then_scope or else_scope is S (src/core/control.h) */
} q8_node;

typedef struct q8_name_map {
    char **keys;
    int *vals;
    size_t cap;             /* power of two */
    size_t count;
} q8_name_map;

typedef struct q8_graph {
    q8_tensor **tensors;
    int n_tensors, cap_tensors;
    q8_node **nodes;
    int n_nodes, cap_nodes;
    int *inputs;            /* graph inputs (non-constant) */
    int n_inputs;
    int *outputs;
    int n_outputs;
    int opset;              /* ai.onnx opset of the nodes' forms: Q8_OPSET_CANONICAL once
                               canonicalized (and for graphs built in memory) */
    char *name;
    q8_name_map names;
    struct q8_graph *parent; /* enclosing graph for subgraphs (outer scope) */
    int *bound;             /* inputs bound to a value at load: constants now, no longer
                               in inputs; a run must give the same value */
    int n_bound;
} q8_graph;

q8_graph *q8_graph_new(void);
void q8_graph_free(q8_graph *g);

/* Find a tensor by name in g (not its parents); -1 if absent. */
int q8_graph_find(const q8_graph *g, const char *name);
/* The live node of this name in g (a linear search), or NULL. */
const q8_node *q8_graph_find_node(const q8_graph *g, const char *name);
/* Add a tensor with this name; fails if the name exists. Returns index or -1
 * (out of memory or duplicate: see *dup). */
int q8_graph_add_tensor(q8_graph *g, const char *name, bool *dup);
/* Add a tensor with a name derived from base that is unique in g. */
int q8_graph_add_tensor_unique(q8_graph *g, const char *base);
/* Add a tensor to g named "<base><sep><tag>" (or that with "__K" added, K =
 * 1, 2, ...) unique in the whole tree of graphs g belongs to: passes that
 * move a subgraph's tensors into its parent later need names no graph of
 * the tree has. Returns the index or -1 (out of memory). */
int q8_graph_add_tensor_unique_in_tree(q8_graph *g, const char *base, const char *sep,
                                       const char *tag);
/* Append an empty node; returns its index or -1 on out-of-memory. */
int q8_graph_add_node(q8_graph *g, const char *name, const char *op_type);
q8_status q8_node_set_io(q8_node *n, const int *in, int n_in, const int *out,
                         int n_out, q8_error *err);

static inline q8_tensor *q8_graph_tensor(const q8_graph *g, int idx) {
    return (idx >= 0 && idx < g->n_tensors) ? g->tensors[idx] : NULL;
}
/* Input i of n, or NULL if absent. */
static inline q8_tensor *q8_in(const q8_graph *g, const q8_node *n, int i) {
    return i < n->n_inputs ? q8_graph_tensor(g, n->inputs[i]) : NULL;
}
static inline q8_tensor *q8_out(const q8_graph *g, const q8_node *n, int i) {
    return i < n->n_outputs ? q8_graph_tensor(g, n->outputs[i]) : NULL;
}

/* The public description of a tensor (name points into t; a graph input or
 * output of a float16 model says float16, its io_dtype). */
void q8_tensor_info_fill(const q8_tensor *t, q8_tensor_info *info);
/* A float16 tensor's data made float32 (exactly: every half is a float). */
q8_status q8_tensor_widen_f16(q8_tensor *t, q8_error *err);
void q8_tensor_set_shape(q8_tensor *t, q8_dtype dtype, const int64_t *dims, int ndim);
int64_t q8_tensor_numel(const q8_tensor *t);   /* shape must be known */
size_t q8_tensor_nbytes(const q8_tensor *t);
/* Allocate t->data for its shape (zeroed). */
q8_status q8_tensor_alloc_data(q8_tensor *t, q8_error *err);
void q8_tensor_free_data(q8_tensor *t);
/* Free a constant's data that a session owning the model no longer reads
 * (backend.h, q8_release): it stays a constant, its data pointing at a
 * page no access is allowed to, so a stray read faults at once. */
void q8_tensor_release_data(q8_tensor *t);
bool q8_tensor_released(const q8_tensor *t);
void q8_tensor_free(q8_tensor *t);
static inline bool q8_tensor_is_const(const q8_tensor *t) { return t && t->data; }

/* Attributes. Absent or wrongly typed attributes give the default. */
const q8_attr *q8_attr_find(const q8_node *n, const char *name);
int64_t q8_attr_int(const q8_node *n, const char *name, int64_t def);
float q8_attr_float(const q8_node *n, const char *name, float def);
const char *q8_attr_str(const q8_node *n, const char *name, const char *def);
/* List attributes: NULL if absent; *count gets the length. */
const int64_t *q8_attr_ints(const q8_node *n, const char *name, int *count);
const float *q8_attr_floats(const q8_node *n, const char *name, int *count);
void q8_attr_clear(q8_attr *a);
/* Add (or reset) an attribute of n; NULL on out-of-memory. */
q8_attr *q8_node_set_attr(q8_node *n, const char *name, q8_attr_type type);

/* Error helper that names the node: "node 'conv_3' (Conv): ..." */
q8_status q8_node_fail(q8_error *err, q8_status st, const q8_node *n,
                       const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Read a constant integer tensor (int32/int64) into out[max]; fails when the
 * tensor is not constant, not integer or longer than max. */
q8_status q8_const_ints(const q8_graph *g, const q8_node *n, int input,
                        int64_t *out, int max, int *count, q8_error *err);
/* Read a constant float tensor's first element(s) (any float/int dtype). */
q8_status q8_const_floats(const q8_graph *g, const q8_node *n, int input,
                          float *out, int max, int *count, q8_error *err);

/* Number of live nodes that read tensor t (recomputed by callers via
 * q8_graph_consumers). */
void q8_graph_consumers(const q8_graph *g, int *counts /* n_tensors */);
bool q8_graph_is_input(const q8_graph *g, int t);
bool q8_graph_is_output(const q8_graph *g, int t);
/* Drop nodes marked dead, keeping order; fix producers. */
void q8_graph_compact(q8_graph *g);
/* Topologically sort nodes; error names a node on a cycle or with an
 * undefined input. */
q8_status q8_graph_toposort(q8_graph *g, q8_error *err);
void q8_graph_fix_producers(q8_graph *g);
void q8_node_free_contents(q8_node *n);

#endif
