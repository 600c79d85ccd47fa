/* TfIdfVectorizer (see tfidf.h): the pool becomes a table sorted for
 * binary search, built once when the node is inferred. */
#include "ops/tfidf.h"

#include <stdlib.h>
#include <string.h>

#include "op.h"

int q8_tfidf_cmp(const int64_t *a, const int64_t *b) {
    if (a[0] != b[0]) return a[0] < b[0] ? -1 : 1;
    for (int64_t i = 0; i < a[0]; i++)
        if (a[2 + i] != b[2 + i]) return a[2 + i] < b[2 + i] ? -1 : 1;
    return 0;
}

/* qsort's order: by n-gram, then by sequence number (kept in the column slot
 * until sorted), so the last of equal n-grams comes last. */
static int entry_cmp(const void *a, const void *b) {
    int c = q8_tfidf_cmp(a, b);
    if (c) return c;
    int64_t sa = ((const int64_t *)a)[1], sb = ((const int64_t *)b)[1];
    return (sa > sb) - (sa < sb);
}

static q8_status tfidf_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 1, 1, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_UNDEFINED, err));
    const q8_tensor *x = q8_in(g, n, 0);
    if (x->dtype != Q8_I32 && x->dtype != Q8_I64)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "input is %s, expected int32 or int64 "
                            "token ids", q8_dtype_name(x->dtype));
    if (x->ndim > 2 || (x->ndim == 2 && x->dims[0] < 1))
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "input must be [C] or [B, C] with B >= 1");
    const char *ms = q8_attr_str(n, "mode", "");
    q8_tfidf_mode mode = !strcmp(ms, "TF") ? Q8_TFIDF_TF : !strcmp(ms, "IDF") ? Q8_TFIDF_IDF
                         : !strcmp(ms, "TFIDF") ? Q8_TFIDF_TFIDF : (q8_tfidf_mode)-1;
    if ((int)mode < 0)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "mode '%s': expected TF, IDF or TFIDF", ms);
    int64_t min_n = q8_attr_int(n, "min_gram_length", 0), max_n = q8_attr_int(n, "max_gram_length", 0),
            skip = q8_attr_int(n, "max_skip_count", 0);
    if (min_n < 1 || max_n < min_n || skip < 0)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "min_gram_length %lld, max_gram_length %lld, "
                            "max_skip_count %lld: expected 1 <= min <= max, skip >= 0",
                            (long long)min_n, (long long)max_n, (long long)skip);
    int n_pool = 0, n_counts = 0, n_idx = 0, n_w = 0;
    if (q8_attr_find(n, "pool_strings"))
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "pool_strings: string n-grams are not "
                            "supported");
    const int64_t *pool = q8_attr_ints(n, "pool_int64s", &n_pool);
    const int64_t *counts = q8_attr_ints(n, "ngram_counts", &n_counts);
    const int64_t *idx = q8_attr_ints(n, "ngram_indexes", &n_idx);
    const float *w = q8_attr_floats(n, "weights", &n_w);
    if (!counts || !idx || n_idx < 1)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "ngram_counts and ngram_indexes are required");
    /* the n-grams of the counted sizes, and the largest size present */
    int64_t total = 0, used = 0, longest = 0;
    for (int i = 0; i < n_counts; i++) {
        int64_t b = counts[i], e = i + 1 < n_counts ? counts[i + 1] : n_pool, size = i + 1;
        if (b < 0 || e < b || e > n_pool)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "ngram_counts[%d] = %lld: offsets must "
                                "rise within the pool (%d values)", i, (long long)b, n_pool);
        total += (e - b) / size;
        if (size >= min_n && size <= max_n && (e - b) / size > 0) {
            used += (e - b) / size;
            longest = size;
        }
    }
    if (longest > 64)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "%lld-grams: at most 64 tokens per n-gram "
                            "are supported", (long long)longest);
    if (n_idx < total)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "ngram_indexes has %d values, the pool %lld "
                            "n-grams", n_idx, (long long)total);
    int64_t out_size = 0;
    for (int i = 0; i < n_idx; i++) {
        if (idx[i] < 0 || idx[i] >= (INT64_C(1) << 31))
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "ngram_indexes[%d] = %lld is out of "
                                "range", i, (long long)idx[i]);
        if (idx[i] + 1 > out_size) out_size = idx[i] + 1;
    }
    if (w && n_w < out_size)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "weights has %d values, the output %lld "
                            "columns", n_w, (long long)out_size);
    int64_t width = 2 + (longest ? longest : 1);
    size_t bytes = sizeof(q8_tfidf_params) + sizeof(int64_t) * (size_t)(used * width) +
                   (w ? sizeof(float) * (size_t)out_size : 0);
    q8_tfidf_params *p = q8_node_params(n, bytes, err);
    if (!p) return Q8_ERR_NOMEM;
    p->mode = mode;
    p->dtype = x->dtype;
    p->rows = x->ndim == 2 ? x->dims[0] : 1;
    p->cols = x->ndim == 0 ? 1 : x->dims[x->ndim - 1];
    p->out_size = out_size;
    /* min beyond the longest counted n-gram counts nothing (and must not
     * wrap in an int); skip distances beyond the row fit no 2-gram */
    p->max_n = (int)(longest ? longest : 1);
    p->min_n = min_n > p->max_n ? p->max_n + 1 : (int)min_n;
    p->skips = p->cols <= 1 || skip >= p->cols - 1 ? (p->cols > 1 ? p->cols : 1) : skip + 1;
    p->has_weights = w != NULL;
    int64_t *t = (int64_t *)(p + 1), id = 0, k = 0;
    for (int i = 0; i < n_counts; i++) {
        int64_t b = counts[i], e = i + 1 < n_counts ? counts[i + 1] : n_pool, size = i + 1;
        for (int64_t j = b; j + size <= e; j += size, id++) {
            if (size < min_n || size > max_n) continue;
            int64_t *en = t + k++ * width;
            en[0] = size;
            en[1] = id; /* the sequence number until sorted */
            memcpy(en + 2, pool + j, sizeof(int64_t) * (size_t)size);
        }
    }
    qsort(t, (size_t)k, sizeof(int64_t) * (size_t)width, entry_cmp);
    /* keep the last of equal n-grams; the column from its number */
    int64_t m = 0;
    for (int64_t i = 0; i < k; i++) {
        if (i + 1 < k && !q8_tfidf_cmp(t + i * width, t + (i + 1) * width)) continue;
        memmove(t + m * width, t + i * width, sizeof(int64_t) * (size_t)width);
        t[m * width + 1] = idx[t[m * width + 1]];
        m++;
    }
    p->n_grams = m;
    if (w) memcpy((void *)q8_tfidf_weights(p), w, sizeof(float) * (size_t)out_size);
    int64_t dims[2] = {p->rows, out_size};
    return x->ndim == 2 ? q8_set_output(g, n, 0, Q8_F32, dims, 2, err)
                        : q8_set_output(g, n, 0, Q8_F32, dims + 1, 1, err);
}

const q8_op_schema q8_schema_tfidf_vectorizer = {.infer = tfidf_infer};
