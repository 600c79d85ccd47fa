/* Resize (see resize.h). */
#include <math.h>
#include <string.h>

#include "ops/resize.h"

#include "op.h"

static int lookup(const char *s, const char *const *names, int count) {
    for (int i = 0; i < count; i++)
        if (strcmp(s, names[i]) == 0) return i;
    return -1;
}

static double to_original(const q8_resize_params *p, double x, double scale, int64_t in,
                          int64_t out, double roi_s, double roi_e, bool *outside) {
    double len_f = scale * (double)in, xo;
    switch (p->coord) {
    case Q8_RESIZE_PYTORCH_HALF_PIXEL:
        return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
    case Q8_RESIZE_ALIGN_CORNERS:
        return len_f == 1.0 ? 0.0 : x * (double)(in - 1) / (len_f - 1.0);
    case Q8_RESIZE_ASYMMETRIC:
        return x / scale;
    case Q8_RESIZE_TF_HALF_PIXEL_FOR_NN:
        return (x + 0.5) / scale;
    case Q8_RESIZE_TF_CROP_AND_RESIZE:
        xo = len_f > 1.0
                 ? roi_s * (double)(in - 1) + x * (roi_e - roi_s) * (double)(in - 1) / (len_f - 1.0)
                 : 0.5 * (roi_s + roi_e) * (double)(in - 1);
        *outside = xo < 0.0 || xo > (double)(in - 1);
        return xo;
    default:
        return (x + 0.5) / scale - 0.5;
    }
}

static int64_t nearest_index(const q8_resize_params *p, double x) {
    double f = floor(x);
    if (x == f) return (int64_t)f;
    double frac = x - f;
    switch (p->nearest) {
    case Q8_RESIZE_ROUND_PREFER_CEIL:
        return (int64_t)(frac < 0.5 ? f : f + 1.0);
    case Q8_RESIZE_FLOOR:
        return (int64_t)f;
    case Q8_RESIZE_CEIL:
        return (int64_t)f + 1;
    default:
        return (int64_t)(frac <= 0.5 ? f : f + 1.0);
    }
}

static double cubic_w(double d, double a) {
    d = fabs(d);
    if (d <= 1.0) return ((a + 2.0) * d - (a + 3.0)) * d * d + 1.0;
    if (d < 2.0) return ((a * d - 5.0 * a) * d + 8.0 * a) * d - 4.0 * a;
    return 0.0;
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* The uncollapsed taps of output o of dim d (q8_resize_mode_taps of them):
 * input indices ix, weights wx; *outside for an output outside the crop. */
static void out_taps(const q8_resize_params *p, int d, int64_t o, int64_t *ix, float *wx,
                     bool *outside) {
    int64_t in = p->in[d];
    *outside = false;
    double x = to_original(p, (double)o, p->scale[d], in, p->out[d], p->roi_start[d],
                           p->roi_end[d], outside);
    if (p->mode == Q8_RESIZE_NEAREST) {
        ix[0] = clamp64(nearest_index(p, x), 0, in - 1);
        wx[0] = 1.0f;
        return;
    }
    double f = floor(x), r = x - f;
    int64_t x0 = (int64_t)f;
    if (p->mode == Q8_RESIZE_LINEAR) {
        ix[0] = clamp64(x0, 0, in - 1);
        ix[1] = clamp64(x0 + 1, 0, in - 1);
        wx[0] = (float)(1.0 - r);
        wx[1] = (float)r;
        return;
    }
    double cw[4], sum = 0.0;
    for (int k = 0; k < 4; k++) {
        int64_t i = x0 - 1 + k;
        cw[k] = cubic_w(r + 1.0 - k, p->cubic_a);
        if (p->exclude_outside && (i < 0 || i >= in)) cw[k] = 0.0;
        sum += cw[k];
        ix[k] = clamp64(i, 0, in - 1);
    }
    for (int k = 0; k < 4; k++)
        wx[k] = (float)(p->exclude_outside && sum != 0.0 ? cw[k] / sum : cw[k]);
}

/* The taps dim d keeps: 1 when every output has exactly one nonzero tap, of
 * weight 1. Sets p->extrap when an output lies outside the crop. */
static int dim_taps(q8_resize_params *p, int d) {
    int t = q8_resize_mode_taps(p->mode);
    bool one = true;
    for (int64_t o = 0; o < p->out[d]; o++) {
        int64_t ix[4];
        float wx[4];
        bool outside;
        out_taps(p, d, o, ix, wx, &outside);
        p->extrap |= outside;
        int nz = 0;
        for (int k = 0; k < t; k++) nz += wx[k] != 0.0f;
        for (int k = 0; k < t && nz == 1; k++)
            if (wx[k] != 0.0f && wx[k] != 1.0f) nz = 0;
        one &= nz == 1;
    }
    return t == 1 || one ? 1 : t;
}

void q8_resize_dim_taps(const q8_resize_params *p, int d, int64_t stride, int64_t *idx, float *w,
                        uint8_t *ext) {
    int t = q8_resize_mode_taps(p->mode), kept = p->taps[d];
    for (int64_t o = 0; o < p->out[d]; o++) {
        int64_t ix[4];
        float wx[4];
        bool outside;
        out_taps(p, d, o, ix, wx, &outside);
        if (ext) ext[o] = outside;
        if (kept == t) {
            for (int k = 0; k < t; k++) {
                idx[o * t + k] = ix[k] * stride;
                w[o * t + k] = wx[k];
            }
        } else { /* collapsed: the one nonzero tap */
            int k = 0;
            while (wx[k] == 0.0f) k++;
            idx[o] = ix[k] * stride;
            w[o] = 1.0f;
        }
    }
}

void q8_resize_int_weights(const q8_resize_params *p, int d, const float *w, int32_t *wi) {
    const int32_t one = 1 << Q8_RESIZE_WBITS;
    for (int64_t o = 0; o < p->out[d]; o++) {
        if (p->taps[d] == 1) {
            wi[o] = 1;
            continue;
        }
        /* linear weights lie in [0, 1]; the second is rounded, the first is
         * what is left so that the pair sums to 2^WBITS */
        int32_t w1 = (int32_t)lrintf(w[2 * o + 1] * (float)one);
        w1 = w1 < 0 ? 0 : w1 > one ? one : w1;
        wi[2 * o] = one - w1;
        wi[2 * o + 1] = w1;
    }
}

int q8_resize_int_shift(const q8_resize_params *p) {
    int s = 0;
    for (int d = 0; d < p->rank; d++) s += p->taps[d] == 2 ? Q8_RESIZE_WBITS : 0;
    return s;
}

/* floor(v) as an output length, refusing lengths that would overflow. */
static q8_status out_len(const q8_node *n, int d, double v, int64_t *out, q8_error *err) {
    if (!(v < 0x1p62))
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "output dim %d would have %g elements", d, v);
    *out = (int64_t)floor(v);
    return Q8_OK;
}

