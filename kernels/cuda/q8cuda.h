/* The interface between the CUDA backend's C code (kernels/cuda/backend.c and
 * the op planners kernels/cuda/ops_<family>.c) and the kernels (kernels/cuda/<op>.cu):
 * plain C parameter structs, passed by value to the kernels, and one C
 * launcher per kernel that returns the launch's cudaError_t.
 *
 * Every kernel computes each output element (or each row, for the
 * row-wise reductions) in a __host__ __device__ function; the launcher
 * either launches a grid-stride kernel around it or, with s->emu set
 * (Q8_CUDA_EMULATE=1, a testing aid), calls the same function for every
 * index on the host, with host pointers. So the index arithmetic of every
 * kernel can be checked against the CPU backend on a machine without a GPU.
 * This header is C and C++ (nvcc) at once: no q8 internal headers here. */
#ifndef Q8_KERNELS_CUDA_Q8CUDA_H
#define Q8_KERNELS_CUDA_Q8CUDA_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#define Q8CU_MAX_DIMS 8

typedef struct q8cu_stream {
    cudaStream_t stream;
    int emu;                    /* 1: run on the host (no CUDA calls at all) */
} q8cu_stream;

/* ---- INT8 epilogue (docs/int8-ops.md), shared by the GEMM-based ops ----- */

enum { Q8CU_EPI_I32 = 0, Q8CU_EPI_I8 = 1, Q8CU_EPI_F32 = 2 };

typedef struct q8cu_epi {
    int kind;
    const int32_t *bias;        /* per channel, added with int32 wrap-around; or NULL */
    /* Q8CU_EPI_I8 */
    const int32_t *mult, *shift; /* per channel (q8_requant_make) */
    int32_t lo, hi;             /* clamp after the shift */
    const int8_t *lut;          /* LeakyRelu: y < 0 becomes lut[y + 128]; or NULL */
    /* Q8CU_EPI_F32: y = (float)acc * scale[c], then the activation */
    const float *scale;
    int clip, leaky;
    float flo, fhi, alpha;
} q8cu_epi;

/* GEMM output (int32, cuBLASLt column-major: element (i, j) of batch b at
 * c[b * c_bs + j * c_ld + i]) through the epilogue into y. For i < ni,
 * j < nj, b < nb the output goes to
 *   y[b * y_bs + j * y_js + (i / i_div) * y_ihi + (i % i_div) * y_ilo]
 * and the channel is j + ch_off (chan 0), i + ch_off (chan 1) or ch_off
 * (chan 2). */
enum { Q8CU_CHAN_J = 0, Q8CU_CHAN_I = 1, Q8CU_CHAN_ONE = 2 };

typedef struct q8cu_gemm_epi_args {
    q8cu_epi e;
    const int32_t *c;
    void *y;
    int64_t nb, nj, ni;
    int64_t c_bs, c_ld;
    int64_t i_div;
    int64_t y_bs, y_js, y_ihi, y_ilo;
    int chan;
    int64_t ch_off;
} q8cu_gemm_epi_args;
cudaError_t q8cu_gemm_epilogue(const q8cu_stream *s, const q8cu_gemm_epi_args *p);

/* The plain INT8 GEMM (cuBLASLt's TN parameters, int32 output): the
 * fallback for shapes cuBLASLt has no algorithm for, and the emulation's
 * reference. */
typedef struct q8cu_igemm_args {
    const int8_t *A, *B;
    int32_t *C;
    int64_t m, n, k, lda, ldb, ldc, batch, sa, sb, sc;
} q8cu_igemm_args;
cudaError_t q8cu_igemm_simple(const q8cu_stream *s, const q8cu_igemm_args *p);

/* INT8 im2col of nimg images of one conv group into col [rows_pad][kp]:
 * row r = img * P + (oh * OW + ow), column k = (c * KH + kh) * KW + kw;
 * padding, k >= K and r >= nimg * P are 0. x points at the group's first
 * channel of the first image; images are img_stride elements apart. */
typedef struct q8cu_im2col_args {
    const int8_t *x;
    int8_t *col;
    int64_t nimg, P, rows_pad, K, kp, img_stride;
    int64_t H, W, OW, KH, KW, sh, sw, dh, dw, pt, pl;
} q8cu_im2col_args;
cudaError_t q8cu_im2col(const q8cu_stream *s, const q8cu_im2col_args *p);

/* Direct INT8 convolution (depthwise and small groups): one thread per
 * output element sums its C/group * KH * KW products in int32. */
