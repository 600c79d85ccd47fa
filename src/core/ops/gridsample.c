/* GridSample (see gridsample.h). */
#include "ops/gridsample.h"

#include <string.h>

#include "op.h"

static q8_status gridsample_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 2, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_F32, err));
    Q8_TRY(q8_check_input(g, n, 1, Q8_F32, err));
    const q8_tensor *x = q8_in(g, n, 0), *gr = q8_in(g, n, 1);
    if (x->ndim != 4)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "input '%s' has rank %d: only 4-D "
                            "(N, C, H, W) is supported", x->name, x->ndim);
    if (gr->ndim != 4 || gr->dims[0] != x->dims[0] || gr->dims[3] != 2)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "grid must be [%lld, Ho, Wo, 2]",
                            (long long)x->dims[0]);
    const char *m = q8_attr_str(n, "mode", "bilinear"), *pm = q8_attr_str(n, "padding_mode", "zeros");
    q8_gs_mode mode;
    if (!strcmp(m, "bilinear") || !strcmp(m, "linear")) mode = Q8_GS_LINEAR;
    else if (!strcmp(m, "nearest")) mode = Q8_GS_NEAREST;
    else if (!strcmp(m, "bicubic") || !strcmp(m, "cubic")) mode = Q8_GS_CUBIC;
    else return q8_node_fail(err, Q8_ERR_FORMAT, n, "mode '%s': expected bilinear, nearest or "
                             "bicubic", m);
    q8_gs_padding pad;
    if (!strcmp(pm, "zeros")) pad = Q8_GS_ZEROS;
    else if (!strcmp(pm, "border")) pad = Q8_GS_BORDER;
    else if (!strcmp(pm, "reflection")) pad = Q8_GS_REFLECTION;
    else return q8_node_fail(err, Q8_ERR_FORMAT, n, "padding_mode '%s': expected zeros, border "
                             "or reflection", pm);
    q8_gridsample_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->mode = mode;
    p->padding = pad;
    p->align_corners = q8_attr_int(n, "align_corners", 0) != 0;
    p->n = x->dims[0];
    p->c = x->dims[1];
    p->h = x->dims[2];
    p->w = x->dims[3];
    p->ho = gr->dims[1];
    p->wo = gr->dims[2];
    int64_t dims[4] = {p->n, p->c, p->ho, p->wo};
    return q8_set_output(g, n, 0, Q8_F32, dims, 4, err);
}

const q8_op_schema q8_schema_grid_sample = {.infer = gridsample_infer};
