/* A float32 operand broadcast to a full shape, written out as one contiguous
 * array on the host: LayerNormalization's Scale and B (the CPU at run time,
 * the CUDA plan once for constants). */
#ifndef Q8_KERNELS_COMMON_BCAST_EXPAND_H
#define Q8_KERNELS_COMMON_BCAST_EXPAND_H

#include <stdint.h>

/* dst[i] for i row-major over dims[0..nd) (len values in all) reads
 * src[sum of idx_d * st[d]], st[d] = 0 on broadcast dims. */
void q8_bcast_expand(const float *src, const int64_t *dims, int nd, const int64_t *st,
                     int64_t len, float *dst);

#endif
