/* Resize (opsets 10, 11, 13, 18) and the deprecated Upsample (7, 9), one
 * kernel. Modes nearest, linear (n-linear) and cubic; all coordinate
 * transformation and nearest modes. scales or sizes must be constant (they
 * decide the output shape); roi too when tf_crop_and_resize uses it.
 *
 * infer builds, per dim, a table of input offsets and weights for every
 * output index (1, 2 or 4 taps; a dim whose taps collapse to one tap of
 * weight 1, such as N and C, keeps one) in n->packed. run walks output rows
 * (all dims but the last): the taps of the leading dims combine into at most
 * 64 (offset, weight) pairs per row, then each output of the row sums its
 * last-dim taps over them. The order is fixed, so results do not depend on
 * the thread count.
 *
 * Coordinates follow the ONNX reference implementation, which the backend
 * tests are generated with: in double precision, with the scale as given
 * (or sizes / input), and align_corners / tf_crop_and_resize divide by
 * scale * input_length - 1 (not output_length - 1; they differ only when
 * scales give a fractional output length). Opset <= 10 and Upsample use
 * asymmetric coordinates and, for nearest, floor when upsampling and ceil
 * when downsampling (as onnxruntime does). Nearest also takes int8, uint8,
 * int32 and int64 data; linear and cubic float32. */
#include <math.h>
#include <string.h>

#include "cpu_op.h"

enum { M_NEAREST, M_LINEAR, M_CUBIC };
enum {
    C_HALF_PIXEL,
    C_PYTORCH_HALF_PIXEL,
    C_ALIGN_CORNERS,
    C_ASYMMETRIC,
    C_TF_HALF_PIXEL_FOR_NN,
    C_TF_CROP_AND_RESIZE
};
enum { N_ROUND_PREFER_FLOOR, N_ROUND_PREFER_CEIL, N_FLOOR, N_CEIL, N_SIMPLE };

#define MAX_ROW_TAPS 64

typedef struct resize_params {
    int rank;
    size_t esize;
    bool f32; /* float32 data (else nearest gather by size) */
    int64_t in[Q8_MAX_DIMS], out[Q8_MAX_DIMS];
    int taps[Q8_MAX_DIMS];
    /* byte offsets into n->packed of each dim's tables */
    size_t idx_off[Q8_MAX_DIMS], w_off[Q8_MAX_DIMS], ext_off[Q8_MAX_DIMS];
    bool extrap; /* tf_crop_and_resize: outside outputs exist */
    float extrap_value;
    int64_t rows; /* product of out[0 .. rank-1) */
} resize_params;

/* What decides the tables, besides the shapes. */
typedef struct resize_cfg {
    int mode, ctm, nearest;
    double cubic_a;
    bool exclude_outside;
} resize_cfg;

static int lookup(const char *s, const char *const *names, int count) {
    for (int i = 0; i < count; i++)
        if (strcmp(s, names[i]) == 0) return i;
    return -1;
}

static double to_original(const resize_cfg *c, double x, double scale, int64_t in, int64_t out,
                          double roi_s, double roi_e, bool *outside) {
    double len_f = scale * (double)in, xo;
    switch (c->ctm) {
    case C_PYTORCH_HALF_PIXEL:
        return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
    case C_ALIGN_CORNERS:
        return len_f == 1.0 ? 0.0 : x * (double)(in - 1) / (len_f - 1.0);
    case C_ASYMMETRIC:
        return x / scale;
    case C_TF_HALF_PIXEL_FOR_NN:
        return (x + 0.5) / scale;
    case C_TF_CROP_AND_RESIZE:
        xo = len_f > 1.0
                 ? roi_s * (double)(in - 1) + x * (roi_e - roi_s) * (double)(in - 1) / (len_f - 1.0)
                 : 0.5 * (roi_s + roi_e) * (double)(in - 1);
        *outside = xo < 0.0 || xo > (double)(in - 1);
        return xo;
    default:
        return (x + 0.5) / scale - 0.5;
    }
}

