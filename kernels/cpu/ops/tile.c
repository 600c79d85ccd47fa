/* Tile: out dim k = in dim k * repeats[k] (repeats: a constant input, opset
 * >= 6); out[i] = in[i mod in dims]. Each output row (all dims but the last)
 * is its source row copied repeats[last] times. */
#include <string.h>

#include "tensor_util.h"

typedef struct tile_params {
    size_t esize;
} tile_params;

static q8_status tile_infer(q8_graph *g, q8_node *n, q8_error *err) {
    if (g->opset < 6)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n,
                            "Tile-1 (tiles/axis inputs) is not supported");
    Q8_TRY(q8_check_io(n, 2, 2, 1, 1, err));
    size_t es;
    Q8_TRY(q8_tu_elem_size(g, n, 0, &es, err));
    const q8_tensor *x = q8_in(g, n, 0);
    int64_t rep[Q8_MAX_DIMS], dims[Q8_MAX_DIMS];
    int nr;
    Q8_TRY(q8_const_ints(g, n, 1, rep, Q8_MAX_DIMS, &nr, err));
    char sb[160];
    if (nr != x->ndim)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "repeats %s has %d values for rank %d",
                            q8_tu_list_str(rep, nr, sb, sizeof sb), nr, x->ndim);
    for (int d = 0; d < nr; d++) {
        if (rep[d] < 0 || __builtin_mul_overflow(x->dims[d], rep[d], &dims[d]))
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "repeats %s: value %lld is invalid",
                                q8_tu_list_str(rep, nr, sb, sizeof sb), (long long)rep[d]);
    }
    tile_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->esize = es;
    return q8_set_output(g, n, 0, x->dtype, dims, nr, err);
}

typedef struct tile_args {
    const q8_tensor *x, *y;
    const uint8_t *src;
    uint8_t *dst;
    size_t esize;
    int64_t in_stride[Q8_MAX_DIMS];
} tile_args;

static void tile_rows(void *arg, int64_t b, int64_t e, int thread) {
    const tile_args *a = arg;
    int last = a->x->ndim - 1;
    size_t in_row = (size_t)a->x->dims[last] * a->esize,
           out_row = (size_t)a->y->dims[last] * a->esize;
    for (int64_t row = b; row < e; row++) {
        int64_t rr = row, off = 0;
        for (int k = last - 1; k >= 0; k--) {
            int64_t c = rr % a->y->dims[k];
            rr /= a->y->dims[k];
            off += (c % a->x->dims[k]) * a->in_stride[k];
        }
        uint8_t *dst = a->dst + (size_t)row * out_row;
        const uint8_t *src = a->src + (size_t)off * a->esize;
        for (size_t o = 0; o < out_row; o += in_row) memcpy(dst + o, src, in_row);
    }
}

static void tile_run(const q8_exec *x, const q8_node *n) {
    const tile_params *p = n->params;
    tile_args a = {q8_in(x->g, n, 0), q8_out(x->g, n, 0), Q8_IN_PTR(x, n, 0), Q8_OUT_PTR(x, n, 0),
                   p->esize, {0}};
    int r = a.x->ndim;
    if (r == 0) {
        memcpy(a.dst, a.src, p->esize);
        return;
    }
    if (q8_tensor_numel(a.y) == 0) return;
    q8_tu_strides(a.x->dims, r, a.in_stride);
    int64_t rows = q8_tu_prod(a.y->dims, 0, r - 1);
    q8_parallel_for(x->pool, rows, q8_tu_grain((size_t)a.y->dims[r - 1] * p->esize), tile_rows, &a);
}

const q8_op_schema q8_schema_tile = {.infer = tile_infer};
const q8_cpu_op q8_cpu_tile = {.run = tile_run};
