/* Range on the CPU (src/core/ops/range.c): start + i * delta, read from the
 * inputs. */
#include "cpu_op.h"

static void range_run(const q8_exec *x, const q8_node *n) {
    const q8_tensor *st = q8_in(x->g, n, 0), *y = q8_out(x->g, n, 0);
    const void *ps = Q8_IN_PTR(x, n, 0), *pd = Q8_IN_PTR(x, n, 2);
    void *out = Q8_OUT_PTR(x, n, 0);
    int64_t count = y->dims[0];
    switch (st->dtype) {
    case Q8_F32: {
        float s = *(const float *)ps, d = *(const float *)pd;
        for (int64_t i = 0; i < count; i++) ((float *)out)[i] = s + (float)i * d;
        break;
    }
    case Q8_F64: {
        double s = *(const double *)ps, d = *(const double *)pd;
        for (int64_t i = 0; i < count; i++) ((double *)out)[i] = s + (double)i * d;
        break;
    }
    /* Every value lies between start and limit, so it fits the type. */
    case Q8_I16: {
        int64_t s = *(const int16_t *)ps, d = *(const int16_t *)pd;
        for (int64_t i = 0; i < count; i++) ((int16_t *)out)[i] = (int16_t)(s + i * d);
        break;
    }
    case Q8_I32: {
        int64_t s = *(const int32_t *)ps, d = *(const int32_t *)pd;
        for (int64_t i = 0; i < count; i++) ((int32_t *)out)[i] = (int32_t)(s + i * d);
        break;
    }
    case Q8_I64: {
        int64_t s = *(const int64_t *)ps, d = *(const int64_t *)pd;
        for (int64_t i = 0; i < count; i++) /* wraps like the type, never UB */
            ((int64_t *)out)[i] = (int64_t)((uint64_t)s + (uint64_t)i * (uint64_t)d);
        break;
    }
    default: break;
    }
}

const q8_cpu_op q8_cpu_range = {.run = range_run};