typedef struct q8cu_conv_direct_args {
    q8cu_epi e;
    const int8_t *x, *w;
    void *y;
    int64_t N, C, H, W, M, OH, OW, Cg, Mg, KH, KW, sh, sw, dh, dw, pt, pl;
} q8cu_conv_direct_args;
cudaError_t q8cu_conv_direct(const q8cu_stream *s, const q8cu_conv_direct_args *p);

/* float32 Conv, direct (conv_f32.cu): geometry widened to 3-D as
 * src/core/ops/conv_geom.h has it; act: Q8CU_ACT_* (p0, p1 its bounds or
 * slopes, as q8_act). */
enum { Q8CU_ACT_NONE, Q8CU_ACT_RELU, Q8CU_ACT_CLIP, Q8CU_ACT_LEAKY_RELU, Q8CU_ACT_SIGMOID,
       Q8CU_ACT_HARD_SIGMOID, Q8CU_ACT_HARD_SWISH };
typedef struct q8cu_conv_f32_args {
    const float *x, *w, *b;     /* b: per output channel, or NULL */
    float *y;
    int64_t n;                  /* output elements */
    int64_t C, M, Cg, Mg;
    int64_t in[3], out[3], k[3], s[3], dl[3], pb[3];
    int act;
    float p0, p1;
} q8cu_conv_f32_args;
cudaError_t q8cu_conv_f32(const q8cu_stream *s, const q8cu_conv_f32_args *p);

/* ConvTranspose: gather the GEMM's per-tap sums into each output element.
 * col row r = (m * KH + kh) * KW + kw (m local to the group) holds, at
 * column img * Pin + ih * W + iw, the sum over the group's input channels
 * for input pixel (ih, iw) of image img of the chunk. */
typedef struct q8cu_col2im_args {
    q8cu_epi e;
    const int32_t *col;
    void *y;                    /* the chunk's first image, all channels */
    int64_t nimg, Mg, m0, OH, OW, H, W, KH, KW, sh, sw, dh, dw, pt, pl;
    int64_t col_ld, Pin, y_img_stride;
} q8cu_col2im_args;
cudaError_t q8cu_col2im(const q8cu_stream *s, const q8cu_col2im_args *p);

/* Pack a GEMM operand: dst[b][r][k] (rows_pad x kp per batch, zero for
 * r >= rows or k >= K) = src[soff(b) + r * s_r + k * s_k], where soff(b)
 * decodes b over bdims (nbd dims, row-major) with per-dim element strides
 * bstr (0 for broadcast dims). */
typedef struct q8cu_pack_args {
    const int8_t *src;
    int8_t *dst;
    int64_t nb, rows, rows_pad, K, kp;
    int64_t s_r, s_k;
    int nbd;
    int64_t bdims[Q8CU_MAX_DIMS], bstr[Q8CU_MAX_DIMS];
} q8cu_pack_args;
cudaError_t q8cu_pack(const q8cu_stream *s, const q8cu_pack_args *p);

/* ---- QuantizeLinear / DequantizeLinear ----------------------------------- */

/* element i uses channel (i / inner) % count. */
typedef struct q8cu_quant_args {
    const void *x;              /* float32 or int32 (in_i32) */
    void *y;                    /* int8 (out_i8) or uint8 */
    const float *scale;
    const void *zp;             /* int8 / uint8 like y, or NULL */
    int64_t n, inner, count;
    int in_i32, out_i8;
} q8cu_quant_args;
cudaError_t q8cu_quantize(const q8cu_stream *s, const q8cu_quant_args *p);

enum { Q8CU_T_I8 = 1, Q8CU_T_U8 = 2, Q8CU_T_I32 = 3 };

typedef struct q8cu_dequant_args {
    const void *x;              /* xt: Q8CU_T_* */
    float *y;
    const float *scale;
    const void *zp;             /* like x, or NULL */
    int64_t n, inner, count;
    int xt;
} q8cu_dequant_args;
cudaError_t q8cu_dequantize(const q8cu_stream *s, const q8cu_dequant_args *p);

/* q8.QLut: y[i] = table[x[i] + 128] (int8 in and out); with an index,
 * element i of plane p = i / inner reads table index[p % channels]. */
typedef struct q8cu_qlut_args {
    const int8_t *x, *table;
    const uint8_t *index;
    int8_t *y;
    int64_t n, channels, inner;
} q8cu_qlut_args;
cudaError_t q8cu_qlut(const q8cu_stream *s, const q8cu_qlut_args *p);

