/* q8.QAdd on the CPU (the op: src/core/ops/qadd.h): the kernel prepare picks
 * for this CPU (qadd_kern.h), threads over element ranges; the internal
 * _igemm_path pins the kernel for tests. */
#include "qadd_kern.h"

#include "cpu_op.h"
#include "qop_util.h"

q8_qadd_path q8_qadd_resolve(q8_igemm_path p) {
    switch (q8_igemm_resolve(p)) {
#if defined(__x86_64__) || defined(__i386__)
    case Q8_IGEMM_AVX2:
    case Q8_IGEMM_AVXVNNI:
    case Q8_IGEMM_AVX512VNNI: return Q8_QADD_AVX2;
#endif
    default: return Q8_QADD_C;
    }
}

void q8_qadd_apply(q8_qadd_path path, const q8_qadd_params *p, const int8_t *a, const int8_t *b,
                   int8_t *y, int64_t n) {
#if defined(__x86_64__) || defined(__i386__)
    if (path == Q8_QADD_AVX2) {
        q8_qadd_avx2(p, a, b, y, n);
        return;
    }
#endif
    (void)path;
    for (int64_t i = 0; i < n; i++) y[i] = q8_qadd_one(p, a[i], b[i]);
}

typedef struct qadd_prep {
    q8_qadd_path path;
} qadd_prep;

static q8_status qadd_prepare(const q8_graph *g, const q8_node *n, const q8_prep_env *env,
                              void **prep, size_t *bytes, q8_error *err) {
    (void)g;
    q8_igemm_path path;
    Q8_TRY(q8_qop_path(n, &path, err));
    qadd_prep *c = q8_aligned_alloc(sizeof *c);
    if (!c) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    c->path = q8_qadd_resolve(path);
    *prep = c;
    *bytes = sizeof *c;
    return Q8_OK;
}

typedef struct qadd_args {
    q8_qadd_path path;
    const q8_qadd_params *p;
    const int8_t *a, *b;
    int8_t *y;
} qadd_args;

static void qadd_range(void *arg, int64_t b, int64_t e, int tid) {
    (void)tid;
    const qadd_args *a = arg;
    q8_qadd_apply(a->path, a->p, a->a + b, a->b + b, a->y + b, e - b);
}

static void qadd_run(const q8_exec *x, const q8_node *n) {
    const qadd_prep *c = x->prep;
    const q8_qadd_params *p = n->params;
    qadd_args a = {c->path, p, Q8_IN_PTR(x, n, 0), Q8_IN_PTR(x, n, 1), Q8_OUT_PTR(x, n, 0)};
    /* memory-bound: threads only pay off on large tensors */
    q8_parallel_for(x->pool, p->n, a.path == Q8_QADD_C ? 32768 : 1 << 17, qadd_range, &a);
}

const q8_cpu_op q8_cpu_qadd = {.prepare = qadd_prepare, .run = qadd_run};
