/* Where on the CPU (semantics and params: src/core/ops/where.c): only the
 * element size matters. */
#include "ew_kernels.h"

#define WHERE_ROW(NAME, T)                                                                 \
    static void NAME(void *o_, const void *const *in, const int64_t *st, int64_t n,       \
                     const void *ctx) {                                                   \
        T *o = o_;                                                                        \
        const uint8_t *c = in[0];                                                         \
        const T *a = in[1], *b = in[2];                                                   \
        (void)ctx;                                                                        \
        if (st[0] && st[1] && st[2]) {                                                    \
            for (int64_t i = 0; i < n; i++) o[i] = c[i] ? a[i] : b[i];                    \
        } else if (!st[0]) {                                                              \
            const T *s = c[0] ? a : b;                                                    \
            int64_t ss = c[0] ? st[1] : st[2];                                            \
            for (int64_t i = 0; i < n; i++) o[i] = s[i * ss];                             \
        } else {                                                                          \
            for (int64_t i = 0; i < n; i++) o[i] = c[i] ? a[i * st[1]] : b[i * st[2]];    \
        }                                                                                 \
    }
WHERE_ROW(where_1, uint8_t)
WHERE_ROW(where_2, uint16_t)
WHERE_ROW(where_4, uint32_t)
WHERE_ROW(where_8, uint64_t)

static q8_bcast_row_fn where_row(size_t size) {
    switch (size) {
    case 1: return where_1;
    case 2: return where_2;
    case 4: return where_4;
    case 8: return where_8;
    default: return NULL;
    }
}

static void where_run(const q8_exec *x, const q8_node *n) {
    size_t es = q8_dtype_size(q8_in(x->g, n, 1)->dtype);
    const void *in[3] = {Q8_IN_PTR(x, n, 0), Q8_IN_PTR(x, n, 1), Q8_IN_PTR(x, n, 2)};
    size_t sz[3] = {1, es, es};
    q8_bcast_run(x->pool, n->params, Q8_OUT_PTR(x, n, 0), es, in, sz, where_row(es), NULL,
                 Q8_EW_GRAIN);
}

const q8_cpu_op q8_cpu_where = {.run = where_run};
