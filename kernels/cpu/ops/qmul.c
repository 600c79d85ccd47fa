/* q8.QMul and q8.QMulF on the CPU (the ops: src/core/ops/qmul.h). QMul: AVX-512 kernels where
 * the CPU has them (x86/qmul_avx512.c), else integer loops compiled for
 * each x86 vector width (clones.h); the same integers on every path.
 * Threads over rows of A (one value of B each). The internal _igemm_path
 * pins the path for tests, as for the other q8 ops. */
#include "clones.h"
#include "cpu_features.h"
#include "cpu_op.h"
#include "ops/qmul.h"
#include "qop_util.h"
#include "quant_simd.h"
#if defined(__x86_64__) || defined(__i386__)
#include "qmul_simd.h"
#define QMUL_X86 1
#else
#define QMUL_X86 0
#endif

static inline int8_t sat8(int32_t v) { return (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v); }

/* y = a * bm (rounded, shifted) for one row: bm = b * m, exact. */
Q8_CLONES static void qmul_row(const int8_t *a, int32_t bm, int32_t shift, int8_t *y, int64_t n) {
    const int32_t rnd = 1 << (shift - 1);
    for (int64_t i = 0; i < n; i++) y[i] = sat8(((int32_t)a[i] * bm + rnd) >> shift);
}

/* Same-shape operands. */
Q8_CLONES static void qmul_same(const int8_t *a, const int8_t *b, int32_t m, int32_t shift,
                                int8_t *y, int64_t n) {
    const int32_t rnd = 1 << (shift - 1);
    for (int64_t i = 0; i < n; i++) y[i] = sat8(((int32_t)a[i] * b[i] * m + rnd) >> shift);
}

typedef struct qmul_prep {
    bool avx512;
} qmul_prep;

static q8_status qmul_prepare(const q8_graph *g, const q8_node *n, const q8_prep_env *env,
                              void **prep, size_t *bytes, q8_error *err) {
    q8_igemm_path path;
    Q8_TRY(q8_qop_path(n, &path, err));
    qmul_prep *c = q8_aligned_alloc(sizeof *c);
    if (!c) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    const q8_cpu_features *f = q8_cpu();
    c->avx512 = QMUL_X86 && q8_igemm_resolve(path) == Q8_IGEMM_AVX512VNNI && f->avx512bw &&
                f->avx512vl;
    *prep = c;
    *bytes = sizeof *c;
    return Q8_OK;
}

typedef struct qmul_args {
    bool avx512;
    const q8_qmul_params *p;
    const int8_t *a, *b;
    int8_t *y;
} qmul_args;

static void qmul_rows(void *arg, int64_t r0, int64_t r1, int tid) {
    (void)tid;
    const qmul_args *x = arg;
    const q8_qmul_params *p = x->p;
#if QMUL_X86
    if (x->avx512) {
        if (p->inner == 1)
            q8_qmul_same_avx512(x->a + r0, x->b + r0, p->m, p->shift, x->y + r0, r1 - r0);
        else
            q8_qmul_rows_avx512(x->a + r0 * p->inner, x->b + r0, p->m, p->shift,
                                x->y + r0 * p->inner, r1 - r0, p->inner);
        return;
    }
#endif
    if (p->inner == 1) {
        qmul_same(x->a + r0, x->b + r0, p->m, p->shift, x->y + r0, r1 - r0);
        return;
    }
    for (int64_t r = r0; r < r1; r++)
        qmul_row(x->a + r * p->inner, (int32_t)x->b[r] * p->m, p->shift, x->y + r * p->inner,
                 p->inner);
}

static void qmul_run(const q8_exec *x, const q8_node *n) {
    const q8_qmul_params *p = n->params;
    const qmul_prep *c = x->prep;
    qmul_args a = {c->avx512, p, Q8_IN_PTR(x, n, 0), Q8_IN_PTR(x, n, 1), Q8_OUT_PTR(x, n, 0)};
    /* memory-bound: threads only on large tensors */
    int64_t inner = p->inner > 0 ? p->inner : 1;
    q8_parallel_for(x->pool, p->outer, (1 << 17) / inner + 1, qmul_rows, &a);
}

const q8_cpu_op q8_cpu_qmul = {.prepare = qmul_prepare, .run = qmul_run};

/* ---- q8.QMulF: the float product, as DequantizeLinear -> Mul ->
 * QuantizeLinear (qmul.h), a block at a time through a small buffer: the
 * product in float, then QuantizeLinear's own vector code, so the bits are
 * that node's. */

#define QMULF_BLOCK 1024

/* tmp[i] = (a[i] * sa) * g for n values */
Q8_CLONES static void qmulf_gate(const int8_t *a, float g, float sa, float *tmp, int64_t n) {
    for (int64_t i = 0; i < n; i++) tmp[i] = ((float)a[i] * sa) * g;
}

/* tmp[i] = (a[i] * sa) * (b[i] * sb) for n values */
Q8_CLONES static void qmulf_same(const int8_t *a, const int8_t *b, float sa, float sb, float *tmp,
                                 int64_t n) {
    for (int64_t i = 0; i < n; i++) tmp[i] = ((float)a[i] * sa) * ((float)b[i] * sb);
}

typedef struct qmulf_args {
    const q8_qmulf_params *p;
    const int8_t *a, *b;
    int8_t *y;
} qmulf_args;

/* Rows [r0, r1) of A (one value of B each), in blocks of whole or partial
 * rows filling the buffer, each block quantized in one call (rows of a
 * small map, 7 x 7, are too short to quantize one by one). */
static void qmulf_rows(void *arg, int64_t r0, int64_t r1, int tid) {
    (void)tid;
    const qmulf_args *x = arg;
    const q8_qmulf_params *p = x->p;
    float tmp[QMULF_BLOCK];
    int64_t inner = p->inner, e0 = r0 * inner, e1 = r1 * inner;
    for (int64_t b0 = e0; b0 < e1; b0 += QMULF_BLOCK) {
        int64_t b1 = e1 - b0 < QMULF_BLOCK ? e1 : b0 + QMULF_BLOCK;
        if (inner == 1) {
            qmulf_same(x->a + b0, x->b + b0, p->sa, p->sb, tmp, b1 - b0);
        } else {
            for (int64_t i = b0; i < b1;) {
                int64_t r = i / inner, end = (r + 1) * inner < b1 ? (r + 1) * inner : b1;
                qmulf_gate(x->a + i, (float)x->b[r] * p->sb, p->sa, tmp + (i - b0), end - i);
                i = end;
            }
        }
        q8_quantize_f32(tmp, x->y + b0, b1 - b0, p->sy, 0, true);
    }
}

static void qmulf_run(const q8_exec *x, const q8_node *n) {
    const q8_qmulf_params *p = n->params;
    qmulf_args a = {p, Q8_IN_PTR(x, n, 0), Q8_IN_PTR(x, n, 1), Q8_OUT_PTR(x, n, 0)};
    int64_t inner = p->inner > 0 ? p->inner : 1;
    q8_parallel_for(x->pool, p->outer, (1 << 16) / inner + 1, qmulf_rows, &a);
}

const q8_cpu_op q8_cpu_qmul_f = {.run = qmulf_run};
