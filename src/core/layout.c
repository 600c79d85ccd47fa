/* Kernel-ready weight layouts (layout.h). */
#include "layout.h"

#include <string.h>

#include "op.h"
#include "ops/qconv.h"
#include "ops/qgemm.h"

const char *q8_layout_name(q8_layout l) {
    switch (l) {
    case Q8_LAYOUT_PLAIN: return "plain";
    case Q8_LAYOUT_ROWS4: return "rows4";
    case Q8_LAYOUT_LANES16: return "lanes16";
    case Q8_LAYOUT_TAPS4: return "taps4";
    default: return "?";
    }
}

static int64_t kpad(int64_t k) { return (k + Q8_LAYOUT_KSTEP - 1) / Q8_LAYOUT_KSTEP * Q8_LAYOUT_KSTEP; }
static int64_t lanes_rows(int64_t n) {
    return (n + Q8_LAYOUT_LANES - 1) / Q8_LAYOUT_LANES * Q8_LAYOUT_LANES;
}

bool q8_layout_nk(const q8_tensor *t, int64_t *n, int64_t *k) {
    q8_wshape s;
    if (!q8_layout_shape(t, &s)) return false;
    *n = s.n;
    *k = s.k;
    return true;
}

bool q8_layout_shape(const q8_tensor *t, q8_wshape *s) {
    if (t->ndim < 1 || t->dims[0] <= 0) return false;
    s->n = t->dims[0];
    s->k = 1;
    s->taps = 1;
    for (int d = 1; d < t->ndim; d++) s->k *= t->dims[d];
    for (int d = 2; d < t->ndim; d++) s->taps *= t->dims[d];
    return s->k > 0;
}

/* TAPS4's row: taps x cp bytes */
static int64_t taps_row(q8_wshape s) { return s.taps * kpad(s.k / s.taps); }

size_t q8_layout_bytes(q8_layout l, q8_wshape s) {
    switch (l) {
    case Q8_LAYOUT_ROWS4: return (size_t)s.n * (size_t)kpad(s.k);
    case Q8_LAYOUT_LANES16: return (size_t)lanes_rows(s.n) * (size_t)kpad(s.k);
    case Q8_LAYOUT_TAPS4: return (size_t)s.n * (size_t)taps_row(s);
    default: return (size_t)s.n * (size_t)s.k;
    }
}

bool q8_layout_pads_little(q8_layout l, q8_wshape s) {
    size_t plain = (size_t)s.n * (size_t)s.k;
    return q8_layout_bytes(l, s) - plain <= plain / 8;
}

bool q8_qconv_gemv(const q8_qconv_params *p) {
    const q8_qconv_geom *q = &p->geo;
    bool direct = q->KH == 1 && q->KW == 1 && q->sh == 1 && q->sw == 1 && !q->pt && !q->pl &&
                  !q->pb && !q->pr;
    return direct && p->Cg != 1 && q->group == 1 && p->P == 1 &&
           q8_layout_pads_little(Q8_LAYOUT_LANES16, (q8_wshape){q->M, p->K, 1});
}

bool q8_qconv_implicit(const q8_qconv_params *p) {
    const q8_qconv_geom *q = &p->geo;
    int64_t taps = q->KH * q->KW, wp = q->W + q->pl + q->pr;
    /* Measured against the im2col lanes (docs/performance.md, "The implicit
     * INT8 conv"): it wins where output rows are not a multiple of 16 wide
     * (the im2col's panels straddle rows) and K is long; with 3 taps, or
     * rows of 16k, the im2col is cheaper than the copy and the padded
     * columns (at most 1/16 more). */
    return p->Cg != 1 && q->sh == 1 && q->sw == 1 && q->dh == 1 && q->dw == 1 && taps >= 9 &&
           q->OW % 16 != 0 && (wp - q->OW) * 16 <= wp &&
           q8_layout_pads_little(Q8_LAYOUT_TAPS4, (q8_wshape){q->M, p->K, taps});
}

