/* ReduceSum / ReduceMean / ReduceMax / ReduceMin on float32 over any axes:
 * the input's dims are merged into kept and reduced groups (as
 * kernels/cpu/reduce.c does); one thread per output element walks its
 * reduced elements. Sums in double; Max / Min propagate NaN. */
#include "common.cuh"

__host__ __device__ static inline void reduce_elem(const q8cu_reduce_args *p, int64_t o) {
    int64_t base = 0, r = o;
    for (int d = p->nk - 1; d >= 0; d--) {
        base += (r % p->kdims[d]) * p->kstride[d];
        r /= p->kdims[d];
    }
    double s = 0.0;
    float m = p->kind == Q8CU_R_MAX ? -INFINITY : INFINITY;
    bool nan = false;
    for (int64_t j = 0; j < p->red_n; j++) {
        int64_t off = base, q = j;
        for (int d = p->nr - 1; d >= 0; d--) {
            off += (q % p->rdims[d]) * p->rstride[d];
            q /= p->rdims[d];
        }
        float v = p->x[off];
        s += v;
        nan |= v != v;
        if (p->kind == Q8CU_R_MAX) m = v > m ? v : m;
        else m = v < m ? v : m;
    }
    float y;
    if (p->kind == Q8CU_R_SUM) y = (float)s;
    else if (p->kind == Q8CU_R_MEAN) y = p->red_n ? (float)(s / (double)p->red_n) : NAN;
    else y = nan ? NAN : m;
    p->y[o] = y;
}

Q8CU_ELEMENTWISE(reduce, q8cu_reduce_args, reduce_elem)

extern "C" cudaError_t q8cu_reduce(const q8cu_stream *s, const q8cu_reduce_args *p) {
    return reduce_launch(s, p, p->out_n);
}
