/* report.html: one self-contained page (inline CSS and SVG; no scripts,
 * fonts, images or links to load). Top: the answers (smaller? less memory?
 * faster? accuracy lost, and where); then the cost charts and the full
 * table; then, per quantized model, the per-layer SQNR plot (execution
 * order) and the layer table sorted most damaged first. */
#include <math.h>
#include <string.h>

#include "report_text.h"

static const char *const css =
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;"
    "color:#1f2328;background:#fff;margin:0}\n"
    "main{max-width:1180px;margin:0 auto;padding:20px 32px 48px}\n"
    "h1{font-size:22px;margin:0 0 4px}\n"
    "h2{font-size:17px;margin:30px 0 8px;padding-bottom:4px;border-bottom:1px solid #d0d7de}\n"
    "h3{font-size:15px;margin:18px 0 6px}\n"
    "p{margin:6px 0}\n"
    ".meta,.note{color:#57606a}\n"
    ".note{font-size:13px}\n"
    "table{border-collapse:collapse;width:100%;font-size:13px}\n"
    "th,td{padding:5px 7px;border-bottom:1px solid #e5e7eb;text-align:left;vertical-align:top}\n"
    "th{background:#f6f8fa;font-weight:600}\n"
    ".num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
    ".big{font-size:16px;font-weight:600;white-space:nowrap}\n"
    ".sub{color:#57606a;font-size:12px}\n"
    ".good{color:#1a7f37}.bad{color:#cf222e}.flat{color:#57606a}\n"
    ".charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(330px,1fr));gap:14px;"
    "margin-top:8px}\n"
    "figure{margin:0;border:1px solid #d0d7de;border-radius:6px;padding:8px 10px}\n"
    "figcaption{font-weight:600;margin-bottom:2px}\n"
    "figure.wide{margin-top:8px}\n"
    "svg{display:block;width:100%;height:auto}\n"
    "svg text{font-size:11px;fill:#1f2328}\n"
    "code{font:12px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;word-break:break-all}\n"
    "pre{background:#f6f8fa;padding:8px 10px;border-radius:6px;overflow-x:auto}\n"
    ".warn{background:#fff8c5;border:1px solid #d4a72c;padding:6px 10px;border-radius:6px}\n"
    ".key{display:inline-block;width:10px;height:10px;border-radius:2px;margin:0 4px 0 10px;"
    "vertical-align:-1px}\n"
    "tr.hl td{background:#fff5f5}\n"
    ".scroll{overflow-x:auto}\n"
    "code.wrap{word-break:normal;overflow-wrap:normal}\n"
    "td code.node{white-space:nowrap;word-break:normal}\n";

#define C_FP32 "#8c959f"
#define C_INT8 "#0969da"
#define C_FP32_2 "#d0d7de"
#define C_INT8_2 "#9ecbff"
#define C_RED "#cf222e"
#define C_AMBER "#d4a72c"
#define C_GREEN "#2da44e"

static const char *sqnr_color(double db) {
    return isnan(db) ? C_FP32 : db < 20 ? C_RED : db < 30 ? C_AMBER : C_GREEN;
}

/* Shorten a label to max characters, keeping its tail (node names say the
 * most at their end). */
static void tail_label(const char *s, int max, char *out, size_t n) {
    size_t len = strlen(s);
    if ((int)len <= max) snprintf(out, n, "%s", s);
    else snprintf(out, n, "...%s", s + len - (size_t)(max - 3));
}

static void head_label(const char *s, int max, char *out, size_t n) {
    size_t len = strlen(s);
    if ((int)len <= max) snprintf(out, n, "%s", s);
    else snprintf(out, n, "%.*s...", max - 3, s);
}

/* A node name that may wrap after each '/' (not inside a word). */
static void html_name(q8_sbuf *b, const char *s) {
    char one[2] = {0};
    for (; *s; s++) {
        one[0] = *s;
        q8_sb_html(b, one);
        if (*s == '/' && s[1]) q8_sb_puts(b, "<wbr>");
    }
}

/* ---- the cost charts: one row per model, one or two bars per row ---- */

typedef struct hb_row {
    const char *label;
    bool quantized;
    double v[2];            /* NaN: no bar */
    double lo, hi;          /* whisker around v[0], or NaN */
    char text[2][48];
} hb_row;

