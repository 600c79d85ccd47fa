/* q8.QLut on the CPU (the op: src/core/ops/qlut.c): the table lookup on the
 * kernel (qlut.h) prepare picks for this CPU; the internal _igemm_path
 * pins it for tests. */
#include "qlut.h"

#include "cpu_features.h"
#include "cpu_op.h"
#include "qop_util.h"

q8_qlut_path q8_qlut_resolve(q8_igemm_path p) {
    switch (q8_igemm_resolve(p)) {
#if defined(__x86_64__) || defined(__i386__)
    case Q8_IGEMM_AVX2:
    case Q8_IGEMM_AVXVNNI: return Q8_QLUT_AVX2;
    case Q8_IGEMM_AVX512VNNI:
        return q8_cpu()->avx512vbmi ? Q8_QLUT_AVX512VBMI : Q8_QLUT_AVX2;
#endif
#if defined(__aarch64__)
    case Q8_IGEMM_NEONDOT:
    case Q8_IGEMM_NEONI8MM: return Q8_QLUT_NEON;
#endif
    default: return Q8_QLUT_C;
    }
}

void q8_qlut_apply(q8_qlut_path p, const int8_t *x, const int8_t *t, int8_t *y, int64_t n) {
    switch (p) {
#if defined(__x86_64__) || defined(__i386__)
    case Q8_QLUT_AVX2: q8_qlut_avx2(x, t, y, n); return;
    case Q8_QLUT_AVX512VBMI: q8_qlut_avx512vbmi(x, t, y, n); return;
#endif
#if defined(__aarch64__)
    case Q8_QLUT_NEON: q8_qlut_neon(x, t, y, n); return;
#endif
    default:
        for (int64_t i = 0; i < n; i++) y[i] = t[x[i] + 128];
    }
}

q8_status q8_qlut_prepare(const q8_graph *g, const q8_node *n, const q8_prep_env *env,
                          void **prep, size_t *bytes, q8_error *err) {
    (void)g;
    q8_igemm_path path;
    Q8_TRY(q8_qop_path(n, &path, err));
    q8_qlut_path *c = q8_aligned_alloc(sizeof *c);
    if (!c) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    *c = q8_qlut_resolve(path);
    *prep = c;
    *bytes = sizeof *c;
    return Q8_OK;
}

typedef struct qlut_args {
    q8_qlut_path path;
    const int8_t *x, *t;
    int8_t *y;
    const uint8_t *index;    /* per-channel tables: plane p reads table index[p % channels] */
    int64_t channels, inner;
} qlut_args;

static void qlut_range(void *p, int64_t b, int64_t e, int tid) {
    const qlut_args *a = p;
    q8_qlut_apply(a->path, a->x + b, a->t, a->y + b, e - b);
}

/* Planes b..e of a per-channel table lookup. */
static void qlut_planes(void *p, int64_t b, int64_t e, int tid) {
    const qlut_args *a = p;
    for (int64_t pl = b; pl < e; pl++)
        q8_qlut_apply(a->path, a->x + pl * a->inner, a->t + a->index[pl % a->channels] * 256,
                      a->y + pl * a->inner, a->inner);
}

static void qlut_run(const q8_exec *x, const q8_node *n) {
    const q8_qlut_path *path = x->prep;
    const q8_tensor *xt = q8_in(x->g, n, 0);
    qlut_args a = {*path, Q8_IN_PTR(x, n, 0), Q8_IN_PTR(x, n, 1), Q8_OUT_PTR(x, n, 0), NULL,
                   1, 1};
    int64_t total = q8_tensor_numel(xt);
    /* SIMD paths: ~20x the scalar rate, so threads only pay off on large
     * tensors; chunks of whole 64-byte vectors */
    int64_t grain = a.path == Q8_QLUT_C ? 32768 : 1 << 18;
    if (n->n_inputs > 2 && n->inputs[2] >= 0) {
        a.index = Q8_IN_PTR(x, n, 2);
        a.channels = xt->dims[1];
        for (int d = 2; d < xt->ndim; d++) a.inner *= xt->dims[d];
        int64_t planes = total / (a.inner ? a.inner : 1);
        if (planes > 0)
            q8_parallel_for(x->pool, planes, (grain + a.inner - 1) / (a.inner ? a.inner : 1),
                            qlut_planes, &a);
        return;
    }
    q8_parallel_for(x->pool, total, grain, qlut_range, &a);
}

const q8_cpu_op q8_cpu_qlut = {.prepare = q8_qlut_prepare, .run = qlut_run};
