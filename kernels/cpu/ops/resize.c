/* Resize on the CPU (params: src/core/ops/resize.h). prepare
 * builds, per dim, the table of input offsets and weights of every output
 * index (the core's taps). run walks output rows (all dims but the last):
 * the taps of the leading dims combine into at most Q8_RESIZE_MAX_ROW_TAPS
 * (offset, weight) pairs per row, then each output of the row sums its
 * last-dim taps over them. The order is fixed, so results do not depend on
 * the thread count. */
#include <string.h>

#include "cpu_op.h"
#include "ops/resize.h"

#define MAX_ROW_TAPS Q8_RESIZE_MAX_ROW_TAPS

/* The prepared blob: this header, then per dim its tables (offsets from the
 * blob's start): taps[d] input offsets (int64, in elements) and weights
 * (float) per output index, and one byte per output index, 1 outside the
 * crop. */
typedef struct resize_prep {
    size_t idx_off[Q8_MAX_DIMS], w_off[Q8_MAX_DIMS], ext_off[Q8_MAX_DIMS];
} resize_prep;

static q8_status resize_prepare(const q8_graph *g, const q8_node *n, void **prep, size_t *bytes,
                                q8_error *err) {
    const q8_resize_params *p = n->params;
    resize_prep h;
    memset(&h, 0, sizeof h);
    size_t off = q8_align_up(sizeof h, Q8_ALIGN);
    for (int d = 0; d < p->rank; d++) {
        size_t cnt = (size_t)p->out[d] * (size_t)p->taps[d];
        h.idx_off[d] = off;
        off += q8_align_up(cnt * sizeof(int64_t), Q8_ALIGN);
        h.w_off[d] = off;
        off += q8_align_up(cnt * sizeof(float), Q8_ALIGN);
        h.ext_off[d] = off;
        off += q8_align_up((size_t)p->out[d], Q8_ALIGN);
    }
    uint8_t *pk = q8_aligned_alloc(off);
    if (!pk) return q8_fail(err, Q8_ERR_NOMEM, "out of memory building Resize tables");
    memcpy(pk, &h, sizeof h);
    int64_t stride = 1;
    for (int d = p->rank - 1; d >= 0; d--) {
        q8_resize_dim_taps(p, d, stride, (int64_t *)(pk + h.idx_off[d]),
                           (float *)(pk + h.w_off[d]), pk + h.ext_off[d]);
        stride *= p->in[d];
    }
    *prep = pk;
    *bytes = off;
    return Q8_OK;
}

typedef struct resize_args {
    const q8_resize_params *p;
    const resize_prep *h; /* the prepared blob: its header */
    const uint8_t *pk;    /* and its bytes */
    const void *x;
    void *y;
} resize_args;

/* The combined leading-dim taps of output row `row`; false if the row lies
 * outside the crop (tf_crop_and_resize). */
static bool row_taps(const resize_args *a, int64_t row, int64_t *off, float *w, int *k_out) {
    const q8_resize_params *p = a->p;
    int k = 1;
    off[0] = 0;
    w[0] = 1.0f;
    bool inside = true;
    for (int d = p->rank - 2; d >= 0; d--) {
        int64_t o = row % p->out[d];
        row /= p->out[d];
        int t = p->taps[d];
        const int64_t *ix = (const int64_t *)(a->pk + a->h->idx_off[d]) + o * t;
        const float *wx = (const float *)(a->pk + a->h->w_off[d]) + o * t;
        if (a->pk[a->h->ext_off[d] + o]) inside = false;
        /* expand in place, last combination first */
        for (int i = k - 1; i >= 0; i--)
            for (int j = t - 1; j >= 0; j--) {
                off[i * t + j] = off[i] + ix[j];
                w[i * t + j] = w[i] * wx[j];
            }
        k *= t;
    }
    *k_out = k;
    return inside;
}