static void hbar_chart(q8_sbuf *b, const char *title, const char *const *series, int ns,
                       const hb_row *rows, int nr) {
    const double W = 380, label_w = 112, text_w = 84, bar_h = 13, gap = 3, group_gap = 10;
    double top = ns > 1 ? 22 : 6;
    double H = top + nr * (ns * (bar_h + gap) - gap + group_gap) + 4;
    double mx = 0;
    for (int i = 0; i < nr; i++)
        for (int k = 0; k < ns; k++) {
            if (isfinite(rows[i].v[k]) && rows[i].v[k] > mx) mx = rows[i].v[k];
            if (k == 0 && isfinite(rows[i].hi) && rows[i].hi > mx) mx = rows[i].hi;
        }
    double x0 = label_w, span = W - label_w - text_w;
    q8_sb_printf(b, "<figure><figcaption>%s</figcaption>\n", title);
    q8_sb_printf(b, "<svg viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"", W, H);
    q8_sb_html(b, title);
    q8_sb_puts(b, "\">\n");
    if (ns > 1) {
        q8_sb_printf(b, "<rect x=\"%.0f\" y=\"4\" width=\"10\" height=\"10\" fill=\"" C_INT8 "\"/>"
                        "<text x=\"%.0f\" y=\"13\">%s</text>\n", x0, x0 + 14, series[0]);
        double x1 = x0 + 14 + 6.5 * (double)strlen(series[0]) + 18;
        q8_sb_printf(b,
                     "<rect x=\"%.0f\" y=\"4\" width=\"10\" height=\"10\" fill=\"" C_INT8_2 "\"/>"
                     "<text x=\"%.0f\" y=\"13\">%s</text>\n",
                     x1, x1 + 14, series[1]);
    }
    double y = top;
    for (int i = 0; i < nr; i++) {
        const hb_row *r = &rows[i];
        char lab[64];
        head_label(r->label, 18, lab, sizeof lab);
        double gh = ns * (bar_h + gap) - gap;
        q8_sb_printf(b, "<g><title>");
        q8_sb_html(b, r->label);
        q8_sb_printf(b, "</title><text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">", x0 - 6,
                     y + gh / 2 + 4);
        q8_sb_html(b, lab);
        q8_sb_puts(b, "</text>\n");
        for (int k = 0; k < ns; k++) {
            double by = y + k * (bar_h + gap);
            double v = r->v[k];
            double w = isfinite(v) && mx > 0 ? v / mx * span : 0;
            const char *fill =
                k == 0 ? (r->quantized ? C_INT8 : C_FP32) : (r->quantized ? C_INT8_2 : C_FP32_2);
            if (isfinite(v))
                q8_sb_printf(
                    b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.0f\" fill=\"%s\"/>",
                    x0, by, w < 1 ? 1 : w, bar_h, fill);
            double tx = x0 + w + 4;
            if (k == 0 && isfinite(r->lo) && isfinite(r->hi) && mx > 0) {
                double a = x0 + r->lo / mx * span, c = x0 + r->hi / mx * span, m = by + bar_h / 2;
                q8_sb_printf(b, "<path d=\"M%.1f %.1fH%.1fM%.1f %.1fV%.1fM%.1f %.1fV%.1f\" "
                                "stroke=\"#1f2328\" stroke-width=\"1\"/>",
                             a, m, c, a, m - 4, m + 4, c, m - 4, m + 4);
                if (c + 4 > tx) tx = c + 4;
            }
            q8_sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\">", tx, by + bar_h - 3);
            q8_sb_html(b, r->text[k]);
            q8_sb_puts(b, "</text>\n");
        }
        q8_sb_puts(b, "</g>\n");
        y += gh + group_gap;
    }
    q8_sb_puts(b, "</svg></figure>\n");
}

/* ---- words for ratios ---- */

/* "2.87x smaller" / "1.05x larger" / "about the same" with a class. */
static void ratio_words(q8_sbuf *b, double ratio, const char *less, const char *more) {
    char s[32];
    if (isnan(ratio) || ratio <= 0) {
        q8_sb_puts(b, "<span class=\"big flat\">n/a</span>");
    } else if (ratio < 0.97) {
        q8_sb_printf(b, "<span class=\"big good\">%sx %s</span>",
                     q8_fmt_sig(1 / ratio, s, sizeof s), less);
    } else if (ratio > 1.03) {
        q8_sb_printf(b, "<span class=\"big bad\">%sx %s</span>", q8_fmt_sig(ratio, s, sizeof s),
                     more);
    } else {
        q8_sb_puts(b, "<span class=\"big flat\">about the same</span>");
    }
}

static double no_neg_zero(double v) { return fabs(v) < 5e-5 ? 0.0 : v; }

