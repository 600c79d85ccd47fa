/* Transpose (see transpose.h). */
#include "ops/transpose.h"

#include "op.h"
#include "ops/tensor_args.h"

static q8_status transpose_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 1, 1, 1, 1, err));
    size_t es;
    Q8_TRY(q8_ta_elem_size(g, n, 0, &es, err));
    const q8_tensor *x = q8_in(g, n, 0);
    int r = x->ndim, np;
    int64_t perm[Q8_MAX_DIMS];
    const int64_t *pa = q8_attr_ints(n, "perm", &np);
    char sb[160];
    if (pa) {
        bool seen[Q8_MAX_DIMS] = {0}, ok = np == r;
        for (int i = 0; ok && i < np; i++) {
            ok = pa[i] >= 0 && pa[i] < r && !seen[pa[i]];
            if (ok) seen[pa[i]] = true;
        }
        if (!ok)
            return q8_node_fail(err, Q8_ERR_SHAPE, n,
                                "perm %s is not a permutation of 0..%d (input rank %d)",
                                q8_ta_list_str(pa, np, sb, sizeof sb), r - 1, r);
        for (int i = 0; i < r; i++) perm[i] = pa[i];
    } else {
        for (int i = 0; i < r; i++) perm[i] = r - 1 - i;
    }
    q8_transpose_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->esize = es;
    int64_t dims[Q8_MAX_DIMS];
    for (int k = 0; k < r; k++) {
        p->perm[k] = (int)perm[k];
        dims[k] = x->dims[perm[k]];
    }
    return q8_set_output(g, n, 0, x->dtype, dims, r, err);
}

const q8_op_schema q8_schema_transpose = {.infer = transpose_infer};