/* Once scales or sizes are known: c holds the modes, out[] and scale[] per
 * dim; roi_s / roi_e (rank values each) or NULL. */
static q8_status resize_setup(q8_graph *g, q8_node *n, const q8_resize_params *c,
                              const int64_t *out, const double *scale, const double *roi_s,
                              const double *roi_e, float extrap_value, q8_error *err) {
    const q8_tensor *x = q8_in(g, n, 0);
    int r = x->ndim;
    bool int_linear = c->mode == Q8_RESIZE_LINEAR && (x->dtype == Q8_I8 || x->dtype == Q8_U8);
    if (c->mode != Q8_RESIZE_NEAREST && x->dtype != Q8_F32 && !int_linear)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n,
                            "input is %s; linear mode needs float32, int8 or uint8, cubic "
                            "float32",
                            q8_dtype_name(x->dtype));
    if (roi_s && x->dtype != Q8_F32)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n,
                            "tf_crop_and_resize needs float32 data, the input is %s",
                            q8_dtype_name(x->dtype));
    int64_t row_taps = 1, numel;
    int interp_dims = 0;
    bool huge = false; /* backends keep tables of a few bytes per output index of each dim */
    for (int d = 0; d < r; d++) huge |= out[d] > INT32_MAX;
    if (huge || !q8_shape_numel(out, r, &numel)) {
        char sb[128];
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "the output shape %s is too large",
                            q8_shape_str(out, r, sb, sizeof sb));
    }
    q8_resize_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    *p = *c;
    p->rank = r;
    p->dtype = x->dtype;
    p->extrap_value = extrap_value;
    p->rows = 1;
    for (int d = 0; d < r; d++) {
        p->in[d] = x->dims[d];
        p->out[d] = out[d];
        p->scale[d] = scale[d];
        p->roi_start[d] = roi_s ? roi_s[d] : 0.0;
        p->roi_end[d] = roi_e ? roi_e[d] : 1.0;
        if (out[d] > 0 && x->dims[d] == 0)
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "dim %d: cannot resize an empty dim to %lld",
                                d, (long long)out[d]);
        if (d < r - 1) p->rows *= out[d];
    }
    for (int d = r - 1; d >= 0; d--) {
        p->taps[d] = x->dims[d] == 0 ? 1 : dim_taps(p, d);
        if (d < r - 1) row_taps *= p->taps[d];
        interp_dims += p->taps[d] > 1;
    }
    if (int_linear && interp_dims > Q8_RESIZE_INT_MAX_DIMS)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n,
                            "linear Resize on %s interpolates at most %d dims, this one %d",
                            q8_dtype_name(x->dtype), Q8_RESIZE_INT_MAX_DIMS, interp_dims);
    if (row_taps > Q8_RESIZE_MAX_ROW_TAPS)
        return q8_node_fail(
            err, Q8_ERR_UNSUPPORTED, n,
            "resizing this many dims at once is not supported (%lld taps per output "
            "row, at most %d): resize at most 3 leading dims in cubic mode",
            (long long)row_taps, Q8_RESIZE_MAX_ROW_TAPS);
    return q8_set_output(g, n, 0, x->dtype, out, r, err);
}

