/* Activation equalization before a depthwise convolution (quantize
 * --equalize, docs/accuracy.md): a Conv P whose output (through at most a
 * Relu; a fused Relu or LeakyRelu, not Clip(0, 6)) is read only by a
 * depthwise Conv D. The tensor between them is
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
 * weights in place. Records equalize.pairs in meta. */
q8_status q8_equalize(q8_graph *g, const q8_sample_set *s, int n_threads, q8_meta *meta,
                      q8_error *err);

/* The weights q8_equalize changed in src, copied into dst (the same model
 * imported again, e.g. at other input shapes), by tensor name. */
q8_status q8_equalize_copy(q8_graph *dst, const q8_graph *src, q8_error *err);

#endif
