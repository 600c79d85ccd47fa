/* Expand on the CPU (semantics and params: src/core/ops/expand.c): only
 * the element size matters. */
#include <string.h>

#include "ew_kernels.h"

#define EXPAND_ROW(NAME, T)                                                                \
    static void NAME(void *o_, const void *const *in, const int64_t *st, int64_t n,       \
                     const void *ctx) {                                                   \
        T *o = o_;                                                                        \
        const T *a = in[0];                                                               \
        (void)ctx;                                                                        \
        if (st[0]) {                                                                      \
            if (o != a) memcpy(o, a, sizeof(T) * (size_t)n);                              \
        } else {                                                                          \
            const T v = a[0];                                                             \
            for (int64_t i = 0; i < n; i++) o[i] = v;                                     \
        }                                                                                 \
    }
EXPAND_ROW(expand_1, uint8_t)
EXPAND_ROW(expand_2, uint16_t)
EXPAND_ROW(expand_4, uint32_t)
EXPAND_ROW(expand_8, uint64_t)

static q8_bcast_row_fn expand_row(size_t size) {
    switch (size) {
    case 1: return expand_1;
    case 2: return expand_2;
    case 4: return expand_4;
    case 8: return expand_8;
    default: return NULL;
    }
}

static void expand_run(const q8_exec *x, const q8_node *n) {
    size_t es = q8_dtype_size(q8_in(x->g, n, 0)->dtype);
    const void *in[1] = {Q8_IN_PTR(x, n, 0)};
    q8_bcast_run(x->pool, n->params, Q8_OUT_PTR(x, n, 0), es, in, &es, expand_row(es), NULL,
                 Q8_EW_GRAIN);
}

const q8_cpu_op q8_cpu_expand = {.run = expand_run};
