/* NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss on the CPU (params:
 * src/core/ops/loss.h). Places (n, d) are split over the threads; a reduced
 * loss is summed afterwards from the per-place losses and weights kept in
 * scratch, in place order, so it does not depend on the thread count. */
#include <math.h>

#include "cpu_op.h"
#include "ops/loss.h"
#include "ops/tensor_args.h"

typedef struct loss_args {
    const q8_loss_params *p;
    const void *x, *target, *weight;
    void *y, *log_prob;     /* log_prob: SCE's output 1, or NULL */
    double *acc;            /* reduced: loss, weight per place */
} loss_args;

/* One place: the loss and its weight (ignored: 0, 0; target out of range:
 * NaN). lp(c) is x itself (NLL) or x - logsumexp over C (SCE). */
#define LOSS_PLACES(T, NAME)                                                               \
    static void NAME(void *arg, int64_t b, int64_t e, int t) {                             \
        const loss_args *a = arg;                                                          \
        const q8_loss_params *p = a->p;                                                    \
        const T *w = a->weight;                                                            \
        for (int64_t i = b; i < e; i++) {                                                  \
            int64_t n = i / p->d, d = i % p->d, C = p->c, D = p->d;                        \
            const T *x = (const T *)a->x + n * C * D + d;                                  \
            double lse = 0;                                                                \
            if (p->softmax) {                                                              \
                double m = -INFINITY, s = 0;                                               \
                for (int64_t c = 0; c < C; c++)                                            \
                    if (x[c * D] > m || isnan((double)x[c * D])) m = x[c * D];             \
                if (isinf(m)) m = 0; /* all -inf (or +inf): let exp say so */              \
                for (int64_t c = 0; c < C; c++) s += exp((double)x[c * D] - m);            \
                lse = m + log(s);                                                          \
                if (a->log_prob) {                                                         \
                    T *lp = (T *)a->log_prob + n * C * D + d;                              \
                    for (int64_t c = 0; c < C; c++) lp[c * D] = (T)((double)x[c * D] - lse); \
                }                                                                          \
            }                                                                              \
            int64_t tg = q8_ta_index(p->target_dtype, a->target, i);                       \
            double loss, wt;                                                               \
            if (p->has_ignore && tg == p->ignore_index) {                                  \
                loss = 0, wt = 0;                                                          \
            } else if (tg < 0 || tg >= C) {                                                \
                loss = NAN, wt = NAN;                                                      \
            } else {                                                                       \
                wt = w ? (double)w[tg] : 1.0;                                              \
                loss = -wt * ((double)x[tg * D] - lse);                                    \
            }                                                                              \
            if (a->acc) {                                                                  \
                a->acc[2 * i] = loss;                                                      \
                a->acc[2 * i + 1] = wt;                                                    \
            } else {                                                                       \
                ((T *)a->y)[i] = (T)loss;                                                  \
            }                                                                              \
        }                                                                                  \
    }

LOSS_PLACES(float, loss_places_f32)
LOSS_PLACES(double, loss_places_f64)

static size_t loss_scratch(const q8_graph *g, const q8_node *n, const void *prep, int threads) {
    const q8_loss_params *p = n->params;
    return p->reduction == Q8_LOSS_NONE ? 0 : sizeof(double) * 2 * (size_t)(p->n * p->d);
}

static void loss_run(const q8_exec *x, const q8_node *n) {
    const q8_loss_params *p = n->params;
    bool lp_out = p->softmax && n->n_outputs > 1 && n->outputs[1] >= 0;
    loss_args a = {p,
                   Q8_IN_PTR(x, n, 0),
                   Q8_IN_PTR(x, n, 1),
                   p->has_weight ? Q8_IN_PTR(x, n, 2) : NULL,
                   Q8_OUT_PTR(x, n, 0),
                   lp_out ? Q8_OUT_PTR(x, n, 1) : NULL,
                   p->reduction == Q8_LOSS_NONE ? NULL : x->scratch};
    int64_t places = p->n * p->d, grain = p->c >= 1024 ? 1 : 1024 / (p->c ? p->c : 1);
    q8_parallel_for(x->pool, places, grain, p->dtype == Q8_F64 ? loss_places_f64 : loss_places_f32,
                    &a);
    if (!a.acc) return;
    double sum = 0, wsum = 0;
    for (int64_t i = 0; i < places; i++) sum += a.acc[2 * i], wsum += a.acc[2 * i + 1];
    double v = p->reduction == Q8_LOSS_SUM ? sum : sum / wsum; /* 0/0: NaN, as the reference */
    if (p->dtype == Q8_F64) *(double *)a.y = v;
    else *(float *)a.y = (float)v;
}

const q8_cpu_op q8_cpu_nll_loss = {.run = loss_run, .scratch = loss_scratch};
const q8_cpu_op q8_cpu_softmax_cross_entropy_loss = {.run = loss_run, .scratch = loss_scratch};
