/* Trilu on the CPU (params: src/core/ops/trilu.h): each row copies its kept
 * columns and zeroes the others; rows split over the threads. */
#include <string.h>

#include "cpu_op.h"
#include "ops/trilu.h"

typedef struct trilu_args {
    const q8_trilu_params *p;
    const uint8_t *x;
    uint8_t *y;
    int64_t k;
} trilu_args;

static void trilu_rows(void *arg, int64_t b, int64_t e, int t) {
    const trilu_args *a = arg;
    const q8_trilu_params *p = a->p;
    size_t es = p->elem;
    for (int64_t r = b; r < e; r++) {
        int64_t i = r % p->rows;
        /* columns [lo, hi) are kept */
        int64_t lo = p->upper ? i + a->k : 0, hi = p->upper ? p->cols : i + a->k + 1;
        lo = lo < 0 ? 0 : lo > p->cols ? p->cols : lo;
        hi = hi < lo ? lo : hi > p->cols ? p->cols : hi;
        const uint8_t *xr = a->x + (size_t)(r * p->cols) * es;
        uint8_t *yr = a->y + (size_t)(r * p->cols) * es;
        memset(yr, 0, (size_t)lo * es);
        memcpy(yr + (size_t)lo * es, xr + (size_t)lo * es, (size_t)(hi - lo) * es);
        memset(yr + (size_t)hi * es, 0, (size_t)(p->cols - hi) * es);
    }
}

static void trilu_run(const q8_exec *x, const q8_node *n) {
    const q8_trilu_params *p = n->params;
    int64_t k = p->has_k ? *(const int64_t *)Q8_IN_PTR(x, n, 1) : 0;
    /* beyond either corner nothing changes: clamped, i + k cannot overflow */
    int64_t lim = p->rows + p->cols;
    k = k > lim ? lim : k < -lim ? -lim : k;
    trilu_args a = {p, Q8_IN_PTR(x, n, 0), Q8_OUT_PTR(x, n, 0), k};
    int64_t grain = p->cols >= 4096 ? 1 : 4096 / (p->cols ? p->cols : 1);
    q8_parallel_for(x->pool, p->batch * p->rows, grain, trilu_rows, &a);
}

const q8_cpu_op q8_cpu_trilu = {.run = trilu_run};
