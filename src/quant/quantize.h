/* The quantizer: magnitude pruning, then rewriting a calibrated FP32 graph
 * into the INT8 graph of docs/int8-ops.md. */
#ifndef Q8_QUANTIZE_H
#define Q8_QUANTIZE_H

#include "calibrate.h"
#include "graph.h"
#include "meta.h"
#include "q8_tools.h"
#include "samples.h"

/* Refuse non-finite weights and biases of Conv/ConvTranspose/Gemm/MatMul,
 * and BatchNormalization parameters that are non-finite or give a
 * non-positive variance + epsilon, naming the node and the initializer.
 * Run on the graph as imported, before the passes fold anything. */
q8_status q8_check_weights(const q8_graph *g, q8_error *err);

/* Zero the smallest weights of every Conv/ConvTranspose/Gemm/MatMul with
 * constant weights (shared weight tensors are pruned once); with
 * o->sensitivity or o->refit, runs g on the samples (prune_fit.h). Records
 * layer.<node>.sparsity in meta. */
q8_status q8_prune(q8_graph *g, const q8_prune_options *o, const q8_sample_set *samples,
                   int n_threads, q8_meta *meta, q8_error *err);

/* What pruning left in g (q8_prune_counts, q8_tools.h). */
q8_status q8_prune_count(const q8_graph *g, const q8_prune_options *o, q8_prune_counts *c,
                         q8_error *err);

/* The pruned weights of src into dst (the same model at other input
 * shapes), by tensor name; records layer.<node>.sparsity in meta. */
q8_status q8_prune_copy(q8_graph *dst, const q8_graph *src, const q8_prune_options *o,
                        q8_meta *meta, q8_error *err);

/* Rewrite g in place: GEMM-like nodes become q8.QConv/QConvTranspose/QGemm/
 * QMatMul on int8, INT8 flows through the ops that allow it, and
 * QuantizeLinear/DequantizeLinear sit at the FP32 boundaries. cal holds the
 * thresholds of g's tensors (same indices). Records per-layer summaries in
 * meta. On return the graph has been re-inferred and compacted. */
q8_status q8_quantize_graph(q8_graph *g, const q8_calibration *cal, const q8_quant_options *o,
                            q8_meta *meta, q8_error *err);

/* An INT8 layer with no int8 neighbour but its own tables (a
 * QuantizeLinear before it, a DequantizeLinear after) and fewer
 * multiply-adds than this stays FP32 when q8_quant_options.small_alone_fp32
 * (rewrite.c). */
#define Q8_MIN_ALONE_MACS 1024

/* Row SQNR (1st percentile over the rows, dB) under which an embedding
 * table stays FP32 (gather_tables.c) */
#define Q8_TABLE_MIN_ROW_SQNR_DB 30.0

/* Tables smaller than this many elements stay FP32: the scale vector and the
 * extra nodes cost about what int8 saves. */
#define Q8_TABLE_MIN_ELEMS 1024

/* A float table [rows, cols] as int8 with one scale per row: scales[r] =
 * max |row r| / 127 rounded up as weight scales are (q8_weight_scale; 1
 * for an all-zero row), q = round half even. Returns the 1st percentile of
 * the rows' SQNR in dB (exact rows count as 999), or NAN when out of
 * memory. */
double q8_quantize_table_rows(const float *w, int64_t rows, int64_t cols, int8_t *q,
                              float *scales);

/* Graph edits the int8 tables share (gather_tables.c): a new tensor named
 * base + suffix (made unique), or -1 with err set; the same with a shape and
 * zeroed data; a node op(in) -> out in scope, placed in run order at *at
 * (the nodes from there move down one; *at then follows it). */
int q8_table_new_tensor(q8_graph *g, const char *base, const char *suffix, q8_error *err);
int q8_table_new_const(q8_graph *g, const char *base, const char *suffix, q8_dtype dt,
                       const int64_t *dims, int nd, q8_error *err);
q8_status q8_table_place_node(q8_graph *g, const char *base, const char *suffix, const char *op,
                              const int *in, int n_in, int out, int scope, int *at,
                              q8_error *err);