static void answers(q8_sbuf *b, const q8_report *r) {
    const q8_report_model *f = &r->models[0];
    char s1[32], s2[32], s3[32], s4[32];
    q8_sb_puts(b, "<h2>The answers</h2>\n<table>\n<tr><th>quantized model</th><th>size</th>"
                  "<th>peak memory</th><th>latency</th><th>accuracy against FP32 (change: + gained, &minus; lost)</th>"
                  "<th>where: most damaged layer outputs</th></tr>\n");
    for (int i = 1; i < r->n_models; i++) {
        const q8_report_model *q = &r->models[i];
        q8_report_delta d = q8_report_delta_of(f, q);
        q8_sb_puts(b, "<tr><td><code class=\"node\">");
        q8_sb_html(b, q8_report_basename(q->path));
        q8_sb_puts(b, "</code></td><td>");
        ratio_words(b, d.size_ratio, "smaller", "larger");
        q8_sb_printf(b, "<br><span class=\"sub\">file %s &rarr; %s</span></td><td>",
                     q8_fmt_bytes((double)f->cost.file_bytes, s1, sizeof s1),
                     q8_fmt_bytes((double)q->cost.file_bytes, s2, sizeof s2));
        ratio_words(b, r->device == Q8_DEVICE_CUDA ? d.device_ratio : d.peak_rss_ratio, "less",
                    "more");
        if (r->device == Q8_DEVICE_CUDA)
            q8_sb_printf(b, "<br><span class=\"sub\">device %s &rarr; %s</span>",
                         q8_fmt_bytes((double)f->cost.device_bytes, s1, sizeof s1),
                         q8_fmt_bytes((double)q->cost.device_bytes, s2, sizeof s2));
        q8_sb_printf(b, "<br><span class=\"sub\">peak host %s &rarr; %s<br>weights %s &rarr; %s"
                        "</span></td><td>",
                     q8_fmt_bytes((double)f->cost.peak_rss_bytes, s1, sizeof s1),
                     q8_fmt_bytes((double)q->cost.peak_rss_bytes, s2, sizeof s2),
                     q8_fmt_bytes((double)f->cost.weights_bytes, s3, sizeof s3),
                     q8_fmt_bytes((double)q->cost.weights_bytes, s4, sizeof s4));
        ratio_words(b, d.latency_ratio, "faster", "slower");
        q8_sb_printf(b, "<br><span class=\"sub\">median %s &rarr; %s</span></td><td>",
                     q8_fmt_ms(f->cost.lat.median_ms, s1, sizeof s1),
                     q8_fmt_ms(q->cost.lat.median_ms, s2, sizeof s2));
        /* output error first: it fits every model; then top-1 with its sign,
         * then the agreement measure that fits output 0 */
        double sq = q8_report_worst_output_sqnr(q), cs = q8_report_worst_output_cosine(q);
        q8_sb_printf(b, "<span class=\"big %s\">SQNR %s</span><br><span class=\"sub\">"
                        "cosine %.5f (worst output)</span>",
                     isnan(sq) ? "flat" : sq < 20 ? "bad" : sq < 30 ? "flat" : "good",
                     q8_fmt_db(sq, s3, sizeof s3), cs);
        for (int j = 0; j < q->n_outputs; j++) {
            bool sample, chan;
            if (!q8_report_output_hides(q, j, &sample, &chan)) continue;
            q8_report_output shown = q->outputs[j];
            if (!sample) shown.worst_sample = -1;
            if (!chan) shown.channel_axis = -1;
            q8_sb_puts(b, "<br><span class=\"bad\">output <code>");
            q8_sb_html(b, shown.name);
            q8_sb_puts(b, "</code>:</span> <span class=\"sub\">");
            q8_report_output_detail(b, &shown, true);
            q8_sb_puts(b, "</span>");
        }
        if (!isnan(d.top1_drop_points)) {
            double change = no_neg_zero(-d.top1_drop_points);
            q8_sb_printf(b, "<br><span class=\"%s\">top-1 %+.2f points</span> <span "
                            "class=\"sub\">(%.2f%% &rarr; %.2f%%)</span>",
                         change < -0.5 ? "bad" : change < 0 ? "flat" : "good", change,
                         100 * q8_report_top1(f), 100 * q8_report_top1(q));
        }
        if (!isnan(d.agreement)) {
            bool iou = q->agree_kind == Q8_AGREE_MASK;
            q8_sb_printf(b, "<br><span class=\"sub\">%s ", q8_agree_kind_label(q->agree_kind));
            if (iou) q8_sb_printf(b, "%.4f</span>", d.agreement);
            else q8_sb_printf(b, "%.2f%%</span>", 100 * d.agreement);
        }
        q8_sb_puts(b, "</td><td>");
        for (int k = 0; k < q->n_layers && k < 3; k++) {
            q8_sb_printf(b, "<span class=\"sub\">%s</span> <code class=\"wrap\">",
                         q8_fmt_db(q8_err_sqnr_db(&q->layers[k].in_model), s1, sizeof s1));
            html_name(b, q->layers[k].node);
            q8_sb_puts(b, "</code><br>");
        }
        if (!q->n_layers) q8_sb_puts(b, "no INT8 layers");
        q8_sb_puts(b, "</td></tr>\n");
    }
    q8_sb_puts(b, "</table>\n");
    q8_sb_puts(b,
               "<p class=\"note\">Ratios are the quantized model against the FP32 one. SQNR "
               "and cosine are the worst over the outputs (higher is better: 30 dB means noise "
               "~3% of the signal's amplitude). Top-1 is against the labels, its change in "
               "percentage points with a sign (&minus; lost). The agreement measure fits output "
               "0: top-1 agreement for class scores, per-pixel class agreement for N,C,H,W "
               "class maps, mask IoU at 0.5 for a one-channel map in [0, 1]; none for other "
               "outputs (images: channels that move together). An output named in red: its one SQNR "
               "hides a sample, or a median channel, 6 dB or more below it (all numbers: the table "
               "below). Layers: see the per-layer sections below.</p>\n");
}

