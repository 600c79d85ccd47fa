/* report.md: the report's tables as Markdown (for a pull request or docs/). */
#include <math.h>

#include "report_text.h"

static void cell_ratio(q8_sbuf *b, double ratio) {
    char s[32];
    if (!isnan(ratio)) q8_sb_printf(b, " (%sx)", q8_fmt_sig(ratio, s, sizeof s));
}

/* C has no member pointers: one small row printer per field. */
typedef size_t (*cost_field)(const q8_report_cost *c);
static size_t f_file(const q8_report_cost *c) { return c->file_bytes; }
static size_t f_weights(const q8_report_cost *c) { return c->weights_bytes; }
static size_t f_arena(const q8_report_cost *c) { return c->arena_bytes; }
static size_t f_rss(const q8_report_cost *c) { return c->peak_rss_bytes; }
static size_t f_device(const q8_report_cost *c) { return c->device_bytes; }

static void bytes_row(q8_sbuf *b, const q8_report *r, const char *label, cost_field fld) {
    q8_sb_printf(b, "| %s |", label);
    double base = (double)fld(&r->models[0].cost);
    for (int i = 0; i < r->n_models; i++) {
        char s[32];
        double v = (double)fld(&r->models[i].cost);
        q8_sb_printf(b, " %s", q8_fmt_bytes(v, s, sizeof s));
        if (i) cell_ratio(b, base > 0 ? v / base : NAN);
        q8_sb_puts(b, " |");
    }
    q8_sb_puts(b, "\n");
}

/* Output o's worst sample and channels, one row, when some model has them. */
static void detail_row_md(q8_sbuf *b, const q8_report *r, int o) {
    if (!q8_report_any_output_detail(r, o)) return;
    q8_sb_puts(b, "| output `");
    q8_sb_md(b, r->models[1].outputs[o].name);
    q8_sb_puts(b, "`: SQNR of the worst sample, per channel | - |");
    for (int i = 1; i < r->n_models; i++) {
        q8_sb_puts(b, " ");
        if (o >= r->models[i].n_outputs ||
            !q8_report_output_detail(b, &r->models[i].outputs[o], false))
            q8_sb_puts(b, "n/a");
        q8_sb_puts(b, " |");
    }
    q8_sb_puts(b, "\n");
}

static void layers_md(q8_sbuf *b, const q8_report_model *m) {
    q8_sb_puts(b, "\n## Per-layer error: ");
    q8_sb_md(b, q8_report_basename(m->path));
    q8_sb_puts(b, "\n\n");
    q8_report_provenance(b, m, false);
    q8_sb_puts(b, "\n\n");
    if (!m->n_layers) {
        q8_sb_puts(b, "No INT8 layers.\n");
        return;
    }
    q8_sb_puts(
        b,
        "SQNR of each INT8 layer's output against the FP32 model's value of the same "
        "tensor on the same inputs (higher is better; 'alone': the layer fed with FP32 "
        "values, so only its own error). Sorted by SQNR in the model, most damaged first.\n\n");
    q8_sb_puts(b, "| # | node | op | SQNR in model | SQNR alone | sparsity | weight scales | "
                  "output scale |\n|---:|---|---|---:|---:|---:|---|---:|\n");
    for (int i = 0; i < m->n_layers; i++) {
        const q8_report_layer *L = &m->layers[i];
        char s1[32], s2[32];
        q8_sb_printf(b, "| %d | `", i + 1);
        q8_sb_md(b, L->node);
        q8_sb_printf(b, "` | %s | %s | %s | ", L->op,
                     q8_fmt_db(q8_err_sqnr_db(&L->in_model), s1, sizeof s1),
                     q8_fmt_db(q8_err_sqnr_db(&L->alone), s2, sizeof s2));
        if (L->sparsity >= 0) q8_sb_printf(b, "%.1f%%", 100 * L->sparsity);
        else q8_sb_puts(b, "-");
        if (L->w_scale_min >= 0) q8_sb_printf(b, " | %.3g .. %.3g", L->w_scale_min, L->w_scale_max);
        else q8_sb_puts(b, " | -");
        if (L->out_scale > 0) q8_sb_printf(b, " | %.4g |\n", L->out_scale);
        else q8_sb_puts(b, " | float |\n");
    }
    const q8_report_layer *pick[3];
    int np = q8_report_causes(m, pick, 3);
    for (int i = 0; i < np; i++) {
        char s[32];
        q8_sb_puts(b, i ? ", `" : "\nWhere the error comes from (lowest SQNR alone): `");
        q8_sb_md(b, pick[i]->node);
        q8_sb_printf(b, "` (%s)", q8_fmt_db(q8_err_sqnr_db(&pick[i]->alone), s, sizeof s));
        if (i + 1 == np) q8_sb_puts(b, ".\n");
    }
}

