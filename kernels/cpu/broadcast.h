/* Numpy (multidirectional) broadcasting for elementwise ops with any number
 * of inputs. infer builds a plan once (q8_bcast_plan_new, stored as the
 * node's params); run walks the output in rows: the innermost collapsed dim
 * is handed to a row function with one pointer and one step (0 or 1) per
 * input, so the common cases (same shape, a scalar, [N,C,H,W] + [C,1,1])
 * run a plain loop with no per-element index arithmetic. */
#ifndef Q8_KERNELS_CPU_BROADCAST_H
#define Q8_KERNELS_CPU_BROADCAST_H

#include "cpu_op.h"

/* Upper bound on the inputs of one broadcasting node (Sum, Max, ...). */
#define Q8_BCAST_MAX_IN 64

typedef struct q8_bcast {
    int ndim;               /* collapsed rank, >= 1 */
    int n_in;
    int aux;                /* free for the op (e.g. Mod's fmod) */
    int64_t numel;          /* output elements */
    int64_t dims[Q8_MAX_DIMS];
    /* strides[k * Q8_MAX_DIMS + d]: element stride of input k along
     * collapsed dim d (0 where it is broadcast). The innermost stride is
     * always 0 or 1. */
    int64_t strides[];
} q8_bcast;

/* Row function: out[i] = f(in[0][i * step[0]], in[1][i * step[1]], ...)
 * for i in [0, n); step[k] is 0 or 1. out may be the same buffer as an input
 * with step 1 (in place), so each element must be read before it is written
 * at the same index. */
typedef void (*q8_bcast_row_fn)(void *out, const void *const *in, const int64_t *step,
                                int64_t n, const void *ctx);

/* Broadcast the shapes of inputs [first, first + count) of n into out
 * (rank *nout). Absent inputs are skipped. The error names the two shapes
 * that do not fit. */
q8_status q8_bcast_shapes(const q8_graph *g, const q8_node *n, int first, int count,
                          int64_t *out, int *nout, q8_error *err);

/* Build the plan for output shape out_dims and the shapes of inputs
 * [first, first + count) of n (each must broadcast to out_dims) and store it
 * as n->params. */
q8_status q8_bcast_plan_new(q8_node *n, const q8_graph *g, int first, int count,
                            const int64_t *out_dims, int out_ndim, q8_error *err);

/* The same from explicit input shapes (e.g. adjusted for legacy rules). */
q8_status q8_bcast_plan_dims(q8_node *n, const int64_t *out_dims, int out_ndim, int n_in,
                             const int64_t *const *in_dims, const int *in_ndim, q8_error *err);

/* Plan from explicit shapes, into p (q8_bcast_bytes(n_in) bytes). */
size_t q8_bcast_bytes(int n_in);
void q8_bcast_plan_init(q8_bcast *p, const int64_t *out_dims, int out_ndim, int n_in,
                        const int64_t *const *in_dims, const int *in_ndim);

/* Run fn over the whole output, split over the pool's threads in chunks of
 * at least grain elements. in_size[k] / out_size: element sizes in bytes. */
void q8_bcast_run(q8_pool *pool, const q8_bcast *p, void *out, size_t out_size,
                  const void *const *in, const size_t *in_size, q8_bcast_row_fn fn,
                  const void *ctx, int64_t grain);

#endif
