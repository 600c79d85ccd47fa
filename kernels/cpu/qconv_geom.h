/* Geometry of q8.QConv / q8.QConvTranspose: ONNX Conv / ConvTranspose
 * attributes (auto_pad, dilations, group, kernel_shape, pads, strides,
 * output_padding, output_shape) checked and resolved into one 2-D
 * description (1-D convolutions have H = KH = OH = 1). */
#ifndef Q8_KERNELS_CPU_QCONV_GEOM_H
#define Q8_KERNELS_CPU_QCONV_GEOM_H

#include "cpu_op.h"

typedef struct q8_qconv_geom {
    int nsp;                    /* spatial dims of the model: 1 or 2 */
    int64_t N, C, M, group;     /* M: output channels */
    int64_t H, W, OH, OW;       /* input and output spatial size */
    int64_t KH, KW, sh, sw, dh, dw;
    int64_t pt, pl, pb, pr;     /* pads: top, left, bottom, right */
} q8_qconv_geom;

/* X is input 0, W input wi ([M, C/group, *kernel] for all these ops). */
q8_status q8_qconv_geom_parse(const q8_graph *g, const q8_node *n, int wi, bool transpose,
                              q8_qconv_geom *o, q8_error *err);

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
#endif

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
