/* ScatterElements, Scatter and ScatterND on the CPU (params:
 * src/core/ops/scatter.h): the data copied, then the updates applied one
 * by one in order (duplicates make the order matter: one thread). */
#include <string.h>

#include "cpu_op.h"
#include "ops/scatter.h"

static int64_t index_at(const void *ind, q8_dtype t, int64_t i) {
    return t == Q8_I64 ? ((const int64_t *)ind)[i] : ((const int32_t *)ind)[i];
}

/* dst = dst (op) src for one element */
#define APPLY(T)                                                                           \
    {                                                                                      \
        T *a = (T *)dst, b = *(const T *)src;                                              \
        switch (p->reduce) {                                                               \
        case Q8_SCATTER_ADD: *a = (T)(*a + b); break;                                      \
        case Q8_SCATTER_MUL: *a = (T)(*a * b); break;                                      \
        case Q8_SCATTER_MAX: *a = b > *a ? b : *a; break;                                  \
        default: *a = b < *a ? b : *a; break;                                              \
        }                                                                                  \
        return;                                                                            \
    }

static void apply(const q8_scatter_params *p, uint8_t *dst, const uint8_t *src) {
    if (p->reduce == Q8_SCATTER_NONE) {
        memcpy(dst, src, p->elem);
        return;
    }
    switch (p->dtype) { /* signed integers wrap as unsigned ones would */
    case Q8_F32: APPLY(float)
    case Q8_F64: APPLY(double)
    case Q8_I32:
        if (p->reduce == Q8_SCATTER_ADD || p->reduce == Q8_SCATTER_MUL) APPLY(uint32_t)
        APPLY(int32_t)
    default:
        if (p->reduce == Q8_SCATTER_ADD || p->reduce == Q8_SCATTER_MUL) APPLY(uint64_t)
        APPLY(int64_t)
    }
}

static void scatter_run(const q8_exec *x, const q8_node *n) {
    const q8_scatter_params *p = n->params;
    const uint8_t *data = Q8_IN_PTR(x, n, 0), *upd = Q8_IN_PTR(x, n, 2);
    const void *ind = Q8_IN_PTR(x, n, 1);
    uint8_t *y = Q8_OUT_PTR(x, n, 0);
    int64_t total = 1;
    for (int i = 0; i < p->rank; i++) total *= p->dims[i];
    if (y != data) memmove(y, data, (size_t)total * p->elem);
    size_t es = p->elem;
    if (p->nd) {
        for (int64_t u = 0; u < p->n_updates; u++) {
            int64_t off = 0;
            bool ok = true;
            for (int j = 0; j < p->k && ok; j++) {
                int64_t v = index_at(ind, p->index_dtype, u * p->k + j);
                if (v < 0) v += p->dims[j];
                ok = v >= 0 && v < p->dims[j];
                if (ok) off = off * p->dims[j] + v;
            }
            if (!ok) continue;
            for (int64_t e = 0; e < p->slice; e++)
                apply(p, y + (size_t)(off * p->slice + e) * es,
                      upd + (size_t)(u * p->slice + e) * es);
        }
        return;
    }
    int64_t pos[Q8_MAX_DIMS] = {0};
    for (int64_t u = 0; u < p->n_updates; u++) {
        if (u) /* the next position in the updates' shape */
            for (int d = p->rank - 1; d >= 0 && ++pos[d] == p->udims[d]; d--) pos[d] = 0;
        int64_t v = index_at(ind, p->index_dtype, u);
        if (v < 0) v += p->dims[p->axis];
        if (v < 0 || v >= p->dims[p->axis]) continue;
        int64_t off = 0;
        for (int d = 0; d < p->rank; d++) off = off * p->dims[d] + (d == p->axis ? v : pos[d]);
        apply(p, y + (size_t)off * es, upd + (size_t)u * es);
    }
}

const q8_cpu_op q8_cpu_scatter_elements = {.run = scatter_run};
const q8_cpu_op q8_cpu_scatter = {.run = scatter_run};
const q8_cpu_op q8_cpu_scatter_nd = {.run = scatter_run};
