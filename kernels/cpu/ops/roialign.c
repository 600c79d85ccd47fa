/* RoiAlign on the CPU (params: src/core/ops/roialign.h): one (roi, channel)
 * plane per work item; each sample's bilinear corners and weights are
 * computed where they are used, in double, in the reference's order. */
#include <math.h>

#include "cpu_op.h"
#include "ops/roialign.h"
#include "ops/tensor_args.h"

typedef struct roialign_args {
    const q8_roialign_params *p;
    const float *x, *rois;
    const void *batch;
    float *y;
} roialign_args;

/* The four weighted corner values of a sample at (yy, xx) of plane x; false
 * for a sample outside [-1, H] x [-1, W] (it counts as 0). */
static bool corners(const float *x, int64_t h, int64_t w, double yy, double xx, double v[4]) {
    if (yy < -1.0 || yy > (double)h || xx < -1.0 || xx > (double)w) return false;
    if (yy < 0) yy = 0;
    if (xx < 0) xx = 0;
    int64_t yl = (int64_t)yy, xl = (int64_t)xx, yh, xh;
    if (yl >= h - 1) yh = yl = h - 1, yy = (double)yl;
    else yh = yl + 1;
    if (xl >= w - 1) xh = xl = w - 1, xx = (double)xl;
    else xh = xl + 1;
    double ly = yy - (double)yl, lx = xx - (double)xl, hy = 1 - ly, hx = 1 - lx;
    v[0] = hy * hx * x[yl * w + xl];
    v[1] = hy * lx * x[yl * w + xh];
    v[2] = ly * hx * x[yh * w + xl];
    v[3] = ly * lx * x[yh * w + xh];
    return true;
}

/* Samples per bin side: sampling_ratio, or ceil(size / bins), 0 for an
 * empty or reversed ROI (no sample: the bin is 0, as the reference's empty
 * loops give). size is below 2^41 here. */
static int64_t grid_of(int64_t ratio, double size, int64_t bins) {
    if (ratio > 0) return ratio;
    double g = ceil(size / (double)bins);
    return g >= 1 ? (int64_t)g : 0;
}

/* The samples i in [0, g) at start + (i + 0.5) * spacing that may fall in
 * [-1, extent] (one more each side for rounding; corners() decides):
 * [*lo, *hi], empty when *lo > *hi. Samples outside give 0 and are only
 * counted, so a ROI much larger than the map costs what the map holds. */
static void window(double start, double spacing, int64_t g, int64_t extent, int64_t *lo,
                   int64_t *hi) {
    if (g == 0 || spacing == 0) { /* every sample at one place */
        bool in = g > 0 && start + 0.5 * spacing >= -1 && start <= (double)extent;
        *lo = 0, *hi = in ? g - 1 : -1;
        return;
    }
    double a = (-1 - start) / spacing - 0.5, b = ((double)extent - start) / spacing - 0.5;
    double l = floor(fmin(a, b)) - 1, h = ceil(fmax(a, b)) + 1;
    l = l < 0 ? 0 : l;
    h = h > (double)(g - 1) ? (double)(g - 1) : h;
    *lo = l > h ? 1 : (int64_t)l, *hi = l > h ? 0 : (int64_t)h;
}

/* The ROI's coordinates are bounded so that sample indices and positions
 * stay exact in int64 and double. */
#define Q8_ROIALIGN_MAX_COORD 1099511627776.0 /* 2^40 */

static void roialign_planes(void *arg, int64_t b, int64_t e, int t) {
    const roialign_args *a = arg;
    const q8_roialign_params *p = a->p;
    for (int64_t it = b; it < e; it++) {
        int64_t r = it / p->c, c = it % p->c;
        float *y = a->y + it * p->oh * p->ow;
        const float *roi = a->rois + r * 4;
        int64_t bi = q8_ta_index(p->index_dtype, a->batch, r);
        double off = p->half_pixel ? 0.5 : 0.0, s = p->spatial_scale;
        double x0 = roi[0] * s - off, y0 = roi[1] * s - off;
        double rw = roi[2] * s - off - x0, rh = roi[3] * s - off - y0;
        const double lim = Q8_ROIALIGN_MAX_COORD;
        if (bi < 0 || bi >= p->n || !(fabs(x0) < lim) || !(fabs(y0) < lim) ||
            !(fabs(rw) < lim) || !(fabs(rh) < lim) || p->h == 0 || p->w == 0) {
            for (int64_t i = 0; i < p->oh * p->ow; i++) y[i] = NAN;
            continue;
        }
        if (!p->half_pixel) { /* malformed ROIs forced to 1x1 */
            rw = rw > 1 ? rw : 1;
            rh = rh > 1 ? rh : 1;
        }
        const float *x = a->x + (bi * p->c + c) * p->h * p->w;
        double bh = rh / (double)p->oh, bw = rw / (double)p->ow;
        int64_t gh = grid_of(p->sampling_ratio, rh, p->oh), gw = grid_of(p->sampling_ratio, rw, p->ow);
        double count = (double)gh * (double)gw;
        for (int64_t ph = 0; ph < p->oh; ph++)
            for (int64_t pw = 0; pw < p->ow; pw++) {
                int64_t ylo, yhi, xlo, xhi;
                window(y0 + (double)ph * bh, bh / (double)(gh ? gh : 1), gh, p->h, &ylo, &yhi);
                window(x0 + (double)pw * bw, bw / (double)(gw ? gw : 1), gw, p->w, &xlo, &xhi);
                /* max: a sample outside the map counts as 0 */
                bool outside = ylo > 0 || yhi < gh - 1 || xlo > 0 || xhi < gw - 1 ||
                               ylo > yhi || xlo > xhi;
                double acc = 0, v[4];
                bool first = true;
                for (int64_t iy = ylo; iy <= yhi; iy++) {
                    double yy = y0 + (double)ph * bh + ((double)iy + 0.5) * bh / (double)gh;
                    for (int64_t ix = xlo; ix <= xhi; ix++) {
                        double xx = x0 + (double)pw * bw + ((double)ix + 0.5) * bw / (double)gw;
                        if (!corners(x, p->h, p->w, yy, xx, v)) {
                            outside = true;
                            continue;
                        }
                        if (!p->max) {
                            acc += v[0] + v[1] + v[2] + v[3];
                            continue;
                        }
                        double m = fmax(fmax(v[0], v[1]), fmax(v[2], v[3]));
                        acc = first || m > acc ? m : acc;
                        first = false;
                    }
                }
                if (p->max && outside && (first || acc < 0)) acc = 0;
                y[ph * p->ow + pw] = count == 0 ? 0.0f : (float)(p->max ? acc : acc / count);
            }
    }
}

static void roialign_run(const q8_exec *x, const q8_node *n) {
    const q8_roialign_params *p = n->params;
    roialign_args a = {p, Q8_IN_PTR(x, n, 0), Q8_IN_PTR(x, n, 1), Q8_IN_PTR(x, n, 2),
                       Q8_OUT_PTR(x, n, 0)};
    q8_parallel_for(x->pool, p->rois * p->c, 1, roialign_planes, &a);
}

const q8_cpu_op q8_cpu_roi_align = {.run = roialign_run};
