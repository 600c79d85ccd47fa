/* Tile (see tile.h). */
#include "ops/tile.h"

#include "op.h"
#include "ops/tensor_args.h"

static q8_status tile_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 2, 1, 1, err));
    size_t es;
    Q8_TRY(q8_ta_elem_size(g, n, 0, &es, err));
    const q8_tensor *x = q8_in(g, n, 0);
    int64_t rep[Q8_MAX_DIMS], dims[Q8_MAX_DIMS];
    int nr;
    Q8_TRY(q8_const_ints(g, n, 1, rep, Q8_MAX_DIMS, &nr, err));
    char sb[160];
    if (nr != x->ndim)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "repeats %s has %d values for rank %d",
                            q8_ta_list_str(rep, nr, sb, sizeof sb), nr, x->ndim);
    for (int d = 0; d < nr; d++) {
        if (rep[d] < 0 || __builtin_mul_overflow(x->dims[d], rep[d], &dims[d]))
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "repeats %s: value %lld is invalid",
                                q8_ta_list_str(rep, nr, sb, sizeof sb), (long long)rep[d]);
    }
    q8_tile_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->esize = es;
    return q8_set_output(g, n, 0, x->dtype, dims, nr, err);
}

const q8_op_schema q8_schema_tile = {.infer = tile_infer};