static int64_t nearest_index(const resize_cfg *c, double x, double scale) {
    double f = floor(x);
    if (x == f) return (int64_t)f;
    double frac = x - f;
    switch (c->nearest) {
    case N_ROUND_PREFER_CEIL:
        return (int64_t)(frac < 0.5 ? f : f + 1.0);
    case N_FLOOR:
        return (int64_t)f;
    case N_CEIL:
        return (int64_t)f + 1;
    case N_SIMPLE:
        return scale < 1.0 ? (int64_t)f + 1 : (int64_t)(x < 0.0 ? f + 1.0 : f);
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

/* Fill one dim's tables (taps per output = t); returns the taps kept after
 * collapsing to one tap when every output has a single weight-1 tap. */
static int build_dim(const resize_cfg *c, int64_t in, int64_t out, double scale, double roi_s,
                     double roi_e, int64_t stride, int64_t *idx, float *w, uint8_t *ext) {
    int t = c->mode == M_NEAREST ? 1 : c->mode == M_LINEAR ? 2 : 4;
    for (int64_t o = 0; o < out; o++) {
        bool outside = false;
        double x = to_original(c, (double)o, scale, in, out, roi_s, roi_e, &outside);
        ext[o] = outside;
        int64_t *ix = idx + o * t;
        float *wx = w + o * t;
        if (c->mode == M_NEAREST) {
            ix[0] = clamp64(nearest_index(c, x, scale), 0, in - 1) * stride;
            wx[0] = 1.0f;
            continue;
        }
        double f = floor(x), r = x - f;
        int64_t x0 = (int64_t)f;
        if (c->mode == M_LINEAR) {
            ix[0] = clamp64(x0, 0, in - 1) * stride;
            ix[1] = clamp64(x0 + 1, 0, in - 1) * stride;
            wx[0] = (float)(1.0 - r);
            wx[1] = (float)r;
            continue;
        }
        double cw[4], sum = 0.0;
        for (int k = 0; k < 4; k++) {
            int64_t p = x0 - 1 + k;
            cw[k] = cubic_w(r + 1.0 - k, c->cubic_a);
            if (c->exclude_outside && (p < 0 || p >= in)) cw[k] = 0.0;
            sum += cw[k];
            ix[k] = clamp64(p, 0, in - 1) * stride;
        }
        for (int k = 0; k < 4; k++)
            wx[k] = (float)(c->exclude_outside && sum != 0.0 ? cw[k] / sum : cw[k]);
    }
    if (t == 1) return 1;
    /* Collapse when each output has exactly one nonzero tap, of weight 1. */
    for (int64_t o = 0; o < out; o++) {
        int nz = 0;
        for (int k = 0; k < t; k++) nz += w[o * t + k] != 0.0f;
        for (int k = 0; k < t && nz == 1; k++)
            if (w[o * t + k] != 0.0f && w[o * t + k] != 1.0f) nz = 0;
        if (nz != 1) return t;
    }
    for (int64_t o = 0; o < out; o++) {
        int k = 0;
        while (w[o * t + k] == 0.0f) k++;
        idx[o] = idx[o * t + k];
        w[o] = 1.0f;
    }
    return 1;
}

/* floor(v) as an output length, refusing lengths that would overflow. */
static q8_status out_len(const q8_node *n, int d, double v, int64_t *out, q8_error *err) {
    if (!(v < 0x1p62))
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "output dim %d would have %g elements", d, v);
    *out = (int64_t)floor(v);
    return Q8_OK;
}

/* Shared by Resize and Upsample once scales or sizes are known: out[] and
 * scale[] per dim, roi (2 * rank values) or NULL. */
static q8_status resize_setup(q8_graph *g, q8_node *n, const resize_cfg *c, const int64_t *out,
                              const double *scale, const double *roi, float extrap_value,
                              q8_error *err) {
    const q8_tensor *x = q8_in(g, n, 0);
    int r = x->ndim;
    if (c->mode != M_NEAREST && x->dtype != Q8_F32)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n,
                            "input is %s; linear and cubic modes need float32",
                            q8_dtype_name(x->dtype));
    if (roi && x->dtype != Q8_F32)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n,
                            "tf_crop_and_resize needs float32 data, the input is %s",
                            q8_dtype_name(x->dtype));
    int64_t row_taps = 1, numel;
    bool huge = false; /* tables hold 12+ bytes per output index of each dim */
    for (int d = 0; d < r; d++) huge |= out[d] > INT32_MAX;
    if (huge || !q8_shape_numel(out, r, &numel)) {
        char sb[128];
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "the output shape %s is too large",
                            q8_shape_str(out, r, sb, sizeof sb));
    }
    int t = c->mode == M_NEAREST ? 1 : c->mode == M_LINEAR ? 2 : 4;
    size_t bytes = 0;
    resize_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->rank = r;
    p->esize = q8_dtype_size(x->dtype);
    p->f32 = x->dtype == Q8_F32;
    p->extrap_value = extrap_value;
    p->rows = 1;
    for (int d = 0; d < r; d++) {
        p->in[d] = x->dims[d];
        p->out[d] = out[d];
        if (out[d] > 0 && x->dims[d] == 0)
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "dim %d: cannot resize an empty dim to %lld",
                                d, (long long)out[d]);
        if (d < r - 1) p->rows *= out[d];
        size_t cnt = (size_t)out[d] * (size_t)t;
        p->idx_off[d] = bytes;
        bytes += q8_align_up(cnt * sizeof(int64_t), 8);
        p->w_off[d] = bytes;
        bytes += q8_align_up(cnt * sizeof(float), 8);
        p->ext_off[d] = bytes;
        bytes += q8_align_up((size_t)out[d], 8);
    }
    n->packed = q8_aligned_alloc(bytes);
    if (!n->packed) return q8_fail(err, Q8_ERR_NOMEM, "out of memory building Resize tables");
    n->packed_bytes = bytes;
    uint8_t *pk = n->packed;
    int64_t stride = 1;
    for (int d = r - 1; d >= 0; d--) {
        uint8_t *ext = pk + p->ext_off[d];
        p->taps[d] = x->dims[d] == 0 ? 1
                                     : build_dim(c, x->dims[d], out[d], scale[d],
                                                 roi ? roi[d] : 0.0, roi ? roi[r + d] : 1.0, stride,
                                                 (int64_t *)(pk + p->idx_off[d]),
                                                 (float *)(pk + p->w_off[d]), ext);
        for (int64_t o = 0; o < out[d]; o++) p->extrap |= ext[o] != 0;
        if (d < r - 1) row_taps *= p->taps[d];
        stride *= x->dims[d];
    }
    if (row_taps > MAX_ROW_TAPS)
        return q8_node_fail(
            err, Q8_ERR_UNSUPPORTED, n,
            "resizing this many dims at once is not supported (%lld taps per output "
            "row, at most %d): resize at most 3 leading dims in cubic mode",
            (long long)row_taps, MAX_ROW_TAPS);
    return q8_set_output(g, n, 0, x->dtype, out, r, err);
}

