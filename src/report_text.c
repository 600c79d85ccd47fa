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
    return m->agree >= 0 && m->rows > 0 ? (double)m->agree / (double)m->rows : -1;
}

const char *q8_report_basename(const char *path) {
    const char *s = strrchr(path, '/');
    return s && s[1] ? s + 1 : path;
}
