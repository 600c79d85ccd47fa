/* DepthToSpace and SpaceToDepth (see depth_space.h). */
#include "ops/depth_space.h"

#include <string.h>

#include "op.h"

static q8_status depth_space_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 1, 1, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_UNDEFINED, err));
    const q8_tensor *x = q8_in(g, n, 0);
    if (x->ndim != 4)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "input '%s' has rank %d, expected 4 (NCHW)",
                            x->name, x->ndim);
    if (x->dtype == Q8_STRING)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "string data");
    int64_t b = q8_attr_int(n, "blocksize", 0);
    if (b < 1 || b > 4096)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "blocksize %lld: expected 1 to 4096",
                            (long long)b);
    bool d2s = n->op == Q8_OP_DEPTH_TO_SPACE;
    q8_depth_space_mode mode = Q8_S2D;
    if (d2s) {
        const char *m = q8_attr_str(n, "mode", "DCR");
        if (!strcmp(m, "DCR")) mode = Q8_D2S_DCR;
        else if (!strcmp(m, "CRD")) mode = Q8_D2S_CRD;
        else return q8_node_fail(err, Q8_ERR_FORMAT, n, "mode '%s': expected DCR or CRD", m);
        if (x->dims[1] % (b * b))
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "%lld channels are not a multiple of "
                                "blocksize^2 = %lld", (long long)x->dims[1], (long long)(b * b));
    } else if (x->dims[2] % b || x->dims[3] % b) {
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "H %lld and W %lld must be multiples of the "
                            "blocksize %lld", (long long)x->dims[2], (long long)x->dims[3],
                            (long long)b);
    }
    q8_depth_space_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->mode = mode;
    p->elem = q8_dtype_size(x->dtype);
    p->b = b;
    p->ci = x->dims[1];
    p->hi = x->dims[2];
    p->wi = x->dims[3];
    p->n = x->dims[0];
    bool over = false;
    if (d2s) {
        p->c = p->ci / (b * b);
        over = __builtin_mul_overflow(p->hi, b, &p->h) || __builtin_mul_overflow(p->wi, b, &p->w);
    } else {
        over = __builtin_mul_overflow(p->ci, b * b, &p->c);
        p->h = p->hi / b;
        p->w = p->wi / b;
    }
    if (over) return q8_node_fail(err, Q8_ERR_SHAPE, n, "the output's dims overflow");
    int64_t dims[4] = {p->n, p->c, p->h, p->w};
    return q8_set_output(g, n, 0, x->dtype, dims, 4, err);
}

const q8_op_schema q8_schema_depth_to_space = {.infer = depth_space_infer};
const q8_op_schema q8_schema_space_to_depth = {.infer = depth_space_infer};