q8_status q8_report_markdown(const q8_report *r, char **out, q8_error *err) {
    q8_sbuf b = {0};
    const q8_report_model *f = &r->models[0];
    q8_sb_puts(&b, "# q8 report: ");
    q8_sb_md(&b, q8_report_basename(f->path));
    q8_sb_puts(&b, "\n\nData: `");
    q8_sb_md(&b, r->data_dir);
    q8_sb_printf(&b, "`, %d sample file%s", r->n_samples, r->n_samples == 1 ? "" : "s");
    if (f->rows) {
        q8_sb_printf(&b, ", %lld rows of scores", (long long)f->rows);
        if (r->n_models > 1 && r->models[1].n_outputs) {
            q8_sb_puts(&b, " in `");
            q8_sb_md(&b, r->models[1].outputs[0].name);
            q8_sb_puts(&b, "`");
        }
    }
    if (r->labels_path) {
        q8_sb_puts(&b, "; labels `");
        q8_sb_md(&b, r->labels_path);
        q8_sb_puts(&b, "`");
    }
    q8_sb_printf(&b, ". Latency and memory on %s (%d thread%s, median of %d runs on the first "
                 "sample, each model in its own process); accuracy on the CPU. Created %s.\n\n",
                 r->device == Q8_DEVICE_CUDA ? "CUDA" : "the CPU", r->n_threads,
                 r->n_threads == 1 ? "" : "s", r->runs, r->created);
    q8_sb_puts(&b, "| | ");
    for (int i = 0; i < r->n_models; i++) {
        q8_sb_md(&b, q8_report_basename(r->models[i].path));
        q8_sb_puts(&b, i ? (i + 1 < r->n_models ? " | " : " |") : " (FP32) | ");
    }
    q8_sb_puts(&b, "\n|---|");
    for (int i = 0; i < r->n_models; i++) q8_sb_puts(&b, "---:|");
    q8_sb_puts(&b, "\n");
    bytes_row(&b, r, "file size", f_file);
    bytes_row(&b, r, "weights", f_weights);
    bytes_row(&b, r, "activation arena (planned)", f_arena);
    bytes_row(&b, r, "peak host memory (VmHWM)", f_rss);
    if (r->device == Q8_DEVICE_CUDA) bytes_row(&b, r, "device memory", f_device);
    q8_sb_puts(&b, "| latency, median (min .. max) |");
    for (int i = 0; i < r->n_models; i++) {
        const q8_report_latency *l = &r->models[i].cost.lat;
        char s1[32], s2[32], s3[32];
        q8_sb_printf(&b, " %s (%s .. %s)", q8_fmt_ms(l->median_ms, s1, sizeof s1),
                     q8_fmt_ms(l->min_ms, s2, sizeof s2), q8_fmt_ms(l->max_ms, s3, sizeof s3));
        if (i) cell_ratio(&b, q8_report_delta_of(f, &r->models[i]).latency_ratio);
        q8_sb_puts(&b, " |");
    }
    q8_sb_puts(&b, "\n");
    if (r->labels_path) {
        q8_sb_puts(&b, "| top-1 vs labels |");
        for (int i = 0; i < r->n_models; i++) {
            double t = q8_report_top1(&r->models[i]);
            if (t < 0) q8_sb_puts(&b, " n/a |");
            else if (i == 0) q8_sb_printf(&b, " %.2f%% |", 100 * t);
            else {
                double d = -q8_report_delta_of(f, &r->models[i]).top1_drop_points;
                q8_sb_printf(&b, " %.2f%% (%+.2f points) |", 100 * t, fabs(d) < 5e-5 ? 0.0 : d);
            }
        }
        q8_sb_puts(&b, "\n");
    }
    const char *agree_label = q8_agree_kind_label(r->models[1].agree_kind);
    if (agree_label) {
        q8_sb_printf(&b, "| %s | - |", agree_label);
        for (int i = 1; i < r->n_models; i++) {
            double a = q8_report_agreement(&r->models[i]);
            if (a < 0) q8_sb_puts(&b, " n/a |");
            else if (r->models[i].agree_kind == Q8_AGREE_MASK) q8_sb_printf(&b, " %.4f |", a);
            else q8_sb_printf(&b, " %.2f%% |", 100 * a);
        }
        q8_sb_puts(&b, "\n");
    }
    for (int o = 0; o < r->models[1].n_outputs; o++) {
        q8_sb_puts(&b, "| output `");
        q8_sb_md(&b, r->models[1].outputs[o].name);
        q8_sb_puts(&b, "`: cosine / max abs error / SQNR | - |");
        for (int i = 1; i < r->n_models; i++) {
            if (o >= r->models[i].n_outputs) {
                q8_sb_puts(&b, " n/a |");
                continue;
            }
            const q8_err_stats *s = &r->models[i].outputs[o].err;
            char db[32];
            q8_sb_printf(&b, " %.6f / %.4g / %s |", q8_err_cosine(s), s->max_abs,
                         q8_fmt_db(q8_err_sqnr_db(s), db, sizeof db));
        }
        q8_sb_puts(&b, "\n");
        detail_row_md(&b, r, o);
    }
    for (int i = 1; i < r->n_models; i++) layers_md(&b, &r->models[i]);
    return q8_sb_finish(&b, out, err);
}
