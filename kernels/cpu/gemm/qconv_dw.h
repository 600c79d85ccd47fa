/* Direct depthwise q8.QConv (one input channel per group, any number of
 * output channels per group): SIMD kernels that vectorize across the output
 * width with all taps of a block accumulated in registers, and the
 * requantization fused per channel. qconv.c plans one in prepare (when the
 * geometry suits the path) and otherwise keeps its generic depthwise loop.
 *
 * AVX-512 (F, BW, VL, VNNI, VBMI): 16 outputs per block. The int8 input is
 * read in place: for each kernel row, one 64-byte masked load per input row
 * (the masks stand for the zero padding at the borders, rows outside the
 * plane are not read), xor 0x80 (uint8 = int8 + 128). The taps are taken
 * in row-major order four at a time (a "group" spans at most two kernel
 * rows); vpermi2b gathers, for each output lane, the four input bytes of a
 * group from the two row vectors, and vpdpbusd multiplies them by the
 * group's four weights. init = bias - 128 * sum(w) undoes the +128. Narrow
 * planes (OW <= 8) put 2 or 4 output rows in one block (8 or 4 lanes each).
 * Any stride and dilation for which a block's bytes of one input row fit
 * in its segment of the vector.
 *
 * AVX2: each plane is widened once to int16 in a zero-padded scratch copy;
 * vpmaddwd multiplies adjacent tap pairs (kw, kw + 1) of a kernel row. With
 * stride 2 a 32-byte load holds exactly the pairs of 8 consecutive outputs;
 * with stride 1 loads at even and odd offsets give the even and odd
 * outputs. Strides 1 and 2, dilation 1 along the width.
 *
 * Both give exactly the int32 accumulators of the definition (wrapping
 * sums, exact whenever the result fits, as everywhere in igemm.h) and the
 * epilogue of requant.h. */
#ifndef Q8_KERNELS_CPU_QCONV_DW_H
#define Q8_KERNELS_CPU_QCONV_DW_H

#include "igemm.h"
#include "ops/qconv_geom.h"

#define Q8_QDW_MAX_KH 16      /* AVX-512: kernel rows of one block */
#define Q8_QDW_MAX_GROUPS 32  /* AVX-512: groups of four taps */
#define Q8_QDW_GLOBAL_CH 256  /* global depthwise: channels a task (q8_qdw_run) */

typedef enum q8_qdw_kind {
    Q8_QDW_NONE = 0,          /* not planned: the generic depthwise loop */
    Q8_QDW_AVX2,
    Q8_QDW_AVX512,
} q8_qdw_kind;

typedef struct q8_qdw {
    q8_qdw_kind kind;
    q8_qconv_geom geo;
    int64_t Mg;               /* output channels per input channel */
    /* AVX-512 */
    int R, L, SB;             /* output rows per block, lanes per row, bytes per row segment */
    int NB;                   /* R == 1: blocks of 16 outputs per row vector (1 or 3) */
    int G;                    /* groups of four taps */
    int8_t ra[Q8_QDW_MAX_GROUPS], rb[Q8_QDW_MAX_GROUPS]; /* kernel rows of each group */
    /* the kernel covers the unpadded plane (one output per channel, M ==
     * C, MobileFaceNet's global depthwise conv): channels in the lanes,
     * q8_qdw_global_avx512 (a channel at a time cost 100x its arithmetic) */
    bool global;
    /* AVX2 */
    int64_t Hp, Wq;           /* the widened plane: rows, int16 per row */
    int64_t OWr;              /* output row rounded up to 16 */
    int NP;                   /* tap pairs per kernel row */
    /* byte offsets into the prepared blob */
    size_t off_tab;           /* AVX-512: [NB][G] x 64 index bytes, then the 16-lane compaction */
    const int8_t *w;          /* AVX-512: the weights [M][G] x 4 in place (the file's rows4
                               * layout), or NULL: packed at off_w */
    size_t off_w;             /* weights: AVX-512 [M][G] x 4 bytes; AVX2 [M][KH][NP] x 2 int16 */
    size_t off_init;          /* [M] int32 */
    size_t per_thread;        /* scratch bytes per thread */
} q8_qdw;

/* Plan the kernel for geometry q (group == C, any M) on path (resolved
 * here); kind stays Q8_QDW_NONE when no kernel fits. Reserves the packed
 * bytes at *off (see q8_qop_reserve). w_rows4: the weights as [M][kp] (kp =
 * KH * KW rounded up to 4, padding 0), which the AVX-512 kernel then reads
 * in place when its groups of taps are consecutive; or NULL. */
void q8_qdw_plan(q8_qdw *d, const q8_qconv_geom *q, q8_igemm_path path, const int8_t *w_rows4,
                 size_t *off);
/* Fill the planned tables from the weights (row m of KH * KW taps at
 * w + m * ldw) and bias (NULL: 0). */
void q8_qdw_pack(const q8_qdw *d, const int8_t *w, int64_t ldw, const int32_t *bias,
                 void *packed);
/* Run on X [N][C][H][W] -> Y [N][M][OH][OW] through epilogue e (channel
 * rows). scratch: per_thread bytes per thread. */
void q8_qdw_run(const q8_qdw *d, const void *packed, const q8_epilogue *e, const int8_t *x,
                void *y, void *scratch, q8_pool *pool);

/* ---- internal: the per-path channel kernels ------------------------------ */

/* One output channel m of one image: plane x [H][W] -> y [OH][OW]. */
#if defined(__x86_64__) || defined(__i386__)
void q8_qdw_chan_avx512(const q8_qdw *d, const void *packed, const q8_epilogue *e, int64_t m,
                        const int8_t *x, void *y);
void q8_qdw_chan_avx2(const q8_qdw *d, const void *packed, const q8_epilogue *e, int64_t m,
                      const int8_t *x, void *y, void *scratch);
/* d->global: channels [m0, m1) of one image, x [C][H][W] -> y [M];
 * m1 - m0 <= Q8_QDW_GLOBAL_CH. */
void q8_qdw_global_avx512(const q8_qdw *d, const void *packed, const q8_epilogue *e,
                          const int8_t *x, void *y, int64_t m0, int64_t m1);
#endif
bool q8_qdw_has_vbmi(void);

#endif
