/* CumSum on the CPU (params: src/core/ops/cumsum.h): one running sum per
 * (outer, inner) line, in order along the axis; lines split over the
 * threads, so the sums do not depend on the thread count. */
#include "cpu_op.h"
#include "ops/cumsum.h"

typedef struct cumsum_args {
    const q8_cumsum_params *p;
    const void *x;
    void *y;
} cumsum_args;

/* Unsigned sums wrap; signed ones are summed as unsigned too (no undefined
 * overflow), which gives two's complement wrapping. */
#define CUMSUM(T, A, NAME)                                                                 \
    static void NAME(void *arg, int64_t b, int64_t e, int t) {                             \
        const cumsum_args *a = arg;                                                        \
        const q8_cumsum_params *p = a->p;                                                  \
        const T *x = a->x;                                                                 \
        T *y = a->y;                                                                       \
        for (int64_t l = b; l < e; l++) {                                                  \
            int64_t base = (l / p->inner) * p->len * p->inner + l % p->inner;             \
            A s = 0;                                                                       \
            for (int64_t j = 0; j < p->len; j++) {                                         \
                int64_t i = base + (p->reverse ? p->len - 1 - j : j) * p->inner;           \
                A v = (A)x[i];                                                             \
                if (p->exclusive) {                                                        \
                    y[i] = (T)s;                                                           \
                    s += v;                                                                \
                } else {                                                                   \
                    s += v;                                                                \
                    y[i] = (T)s;                                                           \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
    }

CUMSUM(float, float, cumsum_f32)
CUMSUM(double, double, cumsum_f64)
CUMSUM(int32_t, uint32_t, cumsum_i32)
CUMSUM(int64_t, uint64_t, cumsum_i64)
CUMSUM(uint32_t, uint32_t, cumsum_u32)
CUMSUM(uint64_t, uint64_t, cumsum_u64)

static void cumsum_run(const q8_exec *x, const q8_node *n) {
    const q8_cumsum_params *p = n->params;
    static const q8_range_fn fns[Q8_DTYPE_COUNT] = {
        [Q8_F32] = cumsum_f32, [Q8_F64] = cumsum_f64, [Q8_I32] = cumsum_i32,
        [Q8_I64] = cumsum_i64, [Q8_U32] = cumsum_u32, [Q8_U64] = cumsum_u64,
    };
    cumsum_args a = {p, Q8_IN_PTR(x, n, 0), Q8_OUT_PTR(x, n, 0)};
    int64_t grain = p->len >= 4096 ? 1 : 4096 / (p->len ? p->len : 1);
    q8_parallel_for(x->pool, p->outer * p->inner, grain, fns[p->dtype], &a);
}

const q8_cpu_op q8_cpu_cumsum = {.run = cumsum_run};
