/* Cast and CastLike between every numeric dtype and bool, with the CPU's
 * rules exactly (kernels/cpu/ops/cast.c, src/core/ops/cast.h): each value
 * is read into a carrier that holds it exactly (double for floats, int64
 * for signed ints and bool, uint64 for uint64), then written with one
 * rounding: float16 / bfloat16 to nearest even in software through
 * round-to-odd floats (src/core/half.h's conversions, its round-to-odd
 * helpers redone here for the device);
 * float -> int truncates toward zero, NaN gives 0, out-of-range values
 * saturate; int -> narrower int wraps; anything -> bool is "!= 0" (NaN is
 * true); the same dtype copies the bytes.
 *
 * Nothing is left to the hardware that could differ from the CPU's:
 * float <-> double conversions of NaN are written out as x86 and ARM do
 * them (the payload kept, the quiet bit set), the rest are single IEEE
 * round-to-nearest conversions or exact. One thread per element; in place
 * is safe (the element is read before it is written). */
#include "common.cuh"
#include "half.h"

__host__ __device__ static inline uint64_t d2u_(double d) {
#ifdef __CUDA_ARCH__
    return (uint64_t)__double_as_longlong(d);
#else
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
#endif
}

__host__ __device__ static inline double u2d_(uint64_t u) {
#ifdef __CUDA_ARCH__
    return __longlong_as_double((long long)u);
#else
    double d;
    memcpy(&d, &u, 8);
    return d;
#endif
}

__host__ __device__ static inline int clz64_(uint64_t v) {
#ifdef __CUDA_ARCH__
    return __clzll((long long)v);
#else
    return __builtin_clzll(v);
#endif
}

/* float -> double; a NaN keeps its sign and payload and becomes quiet. */
__host__ __device__ static inline double widen_(float f) {
    uint32_t b = q8cu_f2u(f);
    if ((b & 0x7FFFFFFFu) > 0x7F800000u)
        return u2d_(((uint64_t)(b & 0x80000000u) << 32) | 0x7FF8000000000000ull |
                    ((uint64_t)(b & 0x7FFFFFu) << 29));
    return (double)f;
}

/* double -> float, to nearest even; a NaN keeps its sign and the top of
 * its payload and becomes quiet. */
__host__ __device__ static inline float narrow_(double d) {
    if (d != d) {
        uint64_t b = d2u_(d);
        return q8cu_u2f((uint32_t)((b >> 32) & 0x80000000u) | 0x7FC00000u |
                        (uint32_t)((b >> 29) & 0x3FFFFFu));
    }
    return (float)d;
}

/* src/core/half.h q8_f64_to_f32_odd: the truncated value, its last bit set
 * if anything was cut off (then rounding to a half rounds only once). */
__host__ __device__ static inline float f64_to_f32_odd_(double d) {
    if (d != d) return narrow_(d);
    float f = (float)d;
    if ((double)f == d) return f;
    if (fabs((double)f) > fabs(d)) f = q8cu_u2f(q8cu_f2u(f) - 1u); /* toward 0 (inf -> max) */
    return q8cu_u2f(q8cu_f2u(f) | 1u);
}

/* src/core/half.h q8_u64_to_f32_odd; m * 2^sh is exact (m < 2^24, sh <= 40). */
__host__ __device__ static inline float u64_to_f32_odd_(uint64_t v) {
    if (v < (1ull << 24)) return (float)v;
    int sh = 40 - clz64_(v);
    uint64_t m = v >> sh;
    if (v & ((1ull << sh) - 1)) m |= 1;
    return (float)m * q8cu_u2f((uint32_t)(127 + sh) << 23);
}

__host__ __device__ static inline float i64_to_f32_odd_(int64_t v) {
    float f = u64_to_f32_odd_(v < 0 ? 0 - (uint64_t)v : (uint64_t)v);
    return v < 0 ? -f : f;
}

/* kernels/cpu/ew_kernels.h Q8_EW_F2I: truncation, NaN -> 0, saturation. */
#define F2I_(NAME, T, LO, HI)                                                              \
    __host__ __device__ static inline T NAME(double v) {                                  \
        if (!(v == v)) return 0;                                                          \
        if (v <= (double)(LO)) return (LO);                                               \
        if (v >= (double)(HI)) return (HI);                                               \
        return (T)v;                                                                      \
    }
F2I_(f2i_i8_, int8_t, INT8_MIN, INT8_MAX)
F2I_(f2i_u8_, uint8_t, 0, UINT8_MAX)
F2I_(f2i_i16_, int16_t, INT16_MIN, INT16_MAX)
F2I_(f2i_u16_, uint16_t, 0, UINT16_MAX)
F2I_(f2i_i32_, int32_t, INT32_MIN, INT32_MAX)
F2I_(f2i_u32_, uint32_t, 0, UINT32_MAX)
F2I_(f2i_i64_, int64_t, INT64_MIN, INT64_MAX)
F2I_(f2i_u64_, uint64_t, 0, UINT64_MAX)

enum { CAR_F, CAR_S, CAR_U };

