/* The window ops, ReverseSequence and Det on the CPU (params:
 * src/core/ops/windows.h). */
#include <math.h>
#include <string.h>

#include "cpu_op.h"
#include "ops/windows.h"

static void window_run(const q8_exec *x, const q8_node *n) {
    const q8_window_params *p = n->params;
    void *y = Q8_OUT_PTR(x, n, 0);
    const double two_pi = 6.283185307179586476925286766559;
    for (int64_t i = 0; i < p->size; i++) {
        /* a symmetric window of one value: N = 0, the value at n = 0 */
        double a = p->period ? two_pi * (double)i / (double)p->period : 0, w;
        if (p->kind == 0) w = 0.5 - 0.5 * cos(a);
        else if (p->kind == 1) w = 25.0 / 46.0 - 21.0 / 46.0 * cos(a);
        else w = 0.42 - 0.5 * cos(a) + 0.08 * cos(2 * a);
        if (p->f64) ((double *)y)[i] = w;
        else ((float *)y)[i] = (float)w;
    }
}

static void revseq_run(const q8_exec *x, const q8_node *n) {
    const q8_revseq_params *p = n->params;
    const uint8_t *in = Q8_IN_PTR(x, n, 0);
    const int64_t *lens = Q8_IN_PTR(x, n, 1);
    uint8_t *out = Q8_OUT_PTR(x, n, 0);
    size_t row = (size_t)p->inner * p->elem;
    for (int64_t b = 0; b < p->b; b++) {
        int64_t len = lens[b] < 0 ? 0 : lens[b] > p->t ? p->t : lens[b];
        for (int64_t t = 0; t < p->t; t++) {
            int64_t src = t < len ? len - 1 - t : t;
            size_t o = p->batch_first ? (size_t)(b * p->t + t) : (size_t)(t * p->b + b);
            size_t i = p->batch_first ? (size_t)(b * p->t + src) : (size_t)(src * p->b + b);
            memcpy(out + o * row, in + i * row, row);
        }
    }
}

typedef struct det_args {
    const q8_det_params *p;
    const float *x;
    float *y;
    double *scratch;
} det_args;

static void det_range(void *arg, int64_t b, int64_t e, int t) {
    const det_args *a = arg;
    int64_t m = a->p->m;
    double *lu = a->scratch + (size_t)t * (size_t)(m * m);
    for (int64_t k = b; k < e; k++) {
        const float *x = a->x + k * m * m;
        for (int64_t i = 0; i < m * m; i++) lu[i] = x[i];
        double det = 1;
        for (int64_t c = 0; c < m && det != 0; c++) {
            int64_t piv = c;
            for (int64_t r = c + 1; r < m; r++)
                if (fabs(lu[r * m + c]) > fabs(lu[piv * m + c])) piv = r;
            if (lu[piv * m + c] == 0) {
                det = 0;
                break;
            }
            if (piv != c) {
                for (int64_t j = 0; j < m; j++) {
                    double s = lu[c * m + j];
                    lu[c * m + j] = lu[piv * m + j];
                    lu[piv * m + j] = s;
                }
                det = -det;
            }
            det *= lu[c * m + c];
            for (int64_t r = c + 1; r < m; r++) {
                double f = lu[r * m + c] / lu[c * m + c];
                for (int64_t j = c; j < m; j++) lu[r * m + j] -= f * lu[c * m + j];
            }
        }
        a->y[k] = (float)det;
    }
}

static size_t det_scratch(const q8_graph *g, const q8_node *n, const void *prep, int threads) {
    const q8_det_params *p = n->params;
    return sizeof(double) * (size_t)(threads < 1 ? 1 : threads) * (size_t)(p->m * p->m);
}

static void det_run(const q8_exec *x, const q8_node *n) {
    det_args a = {n->params, Q8_IN_PTR(x, n, 0), Q8_OUT_PTR(x, n, 0), x->scratch};
    if (a.p->m == 0) { /* the empty product: no scratch to point into */
        for (int64_t k = 0; k < a.p->batch; k++) a.y[k] = 1.0f;
        return;
    }
    q8_parallel_for(x->pool, a.p->batch, 1, det_range, &a);
}

const q8_cpu_op q8_cpu_hann_window = {.run = window_run};
const q8_cpu_op q8_cpu_hamming_window = {.run = window_run};
const q8_cpu_op q8_cpu_blackman_window = {.run = window_run};
const q8_cpu_op q8_cpu_reverse_sequence = {.run = revseq_run};
const q8_cpu_op q8_cpu_det = {.run = det_run, .scratch = det_scratch};
