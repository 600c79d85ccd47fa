/* Softmax and LogSoftmax on the CPU (params: src/core/ops/softmax.h). The
 * common inner == 1 case runs contiguous rows; otherwise blocks of up to 64
 * inner columns are handled together. Max subtraction keeps exp in range; a
 * polynomial exp (kernels/common/exp_neg.h, shared with CUDA) lets the
 * compiler vectorize the rows. */
#include <math.h>
#include <string.h>

#include "clones.h"
#include "cpu_op.h"
#include "exp_neg.h"
#include "ops/softmax.h"

#define LANES 8

typedef struct softmax_args {
    const q8_softmax_params *p;
    const float *x;
    float *y;
} softmax_args;

#define CHUNK 256

/* One contiguous row. Every loop below is a plain map or works on LANES
 * independent partial results, so it vectorizes; the partial results
 * combine in a fixed order (same result for any threads). */
/* Cloned per ISA; the file is built without trapping math and without FMA
 * contraction (CMakeLists.txt), so every clone, and the CUDA kernel, round
 * q8_exp_neg's steps alike. As baseline x86-64 code it ran a 1x64x64x64
 * Softmax over rows of 64 at 5x ONNX Runtime's time. */
Q8_CLONES static void softmax_row(const float *x, float *y, int64_t len, bool take_log,
                                  float *tmp) {
    /* max, and x * 0 summed: NaN if any x is NaN or infinite */
    float mk[LANES], zk[LANES];
    for (int k = 0; k < LANES; k++) {
        mk[k] = -INFINITY;
        zk[k] = 0.0f;
    }
    int64_t i = 0;
    for (; i + LANES <= len; i += LANES)
        for (int k = 0; k < LANES; k++) {
            mk[k] = x[i + k] > mk[k] ? x[i + k] : mk[k];
            zk[k] += x[i + k] * 0.0f;
        }
    for (; i < len; i++) {
        mk[0] = x[i] > mk[0] ? x[i] : mk[0];
        zk[0] += x[i] * 0.0f;
    }
    float m = mk[0], z = zk[0];
    for (int k = 1; k < LANES; k++) {
        m = mk[k] > m ? mk[k] : m;
        z += zk[k];
    }
    if (z != 0.0f) {
        /* rare: NaN or infinities; libm's expf gives the exact limits */
        double s = 0.0;
        for (i = 0; i < len; i++) s += expf(x[i] - m);
        for (i = 0; i < len; i++)
            y[i] = take_log ? (x[i] - m) - (float)log(s) : (float)(expf(x[i] - m) / s);
        return;
    }
    /* exp in chunks (into y, or a stack buffer for LogSoftmax, which
     * may run in place and still needs x), summed in LANES float lanes
     * per chunk, chunks added in double */
    double s = 0.0;
    for (int64_t c0 = 0; c0 < len; c0 += CHUNK) {
        int64_t cl = len - c0 < CHUNK ? len - c0 : CHUNK;
        float *ex = take_log ? tmp : y + c0;
        for (int64_t j = 0; j < cl; j++) ex[j] = q8_exp_neg(x[c0 + j] - m);
        float sk[LANES] = {0};
        int64_t j = 0;
        for (; j + LANES <= cl; j += LANES)
            for (int k = 0; k < LANES; k++) sk[k] += ex[j + k];
        for (; j < cl; j++) sk[0] += ex[j];
        float cs = 0.0f;
        for (int k = 0; k < LANES; k++) cs += sk[k];
        s += cs;
    }
    if (take_log) {
        /* (x - m) is exact for x near m; adding m to log(s) first would not be */
        float ls = (float)log(s);
        for (i = 0; i < len; i++) y[i] = (x[i] - m) - ls;
    } else {
        float inv = (float)(1.0 / s);
        for (i = 0; i < len; i++) y[i] *= inv;
    }
}

/* Rows shorter than LANES (a segmentation head's few classes), SHORT_ROWS
 * at a time with the rows across vector lanes: softmax_row's arithmetic for
 * such a row, element by element in its order (max and x * 0 from the first
 * value on, the exps summed in one float from 0, 1 / s in double), so the
 * same bits; rows with a NaN or an infinity go to softmax_row. */
#define SHORT_ROWS 64

