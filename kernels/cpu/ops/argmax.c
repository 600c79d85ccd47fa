/* ArgMax and ArgMin on the CPU (params: src/core/ops/argmax.h): one scan
 * of len values per output, outputs split over the threads. */
#include <math.h>

#include "cpu_op.h"
#include "ops/argmax.h"

typedef struct argmax_args {
    const q8_argmax_params *p;
    const void *x;
    int64_t *y;
} argmax_args;

/* better(v, b): v replaces the best b so far (a NaN beats every number;
 * with `last`, ties and NaN after NaN move the index too). */
#define ARG_SCAN(T, NAME, ISNAN)                                                           \
    static void NAME(void *arg, int64_t b, int64_t e, int t) {                             \
        const argmax_args *a = arg;                                                        \
        const q8_argmax_params *p = a->p;                                                  \
        const T *x = a->x;                                                                 \
        for (int64_t o = b; o < e; o++) {                                                  \
            const T *r = x + (o / p->inner) * p->len * p->inner + o % p->inner;            \
            T best = r[0];                                                                 \
            int64_t bi = 0;                                                                \
            for (int64_t i = 1; i < p->len; i++) {                                         \
                T v = r[i * p->inner];                                                     \
                bool vn = ISNAN(v), bn = ISNAN(best);                                      \
                bool better = bn ? (vn && p->last)                                         \
                              : vn ? true                                                  \
                                   : p->min ? (p->last ? v <= best : v < best)             \
                                            : (p->last ? v >= best : v > best);            \
                if (better) {                                                              \
                    best = v;                                                              \
                    bi = i;                                                                \
                }                                                                          \
            }                                                                              \
            a->y[o] = bi;                                                                  \
        }                                                                                  \
    }

#define NOT_NAN(v) false
ARG_SCAN(float, scan_f32, isnan)
ARG_SCAN(double, scan_f64, isnan)
ARG_SCAN(int8_t, scan_i8, NOT_NAN)
ARG_SCAN(int16_t, scan_i16, NOT_NAN)
ARG_SCAN(int32_t, scan_i32, NOT_NAN)
ARG_SCAN(int64_t, scan_i64, NOT_NAN)
ARG_SCAN(uint8_t, scan_u8, NOT_NAN)
ARG_SCAN(uint16_t, scan_u16, NOT_NAN)
ARG_SCAN(uint32_t, scan_u32, NOT_NAN)
ARG_SCAN(uint64_t, scan_u64, NOT_NAN)

static void argmax_run(const q8_exec *x, const q8_node *n) {
    const q8_argmax_params *p = n->params;
    static const q8_range_fn fns[Q8_DTYPE_COUNT] = {
        [Q8_F32] = scan_f32, [Q8_F64] = scan_f64, [Q8_I8] = scan_i8,   [Q8_I16] = scan_i16,
        [Q8_I32] = scan_i32, [Q8_I64] = scan_i64, [Q8_U8] = scan_u8,   [Q8_U16] = scan_u16,
        [Q8_U32] = scan_u32, [Q8_U64] = scan_u64,
    };
    argmax_args a = {p, Q8_IN_PTR(x, n, 0), Q8_OUT_PTR(x, n, 0)};
    int64_t grain = p->len >= 4096 ? 1 : 4096 / p->len;
    q8_parallel_for(x->pool, p->outer * p->inner, grain, fns[p->dtype], &a);
}

/* Hardmax: each line's first largest value (ArgMax's rule) becomes 1, the
 * rest 0. */
typedef struct hardmax_args {
    const q8_argmax_params *p;
    const float *x;
    float *y;
} hardmax_args;

static void hardmax_lines(void *arg, int64_t b, int64_t e, int t) {
    const hardmax_args *a = arg;
    const q8_argmax_params *p = a->p;
    for (int64_t o = b; o < e; o++) {
        int64_t base = (o / p->inner) * p->len * p->inner + o % p->inner;
        const float *r = a->x + base;
        float best = r[0];
        int64_t bi = 0;
        for (int64_t i = 1; i < p->len && !isnan(best); i++) {
            float v = r[i * p->inner];
            if (isnan(v) || v > best) {
                best = v;
                bi = i;
            }
        }
        for (int64_t i = 0; i < p->len; i++) a->y[base + i * p->inner] = i == bi ? 1.0f : 0.0f;
    }
}

static void hardmax_run(const q8_exec *x, const q8_node *n) {
    const q8_argmax_params *p = n->params;
    hardmax_args a = {p, Q8_IN_PTR(x, n, 0), Q8_OUT_PTR(x, n, 0)};
    if (p->len == 0) return;
    int64_t grain = p->len >= 4096 ? 1 : 4096 / p->len;
    q8_parallel_for(x->pool, p->outer * p->inner, grain, hardmax_lines, &a);
}

const q8_cpu_op q8_cpu_hardmax = {.run = hardmax_run};
const q8_cpu_op q8_cpu_arg_max = {.run = argmax_run};
const q8_cpu_op q8_cpu_arg_min = {.run = argmax_run};
