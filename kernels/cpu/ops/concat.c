/* Concat on the CPU (params: src/core/ops/concat.h). Each output row (the
 * dims before the axis) is the inputs' rows in order. A constant input of
 * all zero bytes (a TF export's channel padding) is filled with zeros
 * instead of read, so a session that owns its model releases it. An input
 * the memory plan put inside the output (src/core/planner.c) is not
 * copied. */
#include <string.h>

#include "common.h"
#include "cpu_op.h"
#include "ops/concat.h"
#include "tensor_util.h"

/* The prepared blob: per input, 1 when it is a constant of zero bytes. */
static bool all_zero(const q8_tensor *t) {
    const uint8_t *d = t->data;
    size_t nb = q8_tensor_nbytes(t);
    for (size_t i = 0; i < nb; i++)
        if (d[i]) return false;
    return nb > 0;
}

static q8_status concat_prepare(const q8_graph *g, const q8_node *n, const q8_prep_env *env,
                                void **prep, size_t *bytes, q8_error *err) {
    bool any = false;
    for (int j = 0; j < n->n_inputs && !any; j++)
        any = q8_in(g, n, j)->data && all_zero(q8_in(g, n, j));
    if (!any) return Q8_OK;
    uint8_t *zero = q8_aligned_alloc((size_t)n->n_inputs);
    if (!zero) return q8_fail(err, Q8_ERR_NOMEM, "out of memory preparing '%s'", n->name);
    for (int j = 0; j < n->n_inputs; j++)
        zero[j] = q8_in(g, n, j)->data && all_zero(q8_in(g, n, j));
    *prep = zero;
    *bytes = (size_t)n->n_inputs;
    return Q8_OK;
}

static bool concat_packed_input(const void *prep, int j) {
    return ((const uint8_t *)prep)[j] != 0;
}

typedef struct concat_args {
    const q8_exec *x;
    const q8_node *n;
    int64_t inner;      /* elements per unit of the axis */
    size_t row_bytes;   /* one output row */
} concat_args;

/* Input i's piece of an output row, in bytes. */
static size_t piece_bytes(const concat_args *a, int i) {
    const q8_concat_params *p = a->n->params;
    return (size_t)(q8_in(a->x->g, a->n, i)->dims[p->axis] * a->inner) * p->esize;
}

/* Task t: input (t % n_inputs) of output row (t / n_inputs). */
static void concat_range(void *arg, int64_t b, int64_t e, int thread) {
    const concat_args *a = arg;
    int ni = a->n->n_inputs;
    uint8_t *out = Q8_OUT_PTR(a->x, a->n, 0);
    int64_t row = b / ni;
    int i = (int)(b % ni);
    size_t off = 0;
    for (int k = 0; k < i; k++) off += piece_bytes(a, k);
    for (int64_t t = b; t < e; t++) {
        size_t nb = piece_bytes(a, i);
        const uint8_t *zero = a->x->prep;
        uint8_t *dst = out + (size_t)row * a->row_bytes + off;
        const uint8_t *src = (const uint8_t *)Q8_IN_PTR(a->x, a->n, i) + (size_t)row * nb;
        if (nb && zero && zero[i]) memset(dst, 0, nb);
        else if (nb && src != dst) memcpy(dst, src, nb); /* equal: planned in place */
        off += nb;
        if (++i == ni) {
            i = 0;
            off = 0;
            row++;
        }
    }
}

/* One piece of a row: a fixed-size copy where the size is one of the
 * short ones (inlined), else memcpy. */
static inline void copy_piece(uint8_t *d, const uint8_t *s, size_t nb) {
    switch (nb) {
    case 4: memcpy(d, s, 4); break;
    case 8: memcpy(d, s, 8); break;
    case 16: memcpy(d, s, 16); break;
    default: memcpy(d, s, nb);
    }
}

/* Short rows (a box decoder's [1, 4420, 2] halves joined on the last axis:
 * 8 bytes a piece): task i copies input i's pieces of every row, instead
 * of a task a piece. */
static void concat_inputs(void *arg, int64_t b, int64_t e, int thread) {
    const concat_args *a = arg;
    const q8_concat_params *p = a->n->params;
    const q8_tensor *y = q8_out(a->x->g, a->n, 0);
    int64_t rows = q8_ta_prod(y->dims, 0, p->axis);
    size_t off = 0;
    for (int k = 0; k < b; k++) off += piece_bytes(a, k);
    const uint8_t *zero = a->x->prep;
    for (int64_t i = b; i < e; i++) {
        size_t nb = piece_bytes(a, (int)i);
        uint8_t *dst = (uint8_t *)Q8_OUT_PTR(a->x, a->n, 0) + off;
        const uint8_t *src = Q8_IN_PTR(a->x, a->n, (int)i);
        bool fill = zero && zero[i];
        off += nb;
        if (!nb) continue;
        for (int64_t r = 0; r < rows; r++, dst += a->row_bytes, src += nb) {
            if (fill) memset(dst, 0, nb);
            else copy_piece(dst, src, nb);
        }
    }
}

static void concat_run(const q8_exec *x, const q8_node *n) {
    const q8_concat_params *p = n->params;
    const q8_tensor *y = q8_out(x->g, n, 0);
    concat_args a = {x, n, q8_ta_prod(y->dims, p->axis + 1, y->ndim), 0};
    a.row_bytes = (size_t)(y->dims[p->axis] * a.inner) * p->esize;
    if (a.row_bytes == 0) return;
    int64_t rows = q8_ta_prod(y->dims, 0, p->axis), tasks = rows * n->n_inputs;
    if (rows > 1 && a.row_bytes <= 64 * (size_t)n->n_inputs) {
        q8_parallel_for(x->pool, n->n_inputs, 1, concat_inputs, &a);
        return;
    }
    q8_parallel_for(x->pool, tasks, q8_tu_grain(a.row_bytes / (size_t)n->n_inputs + 1),
                    concat_range, &a);
}

const q8_cpu_op q8_cpu_concat = {.prepare = concat_prepare, .run = concat_run,
                                  .packed_input = concat_packed_input};
