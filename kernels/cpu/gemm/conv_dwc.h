/* Depthwise FP32 Conv on small maps with 16 channels in the vector lanes,
 * on AVX-512F: per block of 16 channels the input is transposed into a
 * zero-padded buffer of 16-channel pixels, every tap is one aligned load
 * and one FMA per output pixel (no masks, no garbage columns, no split
 * loads), and the outputs are transposed back. On maps of 7x7 and 14x14
 * the planes loops (conv_impl.c) spend most of their time on what this
 * avoids: a 7x7 row is 7 of a vector's 16 lanes there, and their padded
 * grid is 11 columns wide. Larger maps go in bands of output rows.
 *
 * Same bits as the planes loops' AVX-512 clone: per output 0 + bias, then
 * one FMA per tap in (kh, kw) order, padding taps as w * +0. */
#ifndef Q8_CONV_DWC_H
#define Q8_CONV_DWC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ops/conv.h"

/* Output rows up to this wide (wider: the planes loops, whose vectors they
 * fill). Measured at 1 thread against the planes loops: 15-25% less time
 * for rows of 40-60 (3x3 on 144x56x56 0.149 -> 0.128 ms, 5x5 on 120x60x60
 * 0.277 -> 0.209, 3x3/2 on 96x112x112 0.221 -> 0.168); as fast at 64;
 * slower from 96 (32x96x96 0.082 -> 0.104; 32x160x160 0.213 -> 0.238). */
#define DWC_MAX_OW 60

/* Whether this depthwise node suits the loops and the CPU can run them. */
bool q8_conv_dwc_fits(const q8_conv_params *p);

/* Scratch per thread (bytes, a multiple of 64). */
size_t q8_conv_dwc_per_thread(const q8_conv_params *p);

/* Items: (image, block of 16 channels, band of output rows). */
int64_t q8_conv_dwc_items(const q8_conv_params *p);

/* Range function for q8_parallel_for over q8_conv_dwc_items; reads x, w,
 * bias, y, scratch and per_thread of conv_dw_args. */
void q8_conv_dwc_range(void *arg, int64_t begin, int64_t end, int thread);

#endif
