/* The quantizer: magnitude pruning, then rewriting a calibrated FP32 graph
 * into the INT8 graph of docs/int8-ops.md. */
#ifndef Q8_QUANTIZE_H
#define Q8_QUANTIZE_H

#include "calibrate.h"
#include "graph.h"
#include "meta.h"
#include "q8_tools.h"

/* Zero the smallest weights of every Conv/ConvTranspose/Gemm/MatMul with
 * constant weights (shared weight tensors are pruned once). Records
 * layer.<node>.sparsity in meta. */
q8_status q8_prune(q8_graph *g, const q8_prune_options *o, q8_meta *meta, q8_error *err);

/* Rewrite g in place: GEMM-like nodes become q8.QConv/QConvTranspose/QGemm/
 * QMatMul on int8, INT8 flows through the ops that allow it, and
 * QuantizeLinear/DequantizeLinear sit at the FP32 boundaries. cal holds the
 * thresholds of g's tensors (same indices). Records per-layer summaries in
 * meta. On return the graph has been re-inferred and compacted. */
q8_status q8_quantize_graph(q8_graph *g, const q8_calibration *cal, const q8_quant_options *o,
                            q8_meta *meta, q8_error *err);

/* Symmetric per-output-channel INT8 of a weight matrix viewed as
 * [channels, per_channel]: scales[c] = max|w| / 127 (1 for an all-zero
 * channel), q = round_half_even(w / scale) clamped to [-127, 127]. */
void q8_quantize_weights(const float *w, int64_t channels, int64_t per_channel, int8_t *q,
                         float *scales);

#endif
