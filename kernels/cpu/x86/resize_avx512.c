/* FP32 bilinear Resize along W on AVX-512: see resize_x86.h. Compiled for
 * AVX-512F whatever the build flags (and without FMA contraction,
 * CMakeLists.txt); only called where q8_resize_hplan said yes. */
#include "resize_x86.h"

#include <string.h>

#include "cpu_features.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define RESIZE_X86 1
#include <immintrin.h>
#else
#define RESIZE_X86 0
#endif

bool q8_resize_hplan(const int64_t *ixw, const float *ww, const int32_t *wi, int64_t n,
                     int64_t in_w, q8_resize_hrun *runs) {
    const q8_cpu_features *f = q8_cpu();
    /* the int8 form loads bytes under a mask: AVX-512BW and VL */
    if (!RESIZE_X86 || !f->avx512f || (wi && !(f->avx512bw && f->avx512vl))) return false;
    for (int64_t r = 0; r < q8_resize_hruns(n); r++) {
        q8_resize_hrun *u = &runs[r];
        memset(u, 0, sizeof *u);
        int64_t o0 = r * 16, lo = INT64_MAX, hi = -1;
        for (int64_t o = o0; o < n && o < o0 + 16; o++)
            for (int j = 0; j < 2; j++) {
                int64_t i = ixw[2 * o + j];
                if (i < 0 || i >= in_w) return false;
                lo = i < lo ? i : lo;
                hi = i > hi ? i : hi;
            }
        if (hi - lo >= 16) return false;
        u->base = lo;
        for (int64_t o = o0; o < n && o < o0 + 16; o++) {
            u->i0[o - o0] = (uint8_t)(ixw[2 * o] - lo);
            u->i1[o - o0] = (uint8_t)(ixw[2 * o + 1] - lo);
            if (wi) {
                u->wi0[o - o0] = wi[2 * o];
                u->wi1[o - o0] = wi[2 * o + 1];
            } else {
                u->w0[o - o0] = ww[2 * o];
                u->w1[o - o0] = ww[2 * o + 1];
            }
        }
    }
    return true;
}

#if RESIZE_X86
__attribute__((target("avx512f"))) void q8_resize_hrow_x86(const float *xr,
                                                            const q8_resize_hrun *runs,
                                                            int64_t n, int64_t in_w, float *h) {
    for (int64_t r = 0, o0 = 0; o0 < n; r++, o0 += 16) {
        const q8_resize_hrun *u = &runs[r];
        /* the inputs from base that lie in the row (the taps read no other) */
        int64_t avail = in_w - u->base;
        __mmask16 lm = avail >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << avail) - 1);
        __m512 x = _mm512_maskz_loadu_ps(lm, xr + u->base);
        __m512i i0 = _mm512_cvtepu8_epi32(_mm_load_si128((const __m128i *)u->i0));
        __m512i i1 = _mm512_cvtepu8_epi32(_mm_load_si128((const __m128i *)u->i1));
        __m512 x0 = _mm512_permutexvar_ps(i0, x), x1 = _mm512_permutexvar_ps(i1, x);
        __m512 v = _mm512_add_ps(_mm512_mul_ps(_mm512_load_ps(u->w0), x0),
                                 _mm512_mul_ps(_mm512_load_ps(u->w1), x1));
        int64_t m = n - o0 < 16 ? n - o0 : 16;
        _mm512_mask_storeu_ps(h + o0, (__mmask16)((1u << m) - 1), v);
    }
}

__attribute__((target("avx512f,avx512bw,avx512vl"))) void
q8_resize_hrow_int_x86(const void *xr, bool is_u8, const q8_resize_hrun *runs, int64_t n,
                       int64_t in_w, int32_t *h) {
    for (int64_t r = 0, o0 = 0; o0 < n; r++, o0 += 16) {
        const q8_resize_hrun *u = &runs[r];
        int64_t avail = in_w - u->base;
        __mmask16 lm = avail >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << avail) - 1);
        __m128i b = _mm_maskz_loadu_epi8(lm, (const uint8_t *)xr + u->base);
        __m512i x = is_u8 ? _mm512_cvtepu8_epi32(b) : _mm512_cvtepi8_epi32(b);
        __m512i i0 = _mm512_cvtepu8_epi32(_mm_load_si128((const __m128i *)u->i0));
        __m512i i1 = _mm512_cvtepu8_epi32(_mm_load_si128((const __m128i *)u->i1));
        __m512i v = _mm512_add_epi32(
            _mm512_mullo_epi32(_mm512_load_si512(u->wi0), _mm512_permutexvar_epi32(i0, x)),
            _mm512_mullo_epi32(_mm512_load_si512(u->wi1), _mm512_permutexvar_epi32(i1, x)));
        int64_t m = n - o0 < 16 ? n - o0 : 16;
        _mm512_mask_storeu_epi32(h + o0, (__mmask16)((1u << m) - 1), v);
    }
}
#else
void q8_resize_hrow_int_x86(const void *xr, bool is_u8, const q8_resize_hrun *runs, int64_t n,
                            int64_t in_w, int32_t *h) {
    (void)xr, (void)is_u8, (void)runs, (void)n, (void)in_w, (void)h;
}

void q8_resize_hrow_x86(const float *xr, const q8_resize_hrun *runs, int64_t n, int64_t in_w,
                        float *h) {
    (void)xr, (void)runs, (void)n, (void)in_w, (void)h;
}
#endif
