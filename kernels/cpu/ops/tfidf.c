/* TfIdfVectorizer on the CPU (params: src/core/ops/tfidf.h): one row per
 * work item; each candidate n-gram is looked up in the sorted table. */
#include <string.h>

#include "cpu_op.h"
#include "ops/tensor_args.h"
#include "ops/tfidf.h"

typedef struct tfidf_args {
    const q8_tfidf_params *p;
    const void *x;
    float *y;
} tfidf_args;

/* The output column of the n-gram in key, or -1. */
static int64_t lookup(const q8_tfidf_params *p, const int64_t *key) {
    const int64_t *t = q8_tfidf_table(p);
    int64_t w = q8_tfidf_width(p), lo = 0, hi = p->n_grams;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        int c = q8_tfidf_cmp(t + mid * w, key);
        if (c == 0) return t[mid * w + 1];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return -1;
}

static void tfidf_rows(void *arg, int64_t b, int64_t e, int t) {
    const tfidf_args *a = arg;
    const q8_tfidf_params *p = a->p;
    int64_t key[2 + 64];
    for (int64_t r = b; r < e; r++) {
        float *y = a->y + r * p->out_size;
        memset(y, 0, sizeof(float) * (size_t)p->out_size);
        int64_t base = r * p->cols;
        for (int64_t s = 1; s <= p->skips; s++) {
            /* 1-grams only at the first skip distance */
            int first = s == 1 || p->min_n > 1 ? p->min_n : 2;
            if (first > p->max_n) break; /* nothing longer to count */
            /* starts from which the shortest counted n-gram fits */
            int64_t starts = p->cols - (int64_t)(first - 1) * s;
            for (int64_t start = 0; start < starts; start++)
                for (int n = first; n <= p->max_n; n++) {
                    if (start + (int64_t)(n - 1) * s >= p->cols) break;
                    key[0] = n;
                    for (int i = 0; i < n; i++)
                        key[2 + i] = q8_ta_index(p->dtype, a->x, base + start + i * s);
                    int64_t col = lookup(p, key);
                    if (col >= 0) y[col] += 1;
                }
        }
        const float *w = p->has_weights ? q8_tfidf_weights(p) : NULL;
        for (int64_t c = 0; c < p->out_size; c++) {
            float f = y[c], wc = w ? w[c] : 1.0f;
            y[c] = p->mode == Q8_TFIDF_TF ? f : p->mode == Q8_TFIDF_IDF ? (f > 0 ? wc : 0) : wc * f;
        }
    }
}

static void tfidf_run(const q8_exec *x, const q8_node *n) {
    const q8_tfidf_params *p = n->params;
    tfidf_args a = {p, Q8_IN_PTR(x, n, 0), Q8_OUT_PTR(x, n, 0)};
    q8_parallel_for(x->pool, p->rows, 1, tfidf_rows, &a);
}

const q8_cpu_op q8_cpu_tfidf_vectorizer = {.run = tfidf_run};
