/* Activation equalization before a depthwise convolution (quantize
 * --equalize, docs/accuracy.md): a Conv P whose output (through at most a
 * Relu; a fused Relu or LeakyRelu, not a fused Clip(0, 6); for the other
 * activations see `through` below) is read only by a depthwise Conv D. The tensor between them is
 * quantized per tensor, but after a folded BatchNorm its channels can span
 * ranges 20x apart, so the small channels keep a few levels. Dividing P's
 * output channel c (weights and bias) by s_c and multiplying D's weights of
 * channel c by s_c computes the same function in FP32 (Relu commutes with a
 * positive scale; D reads channel c alone), and with s_c = range_c / max
 * range every channel spans the full INT8 range. Both weights are quantized
 * per output channel, so their INT8 error does not change. */
#ifndef Q8_QUANT_EQUALIZE_H
#define Q8_QUANT_EQUALIZE_H

#include "graph.h"
#include "meta.h"
#include "samples.h"

/* Ranges measured on the samples (FP32, every sample) and applied to g's
 * weights in place. Records equalize.pairs in meta.
 *
 * through: also pairs with other elementwise activations between P and D
 * (HardSwish, Clip(0, 6) as a node, Sigmoid, ...; each read by the next
 * alone), which do not commute with a scale. There P's output channel c is
 * divided by u_c (its range over the largest) and a new Mul by u (marked
 * _eq) restores it before the activations; after them a Mul by 1 / v_c
 * (the activations' range over the largest) equalizes the tensor D reads,
 * and D's weights are multiplied by v_c. u_c and v_c are powers of two
 * (rounded up: each channel spans more than half the range), so the FP32
 * function is the same to the bit, and channels share factors. The INT8
 * rewrite folds the Muls and activations into one table per channel
 * (q8.QLut with the distinct tables and a channel index), so both int8
 * tensors use their range in every channel. Tensors that had a name keep
 * their FP32 values; the rescaled ones are new (NAME_eq). */
q8_status q8_equalize(q8_graph *g, bool through, const q8_sample_set *s, int n_threads,
                      q8_meta *meta, q8_error *err);

/* The weights q8_equalize changed in src, and the nodes it added, copied into dst (the same model
 * imported again, e.g. at other input shapes), by tensor name. */
q8_status q8_equalize_copy(q8_graph *dst, const q8_graph *src, bool through, q8_error *err);

#endif
