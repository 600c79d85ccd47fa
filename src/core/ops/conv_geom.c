/* Conv / ConvTranspose geometry (see conv_geom.h). */
#include "ops/conv_geom.h"

#include <string.h>

void q8_conv_widen(int nsp, const int64_t *src, int64_t fill, int64_t *dst3) {
    for (int i = 0; i < 3; i++) dst3[i] = i < 3 - nsp ? fill : src[i - (3 - nsp)];
}

/* An optional ints attribute of exactly `want` values, each >= lo. */
static q8_status ints_attr(const q8_node *n, const char *name, int want, int64_t lo,
                           int64_t *out, bool *present, q8_error *err) {
    int cnt;
    const int64_t *v = q8_attr_ints(n, name, &cnt);
    *present = v != NULL;
    if (!v) return Q8_OK;
    if (cnt != want)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "%s has %d values, expected %d", name, cnt,
                            want);
    for (int i = 0; i < cnt; i++) {
        if (v[i] < lo)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "%s[%d] is %lld, must be >= %lld", name, i,
                                (long long)v[i], (long long)lo);
        if (v[i] > ((int64_t)1 << 31))
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "%s[%d] is %lld, too large", name, i,
                                (long long)v[i]);
        out[i] = v[i];
    }
    return Q8_OK;
}

q8_status q8_conv_read_attrs(const q8_node *n, int nsp, const int64_t *wk, q8_conv_geom *g,
                             q8_auto_pad *auto_pad, q8_error *err) {
    int64_t tmp[2 * Q8_CONV_MAX_SP];
    bool have;
    g->nsp = nsp;
    Q8_TRY(ints_attr(n, "kernel_shape", nsp, 1, tmp, &have, err));
    if (have)
        for (int i = 0; i < nsp; i++)
            if (tmp[i] != wk[i])
                return q8_node_fail(err, Q8_ERR_SHAPE, n,
                                    "kernel_shape[%d] is %lld but the weight has %lld there", i,
                                    (long long)tmp[i], (long long)wk[i]);
    q8_conv_widen(nsp, wk, 1, g->k);
    for (int i = 0; i < 3; i++) g->s[i] = g->d[i] = 1;
    Q8_TRY(ints_attr(n, "strides", nsp, 1, tmp, &have, err));
    if (have) q8_conv_widen(nsp, tmp, 1, g->s);
    Q8_TRY(ints_attr(n, "dilations", nsp, 1, tmp, &have, err));
    if (have) q8_conv_widen(nsp, tmp, 1, g->d);
    memset(g->pb, 0, sizeof g->pb);
    memset(g->pe, 0, sizeof g->pe);
    Q8_TRY(ints_attr(n, "pads", 2 * nsp, 0, tmp, &have, err));
    if (have) {
        q8_conv_widen(nsp, tmp, 0, g->pb);
        q8_conv_widen(nsp, tmp + nsp, 0, g->pe);
    }
    const char *ap = q8_attr_str(n, "auto_pad", "NOTSET");
    if (strcmp(ap, "NOTSET") == 0 || !*ap) *auto_pad = Q8_PAD_NOTSET;
    else if (strcmp(ap, "SAME_UPPER") == 0) *auto_pad = Q8_PAD_SAME_UPPER;
    else if (strcmp(ap, "SAME_LOWER") == 0) *auto_pad = Q8_PAD_SAME_LOWER;
    else if (strcmp(ap, "VALID") == 0) *auto_pad = Q8_PAD_VALID;
    else
        return q8_node_fail(err, Q8_ERR_FORMAT, n,
                            "auto_pad '%s' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID",
                            ap);
    return Q8_OK;
}

q8_status q8_conv_out_shape(const q8_node *n, q8_auto_pad ap, q8_conv_geom *g, q8_error *err) {
    for (int i = 0; i < 3; i++) {
        int64_t ext = (g->k[i] - 1) * g->d[i] + 1; /* dilated kernel extent */
        if (ap == Q8_PAD_SAME_UPPER || ap == Q8_PAD_SAME_LOWER) {
            int64_t out = (g->in[i] + g->s[i] - 1) / g->s[i];
            int64_t total = (out - 1) * g->s[i] + ext - g->in[i];
            if (total < 0) total = 0;
            g->pb[i] = ap == Q8_PAD_SAME_UPPER ? total / 2 : total - total / 2;
            g->pe[i] = total - g->pb[i];
        } else if (ap == Q8_PAD_VALID) {
            g->pb[i] = g->pe[i] = 0;
        }
        int64_t span = g->in[i] + g->pb[i] + g->pe[i] - ext;
        if (span < 0) {
            int ax = i - (3 - g->nsp);
            return q8_node_fail(err, Q8_ERR_SHAPE, n,
                                "spatial dim %d: input %lld (padded %lld) is smaller than the "
                                "dilated kernel %lld", ax, (long long)g->in[i],
                                (long long)(g->in[i] + g->pb[i] + g->pe[i]), (long long)ext);
        }
        g->out[i] = span / g->s[i] + 1;
    }
    return Q8_OK;
}
