/* What the INT8 ops (docs/int8-ops.md) share in infer: reading the
 * quantization parameters of inputs, the output's y_scale, the fused
 * activation, the QDQ scale / zero point inputs and the ONNX integer ops'
 * constant zero points and scales. */
#ifndef Q8_CORE_OPS_QOP_H
#define Q8_CORE_OPS_QOP_H

#include <stdbool.h>
#include <stdint.h>

#include "graph.h"
#include "ops/act.h"

/* Longest reduction for which |sum of int8 products| < 2^31. */
#define Q8_QOP_MAX_K 131071

/* The requantization of a q8.Q* op: y = act(acc * sx * sw[c] / sy). */
typedef struct q8_qop_quant {
    float sx;           /* input 0's per-tensor scale (QMatMul: A's) */
    bool out_i8;        /* y_scale given: int8 output with scale sy; else float32 */
    float sy;           /* y_scale (0 for a float32 output) */
    q8_act act;         /* fused activation: none, Relu, Clip (p0, p1) or LeakyRelu (p0) */
} q8_qop_quant;

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

/* The fused activation (_act, _act_min, _act_max, _act_alpha): Relu, Clip
 * or LeakyRelu. */
q8_status q8_qop_act(const q8_node *n, q8_act *act, q8_error *err);
/* y_scale: present -> int8 output with that scale (*i8 = true). */
q8_status q8_qop_out_scale(const q8_node *n, bool *i8, float *sy, q8_error *err);
/* Give output 0 (already shaped) the per-tensor scale sy. */
q8_status q8_qop_set_out_scale(q8_graph *g, const q8_node *n, float sy, q8_error *err);

/* Matrix strides of the batch dims of t (rank >= 2) against nb output batch
 * dims under numpy broadcasting: 0 where t is broadcast. */
void q8_qop_batch_strides(const q8_tensor *t, int nb, int64_t *str);

/* QuantizeLinear / DequantizeLinear: the scale (input 1) and optional zero
 * point (input 2) of data x (input 0), per tensor or per axis. Value i of x
 * uses channel (i / inner) % count of both. Either may be computed at run
 * time (DynamicQuantizeLinear's expanded form): the kernels read them when
 * the node runs; only a constant scale is checked here (positive, finite). */
typedef struct q8_qdq {
    int64_t count;          /* number of scales (1: per tensor) */
    int64_t inner;          /* elements per channel run */
    int axis;               /* -1: per tensor */
    q8_dtype zp_type;       /* Q8_UNDEFINED when there is no zero point */
} q8_qdq;

q8_status q8_qdq_parse(const q8_graph *g, const q8_node *n, q8_qdq *o, q8_error *err);

/* ---- ONNX integer ops (MatMulInteger, ConvInteger, QLinear*) ------------ */

/* Optional constant input i with 1 or n values of dtype (zero points:
 * int8/uint8 matching their data; scales: float32). Absent: count 0. The
 * values are read with q8_ql_zp / q8_ql_scale. */
q8_status q8_ql_const(const q8_graph *g, const q8_node *n, int i, const char *what,
                      q8_dtype dtype, int64_t nmax, int64_t *count, q8_error *err);
/* A data input's zero point i computed at run time (ONNX Runtime's dynamic
 * quantization: DynamicQuantizeLinear's y_zero_point feeds MatMulInteger /
 * ConvInteger): one value of dtype, not a constant. *runtime false (and
 * nothing checked) when input i is absent or a constant. */
q8_status q8_ql_runtime_zp(const q8_graph *g, const q8_node *n, int i, const char *what,
                           q8_dtype dtype, bool *runtime, q8_error *err);
/* A zero point's value from its stored byte (uint8 or int8): what kernels
 * read of a run-time one. */
static inline int32_t q8_ql_zp_byte(uint8_t raw, bool u8) {
    return u8 ? (int32_t)raw : (int32_t)(int8_t)raw;
}
/* Value c (c < count, or 0 when count is 1) of a zero point (0 if absent). */
int32_t q8_ql_zp(const q8_graph *g, const q8_node *n, int i, int64_t c);
float q8_ql_scale(const q8_graph *g, const q8_node *n, int i, int64_t c);
/* Integer data input: int8 or uint8 (*u8). */
q8_status q8_ql_data(const q8_graph *g, const q8_node *n, int i, const char *what, bool *u8,
                     q8_error *err);
/* The largest |v - zp| over int8 (uint8: u8) values v. */
int64_t q8_ql_max_dev(bool u8, int32_t zp);
/* |sum of K products| stays below 2^31 with values in [-ma, ma] x [-mb, mb]. */
q8_status q8_ql_check_k(const q8_node *n, int64_t K, int64_t ma, int64_t mb, q8_error *err);

#endif
