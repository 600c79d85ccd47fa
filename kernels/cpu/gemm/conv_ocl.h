/* Direct FP32 Conv with the output channels in the lanes: for each tap k =
 * (ci, kh, kw) two weight vectors (32 output channels) are multiplied by 12
 * pixels of X, each broadcast from where it lies in X, whatever the stride:
 * the GEMM lowerings' phase planes, grid output and compaction (a stride-2
 * conv's third of its time, YOLOv5s's seven of them 37 of 103 ms) are not
 * needed. Rows of taps outside X read a zero row; output pixels whose taps
 * leave X at the sides gather their column first. AVX-512 only (elsewhere
 * Conv keeps the GEMM lowerings).
 *
 * Same bits as the SGEMM lowerings: each output is, per K block of the
 * SGEMM (q8_sgemm_kblock), a chain of FMAs from +0 over its taps in order,
 * padding taps included (as x = +0), the blocks' sums added in order, then
 * + bias, then the activation. */
#ifndef Q8_CONV_OCL_H
#define Q8_CONV_OCL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ops/conv.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define Q8_OCL_X86 1
#else
#define Q8_OCL_X86 0
#endif

/* Output channels per block (two AVX-512 registers) and pixels per tile. */
#define Q8_OCL_MB 32
#define Q8_OCL_NP 12

/* Whether this node's shape suits the kernel and the CPU can run it. */
bool q8_conv_ocl_fits(const q8_conv_params *p);

/* W [m][kg] as blocks of Q8_OCL_MB channels: dst[blk][k][Q8_OCL_MB],
 * channels past m zero. */
size_t q8_conv_ocl_packed_floats(const q8_conv_params *p);
void q8_conv_ocl_pack(const q8_conv_params *p, const float *w, float *dst);

/* Output columns whose every tap lies inside X's width: [*lo, *hi); the
 * others (the edges) are gathered, at most Q8_OCL_MAX_EDGES a row. */
void q8_conv_ocl_inside(const q8_conv_geom *G, int64_t *lo, int64_t *hi);
#define Q8_OCL_MAX_EDGES (2 * Q8_OCL_NP)

/* Scratch per thread: the taps' rows of X for an output row, the edge
 * pixels' gathered columns and the tap pointers into them, the edge tile's
 * output block and a zero row (the rows of taps above or below X). */
typedef struct q8_conv_ocl_scratch {
    const float **rows, **cptr;
    float *cbuf, *yblk, *zero;
} q8_conv_ocl_scratch;
size_t q8_conv_ocl_per_thread(const q8_conv_params *p);
void q8_conv_ocl_scratch_at(const q8_conv_params *p, char *base, q8_conv_ocl_scratch *s);

typedef struct conv_ocl_args {
    const q8_conv_params *p;
    const float *x, *wp, *bias;  /* wp: q8_conv_ocl_pack's layout */
    float *y;
    char *scratch;               /* q8_conv_ocl_per_thread bytes per thread */
} conv_ocl_args;
/* Items: (image, output row, channel block), the block fastest (the blocks
 * of a row read the same rows of X). */
int64_t q8_conv_ocl_items(const q8_conv_params *p);
/* Range function for q8_parallel_for. Only where Q8_OCL_X86 (and only
 * called when fits said yes). */
void q8_conv_ocl_range(void *arg, int64_t begin, int64_t end, int thread);

#endif
