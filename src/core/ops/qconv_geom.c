/* Geometry of q8.QConv / q8.QConvTranspose / ConvInteger / QLinearConv (see
 * qconv_geom.h). */
#include "ops/qconv_geom.h"

#include <string.h>

#include "op.h"

/* A per-spatial-dim int list attribute of length want (absent: def). */
static q8_status dims_attr(const q8_node *n, const char *name, int want, int64_t def,
                           int64_t min, int64_t *out, q8_error *err) {
    int cnt;
    const int64_t *v = q8_attr_ints(n, name, &cnt);
    for (int i = 0; i < want; i++) out[i] = def;
    if (!v) return Q8_OK;
    if (cnt != want)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "%s has %d values, expected %d", name, cnt,
                            want);
    for (int i = 0; i < want; i++) {
        if (v[i] < min || v[i] > ((int64_t)1 << 31))
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "%s[%d] is %lld, must be >= %lld", name,
                                i, (long long)v[i], (long long)min);
        out[i] = v[i];
    }
    return Q8_OK;
}

q8_status q8_qconv_geom_parse(const q8_graph *g, const q8_node *n, int wi, bool transpose,
                              q8_qconv_geom *o, q8_error *err) {
    const q8_tensor *x = q8_in(g, n, 0), *w = q8_in(g, n, wi);
    if (x->ndim != 3 && x->ndim != 4)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n,
                            "X has rank %d; 1-D and 2-D convolutions (rank 3 or 4) are supported",
                            x->ndim);
    int ns = x->ndim - 2;
    if (w->ndim != x->ndim)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "W has rank %d, X rank %d", w->ndim, x->ndim);
    memset(o, 0, sizeof *o);
    o->nsp = ns;
    o->N = x->dims[0];
    o->C = x->dims[1];
    o->M = w->dims[0];
    o->group = q8_attr_int(n, "group", 1);
    if (o->group < 1 || o->C % o->group || o->M % o->group)
        return q8_node_fail(err, Q8_ERR_SHAPE, n,
                            "group %lld must divide the %lld input and %lld output channels",
                            (long long)o->group, (long long)o->C, (long long)o->M);
    if (w->dims[1] * o->group != o->C)
        return q8_node_fail(err, Q8_ERR_SHAPE, n,
                            "W has %lld channels per group, X has %lld channels in %lld groups",
                            (long long)w->dims[1], (long long)o->C, (long long)o->group);
    int64_t in[2], k[2], s[2], d[2], pads[4], op[2], out[2];
    for (int i = 0; i < ns; i++) {
        in[i] = x->dims[2 + i];
        k[i] = w->dims[2 + i];
        if (in[i] > ((int64_t)1 << 31) || k[i] > ((int64_t)1 << 31))
            return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "spatial dim %d is too large", i);
        if (k[i] < 1)
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "W has an empty kernel dim %d", i);
    }
    int cnt;
    const int64_t *ks = q8_attr_ints(n, "kernel_shape", &cnt);
    if (ks && (cnt != ns || memcmp(ks, k, sizeof(int64_t) * (size_t)ns)))
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "kernel_shape does not match W's shape");
    Q8_TRY(dims_attr(n, "strides", ns, 1, 1, s, err));
    Q8_TRY(dims_attr(n, "dilations", ns, 1, 1, d, err));
    Q8_TRY(dims_attr(n, "pads", 2 * ns, 0, 0, pads, err));
    Q8_TRY(dims_attr(n, "output_padding", ns, 0, 0, op, err));
    const char *ap = q8_attr_str(n, "auto_pad", "NOTSET");
    bool same_up = strcmp(ap, "SAME_UPPER") == 0, same_lo = strcmp(ap, "SAME_LOWER") == 0;
    bool valid = strcmp(ap, "VALID") == 0;
    if (!same_up && !same_lo && !valid && strcmp(ap, "NOTSET") != 0)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "auto_pad '%s' is not one of NOTSET, "
                            "SAME_UPPER, SAME_LOWER, VALID", ap);
    const int64_t *osh = transpose ? q8_attr_ints(n, "output_shape", &cnt) : NULL;
    if (osh && cnt != ns && cnt != ns + 2)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "output_shape has %d values, expected %d",
                            cnt, ns);
    if (osh && cnt == ns + 2) osh += 2;
    for (int i = 0; i < ns; i++) {
        int64_t ext = (k[i] - 1) * d[i] + 1; /* dilated kernel extent */
        if (!transpose) {
            if (same_up || same_lo) {
                out[i] = (in[i] + s[i] - 1) / s[i];
                int64_t total = (out[i] - 1) * s[i] + ext - in[i];
                if (total < 0) total = 0;
                pads[i] = same_up ? total / 2 : total - total / 2;
                pads[ns + i] = total - pads[i];
            } else {
                if (valid) pads[i] = pads[ns + i] = 0;
                int64_t span = in[i] + pads[i] + pads[ns + i] - ext;
                if (span < 0)
                    return q8_node_fail(err, Q8_ERR_SHAPE, n,
                                        "spatial dim %d: input %lld (padded %lld) is smaller "
                                        "than the dilated kernel %lld", i, (long long)in[i],
                                        (long long)(in[i] + pads[i] + pads[ns + i]),
                                        (long long)ext);
                out[i] = span / s[i] + 1;
            }
        } else {
            if (op[i] >= s[i] && op[i] >= d[i])
                return q8_node_fail(err, Q8_ERR_FORMAT, n,
                                    "output_padding[%d] = %lld must be less than the stride or "
                                    "the dilation", i, (long long)op[i]);
            int64_t full = s[i] * (in[i] - 1) + op[i] + ext;
            if (osh || same_up || same_lo) {
                int64_t want = osh ? osh[i] : in[i] * s[i];
                int64_t total = full - want;
                if (total < 0)
                    return q8_node_fail(err, Q8_ERR_SHAPE, n,
                                        "output size %lld on spatial dim %d is larger than the "
                                        "%lld the input gives", (long long)want, i,
                                        (long long)full);
                if (same_up) {
                    pads[i] = total / 2;
                    pads[ns + i] = total - total / 2;
                } else {
                    pads[i] = total - total / 2;
                    pads[ns + i] = total / 2;
                }
            } else if (valid) {
                pads[i] = pads[ns + i] = 0;
            }
            out[i] = full - pads[i] - pads[ns + i];
            if (out[i] < 1)
                return q8_node_fail(err, Q8_ERR_SHAPE, n,
                                    "spatial dim %d: pads leave an output of size %lld", i,
                                    (long long)out[i]);
        }
    }
    /* 1-D: the spatial dim becomes W, with a trivial H. */
    int last = ns - 1;
    o->H = ns == 2 ? in[0] : 1;
    o->W = in[last];
    o->OH = ns == 2 ? out[0] : 1;
    o->OW = out[last];
    o->KH = ns == 2 ? k[0] : 1;
    o->KW = k[last];
    o->sh = ns == 2 ? s[0] : 1;
    o->sw = s[last];
    o->dh = ns == 2 ? d[0] : 1;
    o->dw = d[last];
    o->pt = ns == 2 ? pads[0] : 0;
    o->pb = ns == 2 ? pads[ns] : 0;
    o->pl = pads[last];
    o->pr = pads[ns + last];
    return Q8_OK;
}
