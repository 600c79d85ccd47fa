/* q8.QLut: an elementwise function of an int8 tensor as a 256-entry table,
 * y = T[x + 128]. The quantizer builds T by running the FP32 op (HardSwish,
 * Sigmoid, Gelu, ...) on every int8 value times the input scale and
 * quantizing the results with the output scale, so a smooth activation
 * between two INT8 layers costs one byte lookup instead of a dequantize, a
 * float function and a quantize. Inputs: X int8, T int8 [256] constant.
 * Attribute y_scale: the output's scale; the internal _igemm_path picks the
 * kernel (qlut.h) for tests. */
#include "qlut.h"

#include "qop_util.h"

q8_qlut_path q8_qlut_resolve(q8_igemm_path p) {
    switch (q8_igemm_resolve(p)) {
#if defined(__x86_64__) || defined(__i386__)
    case Q8_IGEMM_AVX2:
    case Q8_IGEMM_AVXVNNI: return Q8_QLUT_AVX2;
    case Q8_IGEMM_AVX512VNNI:
        return __builtin_cpu_supports("avx512vbmi") ? Q8_QLUT_AVX512VBMI : Q8_QLUT_AVX2;
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
    default:
        for (int64_t i = 0; i < n; i++) y[i] = t[x[i] + 128];
    }
}

typedef struct qlut_params {
    q8_qlut_path path;
} qlut_params;

static q8_status qlut_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 2, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_I8, err));
    const q8_tensor *x = q8_in(g, n, 0), *t = q8_in(g, n, 1);
    if (!t || !t->data || t->dtype != Q8_I8 || q8_tensor_numel(t) != 256)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "the table must be a constant int8 [256]");
    bool i8;
    float sy;
    q8_igemm_path path;
    Q8_TRY(q8_qop_out_scale(n, &i8, &sy, err));
    if (!i8) return q8_node_fail(err, Q8_ERR_FORMAT, n, "y_scale is missing");
    Q8_TRY(q8_qop_path(n, &path, err));
    qlut_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->path = q8_qlut_resolve(path);
    Q8_TRY(q8_set_output(g, n, 0, Q8_I8, x->dims, x->ndim, err));
    return q8_qop_set_out_scale(g, n, sy, err);
}

typedef struct qlut_args {
    q8_qlut_path path;
    const int8_t *x, *t;
    int8_t *y;
} qlut_args;

static void qlut_range(void *p, int64_t b, int64_t e, int tid) {
    const qlut_args *a = p;
    q8_qlut_apply(a->path, a->x + b, a->t, a->y + b, e - b);
}

static void qlut_run(const q8_exec *x, const q8_node *n) {
    const qlut_params *p = n->params;
    qlut_args a = {p->path, Q8_IN_PTR(x, n, 0), Q8_IN_PTR(x, n, 1), Q8_OUT_PTR(x, n, 0)};
    /* SIMD paths: ~20x the scalar rate, so threads only pay off on large
     * tensors; chunks of whole 64-byte vectors */
    int64_t grain = p->path == Q8_QLUT_C ? 32768 : 1 << 18;
    q8_parallel_for(x->pool, q8_tensor_numel(q8_in(x->g, n, 0)), grain, qlut_range, &a);
}

const q8_op_schema q8_schema_qlut = {.infer = qlut_infer, .flags = Q8_OPF_INPLACE};
const q8_cpu_op q8_cpu_qlut = {.run = qlut_run};
