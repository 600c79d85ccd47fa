/* 4-byte 2-D transpose blocks on AVX-512F (kernels/cpu/x86/transpose_avx512.c):
 * 16 x 16 elements through registers (16 loads, 64 shuffles, 16 stores)
 * where the portable tile loop moved one element at a time, each a strided
 * read (an NCHW -> NHWC Transpose of 1x64x64x64 at 2.2x ONNX Runtime's
 * time); partial blocks at the edges masked. */
#ifndef Q8_KERNELS_CPU_TRANSPOSE_X86_H
#define Q8_KERNELS_CPU_TRANSPOSE_X86_H

#include <stdbool.h>
#include <stdint.h>

/* Whether the CPU runs q8_transpose4_x86. */
bool q8_transpose4_x86_ok(void);

/* d[j * dj + l] = s[j + l * sl] for j in [j0, j1), l in [l0, l1) (4-byte
 * elements; d and s at the block's base offsets). Whole 16 x 16 blocks in
 * registers, the edges element by element. */
void q8_transpose4_x86(const uint32_t *s, int64_t sl, uint32_t *d, int64_t dj, int64_t j0,
                       int64_t j1, int64_t l0, int64_t l1);

/* d[ch * dj + l] = s[c * l + ch] for ch < c (3 or 4), l in [l0, l1): the
 * 4-byte NHWC -> NCHW of an RGB(A) image, 16 pixels a step by permutes. */
void q8_deinterleave4_x86(const uint32_t *s, uint32_t *d, int64_t dj, int c, int64_t l0,
                          int64_t l1);

#endif
