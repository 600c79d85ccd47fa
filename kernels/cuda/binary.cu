/* Add, Sub, Mul, Div, PRelu (a < 0 ? a * slope : a, as the CPU), and the
 * comparisons Equal, Greater, Less, GreaterOrEqual, LessOrEqual, on float32
 * with numpy broadcasting: the output index decodes over the collapsed
 * dims of the broadcast plan (q8_bcast_plan_init) and each input has its
 * own strides (0 where broadcast). One thread per output element; in
 * place is safe (an input the size of the output is read at the output's
 * index). */
#include "common.cuh"

__host__ __device__ static inline void binary_elem(const q8cu_binary_args *p, int64_t i) {
    int64_t ia = 0, ib = 0, r = i;
    for (int d = p->ndim - 1; d >= 0; d--) {
        int64_t c;
        r = q8cu_divmod(r, p->dims[d], &c);
        ia += c * p->sa[d];
        ib += c * p->sb[d];
    }
    float a = p->a[ia], b = p->b[ib], y;
    if (p->op >= Q8CU_B_EQ) { /* as the CPU's compare.c: NaN compares false */
        bool t = p->op == Q8CU_B_EQ   ? a == b
                 : p->op == Q8CU_B_GT ? a > b
                 : p->op == Q8CU_B_LT ? a < b
                 : p->op == Q8CU_B_GE ? a >= b
                                      : a <= b;
        ((uint8_t *)p->y)[i] = t;
        return;
    }
    switch (p->op) {
    case Q8CU_B_ADD: y = a + b; break;
    case Q8CU_B_SUB: y = a - b; break;
    case Q8CU_B_MUL: y = a * b; break;
    case Q8CU_B_PRELU: y = a < 0 ? a * b : a; break;
    default: y = q8cu_div(a, b); break;
    }
    ((float *)p->y)[i] = y;
}

Q8CU_ELEMENTWISE(binary, q8cu_binary_args, binary_elem)

extern "C" cudaError_t q8cu_binary(const q8cu_stream *s, const q8cu_binary_args *p) {
    return binary_launch(s, p, p->n);
}
