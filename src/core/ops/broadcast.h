/* Numpy (multidirectional) broadcasting for elementwise ops with any number
 * of inputs. infer builds a plan once (q8_bcast_plan_new), stored as the
 * node's params: it is the params of Add, Sub, Mul, Div, Mod, Pow, PRelu,
 * the comparisons and logical ops, Max, Min, Sum, Mean, Where and Expand.
 * The output is seen in collapsed dims: dims of size 1 are dropped and
 * neighbours every input walks as one dim are merged, so the common cases
 * (same shape, a scalar, [N,C,H,W] + [C,1,1]) have one or a few dims and an
 * innermost step of 0 or 1 per input. */
#ifndef Q8_CORE_OPS_BROADCAST_H
#define Q8_CORE_OPS_BROADCAST_H

#include "graph.h"

/* Upper bound on the inputs of one broadcasting node (Sum, Max, ...). */
#define Q8_BCAST_MAX_IN 64

typedef struct q8_bcast {
    int ndim;               /* collapsed rank, >= 1 */
    int n_in;
    /* The op's own flag: Mod: the fmod attribute (1: the sign of the
     * dividend); Pow: 1 if the exponent is a constant scalar equal to 2. */
    int aux;
    int64_t numel;          /* output elements */
    int64_t dims[Q8_MAX_DIMS];
    /* strides[k * Q8_MAX_DIMS + d]: element stride of input k along
     * collapsed dim d (0 where it is broadcast). The innermost stride is
     * always 0 or 1. */
    int64_t strides[];
} q8_bcast;

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

#endif
