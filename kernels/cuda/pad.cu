/* Pad (constant, reflect, edge, wrap), as kernels/cpu/ops/pad.c maps
 * coordinates: output coordinate c reads input coordinate c - pb[d], mapped
 * back inside by the mode; constant mode writes the value instead. Negative
 * pads crop. One thread per output element, any element size. */
#include "common.cuh"

__host__ __device__ static inline int64_t map_coord(int mode, int64_t c, int64_t d) {
    if (c >= 0 && c < d) return c;
    switch (mode) {
    case Q8CU_PAD_EDGE: return c < 0 ? 0 : d - 1;
    case Q8CU_PAD_REFLECT: return c < 0 ? -c : 2 * (d - 1) - c;
    case Q8CU_PAD_WRAP: {
        int64_t m = c % d;
        return m < 0 ? m + d : m;
    }
    default: return -1;
    }
}

__host__ __device__ static inline void pad_elem(const q8cu_pad_args *p, int64_t i) {
    int64_t off = 0, stride = 1, r = i;
    for (int d = p->ndim - 1; d >= 0; d--) {
        int64_t c = r % p->ydims[d];
        r /= p->ydims[d];
        int64_t ic = map_coord(p->mode, c - p->pb[d], p->xdims[d]);
        if (ic < 0) {
            q8cu_copy_elem(p->y, i, p->value, 0, p->esize);
            return;
        }
        off += ic * stride;
        stride *= p->xdims[d];
    }
    q8cu_copy_elem(p->y, i, p->x, off, p->esize);
}

Q8CU_ELEMENTWISE(pad, q8cu_pad_args, pad_elem)

extern "C" cudaError_t q8cu_pad(const q8cu_stream *s, const q8cu_pad_args *p) {
    return pad_launch(s, p, p->n);
}
