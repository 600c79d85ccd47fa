#include "tensor_util.h"

#include <string.h>

#define COPY_STRIDED(T)                                                                            \
    do {                                                                                           \
        T *dd = (T *)d;                                                                            \
        const T *ss = (const T *)s;                                                                \
        for (int64_t i = 0; i < n; i++) dd[i] = ss[i * stride];                                    \
    } while (0)

typedef struct q8_tu_16 {
    uint64_t a, b;
} q8_tu_16;

/* n elements, source stride in elements. Tensor data is aligned to its
 * element size (the arena and constants are 64-byte aligned). */
static void copy_row(uint8_t *d, const uint8_t *s, int64_t n, int64_t stride, size_t es) {
    if (stride == 1) {
        memcpy(d, s, (size_t)n * es);
        return;
    }
    switch (es) {
    case 1: COPY_STRIDED(uint8_t); break;
    case 2: COPY_STRIDED(uint16_t); break;
    case 4: COPY_STRIDED(uint32_t); break;
    case 8: COPY_STRIDED(uint64_t); break;
    case 16: COPY_STRIDED(q8_tu_16); break;
    default:
        for (int64_t i = 0; i < n; i++)
            memcpy(d + (size_t)i * es, s + i * stride * (int64_t)es, es);
    }
}

typedef struct sc_args {
    uint8_t *dst;
    const uint8_t *src;
    const q8_strided *s;
} sc_args;

static void sc_rows(void *p, int64_t b, int64_t e, int thread) {
    const sc_args *a = p;
    const q8_strided *s = a->s;
    int nd = s->ndim;
    size_t es = s->esize;
    int64_t len = s->dims[nd - 1], sl = s->stride[nd - 1];
    int64_t idx[Q8_MAX_DIMS], r = b, off = s->offset;
    for (int k = nd - 2; k >= 0; k--) {
        idx[k] = r % s->dims[k];
        r /= s->dims[k];
        off += idx[k] * s->stride[k];
    }
    uint8_t *d = a->dst + (size_t)b * (size_t)len * es;
    for (int64_t row = b; row < e; row++) {
        copy_row(d, a->src + off * (int64_t)es, len, sl, es);
        d += (size_t)len * es;
        for (int k = nd - 2; k >= 0; k--) { /* odometer over the outer dims */
            off += s->stride[k];
            if (++idx[k] < s->dims[k]) break;
            off -= s->stride[k] * s->dims[k];
            idx[k] = 0;
        }
    }
}

/* A contiguous innermost run of 2, 4 or 8 bytes, or 16 (a box decoder's
 * [1, 4420, 4] -> [..., 0:2] slices: rows of two floats) becomes one wider
 * element, so rows are copied by a typed loop instead of a memcpy each:
 * when every stride and the offset are whole numbers of such runs (then
 * the wider elements stay aligned to their size). */
static void widen_inner_run(q8_strided *w) {
    int nd = w->ndim;
    if (nd < 2 || w->stride[nd - 1] != 1) return;
    int64_t len = w->dims[nd - 1];
    size_t bytes = (size_t)len * w->esize;
    if (bytes != 2 && bytes != 4 && bytes != 8 && bytes != 16) return;
    if (w->offset % len) return;
    for (int k = 0; k < nd - 1; k++)
        if (w->stride[k] % len) return;
    for (int k = 0; k < nd - 1; k++) w->stride[k] /= len;
    w->offset /= len;
    w->esize = bytes;
    w->ndim = nd - 1;
}

void q8_tu_strided_copy(q8_pool *pool, void *dst, const void *src, const q8_strided *s0) {
    q8_strided ws = *s0, *s = &ws;
    widen_inner_run(s);
    if (s->ndim == 0) {
        memcpy(dst, (const uint8_t *)src + s->offset * (int64_t)s->esize, s->esize);
        return;
    }
    int64_t len = s->dims[s->ndim - 1];
    if (len == 0) return;
    int64_t rows = q8_ta_prod(s->dims, 0, s->ndim - 1);
    sc_args a = {dst, src, s};
    q8_parallel_for(pool, rows, q8_tu_grain((size_t)len * s->esize), sc_rows, &a);
}

#define FILL(T)                                                                                    \
    do {                                                                                           \
        T v;                                                                                       \
        memcpy(&v, val, sizeof v);                                                                 \
        T *dd = dst;                                                                               \
        for (int64_t i = 0; i < n; i++) dd[i] = v;                                                 \
    } while (0)

void q8_tu_fill(void *dst, const void *val, int64_t n, size_t esize) {
    if (n <= 0) return;
    switch (esize) {
    case 1: memset(dst, *(const uint8_t *)val, (size_t)n); break;
    case 2: FILL(uint16_t); break;
    case 4: FILL(uint32_t); break;
    case 8: FILL(uint64_t); break;
    default:
        for (int64_t i = 0; i < n; i++) memcpy((uint8_t *)dst + (size_t)i * esize, val, esize);
    }
}
