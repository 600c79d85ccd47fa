/* ConvTranspose on the CPU (params: src/core/ops/conv_transpose.h). Per
 * image: one GEMM per group into a column buffer
 *   col[mg*kprod, in_sp] = W_g^T * X_g      (W_g is [cg, mg*kprod])
 * then col2im scatters the columns into Y, one output channel per work item
 * in a fixed order (deterministic for any thread count). A constant W is
 * packed once per session in prepare. */
#include <string.h>

#include "cpu_op.h"
#include "fused_act.h"
#include "ops/conv_transpose.h"
#include "sgemm.h"

/* What prepare makes: the GEMMs' offsets and, for a constant W, W packed
 * (after this struct, 64-byte aligned). */
typedef struct convt_prep {
    const void *a_packed;   /* or NULL */
    int64_t offs[];         /* 4 per group: a, b, c, bias */
} convt_prep;

static q8_status convt_prepare(const q8_graph *g, const q8_node *n, const q8_prep_env *env,
                               void **prep, size_t *bytes, q8_error *err) {
    const q8_conv_transpose_params *p = n->params;
    const q8_tensor *x = q8_in(g, n, 0), *w = q8_in(g, n, 1);
    size_t head = q8_align_up(sizeof(convt_prep) + sizeof(int64_t) * 4 * (size_t)p->g, 64);
    size_t pa = q8_sgemm_packed_a_bytes(p->rows, p->cg, p->g, 0);
    bool pack = w->data && !x->data && pa && p->in_sp > 1;
    convt_prep *cp = q8_aligned_alloc(head + (pack ? pa : 0));
    if (!cp)
        return q8_fail(err, Q8_ERR_NOMEM,
                       pack ? "out of memory packing ConvTranspose weights" : "out of memory");
    memset(cp, 0, head);
    for (int64_t i = 0; i < p->g; i++) {
        cp->offs[4 * i] = i * p->cg * p->rows;
        cp->offs[4 * i + 1] = i * p->cg * p->in_sp;
        cp->offs[4 * i + 2] = i * p->rows * p->in_sp;
        cp->offs[4 * i + 3] = 0;
    }
    if (pack) {
        void *pk = (char *)cp + head;
        q8_sgemm_pack_a(pk, true, p->rows, p->cg, w->data, p->rows, p->g, p->cg * p->rows, 0);
        cp->a_packed = pk;
    }
    *prep = cp;
    *bytes = head + (pack ? pa : 0);
    return Q8_OK;
}

static q8_sgemm_op convt_op(const q8_conv_transpose_params *p, const convt_prep *cp,
                            const float *w, const float *x, float *col) {
    return (q8_sgemm_op){.m = p->rows, .n = p->in_sp, .k = p->cg, .trans_a = true, .alpha = 1,
                         .a = w, .lda = p->rows, .b = x, .ldb = p->in_sp, .c = col,
                         .ldc = p->in_sp, .a_packed = cp->a_packed, .batch = p->g,
                         .offs = cp->offs};
}

static size_t col_bytes(const q8_conv_transpose_params *p) {
    return q8_align_up(sizeof(float) * (size_t)(p->m * p->kprod * p->in_sp), 64);
}

static size_t convt_scratch(const q8_graph *g, const q8_node *n, const void *prep,
                            int n_threads) {
    const q8_conv_transpose_params *p = n->params;
    q8_sgemm_op op = convt_op(p, prep, NULL, NULL, NULL);
    return col_bytes(p) + q8_sgemm_scratch_bytes(&op, n_threads);
}

typedef struct col2im_args {
    const q8_conv_transpose_params *p;
    const float *col, *bias;
    float *y;               /* this image's output */
} col2im_args;

/* Output channels [begin, end): bias, then every kernel tap in order. */
static void col2im_range(void *arg, int64_t begin, int64_t end, int thread) {
    const col2im_args *a = arg;
    const q8_conv_transpose_params *p = a->p;
    const q8_conv_geom *G = &p->geo;
    for (int64_t oc = begin; oc < end; oc++) {
        float *y = a->y + oc * p->out_sp;
        float bv = a->bias ? a->bias[oc] : 0.0f;
        for (int64_t i = 0; i < p->out_sp; i++) y[i] = bv;
        const float *col = a->col + oc * p->kprod * p->in_sp;
        for (int64_t kd = 0; kd < G->k[0]; kd++)
            for (int64_t kh = 0; kh < G->k[1]; kh++)
                for (int64_t kw = 0; kw < G->k[2]; kw++, col += p->in_sp) {
                    int64_t offw = kw * G->d[2] - G->pb[2];
                    /* iw with 0 <= iw*sw + offw < OW */
                    int64_t sw = G->s[2], OW = G->out[2];
                    int64_t lo = offw >= 0 ? 0 : (-offw + sw - 1) / sw;
                    int64_t hi = OW - offw <= 0 ? 0 : (OW - offw - 1) / sw + 1;
                    if (hi > G->in[2]) hi = G->in[2];
                    for (int64_t id = 0; id < G->in[0]; id++) {
                        int64_t od = id * G->s[0] - G->pb[0] + kd * G->d[0];
                        if (od < 0 || od >= G->out[0]) continue;
                        for (int64_t ih = 0; ih < G->in[1]; ih++) {
                            int64_t oh = ih * G->s[1] - G->pb[1] + kh * G->d[1];
                            if (oh < 0 || oh >= G->out[1]) continue;
                            const float *restrict cr = col + (id * G->in[1] + ih) * G->in[2];
                            float *restrict yr = y + (od * G->out[1] + oh) * OW;
                            if (sw == 1)
                                for (int64_t iw = lo; iw < hi; iw++) yr[iw + offw] += cr[iw];
                            else
                                for (int64_t iw = lo; iw < hi; iw++) yr[iw * sw + offw] += cr[iw];
                        }
                    }
                }
        q8_act_apply(&p->act, y, p->out_sp);
    }
}

static void convt_run(const q8_exec *x, const q8_node *n) {
    const q8_conv_transpose_params *p = n->params;
    const float *X = Q8_IN_PTR(x, n, 0), *W = Q8_IN_PTR(x, n, 1);
    const float *bias = p->has_bias ? Q8_IN_PTR(x, n, 2) : NULL;
    float *Y = Q8_OUT_PTR(x, n, 0);
    if (p->out_sp == 0) return;
    float *col = x->scratch;
    void *gemm_scratch = (char *)x->scratch + col_bytes(p);
    int64_t work = p->kprod * p->in_sp + p->out_sp; /* per channel */
    int64_t grain = work >= 16384 ? 1 : 16384 / work;
    for (int64_t img = 0; img < p->nb; img++) {
        q8_sgemm_op op = convt_op(p, x->prep, W, X + img * p->c * p->in_sp, col);
        q8_sgemm_run(&op, x->pool, gemm_scratch);
        col2im_args a = {.p = p, .col = col, .bias = bias, .y = Y + img * p->m * p->out_sp};
        q8_parallel_for(x->pool, p->m, grain, col2im_range, &a);
    }
}

/* W is packed only when both GEMM sides exceed 1: the blocked path uses it. */
static bool convt_packed_input(const void *prep, int j) {
    return j == 1 && ((const convt_prep *)prep)->a_packed;
}

const q8_cpu_op q8_cpu_conv_transpose = {.prepare = convt_prepare, .run = convt_run,
                                         .scratch = convt_scratch,
                                         .packed_input = convt_packed_input};
