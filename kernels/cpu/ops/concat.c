/* Concat along one axis (negative counts from the end). Inputs must agree
 * on dtype, rank and every dim but the axis; size-0 inputs are allowed.
 * Each output row (the dims before the axis) is the inputs' rows in order. */
#include <string.h>

#include "tensor_util.h"

typedef struct concat_params {
    int axis;
    size_t esize;
} concat_params;

static q8_status concat_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 1, 1 << 20, 1, 1, err));
    size_t es;
    Q8_TRY(q8_tu_elem_size(g, n, 0, &es, err));
    const q8_tensor *x0 = q8_in(g, n, 0);
    const q8_attr *aa = q8_attr_find(n, "axis");
    if (!aa || aa->type != Q8_ATTR_INT)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "attribute 'axis' is missing");
    int axis;
    if (!q8_norm_axis(aa->i, x0->ndim, &axis))
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "axis %lld is out of range for rank %d",
                            (long long)aa->i, x0->ndim);
    int64_t dims[Q8_MAX_DIMS];
    memcpy(dims, x0->dims, sizeof dims);
    dims[axis] = 0;
    char sa[96], sb[96];
    for (int i = 0; i < n->n_inputs; i++) {
        if (n->inputs[i] < 0) return q8_node_fail(err, Q8_ERR_FORMAT, n, "input %d is missing", i);
        Q8_TRY(q8_check_input(g, n, i, Q8_UNDEFINED, err));
        const q8_tensor *t = q8_in(g, n, i);
        if (t->dtype != x0->dtype)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "input %d ('%s') is %s, input 0 is %s", i,
                                t->name, q8_dtype_name(t->dtype), q8_dtype_name(x0->dtype));
        bool ok = t->ndim == x0->ndim;
        for (int d = 0; ok && d < t->ndim; d++) ok = d == axis || t->dims[d] == x0->dims[d];
        if (!ok)
            return q8_node_fail(
                err, Q8_ERR_SHAPE, n,
                "input %d ('%s') has shape %s, input 0 has %s: all dims but axis %d "
                "must match",
                i, t->name, q8_shape_str(t->dims, t->ndim, sa, sizeof sa),
                q8_shape_str(x0->dims, x0->ndim, sb, sizeof sb), axis);
        dims[axis] += t->dims[axis];
    }
    concat_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->axis = axis;
    p->esize = es;
    return q8_set_output(g, n, 0, x0->dtype, dims, x0->ndim, err);
}

typedef struct concat_args {
    const q8_exec *x;
    const q8_node *n;
    int64_t inner;      /* elements per unit of the axis */
    size_t row_bytes;   /* one output row */
} concat_args;

/* Task t: input (t % n_inputs) of output row (t / n_inputs). */
static void concat_range(void *arg, int64_t b, int64_t e, int thread) {
    const concat_args *a = arg;
    const concat_params *p = a->n->params;
    int ni = a->n->n_inputs;
    uint8_t *out = Q8_OUT_PTR(a->x, a->n, 0);
    int64_t row = b / ni;
    int i = (int)(b % ni);
    size_t off = 0;
    for (int k = 0; k < i; k++)
        off += (size_t)(q8_in(a->x->g, a->n, k)->dims[p->axis] * a->inner) * p->esize;
    for (int64_t t = b; t < e; t++) {
        size_t nb = (size_t)(q8_in(a->x->g, a->n, i)->dims[p->axis] * a->inner) * p->esize;
        if (nb)
            memcpy(out + (size_t)row * a->row_bytes + off,
                   (const uint8_t *)Q8_IN_PTR(a->x, a->n, i) + (size_t)row * nb, nb);
        off += nb;
        if (++i == ni) {
            i = 0;
            off = 0;
            row++;
        }
    }
}

static void concat_run(const q8_exec *x, const q8_node *n) {
    const concat_params *p = n->params;
    const q8_tensor *y = q8_out(x->g, n, 0);
    concat_args a = {x, n, q8_tu_prod(y->dims, p->axis + 1, y->ndim), 0};
    a.row_bytes = (size_t)(y->dims[p->axis] * a.inner) * p->esize;
    if (a.row_bytes == 0) return;
    int64_t rows = q8_tu_prod(y->dims, 0, p->axis), tasks = rows * n->n_inputs;
    q8_parallel_for(x->pool, tasks, q8_tu_grain(a.row_bytes / (size_t)n->n_inputs + 1),
                    concat_range, &a);
}

const q8_op_schema q8_schema_concat = {.infer = concat_infer};
const q8_cpu_op q8_cpu_concat = {.run = concat_run};
