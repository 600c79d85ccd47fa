/* Concat: each input's rows (the dims before the axis) are copied into the
 * output rows at that input's offset; one launch per input, one thread per
 * element. */
#include "common.cuh"

__host__ __device__ static inline void rowcopy_elem(const q8cu_rowcopy_args *p, int64_t t) {
    int64_t c, r = q8cu_divmod(t, p->row_n, &c);
    q8cu_copy_elem(p->y, r * p->y_row_n + p->y_off + c, p->x, t, p->esize);
}

Q8CU_ELEMENTWISE(rowcopy, q8cu_rowcopy_args, rowcopy_elem)

extern "C" cudaError_t q8cu_rowcopy(const q8cu_stream *s, const q8cu_rowcopy_args *p) {
    return rowcopy_launch(s, p, p->rows * p->row_n);
}