static void cost_charts(q8_sbuf *b, const q8_report *r) {
    int n = r->n_models;
    hb_row *rows = calloc((size_t)n, sizeof *rows);
    if (!rows) {
        b->oom = true;
        return;
    }
    q8_sb_puts(b, "<h2>Size, memory and latency</h2>\n<div class=\"charts\">\n");
    for (int i = 0; i < n; i++) {
        const q8_report_cost *c = &r->models[i].cost;
        rows[i] = (hb_row){.label = q8_report_basename(r->models[i].path),
                           .quantized = r->models[i].quantized, .lo = NAN, .hi = NAN};
        rows[i].v[0] = (double)c->file_bytes;
        rows[i].v[1] = (double)c->weights_bytes;
        q8_fmt_bytes((double)c->file_bytes, rows[i].text[0], sizeof rows[i].text[0]);
        q8_fmt_bytes((double)c->weights_bytes, rows[i].text[1], sizeof rows[i].text[1]);
    }
    static const char *const size_s[] = {"file", "weights in memory"};
    hbar_chart(b, "Size", size_s, 2, rows, n);
    for (int i = 0; i < n; i++) {
        const q8_report_cost *c = &r->models[i].cost;
        bool cuda = r->device == Q8_DEVICE_CUDA;
        rows[i].v[0] = (double)(cuda ? c->device_bytes : c->peak_rss_bytes);
        rows[i].v[1] = (double)c->arena_bytes;
        q8_fmt_bytes(rows[i].v[0], rows[i].text[0], sizeof rows[i].text[0]);
        q8_fmt_bytes(rows[i].v[1], rows[i].text[1], sizeof rows[i].text[1]);
    }
    static const char *const mem_s[] = {"peak host memory", "activation arena"};
    static const char *const dev_s[] = {"device memory", "activation arena"};
    hbar_chart(b, r->device == Q8_DEVICE_CUDA ? "Device memory" : "Memory",
               r->device == Q8_DEVICE_CUDA ? dev_s : mem_s, 2, rows, n);
    for (int i = 0; i < n; i++) {
        const q8_report_latency *l = &r->models[i].cost.lat;
        rows[i].v[0] = l->median_ms;
        rows[i].v[1] = NAN;
        rows[i].lo = l->min_ms;
        rows[i].hi = l->max_ms;
        q8_fmt_ms(l->median_ms, rows[i].text[0], sizeof rows[i].text[0]);
    }
    static const char *const lat_s[] = {"median"};
    hbar_chart(b, "Latency (median; whisker: min to max)", lat_s, 1, rows, n);
    q8_sb_puts(b, "</div>\n");
    free(rows);
}

static void td_bytes(q8_sbuf *b, double v, double base, bool show_ratio) {
    char s[32], t[32];
    q8_sb_printf(b, "<td class=\"num\">%s", q8_fmt_bytes(v, s, sizeof s));
    if (show_ratio && base > 0)
        q8_sb_printf(b, " <span class=\"sub\">(%sx)</span>", q8_fmt_sig(v / base, t, sizeof t));
    q8_sb_puts(b, "</td>");
}

/* The byte counts of the full table, by row. */
static size_t cost_row(const q8_report_cost *c, int row) {
    switch (row) {
    case 0: return c->file_bytes;
    case 1: return c->weights_bytes;
    case 2: return c->arena_bytes;
    case 3: return c->peak_rss_bytes;
    default: return c->device_bytes;
    }
}

