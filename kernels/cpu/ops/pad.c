/* Pad: pads/mode/value attributes before opset 11; from 11 on a constant
 * pads input and an optional constant_value input (read at run time, so it
 * may be computed); opset 18 adds an optional constant axes input. Modes
 * constant, reflect, edge (and wrap, opset 19). Negative pads crop; edge,
 * reflect and wrap then still refer to the uncropped input's borders (as if
 * the input were padded first and cropped after). */
#include <string.h>

#include "tensor_util.h"

enum { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP };

typedef struct pad_params {
    int mode;
    size_t esize;
    int64_t pb[Q8_MAX_DIMS];    /* pads at the start of each dim (< 0 crops) */
    uint8_t value[8];           /* constant mode fill, unless taken from input 2 */
    bool value_input;
} pad_params;

/* The attribute `value` (opset < 11) as one element of dtype dt. */
static q8_status value_bytes(const q8_node *n, q8_dtype dt, float v, uint8_t *out, q8_error *err) {
    memset(out, 0, 8);
    switch (dt) {
    case Q8_F32: memcpy(out, &v, 4); break;
    case Q8_F64: { double d = v; memcpy(out, &d, 8); break; }
    case Q8_I8: case Q8_U8: out[0] = (uint8_t)(int64_t)v; break;
    case Q8_BOOL: out[0] = v != 0.0f; break;
    case Q8_I16: case Q8_U16: { uint16_t x = (uint16_t)(int64_t)v; memcpy(out, &x, 2); break; }
    case Q8_I32: case Q8_U32: { uint32_t x = (uint32_t)(int64_t)v; memcpy(out, &x, 4); break; }
    case Q8_I64: case Q8_U64: { int64_t x = (int64_t)v; memcpy(out, &x, 8); break; }
    default:
        if (v != 0.0f)
            return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "a pad value for %s data",
                                q8_dtype_name(dt));
    }
    return Q8_OK;
}

static q8_status pad_infer(q8_graph *g, q8_node *n, q8_error *err) {
    bool attrs = g->opset < 11;
    Q8_TRY(q8_check_io(n, attrs ? 1 : 2, attrs ? 1 : g->opset < 18 ? 3 : 4, 1, 1, err));
    size_t es;
    Q8_TRY(q8_tu_elem_size(g, n, 0, &es, err));
    const q8_tensor *x = q8_in(g, n, 0);
    int r = x->ndim, np, na = r;
    pad_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->esize = es;
    int64_t pads[2 * Q8_MAX_DIMS], axes[Q8_MAX_DIMS];
    bool present;
    Q8_TRY(q8_tu_ints_arg(g, n, "pads", 11, 1, pads, 2 * Q8_MAX_DIMS, &np, &present, err));
    if (!present) return q8_node_fail(err, Q8_ERR_FORMAT, n, "pads are missing");
    if (attrs) {
        Q8_TRY(value_bytes(n, x->dtype, q8_attr_float(n, "value", 0.0f), p->value, err));
    } else if (q8_in(g, n, 2)) {
        const q8_tensor *cv = q8_in(g, n, 2);
        Q8_TRY(q8_check_input(g, n, 2, x->dtype, err));
        int64_t cn = q8_tensor_numel(cv);
        if (cn > 1)
            return q8_node_fail(err, Q8_ERR_SHAPE, n,
                                "constant_value has %lld values, expected one", (long long)cn);
        p->value_input = cn == 1; /* an empty one means the default 0 */
    }
    const q8_tensor *at = q8_in(g, n, 3);
    if (at) {
        Q8_TRY(q8_const_ints(g, n, 3, axes, Q8_MAX_DIMS, &na, err));
        Q8_TRY(q8_tu_norm_axes(n, "axes", axes, na, r, err));
    } else {
        for (int i = 0; i < r; i++) axes[i] = i;
    }
    char sb[200];
    if (np != 2 * na)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "pads %s has %d values, expected %d (2 per axis)",
                            q8_tu_list_str(pads, np, sb, sizeof sb), np, 2 * na);
    const char *mode = q8_attr_str(n, "mode", "constant");
    if (strcmp(mode, "constant") == 0) p->mode = PAD_CONSTANT;
    else if (strcmp(mode, "reflect") == 0) p->mode = PAD_REFLECT;
    else if (strcmp(mode, "edge") == 0) p->mode = PAD_EDGE;
    else if (strcmp(mode, "wrap") == 0) p->mode = PAD_WRAP;
    else return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "mode '%s' is not supported", mode);

    int64_t pe[Q8_MAX_DIMS] = {0}, dims[Q8_MAX_DIMS];
    for (int i = 0; i < na; i++) {
        p->pb[axes[i]] = pads[i];
        pe[axes[i]] = pads[na + i];
    }
    for (int d = 0; d < r; d++) {
        int64_t dim = x->dims[d], b = p->pb[d], e = pe[d];
        dims[d] = dim + b + e;
        if (dims[d] < 0)
            return q8_node_fail(err, Q8_ERR_SHAPE, n,
                                "pads %lld, %lld crop more than axis %d's size %lld", (long long)b,
                                (long long)e, d, (long long)dim);
        bool grows = b > 0 || e > 0;
        if (p->mode != PAD_CONSTANT && grows && dim == 0)
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "%s padding of axis %d, which has size 0",
                                mode, d);
        if (p->mode == PAD_REFLECT && (b > dim - 1 || e > dim - 1))
            return q8_node_fail(err, Q8_ERR_SHAPE, n,
                                "reflect pads %lld, %lld of axis %d need at most size - 1 = %lld",
                                (long long)b, (long long)e, d, (long long)(dim - 1));
    }
    return q8_set_output(g, n, 0, x->dtype, dims, r, err);
}