/* q8.QAdd: y = clamp((a * ma + b * mb + 2^(shift-1)) >> shift) (src/core/ops/qadd.h). */
typedef struct q8cu_qadd_args {
    const int8_t *a, *b;
    int8_t *y;
    int32_t ma, mb, shift, lo; /* lo: the lower clamp, -128 or 0 (a fused Relu) */
    int64_t n;
} q8cu_qadd_args;
cudaError_t q8cu_qadd(const q8cu_stream *s, const q8cu_qadd_args *p);

/* q8.QMul: y[o, i] = clamp((a[o, i] * b[o] * m + 2^(shift-1)) >> shift) (src/core/ops/qmul.h). */
typedef struct q8cu_qmul_args {
    const int8_t *a, *b;
    int8_t *y;
    int32_t m, shift;
    int64_t n, inner;
} q8cu_qmul_args;
cudaError_t q8cu_qmul(const q8cu_stream *s, const q8cu_qmul_args *p);

/* q8.QMulF: y[o, i] = round_sat(((float)a[o, i] * sa) * ((float)b[o] * sb) / sy). */
typedef struct q8cu_qmulf_args {
    const int8_t *a, *b;
    int8_t *y;
    float sa, sb, sy;
    int64_t n, inner;
} q8cu_qmulf_args;
cudaError_t q8cu_qmulf(const q8cu_stream *s, const q8cu_qmulf_args *p);

/* q8.QPRelu: v = (float)x[i] * sx, v < 0 ? v * slope[c] : v, then
 * round_sat(v / sy); c = (i / inner) % channels (channels 1: slope[0]). */
typedef struct q8cu_qprelu_args {
    const int8_t *x;
    const float *slope;
    int8_t *y;
    float sx, sy;
    int64_t n, inner, channels;
} q8cu_qprelu_args;
cudaError_t q8cu_qprelu(const q8cu_stream *s, const q8cu_qprelu_args *p);

/* q8.EwChain (src/core/ops/ewchain.h): per element, the float value of x
 * (float32, or (x - xz) * xs for int8 / uint8 / int32, xt Q8CU_T_*, 0: float32),
 * the steps (kind, c0, c1 as the core's q8_ew_step), then y as float32 or
 * round_sat(v / ys, yz) as int8 / uint8 (yt, 0: float32). */
#define Q8CU_EW_MAX_STEPS 16
typedef struct q8cu_ew_step {
    int32_t kind;
    float c0, c1;
} q8cu_ew_step;
typedef struct q8cu_ewchain_args {
    const void *x;
    void *y;
    int64_t n;
    int xt, yt, n_steps;
    float xs, ys;
    int32_t xz, yz;
    q8cu_ew_step steps[Q8CU_EW_MAX_STEPS];
    const float *bn_k, *bn_m; /* a BatchNormalization first: v * k[c] + m[c] */
    int64_t bn_inner, bn_c;
} q8cu_ewchain_args;
cudaError_t q8cu_ewchain(const q8cu_stream *s, const q8cu_ewchain_args *p);

/* q8.QGlobalAveragePool: y[r] = requantized exact sum of the len int8 values
 * of row r (src/core/ops/qgap.h). */
typedef struct q8cu_qgap_args {
    const int8_t *x;
    int8_t *y;
    int32_t mult, shift;
    int64_t rows, len;
} q8cu_qgap_args;
cudaError_t q8cu_qgap(const q8cu_stream *s, const q8cu_qgap_args *p);

/* ---- elementwise ---------------------------------------------------------- */

enum {
    Q8CU_U_RELU, Q8CU_U_LEAKY_RELU, Q8CU_U_SIGMOID, Q8CU_U_HARD_SIGMOID, Q8CU_U_HARD_SWISH,
    Q8CU_U_TANH, Q8CU_U_GELU, Q8CU_U_GELU_TANH, Q8CU_U_ERF, Q8CU_U_SQRT, Q8CU_U_EXP,
    Q8CU_U_LOG, Q8CU_U_ABS, Q8CU_U_NEG, Q8CU_U_RECIPROCAL, Q8CU_U_CLIP,
    /* int8 data */
    Q8CU_U_RELU_I8, Q8CU_U_CLIP_I8,
};

typedef struct q8cu_unary_args {
    const void *x;
    void *y;
    int64_t n;
    int kind;
    float alpha, beta;          /* LeakyRelu, HardSigmoid, HardSwish */
    float lo, hi;               /* Clip (float) */
    int32_t ilo, ihi;           /* Clip (int8) */
} q8cu_unary_args;
cudaError_t q8cu_unary(const q8cu_stream *s, const q8cu_unary_args *p);

/* arithmetic (float32 out), then comparisons (bool out: 1 or 0) */
enum { Q8CU_B_ADD, Q8CU_B_SUB, Q8CU_B_MUL, Q8CU_B_DIV, Q8CU_B_PRELU,
       Q8CU_B_EQ, Q8CU_B_GT, Q8CU_B_LT, Q8CU_B_GE, Q8CU_B_LE };

