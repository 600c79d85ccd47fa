/* DepthToSpace and SpaceToDepth on the CPU (params:
 * src/core/ops/depth_space.h): each output row gathers its elements from
 * the input; rows split over the threads. */
#include <string.h>

#include "cpu_op.h"
#include "ops/depth_space.h"

typedef struct ds_args {
    const q8_depth_space_params *p;
    const uint8_t *x;
    uint8_t *y;
} ds_args;

static void ds_rows(void *arg, int64_t b, int64_t e, int t) {
    const ds_args *a = arg;
    const q8_depth_space_params *p = a->p;
    size_t es = p->elem;
    int64_t bs = p->b;
    for (int64_t r = b; r < e; r++) { /* output row (n, c, h) */
        int64_t h = r % p->h, c = (r / p->h) % p->c, n = r / (p->h * p->c);
        uint8_t *y = a->y + (size_t)(r * p->w) * es;
        for (int64_t w = 0; w < p->w; w++) {
            int64_t ci, hi, wi;
            if (p->mode == Q8_S2D) {
                int64_t ij = c / p->ci;
                ci = c % p->ci;
                hi = h * bs + ij / bs;
                wi = w * bs + ij % bs;
            } else {
                int64_t i = h % bs, j = w % bs;
                ci = p->mode == Q8_D2S_DCR ? (i * bs + j) * p->c + c : c * bs * bs + i * bs + j;
                hi = h / bs;
                wi = w / bs;
            }
            size_t src = (size_t)(((n * p->ci + ci) * p->hi + hi) * p->wi + wi);
            memcpy(y + (size_t)w * es, a->x + src * es, es);
        }
    }
}

static void ds_run(const q8_exec *x, const q8_node *n) {
    const q8_depth_space_params *p = n->params;
    ds_args a = {p, Q8_IN_PTR(x, n, 0), Q8_OUT_PTR(x, n, 0)};
    int64_t grain = p->w >= 1024 ? 1 : 1024 / (p->w ? p->w : 1);
    q8_parallel_for(x->pool, p->n * p->c * p->h, grain, ds_rows, &a);
}

const q8_cpu_op q8_cpu_depth_to_space = {.run = ds_run};
const q8_cpu_op q8_cpu_space_to_depth = {.run = ds_run};
