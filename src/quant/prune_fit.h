/* Pruning that survives real models (issue 9): each prunable layer's input
 * statistics H = sum x x^T over calibration rows (im2col rows for Conv),
 * a sensitivity curve per layer (relative output error at a grid of
 * sparsities), a global budget shared out by those curves, and a re-fit of
 * the kept weights (OBS / SparseGPT sequential compensation). H is kept
 * block-diagonal: blocks of at most Q8_PFIT_BLOCK inputs, so memory and the
 * cubic factorization stay bounded on wide layers. */
#ifndef Q8_QUANT_PRUNE_FIT_H
#define Q8_QUANT_PRUNE_FIT_H

#include <stdbool.h>
#include <stdint.h>

#include "graph.h"
#include "output_eval.h"
#include "samples.h"

#define Q8_PFIT_BLOCK 1024      /* largest block of the block-diagonal H */
#define Q8_PFIT_EXACT 256       /* blocks up to this size: exact re-fit, else sequential */
#define Q8_PFIT_ROWS 1024       /* calibration rows sampled per layer */
#define Q8_PFIT_DAMP 0.01       /* damping: this share of H's mean diagonal */
#define Q8_PFIT_GRID 11         /* sparsities 0, 0.1, ..., 1 */
#define Q8_PFIT_CURVE_ROWS 16   /* weight rows a curve is measured on */
#define Q8_PFIT_PROBE_SAMPLES 8 /* calibration samples an output probe runs, at most */
#define Q8_PFIT_PROBE_MACS 1e12 /* multiply-adds of all output probes, at most */

typedef enum q8_pfit_kind {
    Q8_PFIT_NONE = 0,   /* no activation statistics: H = identity */
    Q8_PFIT_CONV,       /* Conv: rows [M, C/g * taps], contiguous */
    Q8_PFIT_NK,         /* Gemm transB: [N, K], rows contiguous */
    Q8_PFIT_KN,         /* Gemm, MatMul: [K, N], a row is a column */
} q8_pfit_kind;

typedef struct q8_pfit_layer {
    int node, wt, x;            /* node index, weight tensor, input activation (-1: none) */
    q8_pfit_kind kind;
    int64_t m, k, groups;       /* rows (output channels), row length, groups */
    int64_t blk, nblk;          /* block size and blocks per row */
    int64_t numel;
    float *h;                   /* groups * nblk blocks of blk*blk; NULL: not captured */
    float *c;                   /* with a dense target: sum x' x^T, full blocks as h */
    float *xr;                  /* dense rows kept for c: [sample][row][groups][k] */
    int64_t xr_rows;            /* rows in xr: rows per sample x samples */
    uint8_t *xr_seen;           /* per sample: the dense model reached the layer (an If
                                 * branch runs on some samples only) */
    bool factored;              /* blocks wider than Q8_PFIT_EXACT hold U (H^-1 = U^T U) */
    int64_t n_rows;             /* calibration rows accumulated */
    int64_t max_rows;           /* rows a capture takes at most (0: Q8_PFIT_ROWS) */
    bool eligible;              /* takes part in the budget */
    double err[Q8_PFIT_GRID];   /* relative output error at grid sparsity i / 10 */
    int64_t cnt[Q8_PFIT_GRID];  /* weights pruned at grid point i */
    int64_t count;              /* weights to prune */
} q8_pfit_layer;

/* Whether the layer's captured rows can carry a re-fitted curve: at least
 * as many as the inputs of its widest block (prune_layer.c says why). */
bool q8_pfit_fit_trusted(const q8_pfit_layer *l);

/* ---- numerics (prune_math.c) ---- */

/* h: a b x b block of H (upper triangle filled, or full). In place: U upper
 * triangular with (H + damp * mean(diag H) * I)^-1 = U^T U. An all-zero H
 * (an input that is always 0) gives U = I. */
void q8_pfit_factor(float *h, int64_t b, double damp);

/* Prune the entries of w (length b) flagged in mask and, with refit, move
 * their contribution onto the later kept entries (OBS sequential update
 * with U from q8_pfit_factor). Returns the added output error
 * dw^T H dw. Without refit u is unused and the error is not computed (0). */
double q8_pfit_prune_block(float *w, const uint8_t *mask, const float *u, int64_t b, bool refit);

/* The exact damped least-squares re-fit for the mask: the kept entries
 * move by (H_kk + damp * mean(diag H) I)^-1 H_kp w_p, the masked ones become
 * 0. h: the unfactored block. Returns dw^T H dw. For blocks up to
 * Q8_PFIT_EXACT inputs (cubic in the kept inputs, per row). */
double q8_pfit_solve_block(float *w, const uint8_t *mask, const float *h, int64_t b,
                           double damp);

/* dw^T H dw for dw = -w on the masked entries; h: the unfactored block. */
double q8_pfit_masked_error(const float *w, const uint8_t *mask, const float *h, int64_t b);

/* out = w + (H + damp * mean(diag H) * I)^-1 d for an unfactored block
 * (Cholesky), or with u (factored, H^-1 = U^T U) out = w + U^T U d. */
