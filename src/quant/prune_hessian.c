/* The input statistics of prunable layers: H = sum of x x^T over a
 * subsample of the rows each layer multiplies by its weights (im2col patch
 * rows for Conv, input rows for Gemm / MatMul), from the FP32 executor run
 * on the calibration samples. Rows are taken at a fixed stride, so the
 * cost is bounded by Q8_PFIT_ROWS (or the layer's max_rows) per layer
 * whatever the image size. */
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "ops/conv.h"
#include "prune_fit.h"
#include "q8.h"

static bool is_op(const q8_node *n, const char *op) {
    return !*n->domain && strcmp(n->op_type, op) == 0;
}

/* An FP32 activation computed at run time (not a constant). */
static int activation(const q8_graph *g, const q8_node *n, int i) {
    if (i >= n->n_inputs || n->inputs[i] < 0) return -1;
    const q8_tensor *t = g->tensors[n->inputs[i]];
    return !t->data && t->dtype == Q8_F32 && t->ndim >= 1 ? n->inputs[i] : -1;
}

void q8_pfit_describe(const q8_graph *g, int node, int wt, q8_pfit_layer *l) {
    const q8_node *n = g->nodes[node];
    const q8_tensor *w = g->tensors[wt];
    memset(l, 0, sizeof *l);
    l->node = node;
    l->wt = wt;
    l->x = -1;
    l->numel = q8_tensor_numel(w);
    l->m = w->dims[0];
    l->k = l->numel / (l->m ? l->m : 1);
    l->groups = 1;
    int x = activation(g, n, 0);
    if (is_op(n, "Conv") && n->params && x >= 0) {
        const q8_conv_params *p = n->params;
        l->kind = Q8_PFIT_CONV;
        l->k = p->kg;
        l->groups = p->g;
    } else if (is_op(n, "Gemm") && w->ndim == 2 && x >= 0 && g->tensors[x]->ndim == 2) {
        bool tb = q8_attr_int(n, "transB", 0) != 0;
        l->kind = tb ? Q8_PFIT_NK : Q8_PFIT_KN;
        l->k = tb ? w->dims[1] : w->dims[0];
        l->m = tb ? w->dims[0] : w->dims[1];
    } else if (is_op(n, "MatMul") && w->ndim == 2 && x >= 0 &&
               g->tensors[x]->dims[g->tensors[x]->ndim - 1] == w->dims[0]) {
        l->kind = Q8_PFIT_KN;
        l->k = w->dims[0];
        l->m = w->dims[1];
    }
    if (l->kind != Q8_PFIT_NONE) l->x = x;
    l->blk = l->k < Q8_PFIT_BLOCK ? l->k : Q8_PFIT_BLOCK;
    l->nblk = l->blk ? (l->k + l->blk - 1) / l->blk : 0;
}

typedef struct capture_ctx {
    q8_pfit_layer *l;
    int n;
    q8_pfit_pass pass;
    int n_samples;
    int sample;         /* the sample being run */
    float *x;           /* one row, k floats */
} capture_ctx;

/* h of group grp += x x^T (upper triangles of the blocks); with a cross
 * pass also c += x xd^T, xd the dense model's row at the same place */
static void add_h(q8_pfit_layer *l, int64_t grp, const float *x, const float *xd) {
    for (int64_t bi = 0; bi < l->nblk; bi++) {
        int64_t c0 = bi * l->blk, bs = l->k - c0 < l->blk ? l->k - c0 : l->blk;
        int64_t at = (grp * l->nblk + bi) * l->blk * l->blk;
        float *h = l->h + at;
        const float *xb = x + c0;
        for (int64_t i = 0; i < bs; i++) {
            float xi = xb[i];
            if (xi == 0.0f) continue;
            float *row = h + i * bs;
            for (int64_t j = i; j < bs; j++) row[j] += xi * xb[j];
            if (!xd) continue;
            float *crow = l->c + at + i * bs;
            for (int64_t j = 0; j < bs; j++) crow[j] += xi * xd[c0 + j];
        }
    }
}

/* Row r of group grp in the current sample. Dense rows live at their
 * sample's slots: a layer inside an If branch runs on some samples only,
 * and the pruned model may take the branch on others than the dense one,
 * so rows pair by sample and place, never by count. */
