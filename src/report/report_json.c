/* report.json: every number of the HTML report, machine-readable. Non-finite
 * values (an SQNR with no error at all, a ratio without a baseline) are null;
 * the powers next to each SQNR let a reader recompute it. */
#include <math.h>

#include "report_text.h"

static void key(q8_sbuf *b, const char *indent, const char *k) {
    q8_sb_printf(b, "%s\"%s\": ", indent, k);
}

static void num_field(q8_sbuf *b, const char *indent, const char *k, double v, bool comma) {
    key(b, indent, k);
    q8_sb_json_num(b, v);
    q8_sb_puts(b, comma ? ",\n" : "\n");
}

static void err_fields(q8_sbuf *b, const char *ind, const q8_err_stats *s, const char *prefix) {
    char k[64];
    snprintf(k, sizeof k, "%ssqnr_db", prefix);
    num_field(b, ind, k, q8_err_sqnr_db(s), true);
    snprintf(k, sizeof k, "%scosine", prefix);
    num_field(b, ind, k, q8_err_cosine(s), true);
    snprintf(k, sizeof k, "%smax_abs_error", prefix);
    num_field(b, ind, k, s->n ? s->max_abs : NAN, true);
    snprintf(k, sizeof k, "%ssignal_power", prefix);
    num_field(b, ind, k, s->n ? s->ref2 / (double)s->n : NAN, true);
    snprintf(k, sizeof k, "%snoise_power", prefix);
    num_field(b, ind, k, s->n ? s->err2 / (double)s->n : NAN, true);
    snprintf(k, sizeof k, "%snonfinite", prefix);
    num_field(b, ind, k, (double)s->nonfinite, true);
}

static void cost_json(q8_sbuf *b, const q8_report *r, const q8_report_cost *c) {
    const char *I = "      ";
    num_field(b, I, "file_bytes", (double)c->file_bytes, true);
    num_field(b, I, "weights_bytes", (double)c->weights_bytes, true);
    num_field(b, I, "arena_bytes", (double)c->arena_bytes, true);
    num_field(b, I, "peak_rss_bytes", (double)c->peak_rss_bytes, true);
    if (r->device == Q8_DEVICE_CUDA) num_field(b, I, "device_bytes", (double)c->device_bytes, true);
    q8_sb_printf(b, "%s\"latency_ms\": {\"runs\": %d, \"median\": ", I, c->lat.runs);
    q8_sb_json_num(b, c->lat.median_ms);
    q8_sb_puts(b, ", \"min\": ");
    q8_sb_json_num(b, c->lat.min_ms);
    q8_sb_puts(b, ", \"max\": ");
    q8_sb_json_num(b, c->lat.max_ms);
    q8_sb_puts(b, ", \"p10\": ");
    q8_sb_json_num(b, c->lat.p10_ms);
    q8_sb_puts(b, ", \"p90\": ");
    q8_sb_json_num(b, c->lat.p90_ms);
    q8_sb_puts(b, "},\n");
}

static void layer_json(q8_sbuf *b, const q8_report_layer *L, int rank, bool last) {
    const char *I = "          ";
    q8_sb_puts(b, "        {\n");
    num_field(b, I, "rank", rank, true);
    key(b, I, "node");
    q8_sb_json_str(b, L->node);
    q8_sb_puts(b, ",\n");
    key(b, I, "op");
    q8_sb_json_str(b, L->op);
    q8_sb_puts(b, ",\n");
    key(b, I, "tensor");
    q8_sb_json_str(b, L->tensor);
    q8_sb_puts(b, ",\n");
    num_field(b, I, "index", L->index, true);
    err_fields(b, I, &L->in_model, "");
    err_fields(b, I, &L->alone, "alone_");
    num_field(b, I, "sparsity", L->sparsity >= 0 ? L->sparsity : NAN, true);
    num_field(b, I, "weight_scale_min", L->w_scale_min >= 0 ? L->w_scale_min : NAN, true);
    num_field(b, I, "weight_scale_max", L->w_scale_max >= 0 ? L->w_scale_max : NAN, true);
    num_field(b, I, "output_scale", L->out_scale > 0 ? L->out_scale : NAN, false);
    q8_sb_puts(b, last ? "        }\n" : "        },\n");
}

