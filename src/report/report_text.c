#include "report_text.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

static bool reserve(q8_sbuf *b, size_t more) {
    if (b->oom) return false;
    if (b->len + more + 1 <= b->cap) return true;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + more + 1) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->oom = true;
        return false;
    }
    b->p = p;
    b->cap = cap;
    return true;
}

void q8_sb_printf(q8_sbuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0 || !reserve(b, (size_t)n)) return;
    if ((size_t)n < sizeof small) {
        memcpy(b->p + b->len, small, (size_t)n + 1);
    } else {
        va_start(ap, fmt);
        vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    b->len += (size_t)n;
}

void q8_sb_puts(q8_sbuf *b, const char *s) {
    size_t n = strlen(s);
    if (!reserve(b, n)) return;
    memcpy(b->p + b->len, s, n + 1);
    b->len += n;
}

void q8_sb_json_str(q8_sbuf *b, const char *s) {
    if (!s) {
        q8_sb_puts(b, "null");
        return;
    }
    q8_sb_puts(b, "\"");
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\') q8_sb_printf(b, "\\%c", *c);
        else if (*c < 0x20 || *c == 0x7f) q8_sb_printf(b, "\\u%04x", *c);
        else q8_sb_printf(b, "%c", *c);
    }
    q8_sb_puts(b, "\"");
}

void q8_sb_json_num(q8_sbuf *b, double v) {
    if (!isfinite(v)) q8_sb_puts(b, "null");
    else if (v == floor(v) && fabs(v) < 1e15) q8_sb_printf(b, "%.0f", v);
    else q8_sb_printf(b, "%.9g", v);
}

void q8_sb_html(q8_sbuf *b, const char *s) {
    for (const unsigned char *c = (const unsigned char *)s; c && *c; c++) {
        switch (*c) {
        case '&': q8_sb_puts(b, "&amp;"); break;
        case '<': q8_sb_puts(b, "&lt;"); break;
        case '>': q8_sb_puts(b, "&gt;"); break;
        case '"': q8_sb_puts(b, "&quot;"); break;
        case '\'': q8_sb_puts(b, "&#39;"); break;
        default:
            if (*c < 0x20 || *c == 0x7f) q8_sb_puts(b, "?");
            else q8_sb_printf(b, "%c", *c);
        }
    }
}

void q8_sb_md(q8_sbuf *b, const char *s) {
    for (const unsigned char *c = (const unsigned char *)s; c && *c; c++) {
        if (*c == '|') q8_sb_puts(b, "\\|");
        else if (*c == '`') continue;
        else if (*c < 0x20 || *c == 0x7f) q8_sb_puts(b, " ");
        else q8_sb_printf(b, "%c", *c);
    }
}

q8_status q8_sb_finish(q8_sbuf *b, char **out, q8_error *err) {
    if (!b->oom && !b->p) reserve(b, 0);
    if (b->oom) {
        free(b->p);
        memset(b, 0, sizeof *b);
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory writing the report");
    }
    b->p[b->len] = 0;
    *out = b->p;
    memset(b, 0, sizeof *b);
    return Q8_OK;
}

const char *q8_fmt_sig(double v, char *buf, size_t n) {
    if (!isfinite(v)) snprintf(buf, n, "n/a");
    else if (fabs(v) >= 100) snprintf(buf, n, "%.0f", v);
    else if (fabs(v) >= 10) snprintf(buf, n, "%.1f", v);
    else if (fabs(v) >= 1) snprintf(buf, n, "%.2f", v);
    else snprintf(buf, n, "%.3g", v);
    return buf;
}

const char *q8_fmt_bytes(double bytes, char *buf, size_t n) {
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024 && u < 4) {
        bytes /= 1024;
        u++;
    }
    char s[32];
    if (u == 0) snprintf(buf, n, "%.0f B", bytes);
    else snprintf(buf, n, "%s %s", q8_fmt_sig(bytes, s, sizeof s), unit[u]);
    return buf;
}

const char *q8_fmt_ms(double ms, char *buf, size_t n) {
    char s[32];
    if (isfinite(ms) && ms < 1)
        snprintf(buf, n, "%s \xc2\xb5s", q8_fmt_sig(ms * 1000, s, sizeof s));
    else snprintf(buf, n, "%s ms", q8_fmt_sig(ms, s, sizeof s));
    return buf;
}

const char *q8_fmt_db(double db, char *buf, size_t n) {
    if (isnan(db)) snprintf(buf, n, "n/a");
    else if (db == INFINITY) snprintf(buf, n, "exact");
    else if (db == -INFINITY) snprintf(buf, n, "-inf dB");
    else snprintf(buf, n, "%.1f dB", db);
    return buf;
}

static double ratio(double a, double b) { return b > 0 ? a / b : NAN; }

