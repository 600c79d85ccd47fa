/* OneHot, IsNaN / IsInf and EyeLike on the CPU (params:
 * src/core/ops/onehot.h). */
#include <math.h>
#include <string.h>

#include "cpu_op.h"
#include "ops/onehot.h"

/* An index of any numeric dtype, truncated toward zero; a NaN or one out
 * of int64's range gives -1 - depth, which matches no position. */
static int64_t index_at(const void *ind, q8_dtype t, int64_t i, int64_t depth) {
    double v;
    switch (t) {
    case Q8_I8: return ((const int8_t *)ind)[i];
    case Q8_U8: return ((const uint8_t *)ind)[i];
    case Q8_I16: return ((const int16_t *)ind)[i];
    case Q8_U16: return ((const uint16_t *)ind)[i];
    case Q8_I32: return ((const int32_t *)ind)[i];
    case Q8_U32: return ((const uint32_t *)ind)[i];
    case Q8_I64: return ((const int64_t *)ind)[i];
    case Q8_U64: {
        uint64_t u = ((const uint64_t *)ind)[i];
        return u > (uint64_t)depth ? depth : (int64_t)u;
    }
    case Q8_F32: v = ((const float *)ind)[i]; break;
    default: v = ((const double *)ind)[i]; break; /* Q8_F64 (infer allows no other) */
    }
    return v > -9e18 && v < 9e18 ? (int64_t)v : -1 - depth;
}

typedef struct onehot_args {
    const q8_onehot_params *p;
    const void *ind;
    const uint8_t *values;
    uint8_t *y;
} onehot_args;

static void onehot_rows(void *arg, int64_t b, int64_t e, int t) {
    const onehot_args *a = arg;
    const q8_onehot_params *p = a->p;
    size_t es = p->elem;
    for (int64_t r = b; r < e; r++) { /* r = outer index * depth + d */
        int64_t o = r / p->depth, d = r % p->depth;
        uint8_t *y = a->y + (size_t)(r * p->inner) * es;
        for (int64_t i = 0; i < p->inner; i++) {
            int64_t k = index_at(a->ind, p->index_dtype, o * p->inner + i, p->depth);
            if (k < 0 && k >= -p->depth) k += p->depth;
            memcpy(y + (size_t)i * es, a->values + (k == d ? es : 0), es);
        }
    }
}

static void onehot_run(const q8_exec *x, const q8_node *n) {
    const q8_onehot_params *p = n->params;
    onehot_args a = {p, Q8_IN_PTR(x, n, 0), Q8_IN_PTR(x, n, 2), Q8_OUT_PTR(x, n, 0)};
    int64_t grain = p->inner >= 1024 ? 1 : 1024 / (p->inner ? p->inner : 1);
    q8_parallel_for(x->pool, p->outer * p->depth, grain, onehot_rows, &a);
}

typedef struct isnan_args {
    const q8_isnan_params *p;
    const void *x;
    uint8_t *y;
} isnan_args;

static bool flag(const q8_isnan_params *p, double v) {
    if (!p->inf) return isnan(v);
    return isinf(v) && (v > 0 ? p->positive : p->negative);
}

static void isnan_range(void *arg, int64_t b, int64_t e, int t) {
    const isnan_args *a = arg;
    for (int64_t i = b; i < e; i++)
        a->y[i] = flag(a->p, a->p->dtype == Q8_F32 ? ((const float *)a->x)[i]
                                                   : ((const double *)a->x)[i]);
}

static void isnan_run(const q8_exec *x, const q8_node *n) {
    isnan_args a = {n->params, Q8_IN_PTR(x, n, 0), Q8_OUT_PTR(x, n, 0)};
    q8_parallel_for(x->pool, q8_tensor_numel(q8_out(x->g, n, 0)), 16384, isnan_range, &a);
}

static void eyelike_run(const q8_exec *x, const q8_node *n) {
    const q8_eyelike_params *p = n->params;
    uint8_t *y = Q8_OUT_PTR(x, n, 0);
    memset(y, 0, (size_t)(p->rows * p->cols) * p->elem);
    for (int64_t i = 0; i < p->rows; i++) {
        /* column i + k, kept in range without overflow */
        if (p->k >= p->cols || p->k <= -p->rows) break;
        int64_t j = i + p->k;
        if (j >= 0 && j < p->cols) memcpy(y + (size_t)(i * p->cols + j) * p->elem, p->one, p->elem);
    }
}

const q8_cpu_op q8_cpu_onehot = {.run = onehot_run};
const q8_cpu_op q8_cpu_is_nan = {.run = isnan_run};
const q8_cpu_op q8_cpu_is_inf = {.run = isnan_run};
const q8_cpu_op q8_cpu_eye_like = {.run = eyelike_run};
