/* The numerics of error-compensating weight rounding (weight_round.h): one
 * block of a row, and a whole row put on the grid the rewrite reproduces. */
#include <math.h>
#include <string.h>

#include "quantize.h"
#include "weight_round.h"

static float to_grid(float v, float scale) {
    float q = nearbyintf(v / scale); /* half to even, as q8_quantize_weights */
    return q > 127 ? 127 : q < -127 ? -127 : q;
}

double q8_wround_block(float *w, const uint8_t *zero, const float *u, int64_t b, float scale,
                       int64_t pin) {
    double loss = 0;
    for (int64_t j = 0; j < b; j++) {
        float q = j == pin ? (w[j] < 0 ? -127.0f : 127.0f) : to_grid(w[j], scale);
        if (zero && zero[j] && j != pin) q = 0.0f;
        float v = q * scale;
        if (u) {
            const float *uj = u + j * b;
            double e = ((double)w[j] - (double)v) / (double)uj[j];
            loss += e * e;
            float ef = (float)e;
            for (int64_t k = j + 1; k < b; k++) w[k] -= ef * uj[k];
        }
        w[j] = v;
    }
    return loss;
}

/* Round a copy of row into tmp, block by block, pinning entry pin (-1:
 * none); true if some entry reached +-127. */
static bool round_blocks(const float *row, const uint8_t *zero, int64_t k, int64_t blk,
                         const float *const *u, float scale, int64_t pin, float *tmp) {
    memcpy(tmp, row, sizeof(float) * (size_t)k);
    for (int64_t c0 = 0, bi = 0; c0 < k; c0 += blk, bi++) {
        int64_t bs = k - c0 < blk ? k - c0 : blk;
        int64_t p = pin >= c0 && pin < c0 + bs ? pin - c0 : -1;
        q8_wround_block(tmp + c0, zero + c0, u[bi], bs, scale, p);
    }
    float top = 127.0f * scale;
    for (int64_t j = 0; j < k; j++)
        if (fabsf(tmp[j]) == top) return true;
    return false;
}

/* The grid of row: q8_weight_scale(max |row|) into *scale and the entry
 * of the largest |w| into *at; false for a row the rewrite could not
 * reproduce on it (all zero, not finite, or a scale that does not come
 * back from the rounded row). */
static bool row_grid(const float *row, int64_t k, float *scale, int64_t *at) {
    float amax = 0;
    *at = 0;
    for (int64_t j = 0; j < k; j++)
        if (fabsf(row[j]) > amax) {
            amax = fabsf(row[j]);
            *at = j;
        }
    if (!(amax >= 1e-30f) || !isfinite(amax)) return false;
    *scale = q8_weight_scale(amax);
    /* the rewrite takes the scale from the rounded row, whose largest |w|
     * is 127 * scale: that must give the same scale back */
    return q8_weight_scale(127.0f * *scale) == *scale;
}

/* tmp (k values on the grid of scale) into row if the rewrite's
 * q8_quantize_weights gives back that scale and integers whose products
 * with it are tmp, bit for bit; false, row unchanged, else. qt: k bytes. */
static bool put_back(float *row, const float *tmp, int64_t k, float scale, int8_t *qt) {
    float s2;
    q8_quantize_weights(tmp, 1, k, qt, &s2);
    if (s2 != scale) return false;
    for (int64_t j = 0; j < k; j++)
        if ((float)qt[j] * scale != tmp[j]) return false;
    memcpy(row, tmp, sizeof(float) * (size_t)k);
    return true;
}

bool q8_wround_row(float *row, int64_t k, int64_t blk, const float *const *u, float *tmp,
                   int8_t *qt) {
    uint8_t *zero = (uint8_t *)qt; /* until put_back */
    float scale;
    int64_t at;
    if (!row_grid(row, k, &scale, &at)) return false;
    for (int64_t j = 0; j < k; j++) zero[j] = row[j] == 0.0f;
    if (!round_blocks(row, zero, k, blk, u, scale, -1, tmp) &&
        !round_blocks(row, zero, k, blk, u, scale, at, tmp))
        return false;
    return put_back(row, tmp, k, scale, qt);
}

/* Move n taps of one window (q: levels, v: the FP32 weights, scale) one
 * step in direction d (+1 or -1): those whose rounding error points most
 * that way, each at most once, never to or from +-127 or from an exact 0. */
static int64_t move_taps(float *q, const float *w, float scale, int64_t win, int64_t n, float d) {
    int64_t moved = 0;
    while (moved < n) {
        int64_t best = -1;
        float bf = 0;
        for (int64_t j = 0; j < win; j++) {
            float f = (w[j] / scale - q[j]) * d; /* in (0, 0.5]: not moved yet */
            if (f <= 0 || w[j] == 0.0f || fabsf(q[j]) >= 127.0f || fabsf(q[j] + d) >= 127.0f)
                continue;
            if (best < 0 || f > bf) {
                best = j;
                bf = f;
            }
        }
        if (best < 0) break;
        q[best] += d;
        moved++;
    }
    return moved;
}

int64_t q8_wround_row_sums(float *row, int64_t k, int64_t win, float *tmp, int8_t *qt) {
    float scale;
    int64_t at;
    if (win < 1 || k % win || !row_grid(row, k, &scale, &at)) return -1;
    int64_t moved = 0;
    for (int64_t w0 = 0; w0 < k; w0 += win) {
        float *q = tmp + w0;
        double sv = 0, sq = 0;
        for (int64_t j = 0; j < win; j++) {
            q[j] = to_grid(row[w0 + j], scale);
            sv += (double)row[w0 + j] / scale;
            sq += q[j];
        }
        double need = nearbyint(sv - sq); /* |need| <= win / 2; NaN with a NaN tap */
        if (need != 0 && fabs(need) <= (double)win)
            moved += move_taps(q, row + w0, scale, win, (int64_t)fabs(need), need > 0 ? 1.0f : -1.0f);
    }
    for (int64_t j = 0; j < k; j++) tmp[j] *= scale;
    return put_back(row, tmp, k, scale, qt) ? moved : -1;
}
