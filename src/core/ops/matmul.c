/* MatMul (see matmul.h). */
#include "ops/matmul.h"

#include <string.h>

#include "op.h"

static q8_status matmul_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 2, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_F32, err));
    Q8_TRY(q8_check_input(g, n, 1, Q8_F32, err));
    const q8_tensor *a = q8_in(g, n, 0), *b = q8_in(g, n, 1);
    if (a->ndim < 1 || b->ndim < 1)
        return q8_node_fail(err, Q8_ERR_SHAPE, n,
                            "MatMul operands must have rank >= 1, got %d and %d", a->ndim,
                            b->ndim);
    /* Promoted shapes. */
    int64_t ad[Q8_MAX_DIMS + 1], bd[Q8_MAX_DIMS + 1];
    int na = a->ndim, nb = b->ndim;
    if (na == 1) {
        ad[0] = 1;
        ad[1] = a->dims[0];
        na = 2;
    } else {
        memcpy(ad, a->dims, sizeof(int64_t) * (size_t)na);
    }
    if (nb == 1) {
        bd[0] = b->dims[0];
        bd[1] = 1;
        nb = 2;
    } else {
        memcpy(bd, b->dims, sizeof(int64_t) * (size_t)nb);
    }
    int64_t m = ad[na - 2], k = ad[na - 1], kb = bd[nb - 2], nn = bd[nb - 1];
    if (k != kb) {
        char sa[96], sb[96];
        return q8_node_fail(err, Q8_ERR_SHAPE, n,
                            "shapes %s and %s: inner dims %lld and %lld differ",
                            q8_shape_str(a->dims, a->ndim, sa, sizeof sa),
                            q8_shape_str(b->dims, b->ndim, sb, sizeof sb), (long long)k,
                            (long long)kb);
    }
    int64_t bat[Q8_MAX_DIMS];
    int nbat;
    Q8_TRY(q8_broadcast_shape(n, ad, na - 2, bd, nb - 2, bat, &nbat, err));
    int64_t out[Q8_MAX_DIMS + 2];
    int no = 0;
    for (int i = 0; i < nbat; i++) out[no++] = bat[i];
    if (a->ndim > 1) out[no++] = m;
    if (b->ndim > 1) out[no++] = nn;
    if (no > Q8_MAX_DIMS)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "output rank %d (at most %d)", no,
                            Q8_MAX_DIMS);
    int64_t batch = 1, bbatch = 1;
    for (int i = 0; i < nbat; i++) batch *= bat[i];
    for (int i = 0; i < nb - 2; i++) bbatch *= bd[i];
    /* B without batch: the whole of A (contiguous) is one [batch*m, k]. */
    bool fold = bbatch == 1;
    bool empty = batch == 0 || m == 0 || nn == 0;
    int64_t ngemm = fold || empty ? 1 : batch;
    q8_matmul_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->m = empty ? 0 : fold ? batch * m : m;
    p->n = nn;
    p->k = k;
    p->batch = ngemm;
    if (ngemm > 1) {
        /* Strides of A's and B's batch dims aligned to the broadcast dims
         * (0 where broadcast). */
        int64_t st = m * k;
        for (int i = na - 3, j = nbat - 1; i >= 0; i--, j--) {
            p->a_stride[j] = ad[i] == 1 ? 0 : st;
            st *= ad[i];
        }
        st = k * nn;
        for (int i = nb - 3, j = nbat - 1; i >= 0; i--, j--) {
            p->b_stride[j] = bd[i] == 1 ? 0 : st;
            st *= bd[i];
        }
        p->nbat = nbat;
        for (int j = 0; j < nbat; j++) p->bat[j] = bat[j];
    }
    Q8_TRY(q8_act_from_node(n, &p->act, err));
    Q8_TRY(q8_set_output(g, n, 0, Q8_F32, out, no, err));
    return Q8_OK;
}

const q8_op_schema q8_schema_matmul = {.infer = matmul_infer};
