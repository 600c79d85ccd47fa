/* q8.QLut: an elementwise function of an int8 tensor as a 256-entry table,
 * y = T[x + 128]. The quantizer builds T by running the FP32 op (HardSwish,
 * Sigmoid, Gelu, ...) on every int8 value times the input scale and
 * quantizing the results with the output scale, so a smooth activation
 * between two INT8 layers costs one byte lookup instead of a dequantize, a
 * float function and a quantize. Inputs: X int8, T int8 [256] constant; or
 * one table per channel (quantize --equalize's per-channel rescaling around
 * an activation, src/quant/equalize.c): T int8 [K, 256], the distinct
 * tables, and I uint8 [C] constant, C = X's dim 1, channel c reading table
 * I[c] < K. Attribute y_scale: the output's scale. No params: the kernels
 * read X, T, I and the output's size. */
#include "op.h"
#include "ops/qop.h"

static q8_status qlut_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 2, 3, 1, 1, err));
    Q8_TRY(q8_check_input(g, n, 0, Q8_I8, err));
    const q8_tensor *x = q8_in(g, n, 0), *t = q8_in(g, n, 1), *ix = q8_in(g, n, 2);
    if (!ix) {
        if (!t || !t->data || t->dtype != Q8_I8 || t->ndim != 1 || t->dims[0] != 256)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "the table must be a constant int8 [256]");
    } else {
        if (!t || !t->data || t->dtype != Q8_I8 || t->ndim != 2 || t->dims[1] != 256 ||
            t->dims[0] < 1)
            return q8_node_fail(err, Q8_ERR_FORMAT, n,
                                "the tables must be a constant int8 [K, 256]");
        if (!ix->data || ix->dtype != Q8_U8 || ix->ndim != 1 || x->ndim < 2 ||
            ix->dims[0] != x->dims[1])
            return q8_node_fail(err, Q8_ERR_FORMAT, n,
                                "the table index must be a constant uint8 [C], C the input's "
                                "channels");
        const uint8_t *v = ix->data;
        for (int64_t c = 0; c < ix->dims[0]; c++)
            if (v[c] >= t->dims[0])
                return q8_node_fail(err, Q8_ERR_FORMAT, n,
                                    "channel %lld reads table %d of %lld", (long long)c, v[c],
                                    (long long)t->dims[0]);
    }
    bool i8;
    float sy;
    Q8_TRY(q8_qop_out_scale(n, &i8, &sy, err));
    if (!i8) return q8_node_fail(err, Q8_ERR_FORMAT, n, "y_scale is missing");
    Q8_TRY(q8_set_output(g, n, 0, Q8_I8, x->dims, x->ndim, err));
    return q8_qop_set_out_scale(g, n, sy, err);
}

const q8_op_schema q8_schema_qlut = {.infer = qlut_infer, .flags = Q8_OPF_INPLACE};