/* q8_report_output's per-sample and per-channel fields; null where not measured. */
static void output_detail_json(q8_sbuf *b, const q8_report_output *o) {
    bool ws = o->worst_sample >= 0, ch = o->channel_axis >= 0 && o->channels_measured > 0;
    q8_sb_puts(b, ", \"worst_sample_sqnr_db\": ");
    q8_sb_json_num(b, ws ? o->worst_sample_db : NAN);
    q8_sb_puts(b, ", \"worst_sample\": ");
    q8_sb_json_num(b, ws ? o->worst_sample : NAN);
    q8_sb_puts(b, ", \"worst_sample_file\": ");
    if (ws && o->worst_sample_path) q8_sb_json_str(b, o->worst_sample_path);
    else q8_sb_puts(b, "null");
    q8_sb_puts(b, ", \"channel_axis\": ");
    q8_sb_json_num(b, ch ? o->channel_axis : NAN);
    q8_sb_puts(b, ", \"channels\": ");
    q8_sb_json_num(b, ch ? (double)o->channels : NAN);
    q8_sb_puts(b, ", \"channels_measured\": ");
    q8_sb_json_num(b, ch ? (double)o->channels_measured : NAN);
    q8_sb_puts(b, ", \"channel_median_sqnr_db\": ");
    q8_sb_json_num(b, ch ? o->channel_median_db : NAN);
    q8_sb_puts(b, ", \"channel_worst_sqnr_db\": ");
    q8_sb_json_num(b, ch ? o->channel_worst_db : NAN);
    q8_sb_puts(b, ", \"channel_worst\": ");
    q8_sb_json_num(b, ch ? (double)o->channel_worst : NAN);
}

static void model_json(q8_sbuf *b, const q8_report *r, int mi) {
    const q8_report_model *m = &r->models[mi], *f = &r->models[0];
    const char *I = "      ";
    q8_sb_puts(b, "    {\n");
    key(b, I, "path");
    q8_sb_json_str(b, m->path);
    q8_sb_puts(b, ",\n");
    key(b, I, "name");
    q8_sb_json_str(b, q8_report_basename(m->path));
    q8_sb_puts(b, ",\n");
    q8_sb_printf(b, "%s\"kind\": \"%s\",\n", I, m->quantized ? "int8" : "fp32");
    cost_json(b, r, &m->cost);
    num_field(b, I, "rows", (double)m->rows, true);
    num_field(b, I, "top1", q8_report_top1(m) >= 0 ? q8_report_top1(m) : NAN, true);
    num_field(b, I, "top1_hits", m->top1_hits >= 0 ? (double)m->top1_hits : NAN, true);
    if (!m->quantized) {
        q8_sb_puts(
            b, "      \"note\": \"the reference: every quantized model is compared with it\"\n");
        q8_sb_puts(b, mi + 1 < r->n_models ? "    },\n" : "    }\n");
        return;
    }
    q8_report_delta d = q8_report_delta_of(f, m);
    const char *J = "        ";
    q8_sb_puts(b, "      \"vs_fp32\": {\n");
    num_field(b, J, "size_ratio", d.size_ratio, true);
    num_field(b, J, "weights_ratio", d.weights_ratio, true);
    num_field(b, J, "arena_ratio", d.arena_ratio, true);
    num_field(b, J, "peak_rss_ratio", d.peak_rss_ratio, true);
    if (r->device == Q8_DEVICE_CUDA) num_field(b, J, "device_ratio", d.device_ratio, true);
    num_field(b, J, "latency_ratio", d.latency_ratio, true);
    num_field(b, J, "top1_drop_points", d.top1_drop_points, true);
    /* the agreement measure that fits output 0 (agreement_kind); the old
     * key top1_agreement keeps meaning argmax agreement only */
    static const char *const kinds[] = {"none", "top1", "pixel_class", "mask_iou"};
    q8_sb_printf(b, "%s\"agreement_kind\": \"%s\",\n", J, kinds[m->agree_kind]);
    num_field(b, J, "agreement", d.agreement, true);
    num_field(b, J, "top1_agreement", m->agree_kind == Q8_AGREE_TOP1 ? d.agreement : NAN, true);
    num_field(b, J, "agree_count", m->agree >= 0 ? (double)m->agree : NAN, true);
    num_field(b, J, "agree_of", m->agree >= 0 ? (double)m->agree_of : NAN, true);
    q8_sb_puts(b, "        \"outputs\": [\n");
    for (int i = 0; i < m->n_outputs; i++) {
        const q8_err_stats *s = &m->outputs[i].err;
        q8_sb_puts(b, "          {");
        q8_sb_puts(b, "\"name\": ");
        q8_sb_json_str(b, m->outputs[i].name);
        q8_sb_printf(b, ", \"elements\": %lld, \"nonfinite\": %lld, \"cosine\": ", (long long)s->n,
                     (long long)s->nonfinite);
        q8_sb_json_num(b, q8_err_cosine(s));
        q8_sb_puts(b, ", \"max_abs_error\": ");
        q8_sb_json_num(b, s->n ? s->max_abs : NAN);
        q8_sb_puts(b, ", \"sqnr_db\": ");
        q8_sb_json_num(b, q8_err_sqnr_db(s));
        q8_sb_puts(b, ", \"signal_power\": ");
        q8_sb_json_num(b, s->n ? s->ref2 / (double)s->n : NAN);
        q8_sb_puts(b, ", \"noise_power\": ");
        q8_sb_json_num(b, s->n ? s->err2 / (double)s->n : NAN);
        output_detail_json(b, &m->outputs[i]);
        q8_sb_puts(b, i + 1 < m->n_outputs ? "},\n" : "}\n");
    }
    q8_sb_puts(b, "        ]\n      },\n");
    q8_sb_puts(b, "      \"quantization\": {");
    q8_sb_puts(b, "\"calib_method\": ");
    q8_sb_json_str(b, m->calib_method);
    q8_sb_puts(b, ", \"prune_mode\": ");
    q8_sb_json_str(b, m->prune_mode);
    q8_sb_puts(b, ", \"prune_fraction\": ");
    q8_sb_json_num(b, m->prune_fraction);
    q8_sb_puts(b, ", \"fp32_layers\": [");
    for (int i = 0; i < m->n_fp32_layers; i++) {
        if (i) q8_sb_puts(b, ", ");
        q8_sb_json_str(b, m->fp32_layers[i]);
    }
    q8_sb_printf(b, "], \"source_matches\": %s, \"search\": ",
                 m->source_matches < 0 ? "null" : m->source_matches ? "true" : "false");
    if (m->search_trials > 0) {
        q8_sb_puts(b, "{\"max_drop_points\": ");
        q8_sb_json_num(b, m->search_max_drop);
        q8_sb_puts(b, ", \"drop_points\": ");
        q8_sb_json_num(b, m->search_drop);
        q8_sb_puts(b, ", \"min_sqnr_db\": ");
        q8_sb_json_num(b, m->search_min_sqnr);
        q8_sb_puts(b, ", \"sqnr_db\": ");
        q8_sb_json_num(b, m->search_sqnr);
        q8_sb_printf(b, ", \"automatic\": %s, \"met\": %s, \"trials\": %d, \"metric\": ",
                     m->search_auto ? "true" : "false", m->search_met ? "true" : "false",
                     m->search_trials);
        q8_sb_json_str(b, m->search_metric);
        q8_sb_puts(b, ", \"dense_layers\": ");
        q8_sb_json_str(b, m->search_dense);
        q8_sb_puts(b, "}},\n");
    } else {
        q8_sb_puts(b, "null},\n");
    }
    q8_sb_puts(b, "      \"layers\": [\n");
    for (int i = 0; i < m->n_layers; i++) layer_json(b, &m->layers[i], i + 1, i + 1 == m->n_layers);
    q8_sb_puts(b, "      ]\n");
    q8_sb_puts(b, mi + 1 < r->n_models ? "    },\n" : "    }\n");
}