/* y = a op b on float32 inputs with numpy broadcasting over collapsed dims:
 * element i of y (row-major over dims) reads a[sum idx_d * sa[d]], b
 * likewise; y is float32, or bool (uint8) for the comparisons. */
typedef struct q8cu_binary_args {
    const float *a, *b;
    void *y;
    int op, ndim;
    int64_t n;
    int64_t dims[Q8CU_MAX_DIMS], sa[Q8CU_MAX_DIMS], sb[Q8CU_MAX_DIMS];
} q8cu_binary_args;
cudaError_t q8cu_binary(const q8cu_stream *s, const q8cu_binary_args *p);

/* Max, Min, Sum, Mean of n_in float32 inputs with numpy broadcasting, one
 * thread per output element folding the inputs in order (the CPU's
 * variadic.c: NaN propagates through Max / Min, Mean divides the sum once). */
#define Q8CU_VAR_MAX_IN 8
enum { Q8CU_V_MAX, Q8CU_V_MIN, Q8CU_V_SUM, Q8CU_V_MEAN };
typedef struct q8cu_variadic_args {
    const float *x[Q8CU_VAR_MAX_IN];
    float *y;
    int op, n_in, ndim;
    int64_t n;
    int64_t dims[Q8CU_MAX_DIMS];
    int64_t st[Q8CU_VAR_MAX_IN][Q8CU_MAX_DIMS];
} q8cu_variadic_args;
cudaError_t q8cu_variadic(const q8cu_stream *s, const q8cu_variadic_args *p);

/* Cast / CastLike (kernels/cpu/ops/cast.c's rules, bit for bit): the
 * element types, as the plan maps q8_dtype. */
enum {
    Q8CU_DT_BOOL, Q8CU_DT_F16, Q8CU_DT_BF16, Q8CU_DT_F32, Q8CU_DT_F64, Q8CU_DT_I8, Q8CU_DT_U8,
    Q8CU_DT_I16, Q8CU_DT_U16, Q8CU_DT_I32, Q8CU_DT_U32, Q8CU_DT_I64, Q8CU_DT_U64,
};

/* y[i] = x[i] converted from `from` to `to` (Q8CU_DT_*); from == to copies
 * esize bytes per element. */
typedef struct q8cu_cast_args {
    const void *x;
    void *y;
    int64_t n;
    int from, to, esize;
} q8cu_cast_args;
cudaError_t q8cu_cast(const q8cu_stream *s, const q8cu_cast_args *p);

/* ---- normalization, pooling, reductions (float32 unless noted) ---------- */

/* Softmax / LogSoftmax over len values at stride inner: outer x len x inner. */
typedef struct q8cu_softmax_args {
    const float *x;
    float *y;
    int64_t outer, len, inner;
    int log;
} q8cu_softmax_args;
cudaError_t q8cu_softmax(const q8cu_stream *s, const q8cu_softmax_args *p);

/* LayerNormalization over rows of len: scale (and bias, or NULL) have len
 * values; mean / inv (optional outputs) one per row. */
typedef struct q8cu_layernorm_args {
    const float *x, *scale, *bias;
    float *y, *mean, *inv;
    int64_t rows, len;
    float eps;
} q8cu_layernorm_args;
cudaError_t q8cu_layernorm(const q8cu_stream *s, const q8cu_layernorm_args *p);

/* MaxPool (float32, int8, uint8) / AveragePool (float32) over 3-D spatial
 * dims (leading dims of size 1 for 1-D and 2-D). */
enum { Q8CU_F32 = 0, Q8CU_I8 = 1, Q8CU_U8 = 2 };

typedef struct q8cu_pool_args {
    const void *x;
    void *y;
    int64_t nc;
    int64_t in[3], out[3], k[3], s[3], d[3], pb[3], pe[3];
    int avg, include_pad, dtype;
} q8cu_pool_args;
cudaError_t q8cu_pool(const q8cu_stream *s, const q8cu_pool_args *p);

/* GlobalAveragePool: y[r] = mean of the len values of row r (double sums). */
typedef struct q8cu_rowmean_args {
    const float *x;
    float *y;
    int64_t rows, len;
} q8cu_rowmean_args;
cudaError_t q8cu_rowmean(const q8cu_stream *s, const q8cu_rowmean_args *p);

/* ArgMax / ArgMin of float32 data seen as outer x len x inner: y[o] (int64)
 * for o = outer index * inner + inner index; ties and NaN as
 * kernels/cpu/ops/argmax.c. */