/* An integer carrier (s or u) to element i of y. */
#define STORE_INT_(y, to, i, v, ODD)                                                       \
    switch (to) {                                                                         \
    case Q8CU_DT_F32: ((float *)(y))[i] = (float)(v); break;                              \
    case Q8CU_DT_F64: ((double *)(y))[i] = (double)(v); break;                            \
    case Q8CU_DT_F16: ((uint16_t *)(y))[i] = q8_f32_to_f16(ODD(v)); break;                  \
    case Q8CU_DT_BF16: ((uint16_t *)(y))[i] = q8_f32_to_bf16(ODD(v)); break;                \
    case Q8CU_DT_I8: ((int8_t *)(y))[i] = (int8_t)(v); break;                             \
    case Q8CU_DT_U8: ((uint8_t *)(y))[i] = (uint8_t)(v); break;                           \
    case Q8CU_DT_I16: ((int16_t *)(y))[i] = (int16_t)(v); break;                          \
    case Q8CU_DT_U16: ((uint16_t *)(y))[i] = (uint16_t)(v); break;                        \
    case Q8CU_DT_I32: ((int32_t *)(y))[i] = (int32_t)(v); break;                          \
    case Q8CU_DT_U32: ((uint32_t *)(y))[i] = (uint32_t)(v); break;                        \
    case Q8CU_DT_I64: ((int64_t *)(y))[i] = (int64_t)(v); break;                          \
    case Q8CU_DT_U64: ((uint64_t *)(y))[i] = (uint64_t)(v); break;                        \
    default: ((uint8_t *)(y))[i] = (v) != 0; break; /* bool */                            \
    }

__host__ __device__ static inline void cast_elem(const q8cu_cast_args *p, int64_t i) {
    if (p->from == p->to) {
        q8cu_copy_elem(p->y, i, p->x, i, p->esize);
        return;
    }
    const void *x = p->x;
    int k = CAR_S;
    double f = 0;
    int64_t s = 0;
    uint64_t u = 0;
    switch (p->from) {
    case Q8CU_DT_F32: k = CAR_F, f = widen_(((const float *)x)[i]); break;
    case Q8CU_DT_F64: k = CAR_F, f = ((const double *)x)[i]; break;
    case Q8CU_DT_F16: k = CAR_F, f = widen_(q8_f16_to_f32(((const uint16_t *)x)[i])); break;
    case Q8CU_DT_BF16: k = CAR_F, f = widen_(q8_bf16_to_f32(((const uint16_t *)x)[i])); break;
    case Q8CU_DT_I8: s = ((const int8_t *)x)[i]; break;
    case Q8CU_DT_U8: s = ((const uint8_t *)x)[i]; break;
    case Q8CU_DT_I16: s = ((const int16_t *)x)[i]; break;
    case Q8CU_DT_U16: s = ((const uint16_t *)x)[i]; break;
    case Q8CU_DT_I32: s = ((const int32_t *)x)[i]; break;
    case Q8CU_DT_U32: s = ((const uint32_t *)x)[i]; break;
    case Q8CU_DT_I64: s = ((const int64_t *)x)[i]; break;
    case Q8CU_DT_U64: k = CAR_U, u = ((const uint64_t *)x)[i]; break;
    default: s = ((const uint8_t *)x)[i] != 0; break; /* bool */
    }
    void *y = p->y;
    if (k == CAR_S) {
        STORE_INT_(y, p->to, i, s, i64_to_f32_odd_)
        return;
    }
    if (k == CAR_U) {
        STORE_INT_(y, p->to, i, u, u64_to_f32_odd_)
        return;
    }
    switch (p->to) {
    case Q8CU_DT_F32: ((float *)y)[i] = narrow_(f); break;
    case Q8CU_DT_F64: ((double *)y)[i] = f; break;
    case Q8CU_DT_F16: ((uint16_t *)y)[i] = q8_f32_to_f16(f64_to_f32_odd_(f)); break;
    case Q8CU_DT_BF16: ((uint16_t *)y)[i] = q8_f32_to_bf16(f64_to_f32_odd_(f)); break;
    case Q8CU_DT_I8: ((int8_t *)y)[i] = f2i_i8_(f); break;
    case Q8CU_DT_U8: ((uint8_t *)y)[i] = f2i_u8_(f); break;
    case Q8CU_DT_I16: ((int16_t *)y)[i] = f2i_i16_(f); break;
    case Q8CU_DT_U16: ((uint16_t *)y)[i] = f2i_u16_(f); break;
    case Q8CU_DT_I32: ((int32_t *)y)[i] = f2i_i32_(f); break;
    case Q8CU_DT_U32: ((uint32_t *)y)[i] = f2i_u32_(f); break;
    case Q8CU_DT_I64: ((int64_t *)y)[i] = f2i_i64_(f); break;
    case Q8CU_DT_U64: ((uint64_t *)y)[i] = f2i_u64_(f); break;
    default: ((uint8_t *)y)[i] = f != 0; break; /* bool: NaN is true */
    }
}

Q8CU_ELEMENTWISE(cast, q8cu_cast_args, cast_elem)

extern "C" cudaError_t q8cu_cast(const q8cu_stream *s, const q8cu_cast_args *p) {
    return cast_launch(s, p, p->n);
}
