/* INT8 weight rounding that compensates its own error (quantize
 * --weight-rounding gptq; GPTQ, Frantar et al., 2022). The scale of each
 * output channel is fixed first (q8_weight_scale of the FP32 row, as the
 * rewrite picks it); then the row's weights are rounded to that grid one
 * input at a time, each rounding error moved onto the inputs not yet
 * rounded, weighted by the inverse input covariance H^-1 of the
 * calibration rows (prune_fit.h's statistics and factor: the same update
 * the prune re-fit makes, with "to 0" replaced by "to the grid"). The
 * weights are written back in FP32 exactly on the grid, so that the
 * rewrite's nearest rounding reproduces them bit for bit. */
#ifndef Q8_QUANT_WEIGHT_ROUND_H
#define Q8_QUANT_WEIGHT_ROUND_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "graph.h"
#include "meta.h"
#include "q8_tools.h"
#include "samples.h"

/* Round w (b entries: one block of a row) to scale * [-127, 127] in index
 * order; the entries flagged in zero (NULL: none; pruned weights) go to 0.
 * With u (q8_pfit_factor's U, H^-1 = U^T U), entry j's error
 * e = (w_j - q_j scale) / U_jj moves onto the later entries
 * (w_k -= e U_jk); u NULL: nearest rounding. Entry pin (-1: none) takes
 * sign(w_pin) * 127 whatever its compensated value. On return w holds
 * q * scale. Returns the sum of e^2 (0 without u): the added output error
 * dw^T H dw of the damped H. */
double q8_wround_block(float *w, const uint8_t *zero, const float *u, int64_t b, float scale,
                       int64_t pin);

/* Round one row of k weights whose inputs fall in blocks of blk (u[i]: the
 * U of block i, NULL: nearest in that block) onto the grid of
 * q8_weight_scale(max |row|), so that q8_quantize_weights of the result
 * gives that same scale and integers whose products with it are the row's
 * values, bit for bit; weights that are 0 (pruned) stay 0. If no rounding reaches +-127 the entry of the
 * largest |w| is pinned there and the row rounded again. tmp: k floats,
 * qt: k bytes of scratch. Returns false, with row unchanged, for a row the
 * rewrite could not reproduce so (an all-zero row, a scale that does not
 * survive the round trip). */
bool q8_wround_row(float *row, int64_t k, int64_t blk, const float *const *u, float *tmp,
                   int8_t *qt);

/* Q8_WROUND_SUMS for one row of k weights in windows of win taps (k a
 * multiple of win): the grid of q8_weight_scale(max |row|), nearest
 * rounding, then in each window the taps whose rounding moved them most
 * toward the wrong side moved one step back until the window's sum is the
 * whole step nearest its FP32 sum (taps at +-127 and weights that are 0
 * keep their value, so the scale and pruning survive). Written back as in
 * q8_wround_row, bit for bit what the rewrite reproduces. tmp: k floats,
 * qt: k bytes. Returns the number of taps moved, -1 with row unchanged
 * for a row the rewrite could not reproduce. */
int64_t q8_wround_row_sums(float *row, int64_t k, int64_t win, float *tmp, int8_t *qt);

/* The weights as they were before sums or gptq rounded them, by tensor
 * name: for the layers that calibration then keeps FP32. */
typedef struct q8_wround_saved {
    int n, cap;
    char **names;
    float **data;       /* in memory, or NULL: at off in file */
    int64_t *numel, *off;
    FILE *file;         /* an unlinked temporary file, once one is made */
    bool no_file;       /* none could be made: memory only */
} q8_wround_saved;

/* Round the weights of g's Conv / Gemm / MatMul layers that become int8
 * (constant FP32 weights, not in o->fp32_layers, Gemm alpha 1) as
 * o->weight_rounding says, in the graph, before calibration measures the
 * ranges (they are then those of the model with its weights rounded, as
 * the int8 layers will compute). gptq: with the input statistics of the
 * samples, in graph order, a few layers per pass so that a layer's
 * statistics come from the model with the layers before it already
 * rounded. sums: the convolutions' windows, no samples needed. Records
 * quant.weight_rounding in meta (and, for sums, quant.weight_sums_moved:
 * the taps moved). With saved, each rounded tensor's values before
 * rounding go there (one more copy of those weights while quantize runs),
 * for q8_wround_restore_fp32. */
q8_status q8_round_weights(q8_graph *g, const q8_quant_options *o, const q8_sample_set *smp,
                           int n_threads, q8_meta *meta, q8_wround_saved *saved,
                           q8_error *err);

/* After the rewrite: every saved tensor of g that a layer still reads in
 * FP32 gets its values back (a layer calibration kept FP32 computes with
 * its weights as trained); returns how many, -1 if the file could not be
 * read back. */
int q8_wround_restore_fp32(q8_graph *g, const q8_wround_saved *saved);
/* The same for a graph that shares its constants with another
 * (q8_graph_clone): each tensor restored gets data of its own (-1 also
 * when that cannot be allocated). */
int q8_wround_restore_fp32_owned(q8_graph *g, const q8_wround_saved *saved);
/* Every saved tensor of g back to its values before rounding (the model's
 * weights as trained, where sv holds every tensor that was rounded);
 * returns the count, -1 when the temporary file cannot be read. */
int q8_wround_restore_all(q8_graph *g, const q8_wround_saved *sv);
void q8_wround_saved_free(q8_wround_saved *saved);

/* About how many multiply-adds q8_round_weights with gptq would take on g
 * (each layer's statistics at its row cap, the factors and the rounding):
 * an upper bound, for deciding whether to try it. */
double q8_wround_gptq_macs(const q8_graph *g, const q8_quant_options *o);

/* The rounded weights of src into dst (the same model at other input
 * shapes), by tensor name. */
q8_status q8_round_weights_copy(q8_graph *dst, const q8_graph *src, const q8_quant_options *o,
                                q8_error *err);

#endif
