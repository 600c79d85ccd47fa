/* ReduceSum / ReduceMean / ReduceMax / ReduceMin on float32 over any axes:
 * the input's dims are merged into kept and reduced groups as
 * kernels/cpu/ops/reduce.c merges them, and each output is reduced by one
 * thread in the CPU's order, in double: when the innermost group is
 * reduced, 8 interleaved partial results (tail into the first) combined in
 * order; else one sequential pass. So the results are the CPU's bit for
 * bit. Max / Min propagate NaN. */
#include "common.cuh"

__host__ __device__ static inline int64_t offset_of(int64_t idx, int nd, const int64_t *dims,
                                                    const int64_t *strides) {
    int64_t off = 0;
    for (int i = nd - 1; i >= 0; i--) {
        off += (idx % dims[i]) * strides[i];
        idx /= dims[i];
    }
    return off;
}

__host__ __device__ static inline double upd(int kind, double a, double v) {
    switch (kind) {
    case Q8CU_R_MAX: return (v > a || v != v) ? v : a;
    case Q8CU_R_MIN: return (v < a || v != v) ? v : a;
    default: return a + v;
    }
}

__host__ __device__ static inline void reduce_elem(const q8cu_reduce_args *p, int64_t o) {
    int kind = p->kind;
    double init = kind == Q8CU_R_MAX ? -INFINITY : kind == Q8CU_R_MIN ? INFINITY : 0.0;
    if (p->red_n == 0) {
        p->y[o] = kind == Q8CU_R_MEAN ? NAN : (float)init;
        return;
    }
    int64_t base = offset_of(o, p->nk, p->kdims, p->kstride);
    double r;
    if (!p->last_kept && p->nr > 0) {
        int64_t len = p->rdims[p->nr - 1], outer = p->red_n / len;
        double acc[8];
        for (int k = 0; k < 8; k++) acc[k] = init;
        for (int64_t ro = 0; ro < outer; ro++) {
            const float *s = p->x + base + offset_of(ro, p->nr - 1, p->rdims, p->rstride);
            int64_t i = 0;
            for (; i + 8 <= len; i += 8)
                for (int k = 0; k < 8; k++) acc[k] = upd(kind, acc[k], (double)s[i + k]);
            for (; i < len; i++) acc[0] = upd(kind, acc[0], (double)s[i]);
        }
        r = acc[0];
        for (int k = 1; k < 8; k++) r = upd(kind, r, acc[k]);
    } else {
        r = init;
        for (int64_t j = 0; j < p->red_n; j++)
            r = upd(kind, r, (double)p->x[base + offset_of(j, p->nr, p->rdims, p->rstride)]);
    }
    p->y[o] = (float)(kind == Q8CU_R_MEAN ? r / (double)p->red_n : r);
}

Q8CU_ELEMENTWISE(reduce, q8cu_reduce_args, reduce_elem)

extern "C" cudaError_t q8cu_reduce(const q8cu_stream *s, const q8cu_reduce_args *p) {
    return reduce_launch(s, p, p->out_n);
}
