/* InstanceNormalization, MeanVarianceNormalization and LRN on the CPU
 * (params: src/core/ops/instnorm.h). */
#include <math.h>
#include <string.h>

#include "cpu_op.h"
#include "ops/instnorm.h"

typedef struct norm_args {
    const q8_instnorm_params *p;
    const float *x, *scale, *b;
    float *y;
    int64_t len;            /* InstanceNorm: elements per (n, c); LRN: per channel */
} norm_args;

/* InstanceNormalization: one (n, c) plane per item */
static void inst_planes(void *arg, int64_t b, int64_t e, int t) {
    const norm_args *a = arg;
    const q8_instnorm_params *p = a->p;
    for (int64_t i = b; i < e; i++) {
        const float *x = a->x + i * a->len;
        float *y = a->y + i * a->len;
        double s = 0, s2 = 0;
        for (int64_t k = 0; k < a->len; k++) s += x[k];
        double mean = a->len ? s / (double)a->len : 0;
        for (int64_t k = 0; k < a->len; k++) s2 += (x[k] - mean) * (x[k] - mean);
        double var = a->len ? s2 / (double)a->len : 0;
        int64_t c = i % p->dims[1];
        double m = a->scale[c] / sqrt(var + p->epsilon);
        for (int64_t k = 0; k < a->len; k++) y[k] = (float)((x[k] - mean) * m + a->b[c]);
    }
}

/* LRN: one (n, place) per item, across the channels */
static void lrn_places(void *arg, int64_t b, int64_t e, int t) {
    const norm_args *a = arg;
    const q8_instnorm_params *p = a->p;
    int64_t C = p->dims[1], lo = (p->size - 1) / 2, hi = p->size - 1 - lo;
    double k = (double)p->alpha / (double)p->size;
    for (int64_t i = b; i < e; i++) {
        int64_t n = i / a->len, s = i % a->len;
        const float *x = a->x + n * C * a->len + s;
        float *y = a->y + n * C * a->len + s;
        for (int64_t c = 0; c < C; c++) {
            double sq = 0;
            for (int64_t j = c - lo < 0 ? 0 : c - lo; j <= c + hi && j < C; j++)
                sq += (double)x[j * a->len] * x[j * a->len];
            y[c * a->len] = (float)(x[c * a->len] / pow(p->bias + k * sq, p->beta));
        }
    }
}

/* MVN: the group of each element from its kept coordinates; sums in double
 * over the whole tensor, one thread (the groups interleave) */
static void mvn_run(const q8_instnorm_params *p, const float *x, float *y, double *acc) {
    int64_t total = p->groups * p->group_len, idx[Q8_MAX_DIMS] = {0};
    double *sum = acc, *sum2 = acc + p->groups;
    memset(acc, 0, sizeof(double) * 2 * (size_t)p->groups);
    for (int pass = 0; pass < 3; pass++) {
        memset(idx, 0, sizeof idx);
        for (int64_t e = 0; e < total; e++) {
            int64_t gi = 0;
            for (int d = 0; d < p->rank; d++)
                if (!p->reduce[d]) gi = gi * p->dims[d] + idx[d];
            double mean = sum[gi] / (double)p->group_len;
            if (pass == 0) sum[gi] += x[e];
            else if (pass == 1) sum2[gi] += (x[e] - mean) * (x[e] - mean);
            else y[e] = (float)((x[e] - mean) / (sqrt(sum2[gi] / (double)p->group_len) + 1e-9));
            for (int d = p->rank - 1; d >= 0 && ++idx[d] == p->dims[d]; d--) idx[d] = 0;
        }
    }
}

static size_t norm_scratch(const q8_graph *g, const q8_node *n, const void *prep, int threads) {
    const q8_instnorm_params *p = n->params;
    return p->kind == Q8_NORM_MVN ? sizeof(double) * 2 * (size_t)p->groups : 0;
}

static void norm_run(const q8_exec *x, const q8_node *n) {
    const q8_instnorm_params *p = n->params;
    norm_args a = {p, Q8_IN_PTR(x, n, 0), NULL, NULL, Q8_OUT_PTR(x, n, 0), 1};
    for (int d = 2; d < p->rank; d++) a.len *= p->dims[d];
    if (p->kind == Q8_NORM_MVN) {
        if (p->groups > 0 && p->group_len > 0) mvn_run(p, a.x, a.y, x->scratch);
    } else if (p->kind == Q8_NORM_INSTANCE) {
        a.scale = Q8_IN_PTR(x, n, 1);
        a.b = Q8_IN_PTR(x, n, 2);
        q8_parallel_for(x->pool, p->dims[0] * p->dims[1], 1, inst_planes, &a);
    } else {
        q8_parallel_for(x->pool, p->dims[0] * a.len, 64, lrn_places, &a);
    }
}

const q8_cpu_op q8_cpu_instance_normalization = {.run = norm_run, .scratch = norm_scratch};
const q8_cpu_op q8_cpu_mean_variance_normalization = {.run = norm_run, .scratch = norm_scratch};
const q8_cpu_op q8_cpu_lrn = {.run = norm_run, .scratch = norm_scratch};
