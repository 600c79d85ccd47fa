/* GridSample on the CPU (params and semantics: src/core/ops/gridsample.h):
 * each output place computes its coordinates once and samples every
 * channel; places split over the threads. */
#include <math.h>

#include "cpu_op.h"
#include "ops/gridsample.h"

typedef struct gs_args {
    const q8_gridsample_params *p;
    const float *x, *grid;
    float *y;
} gs_args;

/* Reflect v into [lo, hi] by its nearer border, as often as it takes. */
static float reflect(float v, float lo, float hi) {
    float rng = hi - lo;
    if (!(rng > 0)) return lo;
    if (v < lo) {
        float dx = lo - v;
        float k = floorf(dx / rng), r = dx - k * rng;
        v = fmodf(k, 2) == 0 ? lo + r : hi - r;
    }
    if (v > hi) {
        float dx = v - hi;
        float k = floorf(dx / rng), r = dx - k * rng;
        v = fmodf(k, 2) == 0 ? hi - r : lo + r;
    }
    /* far out, r carries the rounding error of dx: keep the result inside */
    return v < lo ? lo : v > hi ? hi : v;
}

/* A pixel index along a dim of length d after the padding rule; -1: reads 0. */
static int64_t pad_index(const q8_gridsample_params *p, int64_t i, int64_t d) {
    if (i >= 0 && i < d) return i;
    if (p->padding == Q8_GS_ZEROS) return -1;
    if (p->padding == Q8_GS_BORDER) return i < 0 ? 0 : d - 1;
    float lo = p->align_corners ? 0.0f : -0.5f, hi = p->align_corners ? (float)(d - 1) : d - 0.5f;
    int64_t r = (int64_t)reflect((float)i, lo, hi);
    return r < 0 ? 0 : r >= d ? d - 1 : r;
}

/* The coordinate after the padding rule for coordinates. */
static float pad_coord(const q8_gridsample_params *p, float v, int64_t d) {
    float lo = p->align_corners ? 0.0f : -0.5f, hi = p->align_corners ? (float)(d - 1) : d - 0.5f;
    if (!(v < lo || v > hi)) return v;
    if (p->padding == Q8_GS_BORDER) return v < 0 ? 0.0f : v > d - 1 ? (float)(d - 1) : v;
    if (p->padding == Q8_GS_REFLECTION) return reflect(v, lo, hi);
    return v;
}

static void cubic_coeffs(float t, float c[4]) {
    const float a = -0.75f;
    t = fabsf(t);
    c[0] = ((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a;
    c[1] = ((a + 2) * t - (a + 3)) * t * t + 1;
    c[2] = ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1;
    c[3] = ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a;
}

static float pixel(const float *img, int64_t r, int64_t c, int64_t w) {
    return r < 0 || c < 0 ? 0.0f : img[r * w + c];
}

static void gs_places(void *arg, int64_t b, int64_t e, int t) {
    const gs_args *a = arg;
    const q8_gridsample_params *p = a->p;
    int64_t H = p->h, W = p->w, plane = p->ho * p->wo;
    for (int64_t i = b; i < e; i++) { /* i = n * plane + place */
        int64_t n = i / plane, o = i % plane;
        float gx = a->grid[i * 2], gy = a->grid[i * 2 + 1];
        float x = p->align_corners ? (gx + 1) / 2.0f * (float)(W - 1) : ((gx + 1) * W - 1) / 2.0f;
        float y = p->align_corners ? (gy + 1) / 2.0f * (float)(H - 1) : ((gy + 1) * H - 1) / 2.0f;
        if (p->mode == Q8_GS_NEAREST) {
            x = nearbyintf(x);
            y = nearbyintf(y);
        }
        x = pad_coord(p, x, W);
        y = pad_coord(p, y, H);
        /* zeros padding leaves far coordinates where they are: every tap of
         * one beyond a few pixels outside reads 0, so it can be brought in
         * to keep the casts to int64 defined (NaN stays NaN) */
        x = x < -4 ? -4.0f : x > W + 3 ? (float)(W + 3) : x;
        y = y < -4 ? -4.0f : y > H + 3 ? (float)(H + 3) : y;
        for (int64_t c = 0; c < p->c; c++) {
            const float *img = a->x + (n * p->c + c) * H * W;
            float v;
            if (p->mode == Q8_GS_NEAREST) {
                int64_t r = isfinite(y) ? (int64_t)y : -1, q = isfinite(x) ? (int64_t)x : -1;
                v = pixel(img, pad_index(p, r, H), pad_index(p, q, W), W);
            } else if (!isfinite(x) || !isfinite(y)) {
                v = 0.0f;
            } else if (p->mode == Q8_GS_LINEAR) {
                float x0 = floorf(x), y0 = floorf(y), tx = x - x0, ty = y - y0;
                int64_t c0 = (int64_t)x0, r0 = (int64_t)y0, c0p = pad_index(p, c0, W),
                        c1p = pad_index(p, c0 + 1, W);
                float row[2];
                for (int k = 0; k < 2; k++) {
                    int64_t r = pad_index(p, r0 + k, H);
                    row[k] = r < 0 ? 0.0f
                                   : (1 - tx) * pixel(img, r, c0p, W) + tx * pixel(img, r, c1p, W);
                }
                v = (1 - ty) * row[0] + ty * row[1];
            } else {
                float x0 = floorf(x), y0 = floorf(y), cx[4], cy[4], row[4];
                cubic_coeffs(x - x0, cx);
                cubic_coeffs(y - y0, cy);
                int64_t cidx[4];
                for (int k = 0; k < 4; k++) cidx[k] = pad_index(p, (int64_t)x0 - 1 + k, W);
                for (int k = 0; k < 4; k++) {
                    int64_t r = pad_index(p, (int64_t)y0 - 1 + k, H);
                    row[k] = 0;
                    for (int j = 0; j < 4 && r >= 0; j++) row[k] += cx[j] * pixel(img, r, cidx[j], W);
                }
                v = cy[0] * row[0] + cy[1] * row[1] + cy[2] * row[2] + cy[3] * row[3];
            }
            a->y[(n * p->c + c) * plane + o] = v;
        }
    }
}

static void gs_run(const q8_exec *x, const q8_node *n) {
    const q8_gridsample_params *p = n->params;
    gs_args a = {p, Q8_IN_PTR(x, n, 0), Q8_IN_PTR(x, n, 1), Q8_OUT_PTR(x, n, 0)};
    if (p->h == 0 || p->w == 0) { /* nothing to sample: every pixel is padding */
        for (int64_t i = 0; i < p->n * p->c * p->ho * p->wo; i++) a.y[i] = 0.0f;
        return;
    }
    q8_parallel_for(x->pool, p->n * p->ho * p->wo, 64, gs_places, &a);
}

const q8_cpu_op q8_cpu_grid_sample = {.run = gs_run};
