/* The implicit INT8 conv on the CPU: stride-1 convs (q8_qconv_implicit in
 * core/layout.h) run as one INT8 GEMM whose lanes are read from a copy of X
 * instead of an im2col. X is copied once, padded, as uint8 (int8 + 128),
 * four channels interleaved ("NC4HW4"): for a group of 4 channels, pixel
 * (h, w) of the padded plane holds their 4 bytes at (h x Wp + w) x 4. Over
 * a grid of OH rows of Wp columns (the padded width: the Wp - OW last
 * columns of each row are computed and dropped), output column j reads tap
 * (kh, kw) at pixel j + kh x dh x Wp + kw x dw of every channel plane, so
 * the GEMM's lanes chunk for 16 consecutive columns, one tap and one group
 * of 4 channels is 64 consecutive bytes of the copy. The weights' K runs
 * over the channel groups, then the taps (layout TAPS4, stored so in the
 * file): a tile's consecutive chunks read one channel plane's few rows. */
#ifndef Q8_KERNELS_CPU_QCONV_IMPLICIT_H
#define Q8_KERNELS_CPU_QCONV_IMPLICIT_H

#include <stdbool.h>
#include <stddef.h>

#include "ops/qconv_geom.h"
#include "threadpool.h"

typedef struct q8_qimp {
    int64_t Hp, Wp;     /* the padded plane */
    int64_t cg4;        /* groups of 4 input channels */
    int64_t S;          /* pixels per channel group in the copy: the plane and what
                         * the last panel reads past it */
    int64_t G;          /* lanes chunks per panel: taps x cg4 */
    int64_t J;          /* GEMM columns: OH x Wp */
} q8_qimp;

void q8_qimp_plan(q8_qimp *m, const q8_qconv_geom *q, int64_t Cg);
/* Bytes of the copy of one group's X. */
static inline size_t q8_qimp_xbytes(const q8_qimp *m) { return (size_t)(m->cg4 * m->S * 4); }
/* Byte offset in the copy of chunk g (channel group major, then the taps)
 * from its panel's start. */
void q8_qimp_offsets(const q8_qimp *m, const q8_qconv_geom *q, int64_t *off);
/* The copy of Cg channels at x (int8 [Cg][H][W]) at xp. */
void q8_qimp_copy(const q8_qimp *m, const q8_qconv_geom *q, int64_t Cg, const int8_t *x,
                  uint8_t *xp, q8_pool *pool);
#if defined(__x86_64__) || defined(__i386__)
/* One padded row's W pixels of 4 channel rows (NULL: past Cg), interleaved
 * as uint8 at dst, on AVX-512BW. */
void q8_qimp_row_avx512(const int8_t *const r[4], int64_t W, uint8_t *dst);
#endif
/* Panels [p0, p0 + np) of the lanes, packed at dst (chunk g of panel p at
 * dst + ((p - p0) x G + g) x 64). */
void q8_qimp_lanes(const q8_qimp *m, const uint8_t *xp, const int64_t *off, int64_t p0,
                   int64_t np, uint8_t *dst);

#endif