/* Gather lookups of float constant tables (embeddings) read an int8 copy of
 * the table with one scale per row instead (quantize --int8-embeddings):
 * Gather(table) becomes Gather(table_q8) -> Cast -> Mul by Gather(row
 * scales), placed right after it. Tables read by anything else, small
 * ones (< 1024 elements), non-finite ones, those whose nodes are in
 * o->fp32_layers and those whose rows would lose too much stay FP32.
 * Records layer.<gather>.int8_table_row_sqnr_p1_db and quant.int8_tables.
 * The caller re-infers the graph and drops the unused FP32 tables. */
q8_status q8_quantize_gather_tables(q8_graph *g, const q8_quant_options *o, q8_meta *meta,
                                    q8_error *err);

/* Float constant tables added to an activation (a ViT's position
 * embedding: Add(x, pos) that stays FP32) are stored in int8 with one scale
 * per row (the slices along the table's second-to-last axis; the axes
 * before it must be 1) and widened by one DequantizeLinear placed before
 * the first Add, each run (quantize --int8-embeddings). Tables read by
 * anything but such Adds, small ones (< 1024 elements), non-finite ones and
 * those whose rows would keep less than Q8_TABLE_MIN_ROW_SQNR_DB stay FP32.
 * Records layer.<add>.int8_table_row_sqnr_p1_db and
 * quant.int8_added_tables. The caller re-infers the graph and drops the
 * unused FP32 tables. */
q8_status q8_quantize_added_tables(q8_graph *g, q8_meta *meta, q8_error *err);

/* Has g an Add/Sub/Mul/Div of a float activation by a constant scalar (what
 * scalar_tables may run as a table)? */
bool q8_has_scalar_ops(const q8_graph *g);
/* Has g a PRelu (what int8_prelu may run as q8.QPRelu)? */
bool q8_has_prelu(const q8_graph *g);

/* Ops the rewrite can run as an int8 table: the smooth activations
 * (HardSwish, Sigmoid, ...) and Add/Sub/Mul/Div (by a constant scalar; the
 * caller checks the inputs). */
bool q8_is_table_op(const q8_node *n);

/* The nodes --fp32-layers can keep in FP32: Conv, ConvTranspose, Gemm,
 * MatMul and the elementwise ops the rewrite runs as int8 tables. */
bool q8_is_quant_layer(const q8_node *n);

/* A list of names, owned. */
typedef struct q8_name_list {
    char **v;
    int n;
} q8_name_list;
void q8_name_list_free(q8_name_list *l);

/* The model's heads (quantize --fp32-heads): the layers with constant
 * weights (Conv, ConvTranspose, Gemm, MatMul) that write its outputs
 * through no other such layer, and the layers their inputs come from the
 * same way (a head is often two: MoveNet's 24 -> 96 -> 17 heat map, a
 * detector's box and class branches). Empty unless they hold at most
 * max_share of all such layers' weights: kept FP32, they cost that much
 * more file and FP32 time. */
#define Q8_HEADS_MAX_SHARE 0.02
q8_status q8_head_layers(const q8_graph *g, double max_share, q8_name_list *out, q8_error *err);

/* Every name in --prune-skip and --fp32-layers must name a layer of the
 * model: a typo would quietly drop the protection it asks for. raw: the
 * graph as imported (the name must be a node of it); then, after the
 * passes, opt: it must still be there (not folded or fused away) and be a
 * layer the option applies to. n_bound: the inputs bound to a value, which
 * may have removed the If branch a name was in (said so when one is gone). */
q8_status q8_check_layer_names(const q8_graph *g, bool optimized, int n_bound,
                               const q8_prune_options *p, const q8_quant_options *q,
                               q8_error *err);

/* The scale of a weight channel whose largest |w| is amax: amax / 127
 * rounded up to the 16-bit form of scale16.h (the file stores it in 2
 * bytes), 1 for an all-zero channel. The one place the scale rule lives
 * (the weight rounding of weight_round.c relies on it too). */
float q8_weight_scale(float amax);

/* Symmetric per-output-channel INT8 of a weight matrix viewed as
 * [channels, per_channel]: scales[c] = q8_weight_scale(max|w|),
 * q = round_half_even(w / scale) clamped to [-127, 127]. w must be finite
 * (q8_check_weights; the rewrite checks again): a NaN gives 0 rather than
 * the undefined float-to-int cast. */
void q8_quantize_weights(const float *w, int64_t channels, int64_t per_channel, int8_t *q,
                         float *scales);

#endif
