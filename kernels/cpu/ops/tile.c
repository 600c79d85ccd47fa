/* Tile on the CPU (params: src/core/ops/tile.h): each output row (all dims
 * but the last) is its source row copied repeats[last] times. */
#include <string.h>

#include "ops/tile.h"
#include "tensor_util.h"

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
    const q8_tile_params *p = n->params;
    tile_args a = {q8_in(x->g, n, 0), q8_out(x->g, n, 0), Q8_IN_PTR(x, n, 0), Q8_OUT_PTR(x, n, 0),
                   p->esize, {0}};
    int r = a.x->ndim;
    if (r == 0) {
        memcpy(a.dst, a.src, p->esize);
        return;
    }
    if (q8_tensor_numel(a.y) == 0) return;
    q8_row_strides(a.x->dims, r, a.in_stride);
    int64_t rows = q8_ta_prod(a.y->dims, 0, r - 1);
    q8_parallel_for(x->pool, rows, q8_tu_grain((size_t)a.y->dims[r - 1] * p->esize), tile_rows, &a);
}

const q8_cpu_op q8_cpu_tile = {.run = tile_run};