static void add_row(capture_ctx *c, q8_pfit_layer *l, int64_t grp, int64_t r, const float *x) {
    int64_t rps = l->xr_rows / (c->n_samples ? c->n_samples : 1);
    float *xr = l->xr ? l->xr + ((c->sample * rps + r) * l->groups + grp) * l->k : NULL;
    if (c->pass == Q8_PFIT_ROWS_KEEP) {
        if (r < rps) {
            memcpy(xr, x, sizeof(float) * (size_t)l->k);
            l->xr_seen[c->sample] = 1;
        }
    } else if (c->pass == Q8_PFIT_H_CROSS && xr) {
        if (r >= rps || !l->xr_seen[c->sample]) return; /* no dense target for this row */
        add_h(l, grp, x, xr);
    } else {
        add_h(l, grp, x, NULL);
    }
    if (grp == 0) l->n_rows++;
}

/* Rows taken from n_pos: at most l->max_rows (0: Q8_PFIT_ROWS) over all
 * samples. */
static int64_t rows_per_sample(const q8_pfit_layer *l, int64_t n_pos, int n_samples) {
    int64_t cap = l->max_rows > 0 ? l->max_rows : Q8_PFIT_ROWS;
    int64_t r = (cap + n_samples - 1) / (n_samples ? n_samples : 1);
    return r < n_pos ? r : n_pos;
}

/* The positions a layer's weights are applied at over one sample: Conv's
 * output pixels (times the batch), else the input's rows of k. */
static int64_t positions(const q8_graph *g, const q8_pfit_layer *l) {
    if (l->kind == Q8_PFIT_CONV) {
        const q8_conv_params *p = g->nodes[l->node]->params;
        return p->nb * p->out_sp;
    }
    return q8_tensor_numel(g->tensors[l->x]) / (l->k ? l->k : 1);
}

static int64_t pick(int64_t i, int64_t rps, int64_t n_pos) {
    int64_t p = i * n_pos / rps + n_pos / rps / 2;
    return p < n_pos ? p : n_pos - 1;
}

static void capture_conv(capture_ctx *c, const q8_graph *g, q8_pfit_layer *l, const float *xd) {
    const q8_conv_params *p = g->nodes[l->node]->params;
    const q8_conv_geom *e = &p->geo;
    int64_t n_pos = positions(g, l), rps = rows_per_sample(l, n_pos, c->n_samples);
    for (int64_t r = 0; r < rps; r++) {
        int64_t pos = pick(r, rps, n_pos), b = pos / p->out_sp, o = pos % p->out_sp;
        int64_t od = o / (e->out[1] * e->out[2]), oh = o / e->out[2] % e->out[1];
        int64_t ow = o % e->out[2];
        for (int64_t grp = 0; grp < p->g; grp++) {
            float *x = c->x;
            for (int64_t ci = 0; ci < p->cg; ci++) {
                const float *plane = xd + ((b * p->c) + grp * p->cg + ci) * p->in_sp;
                for (int64_t kd = 0; kd < e->k[0]; kd++)
                    for (int64_t kh = 0; kh < e->k[1]; kh++)
                        for (int64_t kw = 0; kw < e->k[2]; kw++) {
                            int64_t id = od * e->s[0] - e->pb[0] + kd * e->d[0];
                            int64_t ih = oh * e->s[1] - e->pb[1] + kh * e->d[1];
                            int64_t iw = ow * e->s[2] - e->pb[2] + kw * e->d[2];
                            bool in = id >= 0 && id < e->in[0] && ih >= 0 && ih < e->in[1] &&
                                      iw >= 0 && iw < e->in[2];
                            *x++ = in ? plane[(id * e->in[1] + ih) * e->in[2] + iw] : 0.0f;
                        }
            }
            add_row(c, l, grp, r, c->x);
        }
    }
}

static void capture_rows(capture_ctx *c, const q8_graph *g, q8_pfit_layer *l, const float *xd) {
    const q8_node *n = g->nodes[l->node];
    bool ta = is_op(n, "Gemm") && q8_attr_int(n, "transA", 0);
    int64_t n_pos = positions(g, l), rps = rows_per_sample(l, n_pos, c->n_samples);
    for (int64_t r = 0; r < rps; r++) {
        int64_t pos = pick(r, rps, n_pos);
        for (int64_t j = 0; j < l->k; j++) c->x[j] = ta ? xd[j * n_pos + pos] : xd[pos * l->k + j];
        add_row(c, l, 0, r, c->x);
    }
}

/* Rows are taken when the layer itself runs, from its input: a layer inside
 * an If branch adds rows only for the samples that take the branch, even
 * when its input is computed (or fed) outside it. */
static void observer(void *arg, const q8_graph *g, const q8_node *n, void *const *ptr) {
    capture_ctx *c = arg;
    for (int i = 0; i < c->n; i++) {
        q8_pfit_layer *l = &c->l[i];
        if (g->nodes[l->node] != n || l->x < 0 || !ptr[l->x]) continue;
        if (!(c->pass == Q8_PFIT_ROWS_KEEP ? l->xr : l->h)) continue;
        if (l->kind == Q8_PFIT_CONV) capture_conv(c, g, l, ptr[l->x]);
        else capture_rows(c, g, l, ptr[l->x]);
    }
}

