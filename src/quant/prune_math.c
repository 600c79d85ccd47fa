/* The numerics of pruning with re-fit: the factor U of a damped inverse
 * input covariance, the OBS / SparseGPT sequential compensation, the errors
 * a mask costs, and the share-out of a global budget (prune_fit.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "prune_fit.h"

/* In place: a (n x n, row-major) = L L^T, L lower. False if a pivot is not
 * positive. Row-oriented so that every inner product runs over contiguous
 * row prefixes. */
static bool cholesky_lower(double *a, int64_t n) {
    for (int64_t j = 0; j < n; j++) {
        double *rj = a + j * n;
        double s = rj[j];
        for (int64_t k = 0; k < j; k++) s -= rj[k] * rj[k];
        if (!(s > 0)) return false;
        double d = sqrt(s);
        rj[j] = d;
        for (int64_t i = j + 1; i < n; i++) {
            double *ri = a + i * n;
            double t = ri[j];
            for (int64_t k = 0; k < j; k++) t -= ri[k] * rj[k];
            ri[j] = t / d;
        }
    }
    return true;
}

static void identity(float *u, int64_t b) {
    memset(u, 0, sizeof(float) * (size_t)(b * b));
    for (int64_t i = 0; i < b; i++) u[i * b + i] = 1.0f;
}

void q8_pfit_factor(float *h, int64_t b, double damp) {
    double *a = malloc(sizeof(double) * (size_t)(b * b));
    double *m = malloc(sizeof(double) * (size_t)(b * b));
    if (!a || !m) { /* no memory for the re-fit: plain pruning */
        free(a);
        free(m);
        identity(h, b);
        return;
    }
    double mean = 0;
    for (int64_t i = 0; i < b; i++) mean += h[i * b + i];
    mean /= (double)b;
    for (int64_t i = 0; i < b; i++)
        for (int64_t j = i; j < b; j++) a[i * b + j] = a[j * b + i] = h[i * b + j];
    for (int64_t i = 0; i < b; i++) a[i * b + i] += damp * mean;
    bool ok = mean > 0 && cholesky_lower(a, b);
    if (ok) {
        /* m = (L^-1)^T, upper: m[c][k] = Linv[k][c], by forward substitution */
        memset(m, 0, sizeof(double) * (size_t)(b * b));
        for (int64_t c = 0; c < b; c++) {
            double *mc = m + c * b;
            for (int64_t i = c; i < b; i++) {
                const double *li = a + i * b;
                double t = i == c ? 1.0 : 0.0;
                for (int64_t k = c; k < i; k++) t -= li[k] * mc[k];
                mc[i] = t / li[i];
            }
        }
        /* a = H^-1 = Linv^T Linv: a[i][j] = sum over k >= max(i, j) of m[i][k] m[j][k] */
        for (int64_t i = 0; i < b; i++)
            for (int64_t j = i; j < b; j++) {
                const double *mi = m + i * b, *mj = m + j * b;
                double t = 0;
                for (int64_t k = j; k < b; k++) t += mi[k] * mj[k];
                a[i * b + j] = a[j * b + i] = t;
            }
        ok = cholesky_lower(a, b);
    }
    if (!ok) {
        identity(h, b);
    } else { /* U = L2^T */
        for (int64_t i = 0; i < b; i++)
            for (int64_t j = 0; j < b; j++) h[i * b + j] = j >= i ? (float)a[j * b + i] : 0.0f;
    }
    free(a);
    free(m);
}

double q8_pfit_prune_block(float *w, const uint8_t *mask, const float *u, int64_t b, bool refit) {
    double loss = 0;
    for (int64_t j = 0; j < b; j++) {
        if (!mask[j]) continue;
        if (refit) {
            const float *uj = u + j * b;
            double e = (double)w[j] / (double)uj[j];
            loss += e * e;
            float ef = (float)e;
            for (int64_t k = j + 1; k < b; k++) w[k] -= ef * uj[k];
        }
        w[j] = 0.0f;
    }
    return loss;
}

