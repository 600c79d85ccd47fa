/* RoiAlign (see roialign.h). */
#include "ops/roialign.h"

#include <math.h>
#include <string.h>

#include "op.h"

static q8_status roialign_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 3, 3, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_F32, err));
    Q8_TRY(q8_check_input(g, n, 1, Q8_F32, err));
    Q8_TRY(q8_check_input(g, n, 2, Q8_UNDEFINED, err));
    const q8_tensor *x = q8_in(g, n, 0), *r = q8_in(g, n, 1), *b = q8_in(g, n, 2);
    if (x->ndim != 4)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "input has rank %d, expected 4 ([N, C, H, W])",
                            x->ndim);
    if (r->ndim != 2 || r->dims[1] != 4)
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "rois must be [num_rois, 4]");
    if (b->dtype != Q8_I64 && b->dtype != Q8_I32)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "batch_indices are %s, expected int64",
                            q8_dtype_name(b->dtype));
    if (b->ndim != 1 || b->dims[0] != r->dims[0])
        return q8_node_fail(err, Q8_ERR_SHAPE, n, "batch_indices must be [num_rois] = [%lld]",
                            (long long)r->dims[0]);
    const char *mode = q8_attr_str(n, "mode", "avg");
    const char *ct = q8_attr_str(n, "coordinate_transformation_mode",
                                 g->opset >= 16 ? "half_pixel" : "output_half_pixel");
    if (strcmp(mode, "avg") && strcmp(mode, "max"))
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "mode '%s': expected avg or max", mode);
    if (strcmp(ct, "half_pixel") && strcmp(ct, "output_half_pixel"))
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "coordinate_transformation_mode '%s': "
                            "expected half_pixel or output_half_pixel", ct);
    int64_t oh = q8_attr_int(n, "output_height", 1), ow = q8_attr_int(n, "output_width", 1);
    int64_t sr = q8_attr_int(n, "sampling_ratio", 0);
    float scale = q8_attr_float(n, "spatial_scale", 1.0f);
    if (oh < 1 || ow < 1)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "output_height and output_width must be "
                            "positive");
    if (sr < 0 || sr > Q8_ROIALIGN_MAX_GRID)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "sampling_ratio %lld: expected 0 to %d",
                            (long long)sr, Q8_ROIALIGN_MAX_GRID);
    int64_t work = 0;
    if (sr > 0 && (__builtin_mul_overflow(r->dims[0], x->dims[1], &work) ||
                   __builtin_mul_overflow(work, oh, &work) || __builtin_mul_overflow(work, ow, &work) ||
                   __builtin_mul_overflow(work, sr * sr, &work) || work > (INT64_C(1) << 36)))
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "sampling_ratio %lld asks for over 2^36 "
                            "samples (rois x channels x output bins x ratio^2)", (long long)sr);
    if (!isfinite(scale))
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "spatial_scale %g is not finite", scale);
    q8_roialign_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    p->max = !strcmp(mode, "max");
    p->half_pixel = !strcmp(ct, "half_pixel");
    p->index_dtype = b->dtype;
    p->spatial_scale = scale;
    p->sampling_ratio = sr;
    p->n = x->dims[0], p->c = x->dims[1], p->h = x->dims[2], p->w = x->dims[3];
    p->rois = r->dims[0], p->oh = oh, p->ow = ow;
    int64_t dims[4] = {p->rois, p->c, oh, ow};
    return q8_set_output(g, n, 0, Q8_F32, dims, 4, err);
}

const q8_op_schema q8_schema_roi_align = {.infer = roialign_infer};