/* Source coordinate for output coordinate c - pb, or -1 (constant fill). */
static int64_t map_coord(int mode, int64_t c, int64_t d) {
    if (c >= 0 && c < d) return c;
    switch (mode) {
    case PAD_EDGE: return c < 0 ? 0 : d - 1;
    case PAD_REFLECT: return c < 0 ? -c : 2 * (d - 1) - c;
    case PAD_WRAP: {
        int64_t m = c % d;
        return m < 0 ? m + d : m;
    }
    default: return -1;
    }
}

typedef struct pad_args {
    const pad_params *p;
    const q8_tensor *x, *y;
    const uint8_t *src;
    uint8_t *dst;
    const void *value;
    int64_t in_stride[Q8_MAX_DIMS];
} pad_args;

static void pad_rows(void *arg, int64_t b, int64_t e, int thread) {
    const pad_args *a = arg;
    const pad_params *p = a->p;
    int r = a->x->ndim, last = r - 1;
    size_t es = p->esize;
    int64_t lo = a->y->dims[last], d = a->x->dims[last], pb = p->pb[last];
    /* Output positions [m0, m1) of the last dim come straight from the input. */
    int64_t m0 = pb > 0 ? pb : 0, m1 = pb + d < lo ? pb + d : lo;
    if (m1 < m0) m1 = m0;
    for (int64_t row = b; row < e; row++) {
        uint8_t *dst = a->dst + (size_t)(row * lo) * es;
        int64_t rr = row, off = 0;
        bool fill = false;
        for (int k = last - 1; k >= 0; k--) {
            int64_t c = rr % a->y->dims[k];
            rr /= a->y->dims[k];
            int64_t ic = map_coord(p->mode, c - p->pb[k], a->x->dims[k]);
            if (ic < 0) fill = true;
            else off += ic * a->in_stride[k];
        }
        if (fill) {
            q8_tu_fill(dst, a->value, lo, es);
            continue;
        }
        const uint8_t *src = a->src + (size_t)off * es;
        if (m1 > m0)
            memcpy(dst + (size_t)m0 * es, src + (size_t)(m0 - pb) * es, (size_t)(m1 - m0) * es);
        if (p->mode == PAD_CONSTANT) {
            q8_tu_fill(dst, a->value, m0, es);
            q8_tu_fill(dst + (size_t)m1 * es, a->value, lo - m1, es);
            continue;
        }
        for (int64_t o = 0; o < m0; o++)
            memcpy(dst + (size_t)o * es, src + (size_t)map_coord(p->mode, o - pb, d) * es, es);
        for (int64_t o = m1; o < lo; o++)
            memcpy(dst + (size_t)o * es, src + (size_t)map_coord(p->mode, o - pb, d) * es, es);
    }
}

static void pad_run(const q8_exec *x, const q8_node *n) {
    const pad_params *p = n->params;
    pad_args a = {p, q8_in(x->g, n, 0), q8_out(x->g, n, 0), Q8_IN_PTR(x, n, 0), Q8_OUT_PTR(x, n, 0),
                  p->value_input ? Q8_IN_PTR(x, n, 2) : p->value, {0}};
    int r = a.x->ndim;
    if (r == 0) {
        memcpy(a.dst, a.src, p->esize);
        return;
    }
    q8_tu_strides(a.x->dims, r, a.in_stride);
    int64_t lo = a.y->dims[r - 1];
    if (lo == 0) return;
    int64_t rows = q8_tu_prod(a.y->dims, 0, r - 1);
    q8_parallel_for(x->pool, rows, q8_tu_grain((size_t)lo * p->esize), pad_rows, &a);
}

const q8_op_schema q8_schema_pad = {.infer = pad_infer};
const q8_cpu_op q8_cpu_pad = {.run = pad_run};
