/* Direct FP32 Conv for few input channels: an image network's first conv
 * (3 -> 16, 3x3 stride 2 on 224x224). As a GEMM its K is tiny (cg*kh*kw)
 * and the stride-phase planes, the grid output and its compaction cost more
 * than the multiply-adds; this kernel reads X in place (masked loads give the
 * padding zeros) and writes Y directly, 16 output channels x 16 pixels per
 * step. AVX-512 only (elsewhere Conv keeps the GEMM lowerings).
 *
 * Same bits as the AVX-512 SGEMM lowerings: each output is a chain of FMAs
 * from +0 over every tap k = (ci, kh, kw) in order, padding taps included
 * (as w * +0), then + bias, then the activation. */
#ifndef Q8_CONV_FEWC_H
#define Q8_CONV_FEWC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ops/conv.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define Q8_FEWC_X86 1
#else
#define Q8_FEWC_X86 0
#endif

/* Output channels per block (one AVX-512 register of pixels each). */
#define Q8_FEWC_MB 16

/* Whether this node's shape suits the kernel and the CPU can run it. */
bool q8_conv_fewc_fits(const q8_conv_params *p);

/* W [m][kg] as blocks of Q8_FEWC_MB channels: dst[blk][k][Q8_FEWC_MB],
 * channels past m zero. */
size_t q8_conv_fewc_packed_floats(const q8_conv_params *p);
void q8_conv_fewc_pack(const q8_conv_params *p, const float *w, float *dst);
/* The same for blocks of mb channels (conv_ocl.h's 32). */
size_t q8_conv_blocks_packed_floats(const q8_conv_params *p, int64_t mb);
void q8_conv_blocks_pack(const q8_conv_params *p, const float *w, int64_t mb, float *dst);

typedef struct conv_fewc_args {
    const q8_conv_params *p;
    const float *x, *wp, *bias;  /* wp: q8_conv_fewc_pack's layout */
    float *y;
} conv_fewc_args;
/* Range function for q8_parallel_for; items: output rows (image, oh).
 * Only where Q8_FEWC_X86 (and only called when fits said yes). */
void q8_conv_fewc_range(void *arg, int64_t begin, int64_t end, int thread);

#endif
