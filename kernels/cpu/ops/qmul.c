/* q8.QMul on the CPU (the op: src/core/ops/qmul.h): AVX-512 kernels where
 * the CPU has them (x86/qmul_avx512.c), else integer loops compiled for
 * each x86 vector width (clones.h); the same integers on every path.
 * Threads over rows of A (one value of B each). The internal _igemm_path
 * pins the path for tests, as for the other q8 ops. */
#include "clones.h"
#include "cpu_features.h"
#include "cpu_op.h"
#include "ops/qmul.h"
#include "qop_util.h"
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

static q8_status qmul_prepare(const q8_graph *g, const q8_node *n, void **prep, size_t *bytes,
                              q8_error *err) {
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