q8_report_delta q8_report_delta_of(const q8_report_model *f, const q8_report_model *q) {
    q8_report_delta d;
    d.size_ratio = ratio((double)q->cost.file_bytes, (double)f->cost.file_bytes);
    d.weights_ratio = ratio((double)q->cost.weights_bytes, (double)f->cost.weights_bytes);
    d.arena_ratio = ratio((double)q->cost.arena_bytes, (double)f->cost.arena_bytes);
    d.peak_rss_ratio = ratio((double)q->cost.peak_rss_bytes, (double)f->cost.peak_rss_bytes);
    d.device_ratio = ratio((double)q->cost.device_bytes, (double)f->cost.device_bytes);
    d.latency_ratio = ratio(q->cost.lat.median_ms, f->cost.lat.median_ms);
    double tf = q8_report_top1(f), tq = q8_report_top1(q);
    d.top1_drop_points = tf >= 0 && tq >= 0 ? (tf - tq) * 100 : NAN;
    double a = q8_report_agreement(q);
    d.agreement = a >= 0 ? a : NAN;
    d.disagree_points = a >= 0 ? (1 - a) * 100 : NAN;
    return d;
}

double q8_report_worst_output_sqnr(const q8_report_model *q) {
    double w = NAN;
    for (int i = 0; i < q->n_outputs; i++) {
        double s = q8_err_sqnr_db(&q->outputs[i].err);
        if (!isnan(s) && (isnan(w) || s < w)) w = s;
    }
    return w;
}

double q8_report_top1(const q8_report_model *m) {
    return m->top1_hits >= 0 && m->rows > 0 ? (double)m->top1_hits / (double)m->rows : -1;
}

double q8_report_agreement(const q8_report_model *m) {
    if (m->agree < 0) return -1;
    /* two empty masks are the same mask */
    if (m->agree_of == 0) return m->agree_kind == Q8_AGREE_MASK ? 1 : -1;
    return (double)m->agree / (double)m->agree_of;
}

const char *q8_agree_kind_label(q8_agree_kind k) {
    switch (k) {
    case Q8_AGREE_TOP1: return "top-1 agreement with FP32";
    case Q8_AGREE_PIXEL: return "per-pixel class agreement with FP32";
    case Q8_AGREE_MASK: return "mask IoU with FP32 (at 0.5)";
    default: return NULL;
    }
}

double q8_report_worst_output_cosine(const q8_report_model *q) {
    double w = NAN;
    for (int i = 0; i < q->n_outputs; i++) {
        double c = q8_err_cosine(&q->outputs[i].err);
        if (!isnan(c) && (isnan(w) || c < w)) w = c;
    }
    return w;
}

const char *q8_report_basename(const char *path) {
    const char *s = strrchr(path, '/');
    return s && s[1] ? s + 1 : path;
}

bool q8_report_output_detail(q8_sbuf *b, const q8_report_output *o, bool html) {
    char s1[32], s2[32];
    bool any = false;
    if (o->worst_sample >= 0) {
        q8_sb_printf(b, "worst sample %s (", q8_fmt_db(o->worst_sample_db, s1, sizeof s1));
        const char *p = o->worst_sample_path && *o->worst_sample_path
                            ? q8_report_basename(o->worst_sample_path) : NULL;
        if (p && html) q8_sb_html(b, p);
        else if (p) q8_sb_md(b, p);
        else q8_sb_printf(b, "sample %d", o->worst_sample + 1);
        q8_sb_puts(b, ")");
        any = true;
    }
    if (o->channel_axis >= 0 && o->channels_measured > 0) {
        q8_sb_printf(b, "%sper channel (%lld, axis %d", any ? "; " : "", (long long)o->channels,
                     o->channel_axis);
        if (o->channels_measured < o->channels)
            q8_sb_printf(b, "; %lld all 0 in FP32, left out",
                         (long long)(o->channels - o->channels_measured));
        q8_sb_printf(b, "): median %s, worst %s (channel %lld)",
                     q8_fmt_db(o->channel_median_db, s1, sizeof s1),
                     q8_fmt_db(o->channel_worst_db, s2, sizeof s2), (long long)o->channel_worst);
        any = true;
    }
    return any;
}

bool q8_report_output_hides(const q8_report_model *q, int j, bool *sample, bool *channel) {
    const q8_report_output *o = &q->outputs[j];
    double all = q8_err_sqnr_db(&o->err);
    bool classes = j == 0 && q->agree_kind != Q8_AGREE_NONE;
    /* an exact output (+inf) hides nothing */
    *sample = o->worst_sample >= 0 && isfinite(all) && o->worst_sample_db <= all - 6;
    *channel = !classes && o->channels_measured > 0 && isfinite(all) &&
               o->channel_median_db <= all - 6;
    return *sample || *channel;
}