/* Output o's worst sample and channels, one row, when some model has them. */
static void detail_row_html(q8_sbuf *b, const q8_report *r, int o) {
    if (!q8_report_any_output_detail(r, o)) return;
    q8_sb_puts(b, "<tr><td>output <code>");
    q8_sb_html(b, r->models[1].outputs[o].name);
    q8_sb_puts(b, "</code>: SQNR of the worst sample, per channel</td><td class=\"num\">-</td>");
    for (int i = 1; i < r->n_models; i++) {
        q8_sb_puts(b, "<td>");
        if (o >= r->models[i].n_outputs ||
            !q8_report_output_detail(b, &r->models[i].outputs[o], true))
            q8_sb_puts(b, "n/a");
        q8_sb_puts(b, "</td>");
    }
    q8_sb_puts(b, "</tr>\n");
}

static void full_table(q8_sbuf *b, const q8_report *r) {
    const q8_report_model *f = &r->models[0];
    char s1[32], s2[32], s3[32];
    q8_sb_puts(b, "<h3>All numbers</h3>\n<table>\n<tr><th></th>");
    for (int i = 0; i < r->n_models; i++) {
        q8_sb_puts(b, "<th class=\"num\"><code>");
        q8_sb_html(b, q8_report_basename(r->models[i].path));
        q8_sb_printf(b, "</code>%s</th>", i ? "" : " (FP32)");
    }
    q8_sb_puts(b, "</tr>\n");
    const char *labels[] = {"file size", "weights in memory", "activation arena (planned)",
                            "peak host memory (VmHWM)", "device memory"};
    for (int row = 0; row < 5; row++) {
        if (row == 4 && r->device != Q8_DEVICE_CUDA) continue;
        q8_sb_printf(b, "<tr><td>%s</td>", labels[row]);
        for (int i = 0; i < r->n_models; i++) {
            const q8_report_cost *c = &r->models[i].cost, *c0 = &f->cost;
            td_bytes(b, (double)cost_row(c, row), (double)cost_row(c0, row), i > 0);
        }
        q8_sb_puts(b, "</tr>\n");
    }
    q8_sb_puts(b, "<tr><td>latency, median (min .. max)</td>");
    for (int i = 0; i < r->n_models; i++) {
        const q8_report_latency *l = &r->models[i].cost.lat;
        q8_sb_printf(b, "<td class=\"num\">%s <span class=\"sub\">(%s .. %s)</span></td>",
                     q8_fmt_ms(l->median_ms, s1, sizeof s1), q8_fmt_ms(l->min_ms, s2, sizeof s2),
                     q8_fmt_ms(l->max_ms, s3, sizeof s3));
    }
    q8_sb_puts(b, "</tr>\n");
    if (r->labels_path) {
        q8_sb_puts(b, "<tr><td>top-1 vs labels</td>");
        for (int i = 0; i < r->n_models; i++) {
            double t = q8_report_top1(&r->models[i]);
            if (t < 0) q8_sb_puts(b, "<td class=\"num\">n/a</td>");
            else
                q8_sb_printf(
                    b, "<td class=\"num\">%.2f%% <span class=\"sub\">(%lld of %lld)</span></td>",
                    100 * t, (long long)r->models[i].top1_hits, (long long)r->models[i].rows);
        }
        q8_sb_puts(b, "</tr>\n");
    }
    const char *agree_label = q8_agree_kind_label(r->models[1].agree_kind);
    if (agree_label) {
        q8_sb_printf(b, "<tr><td>%s</td><td class=\"num\">-</td>", agree_label);
        for (int i = 1; i < r->n_models; i++) {
            const q8_report_model *q = &r->models[i];
            double a = q8_report_agreement(q);
            if (a < 0) q8_sb_puts(b, "<td class=\"num\">n/a</td>");
            else if (q->agree_kind == Q8_AGREE_MASK)
                q8_sb_printf(b, "<td class=\"num\">%.4f <span class=\"sub\">(%lld of %lld "
                                "pixels)</span></td>", a, (long long)q->agree,
                             (long long)q->agree_of);
            else
                q8_sb_printf(b, "<td class=\"num\">%.2f%% <span class=\"sub\">(%lld of "
                                "%lld)</span></td>", 100 * a, (long long)q->agree,
                             (long long)q->agree_of);
        }
        q8_sb_puts(b, "</tr>\n");
    }
    for (int o = 0; o < r->models[1].n_outputs; o++) {
        q8_sb_puts(b, "<tr><td>output <code>");
        q8_sb_html(b, r->models[1].outputs[o].name);
        q8_sb_puts(b, "</code>: SQNR, cosine, max abs error</td><td class=\"num\">-</td>");
        for (int i = 1; i < r->n_models; i++) {
            if (o >= r->models[i].n_outputs) {
                q8_sb_puts(b, "<td class=\"num\">n/a</td>");
                continue;
            }
            const q8_err_stats *s = &r->models[i].outputs[o].err;
            q8_sb_printf(b, "<td class=\"num\">%s, %.5f, %.4g</td>",
                         q8_fmt_db(q8_err_sqnr_db(s), s1, sizeof s1), q8_err_cosine(s), s->max_abs);
        }
        q8_sb_puts(b, "</tr>\n");
        detail_row_html(b, r, o);
    }
    q8_sb_puts(b, "</table>\n");
}

