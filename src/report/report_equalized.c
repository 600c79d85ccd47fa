/* The tensors quantize --equalize rescaled (src/quant/equalize.c): between
 * a Conv P and a depthwise Conv D, channel c of P's output is divided by s_c
 * and D's weights of channel c multiplied by s_c. The FP32 model does not
 * have that scale, so comparing (or feeding) such a tensor with its FP32
 * value measures the rescaling, not the quantization: ppocr_rec's stem
 * showed -15.5 dB "alone". The .q8 does not store s (bytes on small
 * models); it is recovered here from D's weights, quantized against FP32:
 * W_q[c] = s_c W_f[c] up to rounding. */
#include "report.h"

#include <math.h>
#include <string.h>

#include "layout.h"

/* Weight element j (row-major values v) of channel row r as a float (int8
 * dequantized). */
static double weight_at(const q8_tensor *w, const void *v, int64_t r, int64_t j) {
    if (w->dtype == Q8_F32) return ((const float *)v)[j];
    return (double)((const int8_t *)v)[j] * w->q.scale[w->q.n > 1 ? r : 0];
}

/* s_c for every channel of depthwise D (g) against its FP32 form fd, or
 * false when D's weights are not a per-channel multiple of FP32's (pruned or
 * re-fitted: then nothing can be said and the tensor is left alone). */
static bool channel_ratios(const q8_tensor *w, const void *v, const q8_tensor *wf, int64_t c,
                           float *s) {
    int64_t rows = w->dims[0], per = q8_tensor_numel(w) / rows, mult = rows / c;
    const float *f = wf->data;
    for (int64_t ch = 0; ch < c; ch++) {
        double qf = 0, ff = 0, qq = 0;
        for (int64_t r = ch * mult; r < (ch + 1) * mult; r++)
            for (int64_t j = r * per; j < (r + 1) * per; j++) {
                double q = weight_at(w, v, r, j);
                qf += q * f[j];
                ff += (double)f[j] * f[j];
                qq += q * q;
            }
        if (ff == 0 || qq == 0) { /* a dead channel: its scale does not matter */
            s[ch] = 1;
            continue;
        }
        double k = qf / ff, res = qq - 2 * k * qf + k * k * ff; /* |q - k f|^2 */
        /* int8 rounding leaves ~1% of the norm on 3x3 taps; a pruned or
         * re-fitted D is far from any multiple */
        if (!(k > 0) || res > 0.01 * qq) return false;
        s[ch] = fabs(k - 1) < 1.0 / 256 ? 1.0f : (float)k;
    }
    return true;
}

bool q8_report_is_eq_twin(const char *q, const char *f) {
    size_t n = strlen(f);
    return !strncmp(q, f, n) && (!strcmp(q + n, "_eq") || !strcmp(q + n, "_eq_q8"));
}

/* Through an activation (equalize.c), P's output is stored as NAME_eq,
 * divided per channel by u, and P's weights and bias are FP32's divided by
 * u: the output's factors are P's weights against FP32's, per output
 * channel. */
static q8_status conv_output_factors(const q8_graph *g, const q8_graph *f, const int *fmap,
                                     float **k, q8_error *err) {
    for (int i = 0; i < g->n_nodes; i++) {
        const q8_node *p = g->nodes[i];
        bool conv = p->op == Q8_OP_QCONV || (!*p->domain && !strcmp(p->op_type, "Conv"));
        int t = p->n_outputs > 0 ? p->outputs[0] : -1;
        if (p->dead || !conv || p->n_inputs < 2 || t < 0 || fmap[t] < 0 || k[t]) continue;
        bool eq = q8_report_is_eq_twin(g->tensors[t]->name, f->tensors[fmap[t]]->name);
        const q8_node *fp = q8_graph_find_node(f, p->name);
        const q8_tensor *w = q8_in(g, p, 1), *wf = fp && fp->n_inputs >= 2 ? q8_in(f, fp, 1) : NULL;
        const q8_tensor *y = g->tensors[t];
        if (!eq || !w || !w->data || !wf || !wf->data || wf->dtype != Q8_F32 || y->ndim < 3 ||
            q8_tensor_numel(w) != q8_tensor_numel(wf) || w->ndim < 2 || w->dims[0] != y->dims[1])
            continue;
        if (w->dtype != Q8_F32 &&
            (w->dtype != Q8_I8 || (w->q.n != 1 && w->q.n != w->dims[0])))
            continue;
        const void *v;
        void *tmp = NULL;
        Q8_TRY(q8_tensor_plain(w, &v, &tmp, err));
        float *s = malloc(sizeof(float) * (size_t)w->dims[0]);
        if (!s) {
            q8_aligned_free(tmp);
            return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        }
        bool ok = channel_ratios(w, v, wf, w->dims[0], s);
        q8_aligned_free(tmp);
        if (ok) k[t] = s; /* the tensor is FP32's times the weights' ratio */
        else free(s);
    }
    return Q8_OK;
}

q8_status q8_report_channel_factors(const q8_graph *g, const q8_graph *f, const int *fmap,
                                    float **k, q8_error *err) {
    for (int i = 0; i < g->n_nodes; i++) {
        const q8_node *d = g->nodes[i];
        bool conv = d->op == Q8_OP_QCONV || (!*d->domain && !strcmp(d->op_type, "Conv"));
        if (d->dead || !conv || d->n_inputs < 2 || d->inputs[0] < 0) continue;
        int xt = d->inputs[0];
        const q8_tensor *x = g->tensors[xt], *w = q8_in(g, d, 1);
        const q8_node *fd = q8_graph_find_node(f, d->name);
        const q8_tensor *wf = fd && fd->n_inputs >= 2 ? q8_in(f, fd, 1) : NULL;
        if (!w || !w->data || !wf || !wf->data || wf->dtype != Q8_F32 || x->ndim < 3 ||
            fmap[xt] < 0 || k[xt] || q8_tensor_numel(w) != q8_tensor_numel(wf))
            continue;
        if (w->dtype != Q8_F32 && (w->dtype != Q8_I8 || w->q.n < 1)) continue;
        int64_t c = x->dims[1];
        if (c < 2 || q8_attr_int(d, "group", 1) != c || w->ndim < 2 || w->dims[1] != 1 ||
            w->dims[0] % c || (w->dtype == Q8_I8 && w->q.n != 1 && w->q.n != w->dims[0]))
            continue;
        const void *v;
        void *tmp = NULL;
        Q8_TRY(q8_tensor_plain(w, &v, &tmp, err)); /* a kernel layout in the file */
        float *s = malloc(sizeof(float) * (size_t)c);
        if (!s) {
            q8_aligned_free(tmp);
            return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        }
        bool any = false, ok = channel_ratios(w, v, wf, c, s);
        q8_aligned_free(tmp);
        if (ok)
            for (int64_t ch = 0; ch < c; ch++) {
                any |= s[ch] != 1;
                s[ch] = 1 / s[ch]; /* the tensor is divided by s */
            }
        if (any) k[xt] = s;
        else free(s);
    }
    return conv_output_factors(g, f, fmap, k, err);
}

void q8_report_apply_factors(const q8_tensor *t, const float *k, const float *ref, float *out) {
    int64_t c = t->dims[1], inner = 1, n = q8_tensor_numel(t);
    for (int j = 2; j < t->ndim; j++) inner *= t->dims[j];
    for (int64_t i = 0; i < n; i++) out[i] = ref[i] * k[(i / inner) % c];
}
