/* TfIdfVectorizer (opset 9) over int32/int64 token ids (string pools are
 * not supported): X [C] or [B, C] (B >= 1; a scalar counts as [1]), y
 * float32 [output_size] or [B, output_size], output_size =
 * max(ngram_indexes) + 1.
 *
 * The pool (pool_int64s, split by ngram_counts into the 1-grams, 2-grams,
 * ...) numbers its n-grams in order from 1; n-gram number k is counted in
 * column ngram_indexes[k - 1]; only sizes in [min_gram_length,
 * max_gram_length] are counted (a repeated n-gram keeps its last number).
 * For each skip distance s in 1..max_skip_count + 1 and each start, the
 * n-gram X[start], X[start + s], ... of each counted size n >= 2 that fits
 * in the row is counted when it is in the pool; 1-grams are counted once
 * (not once per s), as the ONNX reference does. Then mode TF: the counts;
 * IDF: weights[col] (1 without weights) where the count is > 0, else 0;
 * TFIDF: weights[col] * count (the count without weights). */
#ifndef Q8_CORE_OPS_TFIDF_H
#define Q8_CORE_OPS_TFIDF_H

#include "common.h"

typedef enum q8_tfidf_mode { Q8_TFIDF_TF, Q8_TFIDF_IDF, Q8_TFIDF_TFIDF } q8_tfidf_mode;

typedef struct q8_tfidf_params {
    q8_tfidf_mode mode;
    q8_dtype dtype;             /* X: int32 or int64 */
    int64_t rows, cols;         /* X seen as rows x cols */
    int64_t out_size;
    int min_n, max_n;           /* max_n: at most the longest n-gram in the pool */
    int64_t skips;              /* skip distances tried (max_skip_count + 1, at most cols) */
    int64_t n_grams;            /* entries in the table */
    bool has_weights;
    /* After the struct, 64-bit aligned: the table, n_grams entries of
     * (2 + max_n) int64 each, sorted by (n, tokens): n, output column, the n
     * tokens, zeros; then out_size float weights when has_weights. */
} q8_tfidf_params;

/* Entry width in int64s, the table and the weights in p's blob. */
static inline int64_t q8_tfidf_width(const q8_tfidf_params *p) { return 2 + p->max_n; }
static inline const int64_t *q8_tfidf_table(const q8_tfidf_params *p) {
    return (const int64_t *)(p + 1);
}
static inline const float *q8_tfidf_weights(const q8_tfidf_params *p) {
    return (const float *)(q8_tfidf_table(p) + p->n_grams * q8_tfidf_width(p));
}

/* Compare n-gram entries (n, column, tokens): by n, then tokens. */
int q8_tfidf_cmp(const int64_t *a, const int64_t *b);

#endif