double q8_pfit_solve_block(float *w, const uint8_t *mask, const float *h, int64_t b,
                           double damp) {
    int64_t nk = 0, np = 0;
    for (int64_t j = 0; j < b; j++) nk += !mask[j];
    np = b - nk;
    if (np == 0) return 0;
    int64_t *kept = malloc(sizeof(int64_t) * (size_t)(nk + 1));
    double *a = malloc(sizeof(double) * (size_t)(nk * nk + 1));
    double *y = malloc(sizeof(double) * (size_t)(nk + 1));
    float *w0 = malloc(sizeof(float) * (size_t)b);
    double mean = 0;
    for (int64_t i = 0; i < b; i++) mean += h[i * b + i];
    mean /= (double)b;
    bool ok = kept && a && y && w0 && mean > 0;
    if (ok) {
        memcpy(w0, w, sizeof(float) * (size_t)b);
        for (int64_t j = 0, n = 0; j < b; j++)
            if (!mask[j]) kept[n++] = j;
        /* (H_kk + damp I) dw_k = H_kp w_p */
        for (int64_t i = 0; i < nk; i++) {
            const float *hi = h + kept[i] * b;
            for (int64_t j = 0; j < nk; j++) a[i * nk + j] = hi[kept[j]];
            a[i * nk + i] += damp * mean;
            double t = 0;
            for (int64_t j = 0; j < b; j++)
                if (mask[j]) t += (double)hi[j] * w0[j];
            y[i] = t;
        }
        ok = cholesky_lower(a, nk);
    }
    if (ok) {
        for (int64_t i = 0; i < nk; i++) { /* L z = y */
            double t = y[i];
            for (int64_t k = 0; k < i; k++) t -= a[i * nk + k] * y[k];
            y[i] = t / a[i * nk + i];
        }
        for (int64_t i = nk - 1; i >= 0; i--) { /* L^T dw = z */
            double t = y[i];
            for (int64_t k = i + 1; k < nk; k++) t -= a[k * nk + i] * y[k];
            y[i] = t / a[i * nk + i];
        }
        for (int64_t i = 0; i < nk; i++) w[kept[i]] = (float)(w0[kept[i]] + y[i]);
    }
    for (int64_t j = 0; j < b; j++)
        if (mask[j]) w[j] = 0.0f;
    double loss = 0;
    if (w0) { /* (w - w0)^T H (w - w0) */
        for (int64_t j = 0; j < b; j++) w0[j] = w[j] - w0[j];
        loss = q8_pfit_energy(w0, h, b);
    }
    free(kept);
    free(a);
    free(y);
    free(w0);
    return loss;
}

double q8_pfit_masked_error(const float *w, const uint8_t *mask, const float *h, int64_t b) {
    double t = 0;
    for (int64_t i = 0; i < b; i++) {
        if (!mask[i]) continue;
        const float *hi = h + i * b;
        double s = 0;
        for (int64_t j = 0; j < b; j++)
            if (mask[j]) s += (double)hi[j] * w[j];
        t += s * w[i];
    }
    return t;
}