size_t q8_tensor_stored_bytes(const q8_tensor *t) {
    q8_wshape s;
    if (t->layout == Q8_LAYOUT_PLAIN || !q8_layout_shape(t, &s)) return q8_tensor_nbytes(t);
    return q8_layout_bytes(t->layout, s);
}

/* Byte offset of element (j, k) in LANES16 (igemm.h's lanes operand). */
static size_t lane_off(int64_t j, int64_t k, int64_t kp) {
    return ((size_t)(j / Q8_LAYOUT_LANES) * (size_t)(kp / 4) + (size_t)(k / 4)) * 64 +
           (size_t)(j % Q8_LAYOUT_LANES) * 4 + (size_t)(k % 4);
}

/* Offset of (j, kk) in layout l, for j < n and kk < k's padded extent
 * (TAPS4: kk = c x taps + t with c < cp). */
static size_t elem_off(q8_layout l, int64_t j, int64_t kk, q8_wshape s) {
    switch (l) {
    case Q8_LAYOUT_ROWS4: return (size_t)(j * kpad(s.k) + kk);
    case Q8_LAYOUT_LANES16: return lane_off(j, kk, kpad(s.k));
    case Q8_LAYOUT_TAPS4: { /* [n][cp / 4][taps][4] */
        int64_t c = kk / s.taps, t = kk % s.taps;
        return (size_t)(j * taps_row(s) + (c / 4 * s.taps + t) * 4 + c % 4);
    }
    default: return (size_t)(j * s.k + kk);
    }
}

void q8_layout_pack(q8_layout l, const int8_t *src, q8_wshape s, int8_t *dst) {
    memset(dst, 0, q8_layout_bytes(l, s));
    for (int64_t j = 0; j < s.n; j++)
        for (int64_t kk = 0; kk < s.k; kk++) dst[elem_off(l, j, kk, s)] = src[j * s.k + kk];
}

void q8_layout_unpack(q8_layout l, const int8_t *src, q8_wshape s, int8_t *dst) {
    for (int64_t j = 0; j < s.n; j++)
        for (int64_t kk = 0; kk < s.k; kk++) dst[j * s.k + kk] = src[elem_off(l, j, kk, s)];
}

void q8_layout_row(q8_layout l, const int8_t *src, q8_wshape s, int64_t j, int8_t *dst) {
    if (l == Q8_LAYOUT_LANES16 || l == Q8_LAYOUT_TAPS4)
        for (int64_t kk = 0; kk < s.k; kk++) dst[kk] = src[elem_off(l, j, kk, s)];
    else memcpy(dst, src + elem_off(l, j, 0, s), (size_t)s.k);
}

bool q8_layout_padding_zero(q8_layout l, const int8_t *data, q8_wshape s) {
    if (l == Q8_LAYOUT_PLAIN) return true;
    if (l == Q8_LAYOUT_TAPS4) { /* channels c >= C of every tap */
        int64_t c = s.k / s.taps, cp = kpad(c), row = taps_row(s);
        for (int64_t j = 0; j < s.n; j++)
            for (int64_t i = c; i < cp; i++)
                for (int64_t t = 0; t < s.taps; t++)
                    if (data[j * row + (i / 4 * s.taps + t) * 4 + i % 4]) return false;
        return true;
    }
    int64_t kp = kpad(s.k), rows = l == Q8_LAYOUT_LANES16 ? lanes_rows(s.n) : s.n;
    for (int64_t j = 0; j < rows; j++)
        for (int64_t kk = 0; kk < kp; kk++)
            if ((j >= s.n || kk >= s.k) && data[elem_off(l, j, kk, s)]) return false;
    return true;
}

q8_status q8_tensor_plain(const q8_tensor *t, const void **data, void **tmp, q8_error *err) {
    *tmp = NULL;
    *data = t->data;
    q8_wshape s;
    if (t->layout == Q8_LAYOUT_PLAIN || !t->data || !q8_layout_shape(t, &s)) return Q8_OK;
    if (!(*tmp = q8_aligned_alloc((size_t)(s.n * s.k))))
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory unpacking '%s'", t->name);
    q8_layout_unpack(t->layout, t->data, s, *tmp);
    *data = *tmp;
    return Q8_OK;
}