/* ---- per layer ---- */

static void layer_plot(q8_sbuf *b, const q8_report_model *m) {
    int n = m->n_layers;
    const q8_report_layer **byidx = calloc((size_t)n + 1, sizeof *byidx);
    if (!byidx) {
        b->oom = true;
        return;
    }
    for (int i = 0; i < n; i++)
        if (m->layers[i].index >= 0 && m->layers[i].index < n)
            byidx[m->layers[i].index] = &m->layers[i];
    double mx = 40;
    for (int i = 0; i < n; i++) {
        double a = q8_err_sqnr_db(&m->layers[i].in_model), c = q8_err_sqnr_db(&m->layers[i].alone);
        if (isfinite(a) && a > mx) mx = a;
        if (isfinite(c) && c > mx) mx = c;
    }
    mx = ceil(mx / 10) * 10;
    const double W = 1000, label_w = 300, right = 150, row_h = 16, top = 26, bottom = 26;
    const double col_a = W - 80, col_c = W - 6;
    double H = top + n * row_h + bottom, span = W - label_w - right;
    q8_sb_puts(b, "<figure class=\"wide\"><figcaption>SQNR of each INT8 layer, in execution order "
                  "(higher is better)</figcaption>\n");
    q8_sb_printf(b, "<svg viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"per-layer SQNR\">\n",
                 W, H);
    /* legend and column heads */
    q8_sb_printf(b, "<rect x=\"%.0f\" y=\"6\" width=\"10\" height=\"10\" fill=\"" C_RED "\"/>"
                    "<text x=\"%.0f\" y=\"15\">&lt; 20 dB</text>", label_w, label_w + 14);
    q8_sb_printf(b, "<rect x=\"%.0f\" y=\"6\" width=\"10\" height=\"10\" fill=\"" C_AMBER "\"/>"
                    "<text x=\"%.0f\" y=\"15\">20 to 30 dB</text>", label_w + 70, label_w + 84);
    q8_sb_printf(b, "<rect x=\"%.0f\" y=\"6\" width=\"10\" height=\"10\" fill=\"" C_GREEN "\"/>"
                    "<text x=\"%.0f\" y=\"15\">&#8805; 30 dB</text>", label_w + 160, label_w + 174);
    q8_sb_printf(b, "<text x=\"%.0f\" y=\"15\">bar: in the model</text>"
                    "<path d=\"M%.0f 5v12\" stroke=\"#1f2328\" stroke-width=\"2.5\"/>"
                    "<text x=\"%.0f\" y=\"15\">tick: alone</text>\n",
                 label_w + 240, label_w + 350, label_w + 356);
    q8_sb_printf(b, "<text x=\"%.0f\" y=\"15\" text-anchor=\"end\" font-weight=\"600\">in the model"
                    "</text><text x=\"%.0f\" y=\"15\" text-anchor=\"end\" font-weight=\"600\">"
                    "alone</text>\n", col_a, col_c);
    /* grid */
    for (double db = 0; db <= mx + 1e-9; db += 10) {
        double x = label_w + db / mx * span;
        q8_sb_printf(b, "<path d=\"M%.1f %.0fV%.0f\" stroke=\"#d0d7de\" stroke-width=\"1\"/>"
                        "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%.0f dB</text>\n",
                     x, top - 4, top + n * row_h, x, top + n * row_h + 14, db);
    }
    for (int i = 0; i < n; i++) {
        const q8_report_layer *L = byidx[i];
        if (!L) continue;
        double y = top + i * row_h;
        double a = q8_err_sqnr_db(&L->in_model), c = q8_err_sqnr_db(&L->alone);
        char lab[96], s1[32], s2[32];
        tail_label(L->node, 46, lab, sizeof lab);
        q8_sb_puts(b, "<g><title>");
        q8_sb_html(b, L->node);
        q8_sb_printf(b, " (%s): in the model %s, alone %s</title>", L->op,
                     q8_fmt_db(a, s1, sizeof s1), q8_fmt_db(c, s2, sizeof s2));
        if (i % 2) q8_sb_printf(b, "<rect x=\"0\" y=\"%.1f\" width=\"%.0f\" height=\"%.0f\" "
                                   "fill=\"#f6f8fa\"/>", y, W, row_h);
        q8_sb_printf(b, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">", label_w - 6, y + 11.5);
        q8_sb_html(b, lab);
        q8_sb_puts(b, "</text>");
        double av = isfinite(a) ? a : a > 0 ? mx : 0, cv = isfinite(c) ? c : c > 0 ? mx : NAN;
        double w = av > 0 ? av / mx * span : 0;
        q8_sb_printf(b, "<rect x=\"%.0f\" y=\"%.1f\" width=\"%.1f\" height=\"%.0f\" fill=\"%s\"/>",
                     label_w, y + 3, w < 1 ? 1 : w, row_h - 6, sqnr_color(a));
        if (!isnan(cv) && cv >= 0)
            q8_sb_printf(b, "<path d=\"M%.1f %.1fv%.0f\" stroke=\"#1f2328\" stroke-width=\"2.5\"/>",
                         label_w + cv / mx * span, y + 1, row_h - 2);
        q8_sb_printf(b, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%s</text>"
                        "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%s</text></g>\n",
                     col_a, y + 11.5, q8_fmt_db(a, s1, sizeof s1), col_c, y + 11.5,
                     q8_fmt_db(c, s2, sizeof s2));
    }
    q8_sb_puts(b, "</svg></figure>\n");
    free(byidx);
}