/* AVX2 vectors, and no FMA (AVX-512F would bring it, and contract the exp
 * polynomial's q * r + c: other bits than the CUDA kernel's). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#define SHORT_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define SHORT_CLONES
#endif

SHORT_CLONES static void softmax_short_rows(const float *x, float *y, int64_t n, int64_t len,
                                            bool take_log) {
    float t[LANES - 1][SHORT_ROWS], ex[LANES - 1][SHORT_ROWS], m[SHORT_ROWS], z[SHORT_ROWS],
        sf[SHORT_ROWS];
    for (int64_t r = 0; r < n; r++)
        for (int64_t j = 0; j < len; j++) t[j][r] = x[r * len + j];
    for (int64_t r = 0; r < n; r++) {
        m[r] = -INFINITY;
        z[r] = 0.0f;
    }
    for (int64_t j = 0; j < len; j++)
        for (int64_t r = 0; r < n; r++) {
            m[r] = t[j][r] > m[r] ? t[j][r] : m[r];
            z[r] += t[j][r] * 0.0f;
        }
    /* rows with a NaN or an infinity (z != 0) go to softmax_row below: their
     * exps here are of 0, not of a NaN (q8_exp_neg must not see one). The
     * select is a bit mask: a float select keeps GCC from vectorizing. */
    uint32_t keep[SHORT_ROWS];
    for (int64_t r = 0; r < n; r++) {
        uint32_t zb;
        memcpy(&zb, &z[r], 4);
        keep[r] = (uint32_t)0 - (uint32_t)((zb << 1) == 0); /* z is +-0 */
    }
    for (int64_t j = 0; j < len; j++)
        for (int64_t r = 0; r < n; r++) {
            float d = t[j][r] - m[r];
            uint32_t db;
            memcpy(&db, &d, 4);
            db &= keep[r];
            memcpy(&d, &db, 4);
            ex[j][r] = q8_exp_neg(d);
        }
    for (int64_t r = 0; r < n; r++) sf[r] = 0.0f;
    for (int64_t j = 0; j < len; j++)
        for (int64_t r = 0; r < n; r++) sf[r] += ex[j][r];
    for (int64_t r = 0; r < n; r++) {
        float *yr = y + r * len;
        if (z[r] != 0.0f) {
            float tmp[CHUNK];
            softmax_row(x + r * len, yr, len, take_log, tmp);
            continue;
        }
        double s = 0.0 + (double)sf[r];
        if (take_log) {
            float ls = (float)log(s);
            for (int64_t j = 0; j < len; j++) yr[j] = (t[j][r] - m[r]) - ls;
        } else {
            float inv = (float)(1.0 / s);
            for (int64_t j = 0; j < len; j++) yr[j] = ex[j][r] * inv;
        }
    }
}

/* inner == 1: contiguous rows. */
static void softmax_rows(void *arg, int64_t b, int64_t e, int t) {
    const softmax_args *a = arg;
    int64_t len = a->p->len;
    bool take_log = a->p->log;
    if (len < LANES) {
        for (int64_t r = b; r < e; r += SHORT_ROWS)
            softmax_short_rows(a->x + r * len, a->y + r * len,
                               e - r < SHORT_ROWS ? e - r : SHORT_ROWS, len, take_log);
        return;
    }
    float tmp[CHUNK];
    for (int64_t r = b; r < e; r++) softmax_row(a->x + r * len, a->y + r * len, len, take_log, tmp);
}

#define BLOCK 64

/* inner > 1: item = (outer index, block of up to BLOCK inner columns). */
static void softmax_cols(void *arg, int64_t b, int64_t e, int t) {
    const softmax_args *a = arg;
    const q8_softmax_params *p = a->p;
    int64_t len = p->len, inner = p->inner, nblk = (inner + BLOCK - 1) / BLOCK;
    float m[BLOCK];
    double s[BLOCK];
    for (int64_t it = b; it < e; it++) {
        int64_t o = it / nblk, c0 = (it % nblk) * BLOCK;
        int64_t w = inner - c0 < BLOCK ? inner - c0 : BLOCK;
        const float *x = a->x + o * len * inner + c0;
        float *y = a->y + o * len * inner + c0;
        for (int64_t j = 0; j < w; j++) {
            m[j] = -INFINITY;
            s[j] = 0.0;
        }
        for (int64_t l = 0; l < len; l++)
            for (int64_t j = 0; j < w; j++)
                m[j] = x[l * inner + j] > m[j] ? x[l * inner + j] : m[j];
        /* libm expf: NaN and infinities need no separate path here */
        for (int64_t l = 0; l < len; l++)
            for (int64_t j = 0; j < w; j++) {
                float v = expf(x[l * inner + j] - m[j]);
                if (!p->log) y[l * inner + j] = v;
                s[j] += v;
            }
        if (p->log) {
            for (int64_t j = 0; j < w; j++) s[j] = log(s[j]);
            for (int64_t l = 0; l < len; l++)
                for (int64_t j = 0; j < w; j++)
                    y[l * inner + j] = (x[l * inner + j] - m[j]) - (float)s[j];
        } else {
            for (int64_t j = 0; j < w; j++) m[j] = (float)(1.0 / s[j]);
            for (int64_t l = 0; l < len; l++)
                for (int64_t j = 0; j < w; j++) y[l * inner + j] *= m[j];
        }
    }
}

static void softmax_run(const q8_exec *x, const q8_node *n) {
    const q8_softmax_params *p = n->params;
    softmax_args a = {p, Q8_IN_PTR(x, n, 0), Q8_OUT_PTR(x, n, 0)};
    if (p->len == 0) return;
    if (p->inner == 1) {
        q8_parallel_for(x->pool, p->outer, p->len >= 8192 ? 1 : 8192 / p->len, softmax_rows, &a);
    } else {
        int64_t nblk = (p->inner + BLOCK - 1) / BLOCK;
        int64_t work = p->len * (p->inner < BLOCK ? p->inner : BLOCK);
        q8_parallel_for(x->pool, p->outer * nblk, work >= 8192 ? 1 : 8192 / work, softmax_cols, &a);
    }
}

const q8_cpu_op q8_cpu_softmax = {.run = softmax_run};
const q8_cpu_op q8_cpu_log_softmax = {.run = softmax_run};
