/* im2col for the INT8 convs on the CPU, on the geometry the core resolved
 * (src/core/ops/qconv_geom.h). */
#ifndef Q8_KERNELS_CPU_QCONV_IM2COL_H
#define Q8_KERNELS_CPU_QCONV_IM2COL_H

#include "ops/qconv_geom.h"
#include "threadpool.h"

/* im2col of one group: col[k][p] for k = (c, kh, kw) over the group's
 * C / group channels starting at x, p = (oh, ow); pad fills the padding
 * (the quantized zero). */
void q8_qconv_im2col(const q8_qconv_geom *q, const uint8_t *x, uint8_t pad, uint8_t *col,
                     q8_pool *pool);

/* The same bytes as q8_qconv_im2col (pad 0) of the group's Cg channels at x
 * followed by q8_ig_pack_lanes_kj(col, P, K, P, to_u8 = true, lanes), made
 * directly on AVX-512 VBMI when q8_qconv_lanes_vbmi_ok (the CPU must have
 * avx512f, avx512bw and avx512vbmi). tab: q8_qconv_lanes_tab's KW x 64 bytes. */
bool q8_qconv_lanes_vbmi_ok(const q8_qconv_geom *q);
void q8_qconv_lanes_tab(const q8_qconv_geom *q, uint8_t *tab);
#if defined(__x86_64__) || defined(__i386__)
void q8_qconv_lanes_vbmi(const q8_qconv_geom *q, int64_t Cg, const int8_t *x,
                         const uint8_t *tab, uint8_t *lanes, q8_pool *pool);
/* Only panels [p0, p0 + np) of those lanes, written at dst (one thread). */
void q8_qconv_lanes_vbmi_block(const q8_qconv_geom *q, int64_t Cg, const int8_t *x,
                               const uint8_t *tab, int64_t p0, int64_t np, uint8_t *dst);
#endif

/* The same bytes again for 1x1 convs with a stride and no pads (a ResNet
 * shortcut, Xception's strided 1x1 convs), on AVX-512 VBMI: each chunk's
 * 16 pixels picked from a 128-byte window of each of its 4 channels.
 * q8_qconv_lanes_sub_ok: the geometry fits (every panel's pixels lie within
 * 128 bytes of its first). */
bool q8_qconv_lanes_sub_ok(const q8_qconv_geom *q);
#if defined(__x86_64__) || defined(__i386__)
void q8_qconv_lanes_sub(const q8_qconv_geom *q, int64_t Cg, const int8_t *x, uint8_t *lanes,
                        q8_pool *pool);
void q8_qconv_lanes_sub_block(const q8_qconv_geom *q, int64_t Cg, const int8_t *x, int64_t p0,
                              int64_t np, uint8_t *dst);
#endif

/* The same bytes as q8_qconv_im2col (pad 0) + q8_ig_pack_lanes_kj(to_u8 = true),
 * made on any CPU by copying each lane's runs of KW input bytes, when
 * q8_qconv_lanes_runs_ok: horizontal dilation 1 and a long kernel
 * (KW >= 16; K up to 4096). */
bool q8_qconv_lanes_runs_ok(const q8_qconv_geom *q);
void q8_qconv_lanes_runs(const q8_qconv_geom *q, int64_t Cg, const int8_t *x, uint8_t *lanes,
                         q8_pool *pool);

/* [*lo, *hi): the indices i in [0, count) for which i * s + off lies in
 * [0, size) (output columns that read a real input column). */
static inline void q8_qconv_valid_cols(int64_t off, int64_t s, int64_t size, int64_t count,
                                       int64_t *lo, int64_t *hi) {
    int64_t a = off >= 0 ? 0 : (-off + s - 1) / s;
    int64_t b = size - 1 - off >= 0 ? (size - 1 - off) / s + 1 : 0;
    *lo = a < count ? a : count;
    *hi = b < *lo ? *lo : b > count ? count : b;
}

#endif