static void resize_f32(void *arg, int64_t b, int64_t e, int tid) {
    const resize_args *a = arg;
    const q8_resize_params *p = a->p;
    int last = p->rank - 1, tw = p->taps[last];
    int64_t ow_n = p->out[last];
    const int64_t *ixw = (const int64_t *)(a->pk + a->h->idx_off[last]);
    const float *ww = (const float *)(a->pk + a->h->w_off[last]);
    const uint8_t *extw = a->pk + a->h->ext_off[last];
    const float *x = a->x;
    int64_t off[MAX_ROW_TAPS];
    float w[MAX_ROW_TAPS];
    for (int64_t row = b; row < e; row++) {
        float *y = (float *)a->y + row * ow_n;
        int k;
        if (!row_taps(a, row, off, w, &k)) {
            for (int64_t o = 0; o < ow_n; o++) y[o] = p->extrap_value;
            continue;
        }
        if (k == 1 && tw == 1) {
            const float *xr = x + off[0];
            for (int64_t o = 0; o < ow_n; o++) y[o] = xr[ixw[o]];
        } else if (tw == 2 && k == 2) {
            /* bilinear over the last two dims, the common case */
            const float *r0 = x + off[0], *r1 = x + off[1];
            float a0 = w[0], a1 = w[1];
            for (int64_t o = 0; o < ow_n; o++) {
                int64_t i0 = ixw[2 * o], i1 = ixw[2 * o + 1];
                float w0 = ww[2 * o], w1 = ww[2 * o + 1];
                y[o] = a0 * (w0 * r0[i0] + w1 * r0[i1]) + a1 * (w0 * r1[i0] + w1 * r1[i1]);
            }
        } else if (tw == 2) {
            for (int64_t o = 0; o < ow_n; o++) {
                int64_t i0 = ixw[2 * o], i1 = ixw[2 * o + 1];
                float w0 = ww[2 * o], w1 = ww[2 * o + 1], acc = 0.0f;
                for (int j = 0; j < k; j++) {
                    const float *xr = x + off[j];
                    acc += w[j] * (w0 * xr[i0] + w1 * xr[i1]);
                }
                y[o] = acc;
            }
        } else if (tw == 4) {
            /* cubic: same sums as below, unrolled */
            for (int64_t o = 0; o < ow_n; o++) {
                const int64_t *iq = ixw + 4 * o;
                const float *wq = ww + 4 * o;
                float acc = 0.0f;
                for (int j = 0; j < k; j++) {
                    const float *xr = x + off[j];
                    acc += w[j] * (wq[0] * xr[iq[0]] + wq[1] * xr[iq[1]] + wq[2] * xr[iq[2]] +
                                   wq[3] * xr[iq[3]]);
                }
                y[o] = acc;
            }
        } else {
            for (int64_t o = 0; o < ow_n; o++) {
                float acc = 0.0f;
                for (int j = 0; j < k; j++) {
                    const float *xr = x + off[j];
                    float s = 0.0f;
                    for (int q = 0; q < tw; q++) s += ww[o * tw + q] * xr[ixw[o * tw + q]];
                    acc += w[j] * s;
                }
                y[o] = acc;
            }
        }
        if (p->extrap)
            for (int64_t o = 0; o < ow_n; o++)
                if (extw[o]) y[o] = p->extrap_value;
    }
}

/* Nearest for any element size: every tap has weight 1, k == 1. An output
 * row that reads the input row the one before it read (upsampling along H)
 * is a copy of that output row. */
static void resize_gather(void *arg, int64_t b, int64_t e, int tid) {
    const resize_args *a = arg;
    const q8_resize_params *p = a->p;
    int last = p->rank - 1;
    int64_t ow_n = p->out[last];
    const int64_t *ixw = (const int64_t *)(a->pk + a->h->idx_off[last]);
    int64_t off[MAX_ROW_TAPS];
    float w[MAX_ROW_TAPS];
    size_t es = q8_dtype_size(p->dtype);
    int64_t prev = -1;
    for (int64_t row = b; row < e; row++) {
        int k;
        row_taps(a, row, off, w, &k);
        const uint8_t *xr = (const uint8_t *)a->x + (size_t)off[0] * es;
        uint8_t *y = (uint8_t *)a->y + (size_t)(row * ow_n) * es;
        if (off[0] == prev) {
            memcpy(y, y - (size_t)ow_n * es, (size_t)ow_n * es);
            continue;
        }
        prev = off[0];
        switch (es) {
        case 1:
            for (int64_t o = 0; o < ow_n; o++) y[o] = xr[ixw[o]];
            break;
        case 4:
            for (int64_t o = 0; o < ow_n; o++) memcpy(y + o * 4, xr + ixw[o] * 4, 4);
            break;
        default:
            for (int64_t o = 0; o < ow_n; o++) memcpy(y + o * 8, xr + ixw[o] * 8, 8);
            break;
        }
    }
}

static void resize_run(const q8_exec *x, const q8_node *n) {
    const q8_resize_params *p = n->params;
    int64_t ow_n = p->out[p->rank - 1];
    if (p->rows == 0 || ow_n == 0) return;
    resize_args a = {p, x->prep, x->prep, Q8_IN_PTR(x, n, 0), Q8_OUT_PTR(x, n, 0)};
    int64_t grain = ow_n >= 4096 ? 1 : 4096 / ow_n;
    q8_parallel_for(x->pool, p->rows, grain, p->dtype == Q8_F32 ? resize_f32 : resize_gather, &a);
}

const q8_cpu_op q8_cpu_resize = {.prepare = resize_prepare, .run = resize_run};
