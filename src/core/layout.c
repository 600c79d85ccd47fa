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
    default: return "?";
    }
}

static int64_t kpad(int64_t k) { return (k + Q8_LAYOUT_KSTEP - 1) / Q8_LAYOUT_KSTEP * Q8_LAYOUT_KSTEP; }
static int64_t lanes_rows(int64_t n) {
    return (n + Q8_LAYOUT_LANES - 1) / Q8_LAYOUT_LANES * Q8_LAYOUT_LANES;
}

bool q8_layout_nk(const q8_tensor *t, int64_t *n, int64_t *k) {
    if (t->ndim < 1 || t->dims[0] <= 0) return false;
    *n = t->dims[0];
    *k = 1;
    for (int d = 1; d < t->ndim; d++) *k *= t->dims[d];
    return *k > 0;
}

size_t q8_layout_bytes(q8_layout l, int64_t n, int64_t k) {
    switch (l) {
    case Q8_LAYOUT_ROWS4: return (size_t)n * (size_t)kpad(k);
    case Q8_LAYOUT_LANES16: return (size_t)lanes_rows(n) * (size_t)kpad(k);
    default: return (size_t)n * (size_t)k;
    }
}

bool q8_layout_pads_little(q8_layout l, int64_t n, int64_t k) {
    size_t plain = (size_t)n * (size_t)k;
    return q8_layout_bytes(l, n, k) - plain <= plain / 8;
}

bool q8_qconv_gemv(const q8_qconv_params *p) {
    const q8_qconv_geom *q = &p->geo;
    bool direct = q->KH == 1 && q->KW == 1 && q->sh == 1 && q->sw == 1 && !q->pt && !q->pl &&
                  !q->pb && !q->pr;
    return direct && p->Cg != 1 && q->group == 1 && p->P == 1 &&
           q8_layout_pads_little(Q8_LAYOUT_LANES16, q->M, p->K);
}

size_t q8_tensor_stored_bytes(const q8_tensor *t) {
    int64_t n, k;
    if (t->layout == Q8_LAYOUT_PLAIN || !q8_layout_nk(t, &n, &k)) return q8_tensor_nbytes(t);
    return q8_layout_bytes(t->layout, n, k);
}

/* Byte offset of element (j, k) in LANES16 (igemm.h's lanes operand). */
static size_t lane_off(int64_t j, int64_t k, int64_t kp) {
    return ((size_t)(j / Q8_LAYOUT_LANES) * (size_t)(kp / 4) + (size_t)(k / 4)) * 64 +
           (size_t)(j % Q8_LAYOUT_LANES) * 4 + (size_t)(k % 4);
}

/* Offset of (j, k) in layout l, for j < n and k < k's padded extent. */
static size_t elem_off(q8_layout l, int64_t j, int64_t kk, int64_t k) {
    switch (l) {
    case Q8_LAYOUT_ROWS4: return (size_t)(j * kpad(k) + kk);
    case Q8_LAYOUT_LANES16: return lane_off(j, kk, kpad(k));
    default: return (size_t)(j * k + kk);
    }
}

void q8_layout_pack(q8_layout l, const int8_t *src, int64_t n, int64_t k, int8_t *dst) {
    memset(dst, 0, q8_layout_bytes(l, n, k));
    for (int64_t j = 0; j < n; j++)
        for (int64_t kk = 0; kk < k; kk++) dst[elem_off(l, j, kk, k)] = src[j * k + kk];
}

void q8_layout_unpack(q8_layout l, const int8_t *src, int64_t n, int64_t k, int8_t *dst) {
    for (int64_t j = 0; j < n; j++)
        for (int64_t kk = 0; kk < k; kk++) dst[j * k + kk] = src[elem_off(l, j, kk, k)];
}

void q8_layout_row(q8_layout l, const int8_t *src, int64_t n, int64_t k, int64_t j, int8_t *dst) {
    (void)n;
    if (l == Q8_LAYOUT_LANES16)
        for (int64_t kk = 0; kk < k; kk++) dst[kk] = src[elem_off(l, j, kk, k)];
    else memcpy(dst, src + elem_off(l, j, 0, k), (size_t)k);
}

bool q8_layout_padding_zero(q8_layout l, const int8_t *data, int64_t n, int64_t k) {
    int64_t kp = kpad(k), rows = l == Q8_LAYOUT_LANES16 ? lanes_rows(n) : n;
    if (l == Q8_LAYOUT_PLAIN) return true;
    for (int64_t j = 0; j < rows; j++)
        for (int64_t kk = 0; kk < kp; kk++)
            if ((j >= n || kk >= k) && data[elem_off(l, j, kk, k)]) return false;
    return true;
}

q8_status q8_tensor_plain(const q8_tensor *t, const void **data, void **tmp, q8_error *err) {
    *tmp = NULL;
    *data = t->data;
    int64_t n, k;
    if (t->layout == Q8_LAYOUT_PLAIN || !t->data || !q8_layout_nk(t, &n, &k)) return Q8_OK;
    if (!(*tmp = q8_aligned_alloc((size_t)(n * k))))
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory unpacking '%s'", t->name);
    q8_layout_unpack(t->layout, t->data, n, k, *tmp);
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
    int64_t n, k;
    if (l == Q8_LAYOUT_PLAIN || !q8_layout_nk(g->tensors[t], &n, &k)) return Q8_LAYOUT_PLAIN;
    return q8_layout_pads_little(l, n, k) || read_depthwise_only(g, t) ? l : Q8_LAYOUT_PLAIN;
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
