/* Slice (see slice.h). */
#include "ops/slice.h"

#include "op.h"
#include "ops/tensor_args.h"

/* The int list of input i, if given (*present). */
static q8_status slice_list(q8_graph *g, q8_node *n, int i, int64_t *v, int *count, bool *present,
                            q8_error *err) {
    *count = 0;
    *present = q8_in(g, n, i) != NULL;
    return *present ? q8_const_ints(g, n, i, v, Q8_MAX_DIMS, count, err) : Q8_OK;
}

static q8_status slice_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 3, 5, 1, 1, err));
    size_t es;
    Q8_TRY(q8_ta_elem_size(g, n, 0, &es, err));
    const q8_tensor *x = q8_in(g, n, 0);
    int r = x->ndim, ns, ne, na, nst;
    int64_t starts[Q8_MAX_DIMS], ends[Q8_MAX_DIMS], axes[Q8_MAX_DIMS], steps[Q8_MAX_DIMS];
    bool has_s, has_e, has_a, has_st;
    Q8_TRY(slice_list(g, n, 1, starts, &ns, &has_s, err));
    Q8_TRY(slice_list(g, n, 2, ends, &ne, &has_e, err));
    Q8_TRY(slice_list(g, n, 3, axes, &na, &has_a, err));
    Q8_TRY(slice_list(g, n, 4, steps, &nst, &has_st, err));
    if (ns != ne)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "starts has %d values, ends %d", ns, ne);
    if (has_a && na != ns)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "axes has %d values, starts %d", na, ns);
    if (has_st && nst != ns)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "steps has %d values, starts %d", nst, ns);
    if (!has_a) {
        if (ns > r)
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "starts has %d values for rank %d", ns, r);
        for (int i = 0; i < ns; i++) axes[i] = i;
    }
    if (!has_st)
        for (int i = 0; i < ns; i++) steps[i] = 1;
    Q8_TRY(q8_ta_norm_axes(n, "axes", axes, ns, r, err));

    int64_t start[Q8_MAX_DIMS], step[Q8_MAX_DIMS], dims[Q8_MAX_DIMS];
    for (int d = 0; d < r; d++) {
        start[d] = 0;
        step[d] = 1;
        dims[d] = x->dims[d];
    }
    for (int i = 0; i < ns; i++) {
        int d = (int)axes[i];
        int64_t dim = x->dims[d], s = starts[i], e = ends[i], st = steps[i];
        if (st == 0) return q8_node_fail(err, Q8_ERR_SHAPE, n, "steps[%d] is 0", i);
        /* Any |step| > dim takes at most one element: clamping avoids overflow. */
        if (st > dim + 1) st = dim + 1;
        if (st < -dim - 1) st = -dim - 1;
        if (s < 0) s += dim;    /* no overflow: dim >= 0 */
        if (e < 0) e += dim;
        int64_t len;
        if (dim == 0) {
            len = 0;
        } else if (st > 0) {
            s = s < 0 ? 0 : s > dim ? dim : s;
            e = e < 0 ? 0 : e > dim ? dim : e;
            len = e > s ? 1 + (e - s - 1) / st : 0;
        } else {
            s = s < 0 ? 0 : s > dim - 1 ? dim - 1 : s;
            e = e < -1 ? -1 : e > dim - 1 ? dim - 1 : e;
            len = s > e ? 1 + (s - e - 1) / -st : 0;
        }
        start[d] = len ? s : 0;
        step[d] = len > 1 ? st : 1;
        dims[d] = len;
    }
    q8_slice_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->esize = es;
    for (int d = 0; d < r; d++) {
        p->start[d] = start[d];
        p->step[d] = step[d];
    }
    return q8_set_output(g, n, 0, x->dtype, dims, r, err);
}

const q8_op_schema q8_schema_slice = {.infer = slice_infer};
