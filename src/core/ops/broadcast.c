/* Broadcast plans; see broadcast.h. */
#include "ops/broadcast.h"

#include <string.h>

#include "op.h"

q8_status q8_bcast_shapes(const q8_graph *g, const q8_node *n, int first, int count,
                          int64_t *out, int *nout, q8_error *err) {
    int64_t acc[Q8_MAX_DIMS];
    int na = 0;
    for (int i = first; i < first + count; i++) {
        const q8_tensor *t = q8_in(g, n, i);
        if (!t) continue;
        int64_t tmp[Q8_MAX_DIMS];
        int nt;
        Q8_TRY(q8_broadcast_shape(n, acc, na, t->dims, t->ndim, tmp, &nt, err));
        memcpy(acc, tmp, sizeof(int64_t) * (size_t)nt);
        na = nt;
    }
    memcpy(out, acc, sizeof(int64_t) * (size_t)na);
    *nout = na;
    return Q8_OK;
}

size_t q8_bcast_bytes(int n_in) {
    return sizeof(q8_bcast) + sizeof(int64_t) * Q8_MAX_DIMS * (size_t)n_in;
}

void q8_bcast_plan_init(q8_bcast *p, const int64_t *out_dims, int out_ndim, int n_in,
                        const int64_t *const *in_dims, const int *in_ndim) {
    Q8_ASSERT(out_ndim <= Q8_MAX_DIMS && n_in <= Q8_BCAST_MAX_IN);
    p->n_in = n_in;
    p->numel = 1;
    for (int d = 0; d < out_ndim; d++) p->numel *= out_dims[d];
    /* Uncollapsed: dims of size 1 are dropped (nothing to iterate). */
    int64_t dims[Q8_MAX_DIMS], st[Q8_BCAST_MAX_IN][Q8_MAX_DIMS];
    int m = 0;
    for (int d = 0; d < out_ndim; d++) {
        if (out_dims[d] == 1) continue;
        dims[m] = out_dims[d];
        for (int k = 0; k < n_in; k++) {
            int off = out_ndim - in_ndim[k];  /* input dims are right-aligned */
            Q8_ASSERT(off >= 0);
            int64_t id = d - off >= 0 ? in_dims[k][d - off] : 1, cs = 1;
            if (id != 1)  /* present: its contiguous stride */
                for (int e = d - off + 1; e < in_ndim[k]; e++) cs *= in_dims[k][e];
            Q8_ASSERT(id == 1 || id == out_dims[d]);
            st[k][m] = id == 1 ? 0 : cs;
        }
        m++;
    }
    /* Collapse from the inside out: dim j-1 merges into the current
     * innermost one when every input walks both as a single dim. */
    int64_t cd[Q8_MAX_DIMS], cs[Q8_BCAST_MAX_IN][Q8_MAX_DIMS];
    int c = 0;  /* collapsed dims, stored innermost first, reversed below */
    for (int j = m - 1; j >= 0; j--) {
        bool merge = c > 0;
        for (int k = 0; merge && k < n_in; k++)
            merge = st[k][j] == cs[k][c - 1] * cd[c - 1];
        if (merge) {
            cd[c - 1] *= dims[j];
            continue;
        }
        cd[c] = dims[j];
        for (int k = 0; k < n_in; k++) cs[k][c] = st[k][j];
        c++;
    }
    if (c == 0) {  /* one element: rank 0 or all dims 1 */
        cd[0] = 1;
        for (int k = 0; k < n_in; k++) cs[k][0] = 0;
        c = 1;
    }
    p->ndim = c;
    for (int d = 0; d < c; d++) {
        p->dims[d] = cd[c - 1 - d];
        for (int k = 0; k < n_in; k++) p->strides[k * Q8_MAX_DIMS + d] = cs[k][c - 1 - d];
    }
    for (int k = 0; k < n_in; k++) Q8_ASSERT(p->strides[k * Q8_MAX_DIMS + c - 1] <= 1);
}

q8_status q8_bcast_plan_dims(q8_node *n, const int64_t *out_dims, int out_ndim, int n_in,
                             const int64_t *const *in_dims, const int *in_ndim, q8_error *err) {
    if (n_in > Q8_BCAST_MAX_IN)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "has %d inputs, at most %d are supported",
                            n_in, Q8_BCAST_MAX_IN);
    q8_bcast *p = q8_node_params(n, q8_bcast_bytes(n_in), err);
    if (!p) return Q8_ERR_NOMEM;
    q8_bcast_plan_init(p, out_dims, out_ndim, n_in, in_dims, in_ndim);
    return Q8_OK;
}

q8_status q8_bcast_plan_new(q8_node *n, const q8_graph *g, int first, int count,
                            const int64_t *out_dims, int out_ndim, q8_error *err) {
    const int64_t *in_dims[Q8_BCAST_MAX_IN];
    int in_ndim[Q8_BCAST_MAX_IN];
    for (int k = 0; k < count && k < Q8_BCAST_MAX_IN; k++) {
        const q8_tensor *t = q8_in(g, n, first + k);
        Q8_ASSERT(t);
        in_dims[k] = t->dims;
        in_ndim[k] = t->ndim;
    }
    return q8_bcast_plan_dims(n, out_dims, out_ndim, count, in_dims, in_ndim, err);
}