double q8_pfit_energy(const float *w, const float *h, int64_t b) {
    double t = 0;
    for (int64_t i = 0; i < b; i++) {
        const float *hi = h + i * b;
        double s = 0;
        for (int64_t j = 0; j < b; j++) s += (double)hi[j] * w[j];
        t += s * w[i];
    }
    return t;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

void q8_pfit_smallest(const float *w, int64_t n, int64_t count, uint8_t *mask, uint64_t *order) {
    /* |w| as float bits sorts as an unsigned integer; the index breaks ties */
    for (int64_t i = 0; i < n; i++) {
        float a = fabsf(w[i]);
        uint32_t bits;
        memcpy(&bits, &a, sizeof bits);
        order[i] = (uint64_t)bits << 32 | (uint64_t)i;
    }
    qsort(order, (size_t)n, sizeof *order, cmp_u64);
    memset(mask, 0, (size_t)n);
    for (int64_t i = 0; i < count && i < n; i++) mask[order[i] & 0xffffffffu] = 1;
}

/* The greedy allocation with grid points up to top (exclusive). */
static bool allocate_upto(q8_pfit_layer *l, int n, int64_t budget, int top) {
    int *at = calloc((size_t)n + 1, sizeof(int));
    if (!at) return false;
    int64_t total = 0, last_prev = 0;
    int last = -1;
    while (total < budget) {
        int best = -1, best_g = 0;
        double best_rate = INFINITY;
        for (int i = 0; i < n; i++) {
            if (!l[i].eligible) continue;
            for (int g = at[i] + 1; g < top; g++) {
                int64_t dc = l[i].cnt[g] - l[i].cnt[at[i]];
                if (dc <= 0) continue;
                double rate = (l[i].err[g] - l[i].err[at[i]]) / (double)dc;
                if (rate < best_rate) {
                    best_rate = rate;
                    best = i;
                    best_g = g;
                }
            }
        }
        if (best < 0) break;
        last_prev = l[best].cnt[at[best]];
        total += l[best].cnt[best_g] - last_prev;
        at[best] = best_g;
        last = best;
    }
    for (int i = 0; i < n; i++) l[i].count = l[i].eligible ? l[i].cnt[at[i]] : 0;
    if (last >= 0 && total > budget) l[last].count -= total - budget; /* >= last_prev */
    free(at);
    return total >= budget;
}

bool q8_pfit_allocate(q8_pfit_layer *l, int n, int64_t budget) {
    /* a whole layer only where the budget needs it: 100% sparsity removes
     * the layer from the model, whatever its curve says the output loses
     * (a wake-word head's middle layer was emptied so, its output SQNR
     * 0.6 dB) */
    return allocate_upto(l, n, budget, Q8_PFIT_GRID - 1) ||
           allocate_upto(l, n, budget, Q8_PFIT_GRID);
}

void q8_pfit_shift(const float *h, const float *u, int64_t b, double damp, const double *d,
                   float *w) {
    double *t = malloc(sizeof(double) * (size_t)(u ? b : b * b + b));
    if (!t) return; /* no memory: the weights stay as they are */
    if (u) { /* t = U d, w += U^T t */
        for (int64_t i = 0; i < b; i++) {
            double s = 0;
            for (int64_t j = i; j < b; j++) s += (double)u[i * b + j] * d[j];
            t[i] = s;
        }
        for (int64_t j = 0; j < b; j++) {
            double s = 0;
            for (int64_t i = 0; i <= j; i++) s += (double)u[i * b + j] * t[i];
            w[j] += (float)s;
        }
        free(t);
        return;
    }
    double mean = 0, *y = t + b * b;
    for (int64_t i = 0; i < b; i++) mean += h[i * b + i];
    mean /= (double)b;
    for (int64_t i = 0; i < b; i++) {
        for (int64_t j = 0; j < b; j++) t[i * b + j] = h[i * b + j];
        t[i * b + i] += damp * mean;
    }
    if (mean > 0 && cholesky_lower(t, b)) {
        for (int64_t i = 0; i < b; i++) { /* L z = d */
            double s = d[i];
            for (int64_t k = 0; k < i; k++) s -= t[i * b + k] * y[k];
            y[i] = s / t[i * b + i];
        }
        for (int64_t i = b - 1; i >= 0; i--) { /* L^T x = z */
            double s = y[i];
            for (int64_t k = i + 1; k < b; k++) s -= t[k * b + i] * y[k];
            y[i] = s / t[i * b + i];
        }
        for (int64_t i = 0; i < b; i++) w[i] += (float)y[i];
    }
    free(t);
}
