/* ArgMax and ArgMin of float32 data: one thread per output scans its len
 * values with the CPU's rule (kernels/cpu/ops/argmax.c: first index of the
 * best, the last with select_last_index; a NaN beats every number). */
#include "common.cuh"

__host__ __device__ static inline void argmax_elem(const q8cu_argmax_args *p, int64_t o) {
    const float *r = p->x + (o / p->inner) * p->len * p->inner + o % p->inner;
    float best = r[0];
    int64_t bi = 0;
    for (int64_t i = 1; i < p->len; i++) {
        float v = r[i * p->inner];
        bool vn = v != v, bn = best != best;
        bool better = bn ? (vn && p->last)
                      : vn ? true
                           : p->min ? (p->last ? v <= best : v < best)
                                    : (p->last ? v >= best : v > best);
        if (better) {
            best = v;
            bi = i;
        }
    }
    p->y[o] = bi;
}

Q8CU_ELEMENTWISE(argmax, q8cu_argmax_args, argmax_elem)

extern "C" cudaError_t q8cu_argmax(const q8cu_stream *s, const q8cu_argmax_args *p) {
    return argmax_launch(s, p, p->outer * p->inner);
}
