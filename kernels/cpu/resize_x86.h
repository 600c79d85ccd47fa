/* FP32 bilinear Resize's pass along W on AVX-512
 * (kernels/cpu/x86/resize_avx512.c): where the two taps of each run of 16
 * outputs lie within 16 consecutive inputs (upsampling, by 2 and more
 * generally by a factor over ~1.07), the run is one masked load and two
 * permutes of it, then w0 x0 + w1 x1 per lane; the portable loop
 * (ops/resize.c f32_hrow) gathers the two taps of every output one by one
 * and took 60% of a 2x upsampling's time. Same bits: the same two
 * products and their sum, in that order, never fused (the file is built
 * without FMA contraction, as resize.c). */
#ifndef Q8_KERNELS_CPU_RESIZE_X86_H
#define Q8_KERNELS_CPU_RESIZE_X86_H

#include <stdbool.h>
#include <stdint.h>

/* One run of 16 outputs: its taps as lanes of the 16 inputs from base. */
typedef struct q8_resize_hrun {
    union { /* float32 X: the float weights; int8 / uint8 X: resize.h's integer ones */
        float w0[16];
        int32_t wi0[16];
    };
    union {
        float w1[16];
        int32_t wi1[16];
    };
    uint8_t i0[16], i1[16]; /* lanes of the 16 inputs from base */
    int64_t base;
    int64_t pad[3]; /* a whole number of 64-byte lines */
} q8_resize_hrun;

/* Runs for n outputs. */
static inline int64_t q8_resize_hruns(int64_t n) { return (n + 15) / 16; }

/* Fills runs[q8_resize_hruns(n)] from the last dim's taps (ixw[2o],
 * ixw[2o + 1] with weights ww[2o], ww[2o + 1], or the integer ones wi when
 * not NULL) over rows of in_w inputs; false where the CPU has no AVX-512F
 * or some run's taps spread over more than 16 inputs (then the portable
 * loops run). */
bool q8_resize_hplan(const int64_t *ixw, const float *ww, const int32_t *wi, int64_t n,
                     int64_t in_w, q8_resize_hrun *runs);

/* h[o] = ww[2o] xr[ixw[2o]] + ww[2o + 1] xr[ixw[2o + 1]] for o < n, from
 * the runs q8_resize_hplan made (it said true). */
void q8_resize_hrow_x86(const float *xr, const q8_resize_hrun *runs, int64_t n, int64_t in_w,
                        float *h);

/* The int8 / uint8 form (is_u8): h[o] = wi[2o] x[i0] + wi[2o + 1] x[i1] in
 * int32, exact (resize.c's int hrow). */
void q8_resize_hrow_int_x86(const void *xr, bool is_u8, const q8_resize_hrun *runs, int64_t n,
                            int64_t in_w, int32_t *h);

#endif