static void symmetrize(q8_pfit_layer *l) {
    for (int64_t grp = 0; grp < l->groups; grp++)
        for (int64_t bi = 0; bi < l->nblk; bi++) {
            int64_t c0 = bi * l->blk, bs = l->k - c0 < l->blk ? l->k - c0 : l->blk;
            float *h = l->h + (grp * l->nblk + bi) * l->blk * l->blk;
            for (int64_t i = 0; i < bs; i++)
                for (int64_t j = i + 1; j < bs; j++) h[j * bs + i] = h[i * bs + j];
        }
}

/* Rows a layer takes over all samples (capture_conv / capture_rows). */
static int64_t rows_taken(const q8_graph *g, const q8_pfit_layer *l, int n_samples) {
    return rows_per_sample(l, positions(g, l), n_samples) * n_samples;
}

void q8_pfit_drop_rows(q8_pfit_layer *l) {
    free(l->xr);
    free(l->xr_seen);
    l->xr = NULL;
    l->xr_seen = NULL;
    l->xr_rows = 0;
}

int64_t q8_pfit_macs(const q8_graph *g, const q8_pfit_layer *l) {
    if (l->kind == Q8_PFIT_NONE || l->x < 0) return l->numel;
    return positions(g, l) * l->m * l->k;
}

static bool alloc_pass(const q8_graph *g, q8_pfit_layer *l, q8_pfit_pass pass, int n_samples) {
    size_t hn = (size_t)q8_pfit_h_bytes(l) / sizeof(float) + 1;
    l->n_rows = 0;
    if (pass == Q8_PFIT_ROWS_KEEP) {
        q8_pfit_drop_rows(l);
        l->xr_rows = rows_taken(g, l, n_samples);
        l->xr = malloc(sizeof(float) * (size_t)(l->xr_rows * l->groups * l->k + 1));
        l->xr_seen = calloc((size_t)n_samples + 1, 1);
        return l->xr && l->xr_seen;
    }
    l->h = calloc(hn, sizeof(float));
    l->factored = false;
    if (pass == Q8_PFIT_H_CROSS && l->xr) l->c = calloc(hn, sizeof(float));
    return l->h && (pass != Q8_PFIT_H_CROSS || !l->xr || l->c);
}

q8_status q8_pfit_capture(const q8_graph *g, q8_pfit_layer *l, int n, const q8_sample_set *s,
                          int n_threads, q8_pfit_pass pass, q8_error *err) {
    capture_ctx c = {.l = l, .n = n, .n_samples = s->n_samples, .pass = pass};
    int64_t kmax = 1;
    q8_status st = Q8_OK;
    for (int i = 0; i < n && st == Q8_OK; i++) {
        if (l[i].kind == Q8_PFIT_NONE || (pass != Q8_PFIT_ROWS_KEEP && l[i].h)) continue;
        if (l[i].k > kmax) kmax = l[i].k;
        if (!alloc_pass(g, &l[i], pass, s->n_samples))
            st = q8_fail(err, Q8_ERR_NOMEM, "out of memory for pruning statistics");
    }
    if (st == Q8_OK && !(c.x = malloc(sizeof(float) * (size_t)kmax)))
        st = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    q8_model tmp = {.g = (q8_graph *)g};
    q8_session *sess = NULL;
    q8_session_options so = {.n_threads = n_threads, .device = Q8_DEVICE_CPU};
    if (st == Q8_OK) st = q8_session_create(&tmp, &so, &sess, err);
    if (st == Q8_OK) st = q8_session_set_observer(sess, observer, &c, err);
    for (int i = 0; i < s->n_samples && st == Q8_OK; i++) {
        c.sample = i;
        for (int k = 0; k < s->n_inputs && st == Q8_OK; k++) {
            q8_tensor *t = NULL;
            const char *name = s->names ? s->names[k] : g->tensors[g->inputs[k]]->name;
            st = q8_sample_load(s, i, k, &t, err);
            if (st == Q8_OK)
                st = q8_session_set_input(sess, name, t->dtype, t->dims, t->ndim, t->data, err);
            if (st != Q8_OK) q8_fail_prefix(err, "pruning: calibration sample %s", s->paths[i][k]);
            q8_tensor_free(t);
        }
        if (st == Q8_OK) st = q8_session_run(sess, err);
    }
    q8_session_free(sess);
    free(c.x);
    for (int i = 0; i < n && pass != Q8_PFIT_ROWS_KEEP; i++)
        if (l[i].h && !l[i].factored) symmetrize(&l[i]);
    return st;
}
