/* QuantizeLinear (see quantizelinear.h). */
#include "ops/quantizelinear.h"

#include <stdlib.h>
#include <string.h>

#include "op.h"

static q8_status quant_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 3, 1, 1, err));
    q8_quantizelinear_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    Q8_TRY(q8_qdq_parse(g, n, &p->q, err));
    const q8_tensor *x = q8_in(g, n, 0), *s = q8_in(g, n, 1), *z = q8_in(g, n, 2);
    if (x->dtype != Q8_F32 && x->dtype != Q8_I32)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "x '%s' is %s, expected float32 or "
                            "int32", x->name, q8_dtype_name(x->dtype));
    if (z && z->dtype != Q8_I8 && z->dtype != Q8_U8)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "zero point '%s' is %s, expected int8 "
                            "or uint8", z->name, q8_dtype_name(z->dtype));
    p->in_i32 = x->dtype == Q8_I32;
    p->out_i8 = z && z->dtype == Q8_I8;
    p->rows = q8_tensor_numel(x) / (p->q.inner ? p->q.inner : 1);
    Q8_TRY(q8_set_output(g, n, 0, p->out_i8 ? Q8_I8 : Q8_U8, x->dims, x->ndim, err));

    /* The output's quantization parameters, when they are constants and one
     * zero point fits all. */
    if (!s->data || (z && !z->data)) return Q8_OK;
    int32_t zp0 = 0;
    for (int64_t c = 0; z && c < p->q.count; c++) {
        int32_t v = p->out_i8 ? ((const int8_t *)z->data)[c] : ((const uint8_t *)z->data)[c];
        if (c == 0) zp0 = v;
        else if (v != zp0) return Q8_OK;
    }
    q8_tensor *y = q8_out(g, n, 0);
    float *sc = malloc(sizeof(float) * (size_t)p->q.count);
    if (!sc) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    memcpy(sc, s->data, sizeof(float) * (size_t)p->q.count);
    free(y->q.scale);
    y->q = (q8_qparams){.axis = p->q.axis, .n = (int)p->q.count, .scale = sc, .zero_point = zp0};
    return Q8_OK;
}

const q8_op_schema q8_schema_quantize_linear = {.infer = quant_infer};
