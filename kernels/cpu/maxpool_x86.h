/* 2-D MaxPool (and float AveragePool) straight from X on AVX-512
 * (kernels/cpu/x86/maxpool_avx512.c):
 * per output row, 16 (float) or 64 (int8, uint8) outputs a vector, each tap
 * one masked load (stride 1) or two and a permute (stride 2) whose masked-off
 * lanes, the padding, hold the lowest value and are not read. No copy of the
 * input, no per-output scalar work: the portable loops (ops/pool.c) copy each
 * plane or row with its padding first and ran a mini-Xception's
 * 3x3/s2 pools at 3-4x ONNX Runtime's time. Float MaxPool takes each input
 * row's maxima along W once, then those down H (hm_*), checking the rows
 * for NaN first instead of per tap.
 *
 * Same bits as the portable loops: each output's taps in raster order, the
 * first of equal values staying (maxps is "a > b ? a : b"), and float NaN
 * taps remembered in a mask and written as the canonical NaN. */
#ifndef Q8_KERNELS_CPU_MAXPOOL_X86_H
#define Q8_KERNELS_CPU_MAXPOOL_X86_H

#include <stdbool.h>
#include <stdint.h>

#include "ops/pool.h"

typedef struct q8_maxpool_x86_args {
    const q8_pool_params *p;
    const void *x;
    void *y;
} q8_maxpool_x86_args;

/* Whether this MaxPool (without Indices; float32, int8 or uint8) or float
 * AveragePool suits the loops and the CPU can run them: one spatial plane
 * of H x W (1-D or 2-D), no dilation, stride 1 or 2 along W. AveragePool
 * sums a window's taps in raster order and divides by its count, as the
 * portable loop does (the same bits; 2x2/2 on 1x64x64x64: 0.303 -> 0.026
 * ms, ORT 0.051). */
bool q8_maxpool_x86_fits(const q8_pool_params *p);

/* Range function for q8_parallel_for over output rows (plane, oh) of a
 * q8_maxpool_x86_args; only called where fits said yes. */
void q8_maxpool_x86_range(void *arg, int64_t begin, int64_t end, int thread);

#endif