bool q8_report_any_output_detail(const q8_report *r, int o) {
    for (int i = 1; i < r->n_models; i++)
        if (o < r->models[i].n_outputs && (r->models[i].outputs[o].worst_sample >= 0 ||
                                           r->models[i].outputs[o].channels_measured > 0))
            return true;
    return false;
}

int q8_report_causes(const q8_report_model *m, const q8_report_layer **out, int max) {
    int np = 0;
    while (np < max) {
        const q8_report_layer *best = NULL;
        for (int i = 0; i < m->n_layers; i++) {
            const q8_report_layer *L = &m->layers[i];
            double a = q8_err_sqnr_db(&L->alone);
            bool taken = false;
            for (int j = 0; j < np; j++) taken |= out[j] == L;
            if (!taken && !isnan(a) && (!best || a < q8_err_sqnr_db(&best->alone))) best = L;
        }
        if (!best) break;
        out[np++] = best;
    }
    return np;
}

static void name_item(q8_sbuf *b, const char *name, bool html) {
    q8_sb_puts(b, html ? "<code class=\"wrap\">" : "`");
    if (html) {
        char one[2] = {0};
        for (const char *c = name; *c; c++) { /* may wrap after each '/' */
            one[0] = *c;
            q8_sb_html(b, one);
            if (*c == '/' && c[1]) q8_sb_puts(b, "<wbr>");
        }
    } else {
        q8_sb_md(b, name);
    }
    q8_sb_puts(b, html ? "</code>" : "`");
}

void q8_report_provenance(q8_sbuf *b, const q8_report_model *m, bool html) {
    if (m->calib_method) {
        q8_sb_puts(b, "Calibration: ");
        name_item(b, m->calib_method, html);
        q8_sb_puts(b, ". ");
    }
    if (m->prune_mode && strcmp(m->prune_mode, "none"))
        q8_sb_printf(b, "Pruning: %s, %.0f%% of the weights. ",
                     !strcmp(m->prune_mode, "2:4") ? "2:4" : "unstructured",
                     100 * m->prune_fraction);
    else
        q8_sb_puts(b, "No pruning. ");
    if (m->n_fp32_layers) {
        q8_sb_printf(b, "Kept in FP32 (%d): ", m->n_fp32_layers);
        for (int i = 0; i < m->n_fp32_layers; i++) {
            if (i) q8_sb_puts(b, ", ");
            name_item(b, m->fp32_layers[i], html);
        }
        q8_sb_puts(b, ". ");
    } else {
        q8_sb_puts(b, "No layer kept in FP32. ");
    }
    if (m->search_trials > 0) {
        const char *c0 = html ? "<code>" : "`", *c1 = html ? "</code>" : "`";
        if (!isnan(m->search_min_sqnr) && m->search_auto)
            q8_sb_printf(b, "Made by %squantize%s's default search for layers to keep in FP32 "
                            "(%s--min-sqnr auto%s, aiming at %g dB within a byte budget; %s): "
                            "%.1f dB after %d trial%s, target %s. ", c0, c1, c0, c1,
                         m->search_min_sqnr, m->search_metric ? m->search_metric : "?",
                         m->search_sqnr, m->search_trials, m->search_trials == 1 ? "" : "s",
                         m->search_met ? "met" : "NOT met");
        else if (!isnan(m->search_min_sqnr))
            q8_sb_printf(b, "Made by %squantize --min-sqnr %g%s (%s): %.1f dB after %d trial%s, "
                            "target %s. ", c0, m->search_min_sqnr, c1,
                         m->search_metric ? m->search_metric : "?", m->search_sqnr,
                         m->search_trials, m->search_trials == 1 ? "" : "s",
                         m->search_met ? "met" : "NOT met");
        else
            q8_sb_printf(b, "Made by %squantize --max-drop %g%s (%s): drop %.2f points after %d "
                            "trial%s, target %s. ", c0, m->search_max_drop, c1,
                         m->search_metric ? m->search_metric : "?", m->search_drop,
                         m->search_trials, m->search_trials == 1 ? "" : "s",
                         m->search_met ? "met" : "NOT met");
        if (m->search_dense && *m->search_dense) {
            q8_sb_puts(b, "Pruning removed by the search from: ");
            char *list = q8_strdup(m->search_dense);
            int k = 0;
            for (char *t = list ? strtok(list, ",") : NULL; t; t = strtok(NULL, ","), k++) {
                if (k) q8_sb_puts(b, ", ");
                name_item(b, t, html);
            }
            free(list);
            q8_sb_puts(b, ".");
        }
    }
    if (!b->oom && b->len && b->p[b->len - 1] == ' ') b->p[--b->len] = 0;
}