typedef struct q8cu_argmax_args {
    const float *x;
    int64_t *y;
    int64_t outer, len, inner;
    int min, last;
} q8cu_argmax_args;
cudaError_t q8cu_argmax(const q8cu_stream *s, const q8cu_argmax_args *p);

/* ReduceSum / Mean / Max / Min: output o decodes over kdims (strides
 * kstride in x), each reduces over rdims (rstride) in the CPU's order. */
enum { Q8CU_R_SUM, Q8CU_R_MEAN, Q8CU_R_MAX, Q8CU_R_MIN };

typedef struct q8cu_reduce_args {
    const float *x;
    float *y;
    int kind, nk, nr;
    int last_kept;              /* the innermost merged dim is kept (the CPU's two orders) */
    int64_t out_n, red_n;
    int64_t kdims[Q8CU_MAX_DIMS], kstride[Q8CU_MAX_DIMS];
    int64_t rdims[Q8CU_MAX_DIMS], rstride[Q8CU_MAX_DIMS];
} q8cu_reduce_args;
cudaError_t q8cu_reduce(const q8cu_stream *s, const q8cu_reduce_args *p);

/* BatchNormalization (inference): y = x * a[c] + b[c] for channel
 * c = (i / inner) % C. */
typedef struct q8cu_affine_args {
    const float *x, *a, *b;
    float *y;
    int64_t n, inner, C;
} q8cu_affine_args;
cudaError_t q8cu_affine(const q8cu_stream *s, const q8cu_affine_args *p);

/* Resize of the last two dims (rows = product of the leading dims): per
 * output index oh, up to 2 taps ih[oh * th + t] with weights wh[...] (taps
 * th = 1 or 2), the same along w; esize 1, 4 or 8 for nearest, float32
 * (esize 4, f32 = 1) for linear. int8 / uint8 linear (ilin = 1 / 2): the
 * integer weights iwh / iww and the rounding shift of src/core/ops/resize.h. */
typedef struct q8cu_resize_args {
    const void *x;
    void *y;
    int64_t rows, H, W, OH, OW;
    int th, tw, esize, f32, ilin, shift;
    const int64_t *ih, *iw;
    const float *wh, *ww;
    const int32_t *iwh, *iww;
} q8cu_resize_args;
cudaError_t q8cu_resize(const q8cu_stream *s, const q8cu_resize_args *p);

/* ---- data movement (any element size 1, 2, 4, 8) ------------------------- */

/* Gather along an axis: y[o][j][blk] = x[o][idx[j]][blk] (index < 0 adds
 * dim; out of range gives zeros). */
typedef struct q8cu_gather_args {
    const void *x;
    const void *idx;
    void *y;
    int64_t outer, nidx, dim, blk;
    int esize, idx64;
} q8cu_gather_args;
cudaError_t q8cu_gather(const q8cu_stream *s, const q8cu_gather_args *p);

/* y[i] = x[offset + sum over d of idx_d(i) * stride[d]] with i row-major
 * over dims (Transpose, Slice). */
typedef struct q8cu_strided_args {
    const void *x;
    void *y;
    int64_t n, offset;
    int ndim, esize;
    int64_t dims[Q8CU_MAX_DIMS], stride[Q8CU_MAX_DIMS];
} q8cu_strided_args;
cudaError_t q8cu_strided_copy(const q8cu_stream *s, const q8cu_strided_args *p);

/* One Concat input: rows of row_n elements into y's rows of y_row_n,
 * starting at element y_off of each. */
typedef struct q8cu_rowcopy_args {
    const void *x;
    void *y;
    int64_t rows, row_n, y_row_n, y_off;
    int esize;
} q8cu_rowcopy_args;
cudaError_t q8cu_rowcopy(const q8cu_stream *s, const q8cu_rowcopy_args *p);

/* Pad: y dims ydims; source coordinate of output coordinate c along d is
 * c - pb[d] mapped by mode (constant: outside -> value). */
enum { Q8CU_PAD_CONSTANT, Q8CU_PAD_REFLECT, Q8CU_PAD_EDGE, Q8CU_PAD_WRAP };

typedef struct q8cu_pad_args {
    const void *x;
    void *y;
    int64_t n;
    int ndim, esize, mode;
    int64_t xdims[Q8CU_MAX_DIMS], ydims[Q8CU_MAX_DIMS], pb[Q8CU_MAX_DIMS];
    uint8_t value[8];
} q8cu_pad_args;
cudaError_t q8cu_pad(const q8cu_stream *s, const q8cu_pad_args *p);

#ifdef __cplusplus
}
#endif
#endif