static q8_status check_x(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_input(g, n, 0, Q8_UNDEFINED, err));
    const q8_tensor *x = q8_in(g, n, 0);
    q8_dtype dt = x->dtype;
    if (dt != Q8_F32 && dt != Q8_I8 && dt != Q8_U8 && dt != Q8_I32 && dt != Q8_I64)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n,
                            "input is %s, supported: float32 (any mode), int8, uint8, int32, int64 "
                            "(nearest)",
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

static q8_status parse_mode(const q8_node *n, resize_cfg *c, bool upsample, q8_error *err) {
    static const char *const modes[] = {"nearest", "linear", "cubic"};
    const char *m = q8_attr_str(n, "mode", "nearest");
    c->mode = lookup(m, modes, 3);
    if (upsample && strcmp(m, "bilinear") == 0) c->mode = M_LINEAR; /* Upsample-1 spelling */
    if (c->mode < 0 || (upsample && c->mode == M_CUBIC))
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "mode is '%s', expected nearest, linear%s", m,
                            upsample ? "" : " or cubic");
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
    bool v10 = g->opset < 11;
    Q8_TRY(q8_check_io(n, v10 ? 2 : 1, v10 ? 2 : 4, 1, 1, err));
    Q8_TRY(check_x(g, n, err));
    const q8_tensor *x = q8_in(g, n, 0);
    int r = x->ndim;
    resize_cfg c = {.cubic_a = q8_attr_float(n, "cubic_coeff_a", -0.75f)};
    Q8_TRY(parse_mode(n, &c, false, err));
    static const char *const ctms[] = {"half_pixel", "pytorch_half_pixel",   "align_corners",
                                       "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"};
    static const char *const nms[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    const char *cs = q8_attr_str(n, "coordinate_transformation_mode", "half_pixel");
    const char *ns = q8_attr_str(n, "nearest_mode", "round_prefer_floor");
    c.ctm = v10 ? C_ASYMMETRIC : lookup(cs, ctms, 6);
    c.nearest = v10 ? N_SIMPLE : lookup(ns, nms, 4);
    if (c.ctm < 0)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "coordinate_transformation_mode '%s' is unknown",
                            cs);
    if (c.nearest < 0)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "nearest_mode '%s' is unknown", ns);
    int64_t exo = q8_attr_int(n, "exclude_outside", 0);
    if (exo != 0 && exo != 1)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "exclude_outside is %lld, expected 0 or 1",
                            (long long)exo);
    c.exclude_outside = exo == 1;
    if (q8_attr_int(n, "antialias", 0) != 0)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "antialias=1 is not supported");

    /* Opset 18: axes select the dims that scales / sizes refer to. */
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

    int si = v10 ? 1 : 2, zi = v10 ? -1 : 3;
    bool has_scales = has_values(g, n, si), has_sizes = zi > 0 && has_values(g, n, zi);
    if (has_scales && has_sizes)
        return q8_node_fail(err, Q8_ERR_FORMAT, n,
                            "both scales and sizes are given; give only one");
    if (!has_scales && !has_sizes)
        return q8_node_fail(err, Q8_ERR_FORMAT, n,
                            "Resize needs scales or sizes, and neither is given");

    double roi[2 * Q8_MAX_DIMS];
    bool use_roi = c.ctm == C_TF_CROP_AND_RESIZE;
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
            roi[d] = 0.0;
            roi[r + d] = 1.0;
        }
        for (int i = 0; i < na; i++) {
            roi[axes[i]] = rv[i];
            roi[r + axes[i]] = rv[na + i];
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
            double len = (double)x->dims[d] * (use_roi ? roi[r + d] - roi[d] : 1.0);
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
    return resize_setup(g, n, &c, out, scale, use_roi ? roi : NULL,
                        q8_attr_float(n, "extrapolation_value", 0.0f), err);
}

