/* DFT, STFT and MelWeightMatrix (see spectral.h). */
#include "ops/spectral.h"

#include "op.h"

/* Transform lengths up to this: the twiddle table is 2 doubles a point. */
#define MAX_POINTS ((int64_t)1 << 31)
/* Transform lengths: at most 2^19 points (11.9 s of 44.1 kHz audio in one
 * transform; STFT frames are far shorter), so that the CPU's tables and
 * buffers (for a length with a large prime factor, a chirp-z transform over
 * 2^20 points) stay small and one line's transform takes milliseconds. */
#define MAX_TRANSFORM ((int64_t)1 << 19)

/* Constant integer scalar input i (it decides a shape). */
static q8_status const_scalar(const q8_graph *g, const q8_node *n, int i, const char *what,
                              int64_t *out, q8_error *err) {
    int64_t v[1] = {0};
    int cnt = 0;
    Q8_TRY(q8_const_ints(g, n, i, v, 1, &cnt, err));
    if (cnt != 1) return q8_node_fail(err, Q8_ERR_FORMAT, n, "%s must be one value", what);
    *out = v[0];
    return Q8_OK;
}

static q8_status flag_attr(const q8_node *n, const char *name, int64_t def, bool *out,
                           q8_error *err) {
    int64_t v = q8_attr_int(n, name, def);
    if (v != 0 && v != 1)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "%s is %lld, expected 0 or 1", name,
                            (long long)v);
    *out = v == 1;
    return Q8_OK;
}

/* A float32/float64 signal of rank >= min_rank whose last dim is 1 (real)
 * or 2 (complex). */
static q8_status check_signal(const q8_graph *g, const q8_node *n, int min_rank, q8_error *err) {
    Q8_TRY(q8_check_input(g, n, 0, Q8_UNDEFINED, err));
    const q8_tensor *x = q8_in(g, n, 0);
    if (x->dtype != Q8_F32 && x->dtype != Q8_F64)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "input '%s' is %s: float32 and float64 "
                            "are supported", x->name, q8_dtype_name(x->dtype));
    if (x->ndim < min_rank)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "input '%s' has rank %d, expected >= %d",
                            x->name, x->ndim, min_rank);
    int64_t c = x->dims[x->ndim - 1];
    if (c != 1 && c != 2)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "input '%s' has last dim %lld, expected 1 "
                            "(real) or 2 (complex)", x->name, (long long)c);
    return Q8_OK;
}

/* DFT's axis (input 2, default -2): any dim of x but the last. */
static q8_status dft_axis(const q8_graph *g, const q8_node *n, int rank, int *out,
                          q8_error *err) {
    if (q8_attr_find(n, "axis"))
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "axis is an input since opset 20, not an "
                            "attribute");
    int64_t a = -2;
    if (q8_has_input(n, 2)) Q8_TRY(const_scalar(g, n, 2, "axis", &a, err));
    if (a < -rank || a > rank - 2)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "axis %lld is out of [%d, %d] (the last dim "
                            "holds the real and imaginary parts)", (long long)a, -rank, rank - 2);
    if (a == -1)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "axis -1 is the last dim (the real and "
                            "imaginary parts)");
    *out = (int)(a < 0 ? a + rank : a);
    return Q8_OK;
}

static q8_status dft_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 1, 3, 1, 1, err));
    Q8_TRY(check_signal(g, n, 2, err));
    const q8_tensor *x = q8_in(g, n, 0);
    int axis = 0;
    Q8_TRY(dft_axis(g, n, x->ndim, &axis, err));
    q8_dft_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    bool onesided = false;
    Q8_TRY(flag_attr(n, "inverse", 0, &p->inverse, err));
    Q8_TRY(flag_attr(n, "onesided", 0, &onesided, err));
    p->f64 = x->dtype == Q8_F64;
    p->complex_in = x->dims[x->ndim - 1] == 2;
    p->outer = 1;
    p->inner = 1;
    for (int d = 0; d < axis; d++) p->outer *= x->dims[d];
    for (int d = axis + 1; d < x->ndim - 1; d++) p->inner *= x->dims[d];
    p->len = x->dims[axis];
    p->n = p->len;
    if (q8_has_input(n, 1)) Q8_TRY(const_scalar(g, n, 1, "dft_length", &p->n, err));
    if (p->n < 1 || p->n > MAX_TRANSFORM)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "dft_length is %lld (%s), expected 1 to 2^19",
                            (long long)p->n, q8_has_input(n, 1) ? "input 1" : "the axis' length");
    p->bins = onesided ? p->n / 2 + 1 : p->n;
    int64_t dims[Q8_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++) dims[d] = x->dims[d];
    dims[axis] = p->bins;
    dims[x->ndim - 1] = 2;
    return q8_set_output(g, n, 0, x->dtype, dims, x->ndim, err);
}