void q8_pfit_shift(const float *h, const float *u, int64_t b, double damp, const double *d,
                   float *w);

/* w^T H w; h: the unfactored block. */
double q8_pfit_energy(const float *w, const float *h, int64_t b);

/* mask[j] = 1 for the `count` entries of w with the smallest |w| (ties: the
 * lower index first); order: scratch of n entries. */
void q8_pfit_smallest(const float *w, int64_t n, int64_t count, uint8_t *mask, uint64_t *order);

/* Share `budget` pruned weights out over the eligible layers: start all at
 * 0 and repeatedly take the grid step with the least error added per weight
 * pruned until the budget is reached; the last step is cut short so that
 * the counts add up to the budget exactly. No layer goes past 90% unless
 * the budget cannot be met otherwise. Sets each layer's count (0 for
 * ineligible layers). Returns false if the eligible layers hold fewer than
 * `budget` weights. */
bool q8_pfit_allocate(q8_pfit_layer *l, int n, int64_t budget);

/* ---- statistics from calibration data (prune_hessian.c) ---- */

/* Describe node `node` of g as a prunable layer (kind, shapes, blocks). */
void q8_pfit_describe(const q8_graph *g, int node, int wt, q8_pfit_layer *l);

/* What a capture pass collects. */
typedef enum q8_pfit_pass {
    Q8_PFIT_H,          /* H = sum x x^T */
    Q8_PFIT_ROWS_KEEP,  /* the sampled rows themselves, into xr (the dense model) */
    Q8_PFIT_H_CROSS,    /* H and c = sum x' xr^T (the pruned model, each row paired
                         * with the dense row of the same sample and place; a
                         * sample the dense model ran the layer on and the pruned
                         * one did not, or the reverse, adds nothing) */
} q8_pfit_pass;

/* Free the dense rows of a ROWS_KEEP pass. */
void q8_pfit_drop_rows(q8_pfit_layer *l);

/* Accumulate the pass's statistics for the layers l[0..n) with kind != NONE
 * over the samples, running g on the CPU. Allocates what it fills; h
 * symmetric on return. */
q8_status q8_pfit_capture(const q8_graph *g, q8_pfit_layer *l, int n, const q8_sample_set *s,
                          int n_threads, q8_pfit_pass pass, q8_error *err);

/* Multiply-adds of the layer's node over one sample (its rows times its
 * weights; the weights once without statistics). */
int64_t q8_pfit_macs(const q8_graph *g, const q8_pfit_layer *l);

/* ---- output-aware curves (prune_probe.c) ---- */

typedef struct q8_pfit_probe {
    bool on;                /* off: no sample fits the budget, curves stay per layer */
    int grid;               /* the grid point probed: nearest the budget's fraction */
    int n_samples;          /* samples each probe runs */
    int n_probed;           /* layers whose curve was scaled */
    q8_out_eval e;          /* the dense model's outputs on those samples */
} q8_pfit_probe;

/* Decide the samples (up to Q8_PFIT_PROBE_SAMPLES, all probes together
 * within Q8_PFIT_PROBE_MACS multiply-adds of the n layers) and run the dense
 * model g on them. */
q8_status q8_pfit_probe_open(const q8_graph *g, const q8_pfit_layer *l, int n,
                             const q8_sample_set *s, double fraction, int n_threads,
                             q8_pfit_probe *p, q8_error *err);
/* Scale l's curve (measured, statistics still held) by the model's output
 * error with l alone pruned at the probe's grid point; g's weights are
 * restored. */
q8_status q8_pfit_probe_layer(q8_graph *g, q8_pfit_layer *l, bool refit, q8_pfit_probe *p,
                              q8_error *err);
void q8_pfit_probe_close(q8_pfit_probe *p);

/* ---- per layer (prune_layer.c) ---- */

/* The damping of a block of bs inputs: Q8_PFIT_DAMP, more when the block
 * has few calibration rows per input. */
double q8_pfit_damping(const q8_pfit_layer *l, int64_t bs);

/* Output row r of the layer's weights w (its layout: rows contiguous, or
 * a column of [K, N] for Q8_PFIT_KN) into row (l->k floats), and back. */
void q8_pfit_get_row(const q8_pfit_layer *l, const float *w, int64_t r, float *row);
void q8_pfit_put_row(const q8_pfit_layer *l, float *w, int64_t r, const float *row);

/* Bytes of h for layer l. */
int64_t q8_pfit_h_bytes(const q8_pfit_layer *l);

/* Fill l->err and l->cnt (h captured, not yet factored; factors it when
 * refit). */
void q8_pfit_curve(const q8_graph *g, q8_pfit_layer *l, bool refit);

/* Prune the layer's weights in g: the entries flagged in mask (numel, in
 * the weight tensor's layout), or with mask NULL the l->count smallest |w|
 * spread evenly over the output rows; with refit and h, compensate. */
q8_status q8_pfit_apply(q8_graph *g, q8_pfit_layer *l, const uint8_t *mask, bool refit,
                        q8_error *err);

#endif