/* Upsample-7 (scales attribute) and -9 (scales input): asymmetric. */
static q8_status upsample_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 1, 2, 1, 1, err));
    Q8_TRY(check_x(g, n, err));
    const q8_tensor *x = q8_in(g, n, 0);
    int r = x->ndim;
    resize_cfg c = {.ctm = C_ASYMMETRIC, .nearest = N_SIMPLE};
    Q8_TRY(parse_mode(n, &c, true, err));
    double scale[Q8_MAX_DIMS];
    if (n->n_inputs > 1 && n->inputs[1] >= 0) {
        Q8_TRY(scales_from_input(g, n, 1, scale, r, err));
    } else {
        int cnt;
        const float *s = q8_attr_floats(n, "scales", &cnt);
        if (!s)
            return q8_node_fail(err, Q8_ERR_FORMAT, n,
                                "Upsample needs scales (attribute or input)");
        if (cnt != r)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "scales has %d values, expected %d", cnt, r);
        for (int d = 0; d < r; d++) {
            if (!(s[d] > 0.0f) || isinf(s[d]))
                return q8_node_fail(err, Q8_ERR_FORMAT, n, "scales[%d] is %g, must be > 0", d,
                                    s[d]);
            scale[d] = s[d];
        }
    }
    int64_t out[Q8_MAX_DIMS];
    for (int d = 0; d < r; d++) Q8_TRY(out_len(n, d, (double)x->dims[d] * scale[d], &out[d], err));
    return resize_setup(g, n, &c, out, scale, NULL, 0.0f, err);
}

/* ---- run ---- */

typedef struct resize_args {
    const resize_params *p;
    const uint8_t *pk;
    const void *x;
    void *y;
} resize_args;

/* The combined leading-dim taps of output row `row`; false if the row lies
 * outside the crop (tf_crop_and_resize). */
static bool row_taps(const resize_args *a, int64_t row, int64_t *off, float *w, int *k_out) {
    const resize_params *p = a->p;
    int k = 1;
    off[0] = 0;
    w[0] = 1.0f;
    bool inside = true;
    for (int d = p->rank - 2; d >= 0; d--) {
        int64_t o = row % p->out[d];
        row /= p->out[d];
        int t = p->taps[d];
        const int64_t *ix = (const int64_t *)(a->pk + p->idx_off[d]) + o * t;
        const float *wx = (const float *)(a->pk + p->w_off[d]) + o * t;
        if (a->pk[p->ext_off[d] + o]) inside = false;
        /* expand in place, last combination first */
        for (int i = k - 1; i >= 0; i--)
            for (int j = t - 1; j >= 0; j--) {
                off[i * t + j] = off[i] + ix[j];
                w[i * t + j] = w[i] * wx[j];
            }
        k *= t;
    }
    *k_out = k;
    return inside;
}