q8_status q8_report_json(const q8_report *r, char **out, q8_error *err) {
    q8_sbuf b = {0};
    q8_sb_puts(&b, "{\n  \"report\": \"q8\",\n  \"version\": 1,\n  \"created\": ");
    q8_sb_json_str(&b, r->created);
    q8_sb_puts(&b, ",\n  \"data\": {\"dir\": ");
    q8_sb_json_str(&b, r->data_dir);
    q8_sb_printf(&b, ", \"samples\": %d, \"rows\": %lld, \"labels\": ", r->n_samples,
                 (long long)(r->n_models ? r->models[0].rows : 0));
    q8_sb_json_str(&b, r->labels_path);
    q8_sb_puts(&b, ", \"inputs\": [");
    for (int k = 0; k < r->n_inputs; k++) {
        const q8_tensor_info *t = &r->inputs[k];
        q8_sb_puts(&b, k ? ", {\"name\": " : "{\"name\": ");
        q8_sb_json_str(&b, t->name);
        q8_sb_printf(&b, ", \"dtype\": \"%s\", \"shape\": [", q8_dtype_name(t->dtype));
        for (int d = 0; d < t->ndim; d++)
            q8_sb_printf(&b, "%s%lld", d ? ", " : "", (long long)t->dims[d]);
        q8_sb_puts(&b, "]}");
    }
    q8_sb_puts(&b, "]},\n");
    q8_sb_printf(&b, "  \"device\": \"%s\",\n  \"accuracy_device\": \"cpu\",\n",
                 r->device == Q8_DEVICE_CUDA ? "cuda" : "cpu");
    q8_sb_printf(&b, "  \"threads\": %d,\n  \"runs\": %d,\n", r->n_threads, r->runs);
    q8_sb_puts(&b, "  \"models\": [\n");
    for (int i = 0; i < r->n_models; i++) model_json(&b, r, i);
    q8_sb_puts(&b, "  ]\n}\n");
    return q8_sb_finish(&b, out, err);
}
