/* TopK on the CPU (params: src/core/ops/topk.h): each line's (value,
 * index) pairs sorted in the thread's scratch, the first k written; lines
 * split over the threads. Where k is small against the line (k * 8 <=
 * len), a heap of k pairs keeps the k that sort first and only they are
 * sorted: the same k pairs in the same order (the order is total: values,
 * then indices), in O(len log k) (CenterNet's top 100 of 1.3 million
 * scores: 50 ms as a full qsort). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_op.h"
#include "ops/topk.h"

typedef struct topk_args {
    const q8_topk_params *p;
    const void *x;
    void *y;
    int64_t *idx;
    uint8_t *scratch;
    size_t per_thread;
} topk_args;

/* pair order: larger first (NaN largest), then the lower index; the
 * smallest-first order is the same with the values' order reversed */
#define TOPK(T, NAME, ISNAN)                                                               \
    typedef struct NAME##_pair {                                                           \
        T v;                                                                               \
        int64_t i;                                                                         \
    } NAME##_pair;                                                                         \
    static int NAME##_cmp_vals(T a, T b) {                                                 \
        bool an = ISNAN(a), bn = ISNAN(b);                                                 \
        if (an || bn) return an == bn ? 0 : an ? 1 : -1;                                   \
        return a > b ? 1 : a < b ? -1 : 0;                                                 \
    }                                                                                      \
    static int NAME##_desc(const void *pa, const void *pb) {                               \
        const NAME##_pair *a = pa, *b = pb;                                                \
        int c = NAME##_cmp_vals(b->v, a->v);                                               \
        return c ? c : (a->i > b->i) - (a->i < b->i);                                      \
    }                                                                                      \
    static int NAME##_asc(const void *pa, const void *pb) {                                \
        const NAME##_pair *a = pa, *b = pb;                                                \
        int c = NAME##_cmp_vals(a->v, b->v);                                               \
        return c ? c : (a->i > b->i) - (a->i < b->i);                                      \
    }                                                                                      \
    /* a heap whose root is the pair that sorts last (cmp: the output order) */         \
    static void NAME##_push(NAME##_pair *h, int64_t n, NAME##_pair c,                      \
                            int (*cmp)(const void *, const void *)) {                      \
        int64_t i = n;                                                                     \
        while (i > 0 && cmp(&h[(i - 1) / 2], &c) < 0) {                                    \
            h[i] = h[(i - 1) / 2];                                                         \
            i = (i - 1) / 2;                                                               \
        }                                                                                  \
        h[i] = c;                                                                          \
    }                                                                                      \
    static void NAME##_sift(NAME##_pair *h, int64_t n,                                     \
                            int (*cmp)(const void *, const void *)) {                      \
        NAME##_pair c = h[0];                                                              \
        int64_t i = 0;                                                                     \
        for (;;) {                                                                         \
            int64_t l = 2 * i + 1;                                                         \
            if (l >= n) break;                                                             \
            int64_t m = l + 1 < n && cmp(&h[l], &h[l + 1]) < 0 ? l + 1 : l;                \
            if (cmp(&h[m], &c) <= 0) break;                                                \
            h[i] = h[m];                                                                   \
            i = m;                                                                         \
        }                                                                                  \
        h[i] = c;                                                                          \
    }                                                                                      \
    static void NAME(void *arg, int64_t b, int64_t e, int t) {                             \
        const topk_args *a = arg;                                                          \
        const q8_topk_params *p = a->p;                                                    \
        const T *x = a->x;                                                                 \
        T *y = a->y;                                                                       \
        NAME##_pair *s = (NAME##_pair *)(a->scratch + (size_t)t * a->per_thread);          \
        int (*cmp)(const void *, const void *) = p->largest ? NAME##_desc : NAME##_asc;    \
        for (int64_t l = b; l < e; l++) {                                                  \
            int64_t o = l / p->inner, in = l % p->inner;                                   \
            const T *xr = x + o * p->len * p->inner + in;                                  \
            int64_t kept = p->len;                                                         \
            if (p->k * 8 <= p->len) { /* k of many: select the k first with a heap */     \
                kept = p->k;                                                               \
                for (int64_t j = 0; j < p->len; j++) {                                     \
                    NAME##_pair c = {xr[j * p->inner], j};                                 \
                    if (j < p->k) {                                                        \
                        NAME##_push(s, j, c, cmp);                                         \
                    } else if (cmp(&c, &s[0]) < 0) {                                       \
                        s[0] = c; /* before the last kept: it takes the last's place */    \
                        NAME##_sift(s, p->k, cmp);                                         \
                    }                                                                      \
                }                                                                          \
            } else {                                                                       \
                for (int64_t j = 0; j < p->len; j++) s[j] = (NAME##_pair){xr[j * p->inner], j}; \
            }                                                                              \
            qsort(s, (size_t)kept, sizeof *s, cmp);                                        \
            int64_t ob = o * p->k * p->inner + in;                                         \
            for (int64_t j = 0; j < p->k; j++) {                                           \
                y[ob + j * p->inner] = s[j].v;                                             \
                if (a->idx) a->idx[ob + j * p->inner] = s[j].i;                            \
            }                                                                              \
        }                                                                                  \
    }

#define NEVER_NAN(v) false
TOPK(float, topk_f32, isnan)
TOPK(double, topk_f64, isnan)
TOPK(int32_t, topk_i32, NEVER_NAN)
TOPK(int64_t, topk_i64, NEVER_NAN)

/* the largest pair (double or int64 value, int64 index), rounded to 16 */
#define PAIR_BYTES 16

static size_t topk_scratch(const q8_graph *g, const q8_node *n, const void *prep, int threads) {
    const q8_topk_params *p = n->params;
    return (size_t)(threads < 1 ? 1 : threads) * (size_t)p->len * PAIR_BYTES;
}

static void topk_run(const q8_exec *x, const q8_node *n) {
    const q8_topk_params *p = n->params;
    static const q8_range_fn fns[Q8_DTYPE_COUNT] = {
        [Q8_F32] = topk_f32, [Q8_F64] = topk_f64, [Q8_I32] = topk_i32, [Q8_I64] = topk_i64};
    if (p->k == 0) return;
    bool idx = n->n_outputs > 1 && n->outputs[1] >= 0; /* the Indices output is optional */
    topk_args a = {p, Q8_IN_PTR(x, n, 0), Q8_OUT_PTR(x, n, 0), idx ? Q8_OUT_PTR(x, n, 1) : NULL,
                   x->scratch, (size_t)p->len * PAIR_BYTES};
    int64_t grain = p->len >= 1024 ? 1 : 1024 / (p->len ? p->len : 1);
    q8_parallel_for(x->pool, p->outer * p->inner, grain, fns[p->dtype], &a);
}

const q8_cpu_op q8_cpu_topk = {.run = topk_run, .scratch = topk_scratch};