static void resize_f32(void *arg, int64_t b, int64_t e, int tid) {
    const resize_args *a = arg;
    const resize_params *p = a->p;
    int last = p->rank - 1, tw = p->taps[last];
    int64_t ow_n = p->out[last];
    const int64_t *ixw = (const int64_t *)(a->pk + p->idx_off[last]);
    const float *ww = (const float *)(a->pk + p->w_off[last]);
    const uint8_t *extw = a->pk + p->ext_off[last];
    const float *x = a->x;
    int64_t off[MAX_ROW_TAPS];
    float w[MAX_ROW_TAPS];
    for (int64_t row = b; row < e; row++) {
        float *y = (float *)a->y + row * ow_n;
        int k;
        if (!row_taps(a, row, off, w, &k)) {
            for (int64_t o = 0; o < ow_n; o++) y[o] = p->extrap_value;
            continue;
        }
        if (k == 1 && tw == 1) {
            const float *xr = x + off[0];
            for (int64_t o = 0; o < ow_n; o++) y[o] = xr[ixw[o]];
        } else if (tw == 2 && k == 2) {
            /* bilinear over the last two dims, the common case */
            const float *r0 = x + off[0], *r1 = x + off[1];
            float a0 = w[0], a1 = w[1];
            for (int64_t o = 0; o < ow_n; o++) {
                int64_t i0 = ixw[2 * o], i1 = ixw[2 * o + 1];
                float w0 = ww[2 * o], w1 = ww[2 * o + 1];
                y[o] = a0 * (w0 * r0[i0] + w1 * r0[i1]) + a1 * (w0 * r1[i0] + w1 * r1[i1]);
            }
        } else if (tw == 2) {
            for (int64_t o = 0; o < ow_n; o++) {
                int64_t i0 = ixw[2 * o], i1 = ixw[2 * o + 1];
                float w0 = ww[2 * o], w1 = ww[2 * o + 1], acc = 0.0f;
                for (int j = 0; j < k; j++) {
                    const float *xr = x + off[j];
                    acc += w[j] * (w0 * xr[i0] + w1 * xr[i1]);
                }
                y[o] = acc;
            }
        } else if (tw == 4) {
            /* cubic: same sums as below, unrolled */
            for (int64_t o = 0; o < ow_n; o++) {
                const int64_t *iq = ixw + 4 * o;
                const float *wq = ww + 4 * o;
                float acc = 0.0f;
                for (int j = 0; j < k; j++) {
                    const float *xr = x + off[j];
                    acc += w[j] * (wq[0] * xr[iq[0]] + wq[1] * xr[iq[1]] + wq[2] * xr[iq[2]] +
                                   wq[3] * xr[iq[3]]);
                }
                y[o] = acc;
            }
        } else {
            for (int64_t o = 0; o < ow_n; o++) {
                float acc = 0.0f;
                for (int j = 0; j < k; j++) {
                    const float *xr = x + off[j];
                    float s = 0.0f;
                    for (int q = 0; q < tw; q++) s += ww[o * tw + q] * xr[ixw[o * tw + q]];
                    acc += w[j] * s;
                }
                y[o] = acc;
            }
        }
        if (p->extrap)
            for (int64_t o = 0; o < ow_n; o++)
                if (extw[o]) y[o] = p->extrap_value;
    }
}

/* Nearest for any element size: every tap has weight 1, k == 1. */
static void resize_gather(void *arg, int64_t b, int64_t e, int tid) {
    const resize_args *a = arg;
    const resize_params *p = a->p;
    int last = p->rank - 1;
    int64_t ow_n = p->out[last];
    const int64_t *ixw = (const int64_t *)(a->pk + p->idx_off[last]);
    int64_t off[MAX_ROW_TAPS];
    float w[MAX_ROW_TAPS];
    size_t es = p->esize;
    for (int64_t row = b; row < e; row++) {
        int k;
        row_taps(a, row, off, w, &k);
        const uint8_t *xr = (const uint8_t *)a->x + (size_t)off[0] * es;
        uint8_t *y = (uint8_t *)a->y + (size_t)(row * ow_n) * es;
        switch (es) {
        case 1:
            for (int64_t o = 0; o < ow_n; o++) y[o] = xr[ixw[o]];
            break;
        case 4:
            for (int64_t o = 0; o < ow_n; o++) memcpy(y + o * 4, xr + ixw[o] * 4, 4);
            break;
        default:
            for (int64_t o = 0; o < ow_n; o++) memcpy(y + o * 8, xr + ixw[o] * 8, 8);
            break;
        }
    }
}

static void resize_run(const q8_exec *x, const q8_node *n) {
    const resize_params *p = n->params;
    int64_t ow_n = p->out[p->rank - 1];
    if (p->rows == 0 || ow_n == 0) return;
    resize_args a = {p, n->packed, Q8_IN_PTR(x, n, 0), Q8_OUT_PTR(x, n, 0)};
    int64_t grain = ow_n >= 4096 ? 1 : 4096 / ow_n;
    q8_parallel_for(x->pool, p->rows, grain, p->f32 ? resize_f32 : resize_gather, &a);
}

const q8_op_schema q8_schema_resize = {.infer = resize_infer};
const q8_cpu_op q8_cpu_resize = {.run = resize_run};

const q8_op_schema q8_schema_upsample = {.infer = upsample_infer};
const q8_cpu_op q8_cpu_upsample = {.run = resize_run};