static void layer_table(q8_sbuf *b, const q8_report_model *m) {
    char s1[32], s2[32];
    q8_sb_puts(b,
               "<div class=\"scroll\"><table>\n<tr><th class=\"num\">#</th><th>node</th><th>op</th>"
               "<th class=\"num\">SQNR in the model</th><th class=\"num\">SQNR alone</th>"
               "<th class=\"num\">cosine</th><th class=\"num\">max abs error</th>"
               "<th class=\"num\">sparsity</th><th class=\"num\">weight scales</th>"
               "<th class=\"num\">output scale</th></tr>\n");
    for (int i = 0; i < m->n_layers; i++) {
        const q8_report_layer *L = &m->layers[i];
        double a = q8_err_sqnr_db(&L->in_model);
        q8_sb_printf(b, "<tr%s><td class=\"num\">%d</td><td><code class=\"node\">",
                     a < 20 ? " class=\"hl\"" : "", i + 1);
        q8_sb_html(b, L->node);
        q8_sb_printf(b, "</code></td><td>%s</td>", L->op);
        q8_sb_printf(b, "<td class=\"num\" style=\"color:%s\">%s</td><td class=\"num\">%s</td>",
                     a < 20 ? C_RED : "inherit", q8_fmt_db(a, s1, sizeof s1),
                     q8_fmt_db(q8_err_sqnr_db(&L->alone), s2, sizeof s2));
        q8_sb_printf(b, "<td class=\"num\">%.5f</td><td class=\"num\">%.4g</td>",
                     q8_err_cosine(&L->in_model), L->in_model.max_abs);
        if (L->sparsity >= 0) q8_sb_printf(b, "<td class=\"num\">%.1f%%</td>", 100 * L->sparsity);
        else q8_sb_puts(b, "<td class=\"num\">-</td>");
        if (L->w_scale_min >= 0)
            q8_sb_printf(b, "<td class=\"num\">%.3g .. %.3g</td>", L->w_scale_min, L->w_scale_max);
        else q8_sb_puts(b, "<td class=\"num sub\">act x act</td>");
        if (L->out_scale > 0) q8_sb_printf(b, "<td class=\"num\">%.4g</td></tr>\n", L->out_scale);
        else q8_sb_puts(b, "<td class=\"num\">float</td></tr>\n");
    }
    q8_sb_puts(b, "</table></div>\n");
}