q8_layout q8_layout_for_reader(const q8_node *n, int slot) {
    if (slot != 1 || !n->params) return Q8_LAYOUT_PLAIN;
    if (n->op == Q8_OP_QGEMM) return Q8_LAYOUT_LANES16;
    if (n->op != Q8_OP_QCONV) return Q8_LAYOUT_PLAIN;
    const q8_qconv_params *p = n->params;
    /* depthwise: the AVX-512 direct kernel reads [M][kp] when its groups of
     * four taps are consecutive (KW >= 2); the other kernels pack from it */
    if (p->Cg == 1)
        return p->K % Q8_LAYOUT_KSTEP && p->geo.KW >= 2 ? Q8_LAYOUT_ROWS4 : Q8_LAYOUT_PLAIN;
    if (q8_qconv_gemv(p)) return Q8_LAYOUT_LANES16;
    if (q8_qconv_implicit(p)) return Q8_LAYOUT_TAPS4;
    return p->K % Q8_LAYOUT_KSTEP ? Q8_LAYOUT_ROWS4 : Q8_LAYOUT_PLAIN;
}

q8_layout q8_layout_for_cpu(const q8_graph *g, int t) {
    const q8_tensor *tt = g->tensors[t];
    int64_t n, k;
    if (!tt->data || tt->dtype != Q8_I8 || !q8_layout_nk(tt, &n, &k)) return Q8_LAYOUT_PLAIN;
    if (q8_graph_is_output(g, t)) return Q8_LAYOUT_PLAIN;
    for (int b = 0; b < g->n_bound; b++)
        if (g->bound[b] == t) return Q8_LAYOUT_PLAIN;
    int l = -1;
    for (int i = 0; i < g->n_nodes; i++) {
        const q8_node *nd = g->nodes[i];
        for (int s = 0; s < nd->n_inputs; s++) {
            if (nd->inputs[s] != t) continue;
            q8_layout w = q8_layout_for_reader(nd, s);
            if (l >= 0 && (int)w != l) return Q8_LAYOUT_PLAIN;
            l = (int)w;
        }
    }
    return l < 0 ? Q8_LAYOUT_PLAIN : (q8_layout)l;
}

/* Only depthwise q8.QConv weights are stored padded whatever the padding
 * costs: every CPU kernel of theirs reads or packs from [M][kp], so padding
 * in the file replaces a packed copy in memory. */
static bool read_depthwise_only(const q8_graph *g, int t) {
    bool any = false;
    for (int i = 0; i < g->n_nodes; i++) {
        const q8_node *nd = g->nodes[i];
        for (int s = 0; s < nd->n_inputs; s++) {
            if (nd->inputs[s] != t) continue;
            if (nd->op != Q8_OP_QCONV || s != 1 || !nd->params ||
                ((const q8_qconv_params *)nd->params)->Cg != 1)
                return false;
            any = true;
        }
    }
    return any;
}

q8_layout q8_layout_to_store(const q8_graph *g, int t) {
    q8_layout l = q8_layout_for_cpu(g, t);
    q8_wshape s;
    if (l == Q8_LAYOUT_PLAIN || !q8_layout_shape(g->tensors[t], &s)) return Q8_LAYOUT_PLAIN;
    return q8_layout_pads_little(l, s) || read_depthwise_only(g, t) ? l : Q8_LAYOUT_PLAIN;
}

bool q8_graph_const_bytes(const q8_graph *g, const bool *which, size_t *bytes) {
    *bytes = 0;
    char *seen = calloc((size_t)g->n_tensors + 1, 1);
    if (!seen) return false;
    for (int i = 0; i < g->n_nodes; i++)
        for (int j = 0; (!which || which[i]) && j < g->nodes[i]->n_inputs; j++) {
            int t = g->nodes[i]->inputs[j];
            if (t >= 0 && g->tensors[t]->data && !seen[t]) {
                seen[t] = 1;
                *bytes += q8_tensor_stored_bytes(g->tensors[t]);
            }
        }
    free(seen);
    return true;
}
