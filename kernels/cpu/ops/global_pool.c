/* GlobalAveragePool and GlobalMaxPool on the CPU (params:
 * src/core/ops/global_pool.h). The average sums in double in one fixed
 * order of 16 lanes (kernels/common/row_sum16.h, the GPU's too), so the
 * result does not depend on the thread count. In GlobalMaxPool NaN
 * propagates. */
#include "cpu_op.h"
#include "ops/global_pool.h"
#include "row_sum.h"

typedef struct gpool_args {
    const q8_global_pool_params *p;
    const void *x;
    void *y;
} gpool_args;

static void gavg_range(void *arg, int64_t b, int64_t e, int t) {
    const gpool_args *a = arg;
    int64_t s = a->p->s;
    for (int64_t r = b; r < e; r++) {
        double sum = q8_row_sum_f64((const float *)a->x + r * s, s);
        ((float *)a->y)[r] = s ? (float)(sum / (double)s) : 0.0f;
    }
}

#define DEFINE_GMAX(NAME, T, LOWEST)                           \
    static void NAME(void *arg, int64_t b, int64_t e, int t) { \
        const gpool_args *a = arg;                             \
        int64_t s = a->p->s;                                   \
        for (int64_t r = b; r < e; r++) {                      \
            const T *x = (const T *)a->x + r * s;              \
            T m = LOWEST;                                      \
            for (int64_t i = 0; i < s; i++) {                  \
                T v = x[i];                                    \
                if (v > m || (v != v && m == m)) m = v;        \
            }                                                  \
            ((T *)a->y)[r] = m;                                \
        }                                                      \
    }

DEFINE_GMAX(gmax_f32, float, -__builtin_inff())
DEFINE_GMAX(gmax_i8, int8_t, INT8_MIN)
DEFINE_GMAX(gmax_u8, uint8_t, 0)

static void gpool_run(const q8_exec *x, const q8_node *n) {
    const q8_global_pool_params *p = n->params;
    gpool_args a = {p, Q8_IN_PTR(x, n, 0), Q8_OUT_PTR(x, n, 0)};
    q8_range_fn fn = p->avg              ? gavg_range
                     : p->dtype == Q8_I8 ? gmax_i8
                     : p->dtype == Q8_U8 ? gmax_u8
                                         : gmax_f32;
    q8_parallel_for(x->pool, p->rows, p->s >= 16384 ? 1 : 16384 / (p->s ? p->s : 1), fn, &a);
}

const q8_cpu_op q8_cpu_global_average_pool = {.run = gpool_run};
const q8_cpu_op q8_cpu_global_max_pool = {.run = gpool_run};
