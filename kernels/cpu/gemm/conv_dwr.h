/* Depthwise FP32 Conv read straight from X on AVX-512F, each input row
 * loaded once: stride 1 ("same" pads along W; rows wider than 64 in
 * chunks of 64 columns with the vectors either side),
 * its 1-4 vectors and their shifted copies (one lane permute each, the
 * padding lanes zero); stride 2, its even and odd columns (two permutes a
 * vector) and those moved by a lane or two. Either way the row feeds every
 * output row whose window holds it, a block of output rows in registers at
 * a time. The stride-phase planes loops (conv_impl.c) copy each channel
 * into padded planes first and load every tap's vector again (unaligned,
 * across cache lines); the loops with channels in the lanes (conv_dwc.h)
 * pay two 16x16 transposes a pixel block, and win only on small maps.
 * 1 thread: the emotion classifier's 3x3 on 128x29x29 0.069 ms (dwc) ->
 * 0.028 (ORT 0.037 without its reorders); 3x3 on 24x112x112 0.200 ->
 * 0.102 (ORT 0.125); 3x3 stride 2 on 96x96x96 0.272 -> 0.139 (ORT 0.160).
 *
 * Same bits as the planes loops' AVX-512 clone: per output 0 + bias, then
 * one FMA per tap in (kh, kw) order, padding taps as w * +0. */
#ifndef Q8_CONV_DWR_H
#define Q8_CONV_DWR_H

#include <stdbool.h>
#include <stdint.h>

#include "conv_fewc.h" /* Q8_FEWC_X86 */
#include "conv_impl.h"

/* Whether this depthwise node suits the loops and the CPU can run them:
 * one output per input channel, 2-D, dilation 1; stride 1: a square kernel
 * of 3, 5 or 7, pads along W of (k - 1) / 2 on both sides (the output as
 * wide as the input), rows of 7 (3x3) or 14 and more, of at most 64 for
 * 7x7; stride 2: 3x3 or 5x5, any pads below the kernel, output rows of 16
 * (3x3) or 24 to 64. */
bool q8_conv_dwr_fits(const q8_conv_params *p);

/* Range function for q8_parallel_for over (image, channel) items; reads
 * x, w, bias, y of conv_dw_args (no scratch). Only where Q8_FEWC_X86. */
void q8_conv_dwr_range(void *arg, int64_t begin, int64_t end, int thread);

#endif