static q8_status check_x(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_input(g, n, 0, Q8_UNDEFINED, err));
    const q8_tensor *x = q8_in(g, n, 0);
    q8_dtype dt = x->dtype;
    if (dt != Q8_F32 && dt != Q8_I8 && dt != Q8_U8 && dt != Q8_I32 && dt != Q8_I64)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n,
                            "input is %s, supported: float32 (any mode), int8, uint8 (nearest, "
                            "linear), int32, int64 (nearest)",
                            q8_dtype_name(dt));
    if (x->ndim < 1)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "input is a scalar, expected rank >= 1");
    return Q8_OK;
}

/* Input i holds values (present, with a known shape and at least one value). */
static bool has_values(const q8_graph *g, const q8_node *n, int i) {
    const q8_tensor *t = q8_in(g, n, i);
    return t && t->shape_known && q8_tensor_numel(t) > 0;
}

static q8_status parse_mode(const q8_node *n, q8_resize_params *c, q8_error *err) {
    static const char *const modes[] = {"nearest", "linear", "cubic"};
    const char *m = q8_attr_str(n, "mode", "nearest");
    int mode = lookup(m, modes, 3);
    if (mode < 0)
        return q8_node_fail(err, Q8_ERR_FORMAT, n,
                            "mode is '%s', expected nearest, linear or cubic", m);
    c->mode = (q8_resize_mode)mode;
    return Q8_OK;
}

static q8_status scales_from_input(q8_graph *g, q8_node *n, int i, double *scale, int want,
                                   q8_error *err) {
    float s[Q8_MAX_DIMS];
    int cnt;
    if (q8_tensor_numel(q8_in(g, n, i)) > Q8_MAX_DIMS || q8_in(g, n, i)->dtype != Q8_F32)
        return q8_node_fail(err, Q8_ERR_FORMAT, n,
                            "scales must be float32 with one value per axis");
    Q8_TRY(q8_const_floats(g, n, i, s, Q8_MAX_DIMS, &cnt, err));
    if (cnt != want)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "scales has %d values, expected %d", cnt, want);
    for (int d = 0; d < cnt; d++) {
        if (!(s[d] > 0.0f) || isinf(s[d]))
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "scales[%d] is %g, must be > 0", d, s[d]);
        scale[d] = s[d];
    }
    return Q8_OK;
}

