/* Depthwise FP32 Conv (one input channel per group, one output each) with
 * stride 2 along W, read straight from X on AVX-512F without the
 * stride-phase planes of the portable loops (conv_impl.c), which copy each
 * input into four padded phase planes first. Two masked loads (the padding
 * zeros) and a permute give 16 output pixels of a row; four vectors in
 * flight. 20-45% less time than the planes loops on MobileNet's stride-2
 * depthwise shapes (1 thread); with stride 1 the planes loops were as fast
 * or faster, so they keep those, and output rows of <= 8 too.
 *
 * Same bits as the planes loops' AVX-512 clone: per output 0 + bias, then one
 * FMA per tap in (kh, kw) order, padding taps as w * +0. */
#ifndef Q8_CONV_DWX_H
#define Q8_CONV_DWX_H

#include <stdbool.h>
#include <stdint.h>

#include "conv_fewc.h" /* Q8_FEWC_X86 */
#include "conv_impl.h"

/* Masks of (16-pixel chunk, kw) pairs live on the stack: at most this many. */
#define Q8_DWX_MAX_MASKS 512

/* Whether this depthwise node suits the loops and the CPU can run them. */
bool q8_conv_dwx_fits(const q8_conv_params *p);

/* Range function for q8_parallel_for over (image, channel) items; reads
 * x, w, bias, y of conv_dw_args (no scratch). Only where Q8_FEWC_X86. */
void q8_conv_dwx_range(void *arg, int64_t begin, int64_t end, int thread);

#endif
