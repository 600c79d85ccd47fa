/* Shared test helpers: seeded random data, references, graph builders. */
#ifndef Q8_TESTUTIL_H
#define Q8_TESTUTIL_H

#include <criterion/criterion.h>
#include <math.h>

#include "graph.h"
#include "model.h"
#include "op.h"

/* The tensor of g named name, added if absent (graphs built by name). */
int q8t_tensor(q8_graph *g, const char *name);

/* Deterministic xorshift generator. */
typedef struct q8t_rng {
    uint64_t s;
} q8t_rng;
static inline q8t_rng q8t_seed(uint64_t seed) { return (q8t_rng){seed * 2654435761u + 1}; }
uint64_t q8t_next(q8t_rng *r);
float q8t_uniform(q8t_rng *r, float lo, float hi);
void q8t_fill(q8t_rng *r, float *x, int64_t n, float lo, float hi);

/* Build a one-node graph: inputs are graph inputs unless const_data[i] is
 * given (then a constant). Output shapes come from infer. Returns the
 * status of the passes (the graph is kept even on failure for messages). */
typedef struct q8t_in {
    const char *name;
    q8_dtype dtype;
    int ndim;
    int64_t dims[Q8_MAX_DIMS];
    const void *data;   /* constant value, or NULL for a graph input */
} q8t_in;

q8_graph *q8t_graph1(const char *op_type, const q8t_in *ins, int n_in, int n_out);
/* Attribute setters on the graph's only node. */
void q8t_attr_int(q8_graph *g, const char *name, int64_t v);
void q8t_attr_float(q8_graph *g, const char *name, float v);
void q8t_attr_str(q8_graph *g, const char *name, const char *v);
void q8t_attr_ints(q8_graph *g, const char *name, const int64_t *v, int n);
void q8t_attr_floats(q8_graph *g, const char *name, const float *v, int n);

/* Run passes + a CPU session with n_threads on the graph (consumed) with
 * the given input data (in order of graph inputs); copies output k into
 * outs[k] (malloc'd) and its info. Returns the status; err gets messages.
 * Every other backend of the build (CUDA: on the GPU, else in host
 * emulation) then runs the same model twice and must give the CPU's outputs
 * (bit for bit but for float outputs on a real GPU, within 1e-4 relative):
 * one way to test every op on every backend. */
/* The standard passes on g, then a model of it (g is consumed either way). */
q8_status q8t_model_of(q8_graph *g, q8_model **m, q8_error *err);
q8_status q8t_run(q8_graph *g, const void *const *in_data, int n_threads, void **outs,
                  q8_tensor_info *infos, int max_out, q8_error *err);
/* The same on the CPU alone, in a session that owns the model (as q8run's):
 * constants read only through what prepare made are released, and kernels
 * that keep a compact copy of a weight instead (pruned weights) run. */
q8_status q8t_run_owning(q8_graph *g, const void *const *in_data, int n_threads, void **outs,
                         q8_tensor_info *infos, int max_out, q8_error *err);
/* The same; gpu_exact: float outputs must match the CPU's bits on a GPU too
 * (kernels that follow the CPU's operation order); *others (may be NULL):
 * how many other backends ran the graph (those that do not support it are
 * skipped). */
q8_status q8t_run_backends(q8_graph *g, const void *const *in_data, int n_threads, void **outs,
                           q8_tensor_info *infos, int max_out, bool gpu_exact, int *others,
                           q8_error *err);

/* How many backends of this build besides the CPU q8t_run compares with
 * (CUDA runs emulated where there is no GPU): a test can check, with
 * q8t_run_backends' *others, that none of them skipped its graph. */
int q8t_other_backends(void);

/* The graph (consumed) as a model (q8_model_from_graph), run on one CPU
 * thread once per sample: input "x" of dims gets xs + i * in_floats, and the
 * first out_floats of output 0 go to out + i * out_floats. */
void q8t_run_each(q8_graph *g, const int64_t *dims, int ndim, const float *xs,
                  int64_t in_floats, int n_samples, float *out, int64_t out_floats);

/* ---- files and commands, for the tests of the tools and of bad input ---- */

/* A new folder /tmp/q8<tag>XXXXXX (malloc'd); q8t_rm_rf removes a tree. */
char *q8t_tmpdir(const char *tag);
void q8t_rm_rf(const char *dir);
/* "dir/name" into a static-free buffer the caller gives. */
void q8t_path(char *out, size_t n, const char *dir, const char *name);
/* Write a file (asserts); read one whole (malloc'd, NUL-terminated; NULL if
 * it cannot be read). */
void q8t_write_file(const char *path, const void *data, size_t n);
char *q8t_slurp(const char *path, size_t *len);

typedef struct q8t_cmd {
    bool exited;      /* false: killed by a signal (a hang ends as SIGALRM) */
    int code;         /* exit status, or the signal */
    char *out, *err;  /* captured stdout and stderr (malloc'd) */
} q8t_cmd;
/* Run argv (argv[0] a path, NULL-terminated) with stdin from /dev/null and
 * stdout/stderr captured in files of scratch_dir, killed by SIGALRM after
 * timeout_s seconds. */
q8t_cmd q8t_run_cmd(const char *scratch_dir, int timeout_s, char *const argv[]);
void q8t_cmd_free(q8t_cmd *r);

/* Top-1 accuracy of a model (.onnx or .q8) on the shipped MNIST held-out
 * set, models/mnist/test_x.npy and test_y.npy. */
double q8t_mnist_top1(const char *model_path);

/* A graph builder and its argument: tests that run a graph more than once
 * build a fresh one each time (q8t_run consumes it). */
typedef struct q8t_built {
    q8_graph *(*fn)(const void *ctx);
    const void *ctx;
} q8t_built;

/* The product of the n dims d (1 when n is 0), unchecked. */
int64_t q8t_numel(const int64_t *d, int n);
/* The bytes of a tensor of that info's dtype and shape. */
size_t q8t_info_bytes(const q8_tensor_info *in);
/* Assert that the info's shape is dims[nd]. */
void q8t_assert_shape(const q8_tensor_info *in, const int64_t *dims, int nd);

/* Compare with a tolerance: |a-b| <= atol + rtol*|b|; NaN must match NaN. */
void q8t_assert_close(const float *got, const float *want, int64_t n, float rtol, float atol,
                      const char *what);

/* ONNX model x[1,1,8,8] -> Conv 1x1 (c output channels, weights w1) ->
 * Conv 1x1 (one output, weights w2) -> y (H, W symbolic with any_size). */
void q8t_two_conv_model(const char *path, int c, const float *w1, const float *w2, bool any_size);
/* An ONNX model of these nodes and initializers (opset 13), float input x
 * of dims xd (H and W symbolic with any_size) and float output y, written
 * to path. */
struct Onnx__NodeProto;
struct Onnx__TensorProto;
void q8t_write_xy_model(const char *path, const char *name, struct Onnx__NodeProto **nodes,
                        int n_nodes, struct Onnx__TensorProto **inits, int n_inits,
                        const int64_t xd[4], bool any_size);
/* Has the .q8 at path this metadata key? */
bool q8t_has_meta(const char *q8, const char *key);
/* n samples [1, 1, side, side] of uniform [-1, 1) values from seed, in dir
 * (made), named s0.npy, s1.npy, ... */
void q8t_square_samples(const char *dir, int n, int64_t side, uint64_t seed);

#endif
