/* One prunable layer: its sensitivity curve (relative output error at a
 * grid of sparsities, measured on a few of its rows) and the pruning of its
 * weights with re-fit (prune_fit.h). Rows are output channels; a Conv row
 * is contiguous, a [K, N] weight's row is a column. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "prune_fit.h"

int64_t q8_pfit_h_bytes(const q8_pfit_layer *l) {
    return l->kind == Q8_PFIT_NONE ? 0
                                   : (int64_t)sizeof(float) * l->groups * l->nblk * l->blk * l->blk;
}

void q8_pfit_get_row(const q8_pfit_layer *l, const float *w, int64_t r, float *row) {
    if (l->kind == Q8_PFIT_KN)
        for (int64_t j = 0; j < l->k; j++) row[j] = w[j * l->m + r];
    else
        memcpy(row, w + r * l->k, sizeof(float) * (size_t)l->k);
}

void q8_pfit_put_row(const q8_pfit_layer *l, float *w, int64_t r, const float *row) {
    if (l->kind == Q8_PFIT_KN)
        for (int64_t j = 0; j < l->k; j++) w[j * l->m + r] = row[j];
    else
        memcpy(w + r * l->k, row, sizeof(float) * (size_t)l->k);
}

static void get_mask(const q8_pfit_layer *l, const uint8_t *mask, int64_t r, uint8_t *row) {
    if (l->kind == Q8_PFIT_KN)
        for (int64_t j = 0; j < l->k; j++) row[j] = mask[j * l->m + r];
    else
        memcpy(row, mask + r * l->k, (size_t)l->k);
}

/* Block bi of row r's group: its size, and H (or U) */
static const float *block(const q8_pfit_layer *l, int64_t r, int64_t bi, int64_t *bs) {
    int64_t c0 = bi * l->blk;
    *bs = l->k - c0 < l->blk ? l->k - c0 : l->blk;
    int64_t grp = r / (l->m / l->groups);
    return l->h + (grp * l->nblk + bi) * l->blk * l->blk;
}

/* Damping grows with the inputs per calibration row: a block fitted on
 * fewer rows than inputs would reproduce those rows exactly and nothing
 * else (squeeze-excite layers see one row per sample). */
double q8_pfit_damping(const q8_pfit_layer *l, int64_t bs) {
    double r = (double)bs / (double)(l->n_rows ? l->n_rows : 1);
    return Q8_PFIT_DAMP + r * r;
}

/* A re-fit is a least-squares fit of a block's kept inputs to the rows
 * captured; with fewer rows than inputs its error, measured on those same
 * rows, says nothing of other inputs (heavily damped, as q8_pfit_damping
 * damps it there, the sequential update's error is in the damped metric:
 * 808x the layer's energy for a 1536-input Gemm on 13 rows). The curves of
 * such layers (a Gemm fed one row per sample: a classifier head, a
 * squeeze-excite layer, an MLP on a pooled vector) are measured without a
 * re-fit, so the budget is shared out by errors that hold: measured with
 * it on a wake-word head, the allocation emptied one layer and the
 * held-out output SQNR fell to 0.6 dB. Their pruning itself is still
 * re-fitted, damped: that measures well (MNIST MLP, 2:4: 97.5% top-1 with
 * it, 94.1% without). */
bool q8_pfit_fit_trusted(const q8_pfit_layer *l) {
    return l->n_rows >= (l->k < l->blk ? l->k : l->blk);
}

static void factor_all(q8_pfit_layer *l) {
    if (!l->h || l->factored) return;
    for (int64_t grp = 0; grp < l->groups; grp++)
        for (int64_t bi = 0; bi < l->nblk; bi++) {
            int64_t bs;
            float *h = (float *)block(l, grp * (l->m / l->groups), bi, &bs);
            if (bs > Q8_PFIT_EXACT) q8_pfit_factor(h, bs, q8_pfit_damping(l, bs));
        }
    l->factored = true;
}

/* The output error of pruning row (flagged in mask), over its blocks; with
 * refit on a copy (h factored), else from H (h unfactored) or, without
 * statistics, the weights' own energy. */
static double row_error(const q8_pfit_layer *l, int64_t r, const float *row, const uint8_t *mask,
                        bool refit, float *tmp) {
    if (!l->h) {
        double e = 0;
        for (int64_t j = 0; j < l->k; j++) e += mask[j] ? (double)row[j] * row[j] : 0;
        return e;
    }
    double e = 0;
    memcpy(tmp, row, sizeof(float) * (size_t)l->k);
    for (int64_t bi = 0; bi < l->nblk; bi++) {
        int64_t bs, c0 = bi * l->blk;
        const float *h = block(l, r, bi, &bs);
        double damp = q8_pfit_damping(l, bs);
        e += !refit ? q8_pfit_masked_error(row + c0, mask + c0, h, bs)
             : bs <= Q8_PFIT_EXACT ? q8_pfit_solve_block(tmp + c0, mask + c0, h, bs, damp)
                                   : q8_pfit_prune_block(tmp + c0, mask + c0, h, bs, true);
    }
    return e;
}

static double row_energy(const q8_pfit_layer *l, int64_t r, const float *row) {
    double e = 0;
    if (!l->h) {
        for (int64_t j = 0; j < l->k; j++) e += (double)row[j] * row[j];
        return e;
    }
    for (int64_t bi = 0; bi < l->nblk; bi++) {
        int64_t bs;
        const float *h = block(l, r, bi, &bs);
        e += q8_pfit_energy(row + bi * l->blk, h, bs);
    }
    return e;
}

