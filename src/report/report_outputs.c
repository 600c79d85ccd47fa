/* A graph output's error beyond one SQNR over everything: per sample (the
 * worst one) and per channel (median and worst), see q8_report_output. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "report_outputs.h"

/* fewer values a channel than this (over all samples): no per-channel SQNR */
#define MIN_VALUES_PER_CHANNEL 32
/* fewer values a sample than this: no worst sample */
#define MIN_VALUES_PER_SAMPLE 16

int q8_report_channel_axis(const q8_tensor *t) {
    if (!t || t->dtype != Q8_F32 || t->ndim < 2) return -1;
    const int64_t *d = t->dims;
    switch (t->ndim) {
    case 2:
    case 3: return d[t->ndim - 1] >= 2 ? t->ndim - 1 : -1; /* [N, C], [N, rows, fields] */
    case 4:
        if (d[3] == 1 && d[1] >= 8 && d[2] >= 8) return -1; /* one-channel N, H, W, 1 map */
        if (d[3] >= 2 && d[3] < d[1] && d[3] < d[2]) return 3; /* N, H, W, C */
        if (d[1] >= 2) return 1;                               /* ONNX's N, C, H, W */
        return d[3] >= 2 && d[3] <= 4 && d[3] < d[2] ? 3 : -1;  /* [N, 1, K, x y (z) score] */
    default: return d[1] >= 2 ? 1 : -1;
    }
}

void q8_output_acc_free(q8_output_acc *a) {
    free(a->ch);
    memset(a, 0, sizeof *a);
}

q8_status q8_output_acc_init(q8_output_acc *a, const q8_tensor *t, int n_samples,
                             q8_report_output *o, q8_error *err) {
    *a = (q8_output_acc){0};
    o->worst_sample_db = o->channel_median_db = o->channel_worst_db = NAN;
    o->worst_sample = -1;
    o->channel_worst = -1;
    /* one flag or score a sample: its relative error is noise near 0; one
     * sample: no other sample to hide */
    a->per_sample = q8_tensor_numel(t) >= MIN_VALUES_PER_SAMPLE && n_samples >= 2;
    o->channel_axis = q8_report_channel_axis(t);
    if (o->channel_axis < 0) return Q8_OK;
    int64_t n = q8_tensor_numel(t), c = t->dims[o->channel_axis];
    if (c < 2 || (n / c) * (int64_t)n_samples < MIN_VALUES_PER_CHANNEL) {
        o->channel_axis = -1;
        return Q8_OK;
    }
    a->channels = c;
    a->inner = 1;
    for (int i = o->channel_axis + 1; i < t->ndim; i++) a->inner *= t->dims[i];
    a->outer = n / (c * a->inner);
    if (!(a->ch = calloc((size_t)c, sizeof(q8_err_stats)))) {
        q8_output_acc_free(a);
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    }
    return Q8_OK;
}

void q8_output_acc_add(q8_output_acc *a, const float *ref, const float *q) {
    if (!a->ch) return;
    for (int64_t o = 0; o < a->outer; o++)
        for (int64_t c = 0; c < a->channels; c++) {
            int64_t at = (o * a->channels + c) * a->inner;
            q8_err_stats_f32(&a->ch[c], ref + at, q + at, a->inner);
        }
}

static int cmp_double(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

q8_status q8_output_acc_finish(const q8_output_acc *a, q8_report_output *o, q8_error *err) {
    if (!a->ch) {
        o->channel_axis = -1;
        return Q8_OK;
    }
    o->channels = a->channels;
    double *db = malloc(sizeof(double) * (size_t)a->channels);
    if (!db) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    int64_t m = 0;
    for (int64_t c = 0; c < a->channels; c++) {
        if (!(a->ch[c].ref2 > 0)) continue; /* all 0 in FP32: nothing to measure against */
        double s = q8_err_sqnr_db(&a->ch[c]);
        if (m == 0 || s < o->channel_worst_db) {
            o->channel_worst_db = s;
            o->channel_worst = c;
        }
        db[m++] = s;
    }
    o->channels_measured = m;
    if (m > 0) {
        qsort(db, (size_t)m, sizeof(double), cmp_double);
        o->channel_median_db = m % 2 ? db[m / 2] : (db[m / 2 - 1] + db[m / 2]) / 2;
    }
    free(db);
    return Q8_OK;
}

void q8_err_stats_add(q8_err_stats *s, const q8_err_stats *one) {
    s->ref2 += one->ref2;
    s->q2 += one->q2;
    s->dot += one->dot;
    s->err2 += one->err2;
    if (one->max_abs > s->max_abs) s->max_abs = one->max_abs;
    s->n += one->n;
    s->nonfinite += one->nonfinite;
}

q8_status q8_output_sample(q8_report_output *o, const q8_err_stats *one, int sample,
                           const char *path, q8_error *err) {
    double s = q8_err_sqnr_db(one);
    if (!(one->ref2 > 0)) return Q8_OK; /* all 0 in FP32 (an empty mask): no SQNR to speak of */
    if (isnan(s) || (o->worst_sample >= 0 && !(s < o->worst_sample_db))) return Q8_OK;
    char *p = q8_strdup(path ? path : "");
    if (!p) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    free(o->worst_sample_path);
    o->worst_sample_path = p;
    o->worst_sample_db = s;
    o->worst_sample = sample;
    return Q8_OK;
}
