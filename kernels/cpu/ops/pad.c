/* Pad on the CPU (params: src/core/ops/pad.h): each output row (all dims but
 * the last) is all fill value (constant mode, outside the input) or its
 * source row, with the last dim's borders filled or mapped by the mode. */
#include <string.h>

#include "ops/pad.h"
#include "tensor_util.h"

/* Source coordinate for output coordinate c - pb, or -1 (constant fill). */
static int64_t map_coord(int mode, int64_t c, int64_t d) {
    if (c >= 0 && c < d) return c;
    switch (mode) {
    case Q8_PAD_EDGE: return c < 0 ? 0 : d - 1;
    case Q8_PAD_REFLECT: return c < 0 ? -c : 2 * (d - 1) - c;
    case Q8_PAD_WRAP: {
        int64_t m = c % d;
        return m < 0 ? m + d : m;
    }
    default: return -1;
    }
}

typedef struct pad_args {
    const q8_pad_params *p;
    const q8_tensor *x, *y;
    const uint8_t *src;
    uint8_t *dst;
    const void *value;
    int64_t in_stride[Q8_MAX_DIMS];
} pad_args;

static void pad_rows(void *arg, int64_t b, int64_t e, int thread) {
    const pad_args *a = arg;
    const q8_pad_params *p = a->p;
    int r = a->x->ndim, last = r - 1;
    size_t es = p->esize;
    int64_t lo = a->y->dims[last], d = a->x->dims[last], pb = p->pb[last];
    /* Output positions [m0, m1) of the last dim come straight from the input. */
    int64_t m0 = pb > 0 ? pb : 0, m1 = pb + d < lo ? pb + d : lo;
    if (m1 < m0) m1 = m0;
    for (int64_t row = b; row < e; row++) {
        uint8_t *dst = a->dst + (size_t)(row * lo) * es;
        int64_t rr = row, off = 0;
        bool fill = false;
        for (int k = last - 1; k >= 0; k--) {
            int64_t c = rr % a->y->dims[k];
            rr /= a->y->dims[k];
            int64_t ic = map_coord(p->mode, c - p->pb[k], a->x->dims[k]);
            if (ic < 0) fill = true;
            else off += ic * a->in_stride[k];
        }
        if (fill) {
            q8_tu_fill(dst, a->value, lo, es);
            continue;
        }
        const uint8_t *src = a->src + (size_t)off * es;
        if (m1 > m0)
            memcpy(dst + (size_t)m0 * es, src + (size_t)(m0 - pb) * es, (size_t)(m1 - m0) * es);
        if (p->mode == Q8_PAD_CONSTANT) {
            q8_tu_fill(dst, a->value, m0, es);
            q8_tu_fill(dst + (size_t)m1 * es, a->value, lo - m1, es);
            continue;
        }
        for (int64_t o = 0; o < m0; o++)
            memcpy(dst + (size_t)o * es, src + (size_t)map_coord(p->mode, o - pb, d) * es, es);
        for (int64_t o = m1; o < lo; o++)
            memcpy(dst + (size_t)o * es, src + (size_t)map_coord(p->mode, o - pb, d) * es, es);
    }
}

static void pad_run(const q8_exec *x, const q8_node *n) {
    static const uint8_t zero[8]; /* the fill without a constant_value */
    const q8_pad_params *p = n->params;
    pad_args a = {p, q8_in(x->g, n, 0), q8_out(x->g, n, 0), Q8_IN_PTR(x, n, 0), Q8_OUT_PTR(x, n, 0),
                  p->value_input ? Q8_IN_PTR(x, n, 2) : zero, {0}};
    int r = a.x->ndim;
    if (r == 0) {
        memcpy(a.dst, a.src, p->esize);
        return;
    }
    q8_row_strides(a.x->dims, r, a.in_stride);
    int64_t lo = a.y->dims[r - 1];
    if (lo == 0) return;
    int64_t rows = q8_ta_prod(a.y->dims, 0, r - 1);
    q8_parallel_for(x->pool, rows, q8_tu_grain((size_t)lo * p->esize), pad_rows, &a);
}

const q8_cpu_op q8_cpu_pad = {.run = pad_run};