static int64_t grid_count(int64_t n, int gi) {
    return (int64_t)llround((double)n * gi / (Q8_PFIT_GRID - 1));
}

void q8_pfit_curve(const q8_graph *g, q8_pfit_layer *l, bool refit) {
    const float *w = g->tensors[l->wt]->data;
    int64_t ns = l->m < Q8_PFIT_CURVE_ROWS ? l->m : Q8_PFIT_CURVE_ROWS;
    float *rows = malloc(sizeof(float) * (size_t)(ns * l->k + l->k));
    uint64_t *order = malloc(sizeof(uint64_t) * (size_t)(ns * l->k));
    uint8_t *mask = malloc((size_t)l->k);
    double energy = 0, e[Q8_PFIT_GRID] = {0};
    for (int gi = 0; gi < Q8_PFIT_GRID; gi++) {
        /* what the rows measured below prune: the same whole count per row */
        l->cnt[gi] = grid_count(l->k, gi) * l->m;
        l->err[gi] = (double)gi; /* without memory to measure: a steep curve */
    }
    if (!rows || !order || !mask) goto done;
    for (int64_t i = 0; i < ns; i++) {
        int64_t r = i * l->m / ns;
        q8_pfit_get_row(l, w, r, rows + i * l->k);
        energy += row_energy(l, r, rows + i * l->k);
        q8_pfit_smallest(rows + i * l->k, l->k, 0, mask, order + i * l->k);
    }
    refit = refit && q8_pfit_fit_trusted(l);
    if (refit) factor_all(l);
    for (int gi = 1; gi < Q8_PFIT_GRID; gi++) {
        int64_t kr = grid_count(l->k, gi);
        for (int64_t i = 0; i < ns; i++) {
            memset(mask, 0, (size_t)l->k);
            for (int64_t j = 0; j < kr; j++) mask[order[i * l->k + j] & 0xffffffffu] = 1;
            e[gi] += row_error(l, i * l->m / ns, rows + i * l->k, mask, refit, rows + ns * l->k);
        }
    }
    /* the output error relative to the output's energy, over the rows measured */
    for (int gi = 0; gi < Q8_PFIT_GRID; gi++) l->err[gi] = energy > 0 ? e[gi] / energy : 0;
done:
    free(rows);
    free(order);
    free(mask);
}

/* With a dense target (l->c), the shift of each row that takes the dense
 * layer on the dense inputs to its least-squares fit on the pruned model's
 * inputs: C w - H w per block (before H is factored), [m][k]. */
static double *target_shift(const q8_graph *g, const q8_pfit_layer *l) {
    const float *w = g->tensors[l->wt]->data;
    double *d = malloc(sizeof(double) * (size_t)(l->m * l->k));
    float *row = malloc(sizeof(float) * (size_t)l->k);
    if (!d || !row) {
        free(d);
        free(row);
        return NULL;
    }
    for (int64_t r = 0; r < l->m; r++) {
        q8_pfit_get_row(l, w, r, row);
        for (int64_t bi = 0; bi < l->nblk; bi++) {
            int64_t bs, c0 = bi * l->blk;
            const float *h = block(l, r, bi, &bs);
            const float *c = l->c + (h - l->h);
            for (int64_t i = 0; i < bs; i++) {
                double t = 0;
                for (int64_t j = 0; j < bs; j++)
                    t += ((double)c[i * bs + j] - h[i * bs + j]) * row[c0 + j];
                d[r * l->k + c0 + i] = t;
            }
        }
    }
    free(row);
    return d;
}

q8_status q8_pfit_apply(q8_graph *g, q8_pfit_layer *l, const uint8_t *mask, bool refit,
                        q8_error *err) {
    float *w = g->tensors[l->wt]->data;
    float *row = malloc(sizeof(float) * (size_t)l->k);
    uint8_t *mrow = malloc((size_t)l->k);
    uint64_t *order = malloc(sizeof(uint64_t) * (size_t)l->k);
    double *d = refit && l->h && l->c ? target_shift(g, l) : NULL;
    if (!row || !mrow || !order || (refit && l->h && l->c && !d)) {
        free(row);
        free(mrow);
        free(order);
        free(d);
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory pruning");
    }
    if (refit) factor_all(l);
    for (int64_t r = 0; r < l->m; r++) {
        q8_pfit_get_row(l, w, r, row);
        for (int64_t bi = 0; d && bi < l->nblk; bi++) {
            int64_t bs, c0 = bi * l->blk;
            const float *h = block(l, r, bi, &bs);
            bool exact = bs <= Q8_PFIT_EXACT;
            q8_pfit_shift(exact ? h : NULL, exact ? NULL : h, bs, q8_pfit_damping(l, bs),
                          d + r * l->k + c0, row + c0);
        }
        if (mask) get_mask(l, mask, r, mrow);
        else q8_pfit_smallest(row, l->k, l->count / l->m + (r < l->count % l->m), mrow, order);
        for (int64_t bi = 0; bi < l->nblk; bi++) {
            int64_t bs, c0 = bi * l->blk;
            const float *u = refit && l->h ? block(l, r, bi, &bs) : NULL;
            if (!u) bs = l->k - c0 < l->blk ? l->k - c0 : l->blk;
            if (u && bs <= Q8_PFIT_EXACT)
                q8_pfit_solve_block(row + c0, mrow + c0, u, bs, q8_pfit_damping(l, bs));
            else
                q8_pfit_prune_block(row + c0, mrow + c0, u, bs, u != NULL);
        }
        q8_pfit_put_row(l, w, r, row);
    }
    free(row);
    free(mrow);
    free(order);
    free(d);
    return Q8_OK;
}
