/* Kernel-ready layouts of INT8 weights, as a .q8 file stores them so that
 * the CPU kernels read them in place from the mapping (docs/format.md,
 * "layouts"). A layout is a byte arrangement of a weight W [N][K] (N = dims[0],
 * K = the product of the other dims), values unchanged (int8, padding 0):
 *
 *   PLAIN:   row-major [N][K]
 *   ROWS4:   [N][kp], kp = K rounded up to 4: the INT8 GEMM's rows operand
 *            (q8.QConv with K % 4 != 0; with K % 4 == 0 it is PLAIN), and the
 *            AVX-512 depthwise kernel's weights (KW >= 2)
 *   LANES16: [ceil(N / 16)][kp / 4][16][4]: the INT8 GEMM's lanes operand
 *            (q8.QGemm, and q8.QConv on one output pixel)
 *   TAPS4:   a conv weight [N][C][taps...] as [N][cp / 4][taps][4], cp = C
 *            rounded up to 4: the rows operand of the implicit INT8 conv
 *            (kernels/cpu/qconv_implicit.h), whose K runs over groups of 4
 *            input channels, then the taps, then the 4 channels of a lane
 *
 * kernels/cpu/gemm/igemm.h packs the same arrangements (it checks that the
 * constants agree); q8_layout_for_cpu says which one the CPU kernels read,
 * and the writer stores that one (q8_layout_to_store). Everything else reads a tensor's values
 * through q8_tensor_plain. */
#ifndef Q8_CORE_LAYOUT_H
#define Q8_CORE_LAYOUT_H

#include "graph.h"

#define Q8_LAYOUT_LANES 16
#define Q8_LAYOUT_KSTEP 4

/* The file's numbers (tensor record, byte `layout`); never reused. */
typedef enum q8_layout {
    Q8_LAYOUT_PLAIN = 0,
    Q8_LAYOUT_ROWS4 = 1,
    Q8_LAYOUT_LANES16 = 2,
    Q8_LAYOUT_TAPS4 = 3,        /* version 10 */
    Q8_LAYOUT_COUNT
} q8_layout;

const char *q8_layout_name(q8_layout l);

/* W as the layouts see it: n = dims[0] rows of k values, k = C x taps
 * (taps: the product of dims[2..], 1 for a matrix). */
typedef struct q8_wshape {
    int64_t n, k, taps;
} q8_wshape;

/* W's N and K (false when t has no dims or a zero-sized one). */
bool q8_layout_nk(const q8_tensor *t, int64_t *n, int64_t *k);
/* W's shape (false as q8_layout_nk). */
bool q8_layout_shape(const q8_tensor *t, q8_wshape *s);
/* Bytes W takes in layout l (overflow-checked by the caller's shape
 * limits: N * K < 2^58). */
size_t q8_layout_bytes(q8_layout l, q8_wshape s);
/* Bytes t's data takes: its layout's, or q8_tensor_nbytes for PLAIN. */
size_t q8_tensor_stored_bytes(const q8_tensor *t);
/* The stored bytes of the constants that nodes read (only the nodes with
 * which[i] set; every node for NULL), each constant once. false when out of
 * memory. */
bool q8_graph_const_bytes(const q8_graph *g, const bool *which, size_t *bytes);

/* Plain int8 [n][k] -> layout l at dst (q8_layout_bytes(l, s) bytes). */
void q8_layout_pack(q8_layout l, const int8_t *src, q8_wshape s, int8_t *dst);
/* Layout l -> plain [n][k]. */
void q8_layout_unpack(q8_layout l, const int8_t *src, q8_wshape s, int8_t *dst);
/* Row j of W (k values) in plain order to dst, from layout l. */
void q8_layout_row(q8_layout l, const int8_t *src, q8_wshape s, int64_t j, int8_t *dst);
/* True when every padding byte of data in layout l is 0. */
bool q8_layout_padding_zero(q8_layout l, const int8_t *data, q8_wshape s);

/* t's values in row-major order: t->data itself when t is PLAIN, else a
 * copy in *tmp (q8_aligned_alloc'd; the caller frees it with
 * q8_aligned_free). *tmp is NULL when no copy was made. */
q8_status q8_tensor_plain(const q8_tensor *t, const void **data, void **tmp, q8_error *err);

/* The layout the CPU kernels of node n read its input `slot` in (params
 * inferred): LANES16 for q8.QGemm's W and for q8.QConv's W on one output
 * pixel (1x1, stride 1, unpadded, one group), TAPS4 for the W of the convs
 * the implicit kernel runs (q8_qconv_implicit), ROWS4 for other
 * non-depthwise q8.QConv W with K % 4 != 0, else PLAIN. */
q8_layout q8_layout_for_reader(const q8_node *n, int slot);
/* The layout the CPU kernels read constant tensor t in (ops resolved and
 * params inferred): that of its readers when they all agree, else PLAIN. */
q8_layout q8_layout_for_cpu(const q8_graph *g, int t);
/* The layout a .q8 stores t in: q8_layout_for_cpu's, except PLAIN where
 * that layout would add more than 1/8 to the bytes (QGemm's lanes16 with
 * few output channels, rows4 on tiny K; a session packs those) unless only
 * depthwise convs read t (their kernels pad it anyway). */
q8_layout q8_layout_to_store(const q8_graph *g, int t);
/* Layout l adds at most 1/8 to the n * k bytes of a weight. */
bool q8_layout_pads_little(q8_layout l, q8_wshape s);
/* q8.QConv's one-output-pixel GEMV form (1x1, stride 1, unpadded, one
 * group, not depthwise), which reads W as lanes16: only when lanes16 pads W
 * by at most 1/8; with fewer output channels (squeeze-excite convs) the
 * GEMM reads W in place as rows instead of a padded packed copy. */
struct q8_qconv_params;
bool q8_qconv_gemv(const struct q8_qconv_params *p);
/* q8.QConv's implicit form (kernels/cpu/qconv_implicit.h): not depthwise,
 * stride 1, a kernel of more than one tap, and TAPS4 pads W by at most 1/8
 * (Cg % 4 == 0, or enough channels). Its K is taps x cp. */
bool q8_qconv_implicit(const struct q8_qconv_params *p);

#endif
