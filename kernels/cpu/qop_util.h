/* Helpers shared by the q8.Q* ops: reading the quantization parameters of
 * inputs, the output's y_scale, the fused activation, and the per-channel
 * epilogue arrays kept in the node's packed blob. */
#ifndef Q8_KERNELS_CPU_QOP_UTIL_H
#define Q8_KERNELS_CPU_QOP_UTIL_H

#include "igemm.h"
#include "cpu_op.h"
#include "requant.h"

/* Input i is an int8 activation with one per-tensor scale and zero point 0
 * (`what` names it in messages: "X"). */
q8_status q8_qop_act_scale(const q8_graph *g, const q8_node *n, int i, const char *what,
                           float *scale, q8_error *err);
/* Input i is constant int8 weights whose dim 0 has `channels` entries, with
 * one positive scale per channel on axis 0. */
q8_status q8_qop_weight_scales(const q8_graph *g, const q8_node *n, int i, int64_t channels,
                               const float **scales, q8_error *err);
/* Optional input i: constant int32 bias with `channels` values; *bias is
 * NULL when absent. */
q8_status q8_qop_bias(const q8_graph *g, const q8_node *n, int i, int64_t channels,
                      const int32_t **bias, q8_error *err);
/* Largest reduction length the int32 accumulators allow. */
q8_status q8_qop_check_k(const q8_node *n, int64_t K, q8_error *err);

/* The fused activation (_act, _act_min, _act_max, _act_alpha). */
q8_status q8_qop_act(const q8_node *n, q8_act *act, q8_error *err);
/* y_scale: present -> int8 output with that scale (*i8 = true). */
q8_status q8_qop_out_scale(const q8_node *n, bool *i8, float *sy, q8_error *err);
/* Give output 0 (already shaped) the per-tensor scale sy. */
q8_status q8_qop_set_out_scale(q8_graph *g, const q8_node *n, float sy, q8_error *err);
/* The GEMM path for this node: the internal attribute _igemm_path ("c",
 * "avx2", "avxvnni", "avx512vnni"; absent: the best this CPU has). Lets
 * tests run every op on every path. */
q8_status q8_qop_path(const q8_node *n, q8_igemm_path *path, q8_error *err);

/* Epilogue description stored in an op's params; the per-channel arrays
 * (mult, shift for int8 outputs; scale for float32) live in n->packed. */
typedef struct q8_qepi {
    q8_epi_kind kind;
    int32_t lo, hi;
    bool has_lut;
    int8_t lut[128];
    bool clip, leaky;
    float flo, fhi, alpha;
    int64_t channels;
    size_t off_mult, off_shift, off_scale; /* byte offsets into packed */
} q8_qepi;

/* Set q's kind, clamp and activation fields. */
void q8_qepi_init(q8_qepi *q, const q8_act *act, bool out_i8, float sy, int64_t channels);
/* Place the arrays at byte offset *off of the blob (advanced, 64-aligned). */
void q8_qepi_place(q8_qepi *q, size_t *off);
/* Fill the arrays: channel c has input scale product sx * sw[c] (sw NULL:
 * sw1 for every channel) and output scale sy. */
void q8_qepi_fill(const q8_qepi *q, void *packed, double sx, const float *sw, float sw1,
                  float sy);
/* The run-time view. */
void q8_qepi_view(const q8_qepi *q, const void *packed, q8_epi_chan chan, q8_epilogue *e);

/* QuantizeLinear / DequantizeLinear: the constant scale (input 1) and
 * optional zero point (input 2) of data x (input 0), per tensor or per
 * axis. Value i of x uses channel (i / inner) % count of both. */
typedef struct q8_qdq {
    int64_t count;          /* number of scales (1: per tensor) */
    int64_t inner;          /* elements per channel run */
    int axis;               /* -1: per tensor */
    q8_dtype zp_type;       /* Q8_UNDEFINED when there is no zero point */
} q8_qdq;

q8_status q8_qdq_parse(const q8_graph *g, const q8_node *n, q8_qdq *o, q8_error *err);

/* round_half_even(v) + zp saturated to [lo, hi]; NaN counts as 0. The
 * rounding adds and removes 1.5 * 2^23 (exact for |v| <= 2^22, where the
 * float grid is the integers; larger values saturate anyway). */
static inline int32_t q8_round_sat(float v, int32_t zp, int32_t lo, int32_t hi) {
    if (v != v) v = 0;
    v = v > 4194304.0f ? 4194304.0f : v < -4194304.0f ? -4194304.0f : v;
    v = (v + 12582912.0f) - 12582912.0f;
    int32_t q = (int32_t)v + zp;
    return q < lo ? lo : q > hi ? hi : q;
}

/* ---- ONNX integer ops (MatMulInteger, ConvInteger, QLinear*) ------------ */

/* Optional constant input i with 1 or n values of dtype (zero points:
 * int8/uint8 matching their data; scales: float32). Absent: count 0. The
 * values are read with q8_ql_zp / q8_ql_scale. */
q8_status q8_ql_const(const q8_graph *g, const q8_node *n, int i, const char *what,
                      q8_dtype dtype, int64_t nmax, int64_t *count, q8_error *err);
/* Value c (c < count, or 0 when count is 1) of a zero point (0 if absent). */
int32_t q8_ql_zp(const q8_graph *g, const q8_node *n, int i, int64_t c);
float q8_ql_scale(const q8_graph *g, const q8_node *n, int i, int64_t c);
/* Integer data input: int8 or uint8 (*u8). */
q8_status q8_ql_data(const q8_graph *g, const q8_node *n, int i, const char *what, bool *u8,
                     q8_error *err);
/* |sum of K products| stays below 2^31 with values in [-ma, ma] x [-mb, mb]. */
q8_status q8_ql_check_k(const q8_node *n, int64_t K, int64_t ma, int64_t mb, q8_error *err);

/* Byte offset helper for packed blobs: reserve bytes at *off (64-aligned). */
static inline size_t q8_qop_reserve(size_t *off, size_t bytes) {
    size_t at = q8_align_up(*off, 64);
    *off = at + bytes;
    return at;
}

#endif