static q8_status resize_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 1, 4, 1, 1, err));
    Q8_TRY(check_x(g, n, err));
    const q8_tensor *x = q8_in(g, n, 0);
    int r = x->ndim;
    q8_resize_params c = {.cubic_a = q8_attr_float(n, "cubic_coeff_a", -0.75f)};
    Q8_TRY(parse_mode(n, &c, err));
    static const char *const ctms[] = {"half_pixel", "pytorch_half_pixel",   "align_corners",
                                       "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"};
    static const char *const nms[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    const char *cs = q8_attr_str(n, "coordinate_transformation_mode", "half_pixel");
    const char *ns = q8_attr_str(n, "nearest_mode", "round_prefer_floor");
    int ctm = lookup(cs, ctms, 6), nearest = lookup(ns, nms, 4);
    if (ctm < 0)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "coordinate_transformation_mode '%s' is unknown",
                            cs);
    if (nearest < 0)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "nearest_mode '%s' is unknown", ns);
    c.coord = (q8_resize_coord)ctm;
    c.nearest = (q8_resize_nearest)nearest;
    int64_t exo = q8_attr_int(n, "exclude_outside", 0);
    if (exo != 0 && exo != 1)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "exclude_outside is %lld, expected 0 or 1",
                            (long long)exo);
    c.exclude_outside = exo == 1;
    if (q8_attr_int(n, "antialias", 0) != 0)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "antialias=1 is not supported");

    /* axes select the dims that scales / sizes refer to (all by default) */
    int64_t axes[Q8_MAX_DIMS];
    int na = r;
    int acnt;
    const int64_t *av = q8_attr_ints(n, "axes", &acnt);
    if (av) {
        if (acnt < 1 || acnt > r)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "axes has %d values for rank %d", acnt, r);
        bool seen[Q8_MAX_DIMS] = {false};
        for (int i = 0; i < acnt; i++) {
            int a;
            if (!q8_norm_axis(av[i], r, &a) || seen[a])
                return q8_node_fail(err, Q8_ERR_FORMAT, n,
                                    "axes[%d] = %lld is out of range or repeated", i,
                                    (long long)av[i]);
            seen[a] = true;
            axes[i] = a;
        }
        na = acnt;
    } else {
        for (int i = 0; i < r; i++) axes[i] = i;
    }

    int si = 2, zi = 3;
    bool has_scales = has_values(g, n, si), has_sizes = has_values(g, n, zi);
    if (has_scales && has_sizes)
        return q8_node_fail(err, Q8_ERR_FORMAT, n,
                            "both scales and sizes are given; give only one");
    if (!has_scales && !has_sizes)
        return q8_node_fail(err, Q8_ERR_FORMAT, n,
                            "Resize needs scales or sizes, and neither is given");

    double roi_s[Q8_MAX_DIMS], roi_e[Q8_MAX_DIMS];
    bool use_roi = c.coord == Q8_RESIZE_TF_CROP_AND_RESIZE;
    if (use_roi) {
        float rv[2 * Q8_MAX_DIMS];
        int cnt;
        if (!has_values(g, n, 1))
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "tf_crop_and_resize needs the roi input");
        Q8_TRY(q8_const_floats(g, n, 1, rv, 2 * Q8_MAX_DIMS, &cnt, err));
        if (cnt != 2 * na)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "roi has %d values, expected %d", cnt,
                                2 * na);
        for (int d = 0; d < r; d++) {
            roi_s[d] = 0.0;
            roi_e[d] = 1.0;
        }
        for (int i = 0; i < na; i++) {
            roi_s[axes[i]] = rv[i];
            roi_e[axes[i]] = rv[na + i];
        }
    }

    int64_t out[Q8_MAX_DIMS];
    double scale[Q8_MAX_DIMS];
    for (int d = 0; d < r; d++) {
        out[d] = x->dims[d];
        scale[d] = 1.0;
    }
    if (has_scales) {
        double s[Q8_MAX_DIMS];
        Q8_TRY(scales_from_input(g, n, si, s, na, err));
        for (int i = 0; i < na; i++) {
            int d = (int)axes[i];
            double len = (double)x->dims[d] * (use_roi ? roi_e[d] - roi_s[d] : 1.0);
            scale[d] = s[i];
            Q8_TRY(out_len(n, d, len * s[i], &out[d], err));
        }
    } else {
        int64_t sz[Q8_MAX_DIMS];
        int cnt;
        Q8_TRY(q8_const_ints(g, n, zi, sz, Q8_MAX_DIMS, &cnt, err));
        if (cnt != na)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "sizes has %d values, expected %d", cnt, na);
        for (int i = 0; i < na; i++)
            if (sz[i] < 0)
                return q8_node_fail(err, Q8_ERR_FORMAT, n, "sizes[%d] is %lld, must be >= 0", i,
                                    (long long)sz[i]);
        const char *kp = q8_attr_str(n, "keep_aspect_ratio_policy", "stretch");
        bool not_larger = strcmp(kp, "not_larger") == 0,
             not_smaller = strcmp(kp, "not_smaller") == 0;
        if (!not_larger && !not_smaller && strcmp(kp, "stretch") != 0)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "keep_aspect_ratio_policy '%s' is unknown",
                                kp);
        double common = not_larger ? INFINITY : 0.0;
        for (int i = 0; i < na; i++) {
            int d = (int)axes[i];
            double s = x->dims[d] ? (double)sz[i] / (double)x->dims[d] : 1.0;
            if (not_larger && s < common) common = s;
            if (not_smaller && s > common) common = s;
            scale[d] = s;
            out[d] = sz[i];
        }
        if (not_larger || not_smaller)
            for (int i = 0; i < na; i++) {
                int d = (int)axes[i];
                scale[d] = common;
                out[d] = (int64_t)floor(common * (double)x->dims[d] + 0.5);
            }
    }
    return resize_setup(g, n, &c, out, scale, use_roi ? roi_s : NULL, use_roi ? roi_e : NULL,
                        q8_attr_float(n, "extrapolation_value", 0.0f), err);
}

const q8_op_schema q8_schema_resize = {.infer = resize_infer};
