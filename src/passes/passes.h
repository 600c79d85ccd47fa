/* Graph passes that turn an imported ONNX graph into a static, optimized one. */
#ifndef Q8_PASSES_H
#define Q8_PASSES_H

#include "graph.h"
#include "shapes.h"

/* Rewrite every ai.onnx node of an older opset's form, in g and its
 * subgraphs, into the form of Q8_OPSET_CANONICAL (graph.h), the only one the
 * op schemas read; then g->opset = Q8_OPSET_CANONICAL. Runs first on an
 * imported graph. Rewrites that need an input's dtype, shape or value leave
 * a mark on the node that q8_pass_infer completes (see canonicalize.c). */
q8_status q8_pass_canonicalize(q8_graph *g, q8_error *err);
/* Float16 models (float16 constants, inputs or outputs) computed in float32:
 * constants widened, Casts to float16 made Casts to float32, float16 graph
 * inputs / outputs marked (io_dtype) for the session to convert. The ONNX
 * importer runs it on every model; graphs built through the API keep their
 * float16 tensors (the kernels move and cast float16 data). */
q8_status q8_pass_widen_fp16(q8_graph *g, q8_error *err);
/* Whether node n still carries a mark of q8_pass_canonicalize. */
bool q8_canon_pending(const q8_node *n);
/* Complete the marked node at position i of g once its inputs have their
 * dtypes and shapes (and constants their values). It may insert nodes
 * before position i (g->nodes[i] is then the first of them) and after it. */
q8_status q8_canon_finish(q8_graph *g, int i, q8_error *err);

/* Resolve ops, infer every shape in order (completing canonical forms),
 * fold constant subgraphs, inline If nodes with a constant condition. */
q8_status q8_pass_infer(q8_graph *g, q8_error *err);
/* Unroll the Loop (Scan) node at position pos of g into copies of its body
 * after it, and mark it dead: the trip count (the scan inputs' shapes) must
 * be known at load (loop.c). */
q8_status q8_unroll_loop(q8_graph *g, int pos, q8_error *err);
q8_status q8_unroll_scan(q8_graph *g, int pos, q8_error *err);
/* The mark q8_pass_canonicalize leaves on a Scan of opset 8 (batch axis 0,
 * time axis 1, sequence_lens first) for q8_unroll_scan. */
#define Q8_SCAN8_ATTR "_q8_scan_opset8"
/* Drop Identity (and inference Dropout) nodes by rewiring. */
void q8_pass_remove_identity(q8_graph *g);
/* Fold BatchNormalization into a preceding Conv/ConvTranspose/Gemm, and an
 * Add of a per-channel (or scalar) constant into a preceding Conv's bias. */
q8_status q8_pass_fold_bn(q8_graph *g, q8_error *err);
/* Fold a zero spatial Pad into the Conv reading it, a Transpose into the
 * Reduce (keepdims 0) reading it, and Transpose pairs into one or none. */
q8_status q8_pass_fold_layout(q8_graph *g, q8_error *err);
/* Move Relu/Clip/LeakyRelu (and, with smooth, HardSwish/HardSigmoid/
 * Sigmoid) into the preceding Conv/Gemm/MatMul epilogue. */
q8_status q8_pass_fuse_activations(q8_graph *g, bool smooth, q8_error *err);
/* INT8 graphs: DequantizeLinear -> Mul -> QuantizeLinear of two int8
 * activations as one q8.QMulF, the same bytes (fuse_qmulf.c). */
q8_status q8_pass_fuse_float_muls(q8_graph *g, q8_error *err);
/* Node n becomes q8.<op> (its attributes dropped when clear_attrs); one
 * attribute set (node_edit.c). */
q8_status q8_node_make_q8_op(q8_node *n, const char *op, bool clear_attrs, q8_error *err);
/* Copy attribute a onto dst when it is a scalar, a string or an int or
 * float list (other kinds, tensors and graphs, are skipped). */
q8_status q8_node_copy_attr(q8_node *dst, const q8_attr *a, q8_error *err);
q8_status q8_node_attr_float(q8_node *n, const char *name, float v, q8_error *err);
q8_status q8_node_attr_int(q8_node *n, const char *name, int64_t v, q8_error *err);
/* Tensor t is a constant float32 scalar > 0 and finite (a per-tensor
 * quantization scale): into *v. */
bool q8_const_scale(const q8_graph *g, int t, float *v);
/* Chains of elementwise float32 steps (a constant scalar's Mul / Add / Sub /
 * Div, Relu, LeakyRelu, Clip, HardSigmoid, HardSwish, SiLU), with a
 * DequantizeLinear before and a QuantizeLinear after, as one q8.EwChain:
 * the same bits in one pass (fuse_ewchain.c). */
q8_status q8_pass_fuse_ewchains(q8_graph *g, q8_error *err);
/* Only each SiLU (a Sigmoid and the Mul of its input by it) as a one-step
 * q8.EwChain: quantize's graph, where it is one function of one tensor (an
 * int8 table) instead of a table and a product of two activations. */
q8_status q8_pass_fuse_swish(q8_graph *g, q8_error *err);
/* Replace decomposed LayerNormalization and Gelu (Erf form) by the op. */
q8_status q8_pass_fuse_patterns(q8_graph *g, q8_error *err);
/* Mark nodes whose outputs nobody reads dead, then compact. */
q8_status q8_pass_dce(q8_graph *g, q8_error *err);
/* Free constant tensors no live node or output refers to. */
q8_status q8_pass_drop_unused_consts(q8_graph *g, q8_error *err);

/* The standard pipeline for an imported graph: all of the above, in order,
 * canonicalization first (for running FP32). */
q8_status q8_passes_run(q8_graph *g, const q8_load_options *opts, q8_error *err);
/* The same for a graph that will be quantized: smooth activations stay
 * nodes (the INT8 epilogues do not compute them). */
q8_status q8_passes_run_for_quantize(q8_graph *g, const q8_load_options *opts, q8_error *err);


#endif
