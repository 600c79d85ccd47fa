/* Max, Min, Sum, Mean over float32 inputs with numpy broadcasting: one
 * thread per output element reads every input at its broadcast index and
 * folds them in input order, as the CPU's variadic.c does per element (Max
 * and Min propagate a NaN from either side; Mean divides the float sum by
 * the input count once). An output sharing a buffer with a same-size input
 * is safe: each element is read before it is written, by its own thread. */
#include "common.cuh"

__host__ __device__ static inline float fold(int op, float acc, float x) {
    switch (op) {
    case Q8CU_V_MAX: return (acc > x || acc != acc) ? acc : x;
    case Q8CU_V_MIN: return (acc < x || acc != acc) ? acc : x;
    default: return acc + x;
    }
}

__host__ __device__ static inline void variadic_elem(const q8cu_variadic_args *p, int64_t i) {
    int64_t off[Q8CU_VAR_MAX_IN] = {0}, r = i;
    for (int d = p->ndim - 1; d >= 0; d--) {
        int64_t c;
        r = q8cu_divmod(r, p->dims[d], &c);
        for (int k = 0; k < p->n_in; k++) off[k] += c * p->st[k][d];
    }
    float acc = p->x[0][off[0]];
    for (int k = 1; k < p->n_in; k++) acc = fold(p->op, acc, p->x[k][off[k]]);
    p->y[i] = p->op == Q8CU_V_MEAN ? q8cu_div(acc, (float)p->n_in) : acc;
}

Q8CU_ELEMENTWISE(variadic, q8cu_variadic_args, variadic_elem)

extern "C" cudaError_t q8cu_variadic(const q8cu_stream *s, const q8cu_variadic_args *p) {
    return variadic_launch(s, p, p->n);
}
