/* Running a broadcast plan (src/core/ops/broadcast.h) on the CPU: the
 * output is walked in rows: the innermost collapsed dim is handed to a row
 * function with one pointer and one step (0 or 1) per input, so the common
 * cases run a plain loop with no per-element index arithmetic. */
#ifndef Q8_KERNELS_CPU_BCAST_RUN_H
#define Q8_KERNELS_CPU_BCAST_RUN_H

#include "cpu_op.h"
#include "ops/broadcast.h"

/* Row function: out[i] = f(in[0][i * step[0]], in[1][i * step[1]], ...)
 * for i in [0, n); step[k] is 0 or 1. out may be the same buffer as an input
 * with step 1 (in place), so each element must be read before it is written
 * at the same index. */
typedef void (*q8_bcast_row_fn)(void *out, const void *const *in, const int64_t *step,
                                int64_t n, const void *ctx);

/* Run fn over the whole output, split over the pool's threads in chunks of
 * at least grain elements. in_size[k] / out_size: element sizes in bytes. */
void q8_bcast_run(q8_pool *pool, const q8_bcast *p, void *out, size_t out_size,
                  const void *const *in, const size_t *in_size, q8_bcast_row_fn fn,
                  const void *ctx, int64_t grain);

#endif
