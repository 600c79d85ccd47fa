/* Activations whose range one static INT8 scale cannot serve.
 *
 * A per-tensor scale is set by the loud samples. When a tensor's largest
 * |x| varies by orders of magnitude from sample to sample (raw audio: faint
 * noise at 1e-3, voice at 0.5; and everything an amplitude-linear front end
 * computes from it), the quiet samples fall in the first few INT8 steps and
 * round to a handful of values or to 0, and the model's answer on exactly
 * those samples changes (Silero VAD: the speech probability at speech onset;
 * docs/accuracy.md). Averaged error metrics hide this: the quiet samples
 * carry little energy.
 *
 * Calibration keeps, per tensor, the per-sample largest |x| by power of two
 * (calib_stats.h: span). A tensor is "wide" when at least
 * Q8_WIDE_MIN_FRACTION of the samples (all-zero samples count as served:
 * they are exact) have their largest |x| below threshold / Q8_WIDE_RATIO,
 * with enough samples and values per sample to say so.
 * What is computed from a wide tensor by ops that carry its amplitude over
 * (linear layers, ReLU, pooling, views, sums and products, |x|, powers; not
 * normalizations, saturating functions or recurrent layers) is wide too,
 * even when a bias lifts its range: the part of it that carries the quiet
 * samples' information is as small as they are, and a scale set by the
 * loud samples rounds it away (Silero VAD: INT8 of any encoder Conv after
 * the STFT moves a chunk's speech probability by 0.04-0.13 on 2-3 s of
 * synthetic speech; docs/accuracy.md).
 * Wide tensors get no INT8 version (threshold 0): the layers reading or
 * writing them stay FP32. */
#ifndef Q8_CALIB_SPAN_H
#define Q8_CALIB_SPAN_H

#include "calibrate.h"
#include "calib_stats.h"
#include "meta.h"

/* Below threshold / 32 a sample uses at most 4 of the 127 steps. */
#define Q8_WIDE_RATIO 32.0
/* A tenth of the samples: not one odd sample (the outlier screen's job). */
#define Q8_WIDE_MIN_FRACTION 0.10
/* With fewer samples the spread is not measured. */
#define Q8_WIDE_MIN_SAMPLES 8
/* Nor with fewer values per sample: the largest |x| of a handful of signed
 * values (a scalar score) says where they fell, not how loud the sample is;
 * one near 0 is not a quiet sample. */
#define Q8_WIDE_MIN_VALUES 64

/* One sample's largest finite |x| (pass 1, kept samples). */
void q8_span_add(q8_hist *h, float sample_amax);

/* The fraction of h's samples whose largest |x| is surely below
 * threshold / ratio (their whole power-of-two bin is below it). */
double q8_span_quiet_fraction(const q8_hist *h, double threshold, double ratio);

/* Is the tensor wide at this threshold (the rule above)? */
bool q8_span_is_wide(const q8_hist *h, double threshold);

/* Mark in cal->wide the float activations computed from a wide one by
 * amplitude-carrying ops (-1; measured ones hold their positive fraction)
 * and zero their thresholds. g: the calibrated graph, nodes in run order.
 * Returns how many were marked. */
int q8_span_propagate(const q8_graph *g, q8_calibration *cal);

/* Record in meta what cal's wide tensors (indexed like g's tensors, the
 * graph before the rewrite) decided: tensor.<name>.wide_range ("measured:
 * N% of the samples below 1/32 of the range" or "inherited from node
 * '<producer>'"), layer.<node>.fp32_wide_range for the
 * Conv/ConvTranspose/Gemm/MatMul layers reading or writing one, and
 * quant.wide_range_tensors (their count). Nothing when none is wide. */
q8_status q8_span_note(const q8_graph *g, const q8_calibration *cal, q8_meta *meta,
                       q8_error *err);

#endif
