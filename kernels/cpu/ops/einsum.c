/* Einsum on the CPU (params: src/core/ops/einsum.h): each output element
 * walks the summed labels like an odometer, its inputs' offsets moving by
 * the labels' strides; output elements split over the threads. */
#include "cpu_op.h"
#include "ops/einsum.h"

typedef struct einsum_args {
    const q8_einsum_params *p;
    const void *in[Q8_EINSUM_MAX_IN];
    void *y;
} einsum_args;

static double at(const q8_einsum_params *p, const void *x, int64_t i) {
    return p->dtype == Q8_F32 ? ((const float *)x)[i] : ((const double *)x)[i];
}

static void einsum_range(void *arg, int64_t b, int64_t e, int t) {
    const einsum_args *a = arg;
    const q8_einsum_params *p = a->p;
    for (int64_t o = b; o < e; o++) {
        int64_t base[Q8_EINSUM_MAX_IN] = {0}, r = o;
        for (int j = p->n_out - 1; j >= 0; j--) {
            int l = p->out[j];
            int64_t c = r % p->size[l];
            r /= p->size[l];
            for (int i = 0; i < p->n_in; i++) base[i] += c * p->stride[i][l];
        }
        int64_t idx[Q8_EINSUM_MAX_LABELS] = {0}, off[Q8_EINSUM_MAX_IN];
        for (int i = 0; i < p->n_in; i++) off[i] = base[i];
        double s = 0;
        bool empty = false;
        for (int k = 0; k < p->n_sum; k++) empty = empty || p->size[p->sum[k]] == 0;
        while (!empty) {
            double v = 1;
            for (int i = 0; i < p->n_in; i++) v *= at(p, a->in[i], off[i]);
            s += v;
            int k = p->n_sum - 1; /* the next combination of the summed labels */
            for (; k >= 0; k--) {
                int l = p->sum[k];
                for (int i = 0; i < p->n_in; i++) off[i] += p->stride[i][l];
                if (++idx[k] < p->size[l]) break;
                for (int i = 0; i < p->n_in; i++) off[i] -= p->size[l] * p->stride[i][l];
                idx[k] = 0;
            }
            if (k < 0) break;
        }
        if (p->dtype == Q8_F32) ((float *)a->y)[o] = (float)s;
        else ((double *)a->y)[o] = s;
    }
}

static void einsum_run(const q8_exec *x, const q8_node *n) {
    const q8_einsum_params *p = n->params;
    einsum_args a = {.p = p, .y = Q8_OUT_PTR(x, n, 0)};
    for (int i = 0; i < p->n_in; i++) a.in[i] = Q8_IN_PTR(x, n, i);
    int64_t outs = 1, work = 1;
    for (int j = 0; j < p->n_out; j++) outs *= p->size[p->out[j]];
    for (int k = 0; k < p->n_sum; k++) work *= p->size[p->sum[k]];
    int64_t grain = work >= 4096 ? 1 : 4096 / (work ? work : 1);
    q8_parallel_for(x->pool, outs, grain, einsum_range, &a);
}

const q8_cpu_op q8_cpu_einsum = {.run = einsum_run};
