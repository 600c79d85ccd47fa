/* LayerNormalization (see layernorm.h). */
#include "ops/layernorm.h"

#include "op.h"

/* Strides of t broadcast to dims[0..nd); false if it does not broadcast. */
static bool bcast_strides(const q8_tensor *t, const int64_t *dims, int nd, int64_t *st,
                          bool *full) {
    if (t->ndim > nd) {
        /* leading dims of size 1 beyond the normalized rank are harmless */
        for (int i = 0; i < t->ndim - nd; i++)
            if (t->dims[i] != 1) return false;
    }
    int64_t s = 1;
    *full = true;
    for (int i = nd - 1; i >= 0; i--) {
        int ti = t->ndim - (nd - i);
        int64_t td = ti >= 0 ? t->dims[ti] : 1;
        if (td == dims[i]) {
            st[i] = td == 1 ? 0 : s;
        } else if (td == 1) {
            st[i] = 0;
            *full = false;
        } else {
            return false;
        }
        s *= td;
    }
    return true;
}

static q8_status ln_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 3, 1, 3, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_F32, err));
    Q8_TRY(q8_check_input(g, n, 1, Q8_F32, err));
    bool has_b = n->n_inputs > 2 && n->inputs[2] >= 0;
    if (has_b) Q8_TRY(q8_check_input(g, n, 2, Q8_F32, err));
    const q8_tensor *x = q8_in(g, n, 0);
    int64_t axis = q8_attr_int(n, "axis", -1);
    if (axis < -x->ndim || axis > x->ndim)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "axis %lld is out of range for rank %d",
                            (long long)axis, x->ndim);
    if (axis < 0) axis += x->ndim;
    int64_t stash = q8_attr_int(n, "stash_type", 1);
    if (stash != 1)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n,
                            "stash_type %lld is not supported (only 1, float32)", (long long)stash);
    float eps = q8_attr_float(n, "epsilon", 1e-5f);
    if (!(eps >= 0.0f))
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "epsilon is %g, expected >= 0", eps);
    q8_layernorm_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->eps = eps;
    p->nd = x->ndim - (int)axis;
    p->rows = p->len = 1;
    int64_t mdims[Q8_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++) {
        if (d < axis) {
            p->rows *= x->dims[d];
            mdims[d] = x->dims[d];
        } else {
            p->len *= x->dims[d];
            p->dims[d - axis] = x->dims[d];
            mdims[d] = 1;
        }
    }
    const q8_tensor *sc = q8_in(g, n, 1), *b = has_b ? q8_in(g, n, 2) : NULL;
    char s1[96], s2[96];
    if (!bcast_strides(sc, p->dims, p->nd, p->sstride, &p->s_full))
        return q8_node_fail(err, Q8_ERR_SHAPE, n,
                            "Scale has shape %s, which does not broadcast to %s",
                            q8_shape_str(sc->dims, sc->ndim, s1, sizeof s1),
                            q8_shape_str(p->dims, p->nd, s2, sizeof s2));
    p->has_b = has_b;
    p->b_full = true;
    if (b && !bcast_strides(b, p->dims, p->nd, p->bstride, &p->b_full))
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "B has shape %s, which does not broadcast to %s",
                            q8_shape_str(b->dims, b->ndim, s1, sizeof s1),
                            q8_shape_str(p->dims, p->nd, s2, sizeof s2));
    Q8_TRY(q8_set_output(g, n, 0, Q8_F32, x->dims, x->ndim, err));
    Q8_TRY(q8_set_output(g, n, 1, Q8_F32, mdims, x->ndim, err));
    return q8_set_output(g, n, 2, Q8_F32, mdims, x->ndim, err);
}

/* In place is safe: every kernel reads a row completely before writing it. */
const q8_op_schema q8_schema_layer_norm = {.infer = ln_infer, .flags = Q8_OPF_INPLACE};
