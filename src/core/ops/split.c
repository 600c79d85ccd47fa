/* Split (see split.h). */
#include "ops/split.h"

#include <string.h>

#include "op.h"
#include "ops/tensor_args.h"

static q8_status split_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 1, 2, 1, Q8_SPLIT_MAX_OUT, err));
    size_t es;
    Q8_TRY(q8_ta_elem_size(g, n, 0, &es, err));
    const q8_tensor *x = q8_in(g, n, 0);
    int axis, no = n->n_outputs;
    int64_t ax = q8_attr_int(n, "axis", 0);
    if (!q8_norm_axis(ax, x->ndim, &axis))
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "axis %lld is out of range for rank %d",
                            (long long)ax, x->ndim);
    q8_split_params *p = q8_node_params(n, sizeof *p + sizeof(int64_t) * (size_t)no, err);
    if (!p) return Q8_ERR_NOMEM;
    p->axis = axis;
    p->n = no;
    p->esize = es;
    int count = 0;
    bool present = q8_in(g, n, 1) != NULL;
    int64_t *given = malloc(sizeof(int64_t) * Q8_SPLIT_MAX_OUT);
    if (!given) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    q8_status st =
        present ? q8_const_ints(g, n, 1, given, Q8_SPLIT_MAX_OUT, &count, err) : Q8_OK;
    if (st == Q8_OK && present && count == no)
        memcpy(p->sizes, given, sizeof(int64_t) * (size_t)no);
    free(given);
    if (st != Q8_OK) return st;
    int64_t dim = x->dims[axis];
    char sb[160];
    if (present) {
        if (count != no)
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "split has %d values for %d outputs", count,
                                no);
        int64_t sum = 0;
        for (int i = 0; i < no; i++) {
            if (p->sizes[i] < 0)
                return q8_node_fail(err, Q8_ERR_SHAPE, n, "split %s has a negative size",
                                    q8_ta_list_str(p->sizes, no, sb, sizeof sb));
            sum += p->sizes[i];
        }
        if (sum != dim)
            return q8_node_fail(
                err, Q8_ERR_SHAPE, n, "split %s sums to %lld, but axis %d has size %lld",
                q8_ta_list_str(p->sizes, no, sb, sizeof sb), (long long)sum, axis, (long long)dim);
    } else if (q8_attr_find(n, "num_outputs")) {
        int64_t k = q8_attr_int(n, "num_outputs", 0);
        if (k != no)
            return q8_node_fail(err, Q8_ERR_FORMAT, n,
                                "num_outputs is %lld but the node has %d outputs", (long long)k,
                                no);
        int64_t chunk = (dim + no - 1) / no, left = dim;
        for (int i = 0; i < no; i++) {
            p->sizes[i] = left < chunk ? left : chunk;
            left -= p->sizes[i];
        }
    } else {
        if (dim % no != 0)
            return q8_node_fail(err, Q8_ERR_SHAPE, n,
                                "axis %d of size %lld cannot be split into %d equal parts", axis,
                                (long long)dim, no);
        for (int i = 0; i < no; i++) p->sizes[i] = dim / no;
    }
    int64_t dims[Q8_MAX_DIMS];
    memcpy(dims, x->dims, sizeof dims);
    for (int i = 0; i < no; i++) {
        dims[axis] = p->sizes[i];
        Q8_TRY(q8_set_output(g, n, i, x->dtype, dims, x->ndim, err));
    }
    return Q8_OK;
}

const q8_op_schema q8_schema_split = {.infer = split_infer};