/* frame_length: input 3, else the window's length, else the signal's. */
static q8_status stft_frame(const q8_graph *g, const q8_node *n, q8_stft_params *p,
                            q8_error *err) {
    p->frame = p->len;
    if (p->window) {
        Q8_TRY(q8_check_input(g, n, 2, q8_in(g, n, 0)->dtype, err));
        const q8_tensor *w = q8_in(g, n, 2);
        if (w->ndim != 1)
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "window '%s' has rank %d, expected 1",
                                w->name, w->ndim);
        p->frame = w->dims[0];
    }
    if (q8_has_input(n, 3)) {
        int64_t fl = 0;
        Q8_TRY(const_scalar(g, n, 3, "frame_length", &fl, err));
        if (p->window && fl != p->frame)
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "frame_length is %lld but the window has "
                                "%lld values", (long long)fl, (long long)p->frame);
        p->frame = fl;
    }
    if (p->frame < 1 || p->frame > p->len || p->frame > MAX_TRANSFORM)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "frame_length is %lld, expected 1 to the "
                            "signal's length %lld (at most 2^19)", (long long)p->frame,
                            (long long)p->len);
    return Q8_OK;
}

static q8_status stft_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 4, 1, 1, err));
    Q8_TRY(check_signal(g, n, 3, err));
    const q8_tensor *x = q8_in(g, n, 0);
    if (x->ndim != 3)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "signal '%s' has rank %d, expected 3 "
                            "([batch, length, 1 or 2])", x->name, x->ndim);
    q8_stft_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    bool onesided = false;
    Q8_TRY(flag_attr(n, "onesided", 1, &onesided, err));
    Q8_TRY(const_scalar(g, n, 1, "frame_step", &p->step, err));
    if (p->step < 1)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "frame_step is %lld, expected >= 1",
                            (long long)p->step);
    p->f64 = x->dtype == Q8_F64;
    p->complex_in = x->dims[2] == 2;
    p->batch = x->dims[0];
    p->len = x->dims[1];
    p->window = q8_has_input(n, 2);
    Q8_TRY(stft_frame(g, n, p, err));
    p->frames = 1 + (p->len - p->frame) / p->step;
    p->bins = onesided ? p->frame / 2 + 1 : p->frame;
    int64_t dims[4] = {p->batch, p->frames, p->bins, 2};
    return q8_set_output(g, n, 0, x->dtype, dims, 4, err);
}

/* MelWeightMatrix's scalar input i: one value of one of two dtypes. */
static q8_status mel_scalar(const q8_graph *g, const q8_node *n, int i, const char *what,
                            q8_dtype a, q8_dtype b, q8_error *err) {
    Q8_TRY(q8_check_input(g, n, i, Q8_UNDEFINED, err));
    const q8_tensor *t = q8_in(g, n, i);
    if (t->dtype != a && t->dtype != b)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "%s '%s' is %s, expected %s or %s", what,
                            t->name, q8_dtype_name(t->dtype), q8_dtype_name(a), q8_dtype_name(b));
    if (q8_tensor_numel(t) != 1)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "%s '%s' has %lld values, expected one", what,
                            t->name, (long long)q8_tensor_numel(t));
    return Q8_OK;
}

static q8_status mel_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 5, 5, 1, 1, err));
    static const char *const names[5] = {"num_mel_bins", "dft_length", "sample_rate",
                                         "lower_edge_hertz", "upper_edge_hertz"};
    for (int i = 0; i < 5; i++)
        Q8_TRY(mel_scalar(g, n, i, names[i], i < 3 ? Q8_I32 : Q8_F32, i < 3 ? Q8_I64 : Q8_F64,
                          err));
    if (q8_in(g, n, 3)->dtype != q8_in(g, n, 4)->dtype)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "lower_edge_hertz and upper_edge_hertz "
                            "have different dtypes");
    int64_t dt = q8_attr_int(n, "output_datatype", 1);
    if (dt != 1 && dt != 11)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "output_datatype %lld: float32 (1) and "
                            "float64 (11) are supported", (long long)dt);
    q8_mel_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    Q8_TRY(const_scalar(g, n, 0, "num_mel_bins", &p->mels, err));
    Q8_TRY(const_scalar(g, n, 1, "dft_length", &p->dft_length, err));
    if (p->mels < 0 || p->mels > MAX_POINTS)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "num_mel_bins is %lld, expected 0 to 2^31",
                            (long long)p->mels);
    if (p->dft_length < 1 || p->dft_length > MAX_POINTS)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "dft_length is %lld, expected 1 to 2^31",
                            (long long)p->dft_length);
    int64_t rate = 0;
    if (q8_in(g, n, 2)->data) { /* a constant rate is checked now; else the kernel guards */
        Q8_TRY(const_scalar(g, n, 2, "sample_rate", &rate, err));
        if (rate < 1)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "sample_rate is %lld, expected >= 1",
                                (long long)rate);
    }
    p->f64 = dt == 11;
    p->rate_dtype = q8_in(g, n, 2)->dtype;
    p->edge_dtype = q8_in(g, n, 3)->dtype;
    p->bins = p->dft_length / 2 + 1;
    int64_t dims[2] = {p->bins, p->mels};
    return q8_set_output(g, n, 0, p->f64 ? Q8_F64 : Q8_F32, dims, 2, err);
}

const q8_op_schema q8_schema_dft = {.infer = dft_infer};
const q8_op_schema q8_schema_stft = {.infer = stft_infer};
const q8_op_schema q8_schema_mel_weight_matrix = {.infer = mel_infer};