static void layers_section(q8_sbuf *b, const q8_report *r, const q8_report_model *m) {
    q8_sb_puts(b, "<h2>Per-layer error: <code>");
    q8_sb_html(b, q8_report_basename(m->path));
    q8_sb_puts(b, "</code></h2>\n<p class=\"note\">");
    q8_report_provenance(b, m, true);
    q8_sb_puts(b, "</p>\n");
    if (m->source_matches == 0)
        q8_sb_puts(b,
                   "<p class=\"warn\">This .q8 was quantized from a different ONNX file than the "
                   "FP32 model of this report (source.sha256 differs): layer names and numbers "
                   "may not correspond.</p>\n");
    (void)r;
    if (!m->n_layers) {
        q8_sb_puts(b, "<p>No INT8 layers.</p>\n");
        return;
    }
    q8_sb_puts(b,
               "<p class=\"note\">Each INT8 layer's output compared with the FP32 model's value of "
               "the same tensor on the same inputs: <b>in the model</b> carries the error of "
               "everything upstream; <b>alone</b> is the layer fed with the FP32 values, so its "
               "own error (quantization and pruning of that layer). The table lists the most "
               "damaged outputs first.</p>\n");
    layer_plot(b, m);
    layer_table(b, m);
    /* The causes: the lowest SQNR alone (a layer whose output is damaged
     * only by what it inherits is no candidate). */
    const q8_report_layer *pick[3];
    int np = q8_report_causes(m, pick, 3);
    if (!np) return;
    char s1[32];
    bool pruned = false;
    q8_sb_puts(b,
               "<p class=\"note\">Where the error comes from: the lowest SQNR <b>alone</b> is in ");
    for (int i = 0; i < np; i++) {
        q8_sb_puts(b, i == 0 ? "<code class=\"wrap\">" : i + 1 == np ? " and <code class=\"wrap\">"
                                                              : ", <code class=\"wrap\">");
        html_name(b, pick[i]->node);
        q8_sb_printf(b, "</code> (%s)", q8_fmt_db(q8_err_sqnr_db(&pick[i]->alone), s1, sizeof s1));
        pruned |= pick[i]->sparsity > 0;
    }
    q8_sb_puts(b, ": if the accuracy lost is too much, the layers to try first in FP32");
    if (pruned) q8_sb_puts(b, ", or unpruned with <code>--prune-skip</code> (they are pruned)");
    q8_sb_puts(b, ". <code>quantize --max-drop</code> runs this search for you.</p><pre><code>"
                  "quantize ... --fp32-layers ");
    for (int i = 0; i < np; i++) {
        if (i) q8_sb_puts(b, ",");
        q8_sb_html(b, pick[i]->node);
    }
    q8_sb_puts(b, "</code></pre>\n");
}

q8_status q8_report_html(const q8_report *r, char **out, q8_error *err) {
    q8_sbuf b = {0};
    const q8_report_model *f = &r->models[0];
    q8_sb_puts(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                   "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                   "<title>q8 report: ");
    q8_sb_html(&b, q8_report_basename(f->path));
    q8_sb_printf(&b, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<main>\n", css);
    q8_sb_puts(&b, "<h1>q8 report: <code>");
    q8_sb_html(&b, q8_report_basename(f->path));
    q8_sb_printf(&b, "</code> and %d quantized model%s</h1>\n<p class=\"meta\">FP32 model <code>",
                 r->n_models - 1, r->n_models == 2 ? "" : "s");
    q8_sb_html(&b, f->path);
    q8_sb_puts(&b, "</code>. Data <code>");
    q8_sb_html(&b, r->data_dir);
    q8_sb_printf(&b, "</code>: %d sample file%s", r->n_samples, r->n_samples == 1 ? "" : "s");
    if (f->rows) {
        q8_sb_printf(&b, ", %lld rows of scores", (long long)f->rows);
        if (r->n_models > 1 && r->models[1].n_outputs) {
            q8_sb_puts(&b, " in <code>");
            q8_sb_html(&b, r->models[1].outputs[0].name);
            q8_sb_puts(&b, "</code>");
        }
    }
    if (r->labels_path) {
        q8_sb_puts(&b, ", labels <code>");
        q8_sb_html(&b, r->labels_path);
        q8_sb_puts(&b, "</code>");
    }
    q8_sb_printf(&b,
                 ".<br>Latency and memory: %s, %d thread%s, median of %d runs on the first "
                 "sample, each model measured in its own process. Accuracy: CPU. Created %s.</p>\n",
                 r->device == Q8_DEVICE_CUDA ? "CUDA" : "CPU", r->n_threads,
                 r->n_threads == 1 ? "" : "s", r->runs, r->created);
    for (int i = 1; i < r->n_models; i++)
        if (r->models[i].source_matches == 0) {
            q8_sb_puts(&b, "<p class=\"warn\"><code>");
            q8_sb_html(&b, q8_report_basename(r->models[i].path));
            q8_sb_puts(&b, "</code> was quantized from a different ONNX file (its source.sha256 "
                           "differs from this FP32 model's).</p>\n");
        }
    answers(&b, r);
    cost_charts(&b, r);
    full_table(&b, r);
    for (int i = 1; i < r->n_models; i++) layers_section(&b, r, &r->models[i]);
    q8_sb_puts(&b, "<p class=\"note\">Made by q8report " Q8_VERSION_STRING
                   " (docs/reports.md explains every number). The same numbers are in the JSON "
                   "file next to this one.</p>\n</main>\n</body>\n</html>\n");
    return q8_sb_finish(&b, out, err);
}
