/* See bcast_expand.h. */
#include "bcast_expand.h"

#include "q8.h" /* Q8_MAX_DIMS */

void q8_bcast_expand(const float *src, const int64_t *dims, int nd, const int64_t *st,
                     int64_t len, float *dst) {
    int64_t idx[Q8_MAX_DIMS] = {0}, off = 0;
    for (int64_t i = 0; i < len; i++) {
        dst[i] = src[off];
        for (int d = nd - 1; d >= 0; d--) {
            off += st[d];
            if (++idx[d] < dims[d]) break;
            off -= st[d] * idx[d];
            idx[d] = 0;
        }
    }
}
