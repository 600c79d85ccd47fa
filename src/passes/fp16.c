/* FP16 models computed in float32. Models shipped with float16 weights
 * (half the download) usually compute in float16 between Casts; q8 has
 * float32 and INT8 kernels, so the graph is widened at import: every
 * float16 constant becomes float32 (exactly: every half is a float), Casts
 * to float16 become Casts to float32 (so Cast pairs that only round-trip
 * through float16 become no-ops the simplify pass removes), and float16
 * graph inputs and outputs compute in float32 while keeping float16 as the
 * dtype callers exchange (q8_tensor.io_dtype: the session converts at the
 * boundary). The result is more accurate than float16 compute, not equal to
 * it. Only models that hold float16 constants or float16 inputs or outputs
 * are widened; a float32 model that rounds through a Cast keeps it. */
#include <string.h>

#include "passes.h"

enum { ONNX_FLOAT = 1, ONNX_FLOAT16 = 10 };

static bool graph_has_fp16(const q8_graph *g) {
    for (int i = 0; i < g->n_tensors; i++) {
        const q8_tensor *t = g->tensors[i];
        if (t->dtype == Q8_F16 && t->data) return true;
    }
    for (int i = 0; i < g->n_inputs; i++)
        if (g->tensors[g->inputs[i]]->dtype == Q8_F16) return true;
    for (int i = 0; i < g->n_outputs; i++) /* declared float16 at import */
        if (g->tensors[g->outputs[i]]->io_dtype == Q8_F16) return true;
    return false;
}

static q8_status widen(q8_graph *g, bool top, q8_error *err) {
    for (int i = 0; i < g->n_tensors; i++) {
        q8_tensor *t = g->tensors[i];
        if (t->dtype != Q8_F16) continue;
        if (top && !t->data && (q8_graph_is_input(g, i) || q8_graph_is_output(g, i)))
            t->io_dtype = Q8_F16;
        if (t->data) Q8_TRY(q8_tensor_widen_f16(t, err));
        t->dtype = Q8_F32;
    }
    for (int i = 0; i < g->n_nodes; i++) {
        q8_node *n = g->nodes[i];
        for (int k = 0; k < n->n_attrs; k++) {
            q8_attr *a = &n->attrs[k];
            if (a->type == Q8_ATTR_TENSOR && a->t && a->t->dtype == Q8_F16 && a->t->data)
                Q8_TRY(q8_tensor_widen_f16(a->t, err));
            if (a->type == Q8_ATTR_GRAPH && a->g) Q8_TRY(widen(a->g, false, err));
        }
        bool onnx = !*n->domain || strcmp(n->domain, "ai.onnx") == 0;
        if (onnx && strcmp(n->op_type, "Cast") == 0) {
            q8_attr *to = (q8_attr *)q8_attr_find(n, "to");
            if (to && to->type == Q8_ATTR_INT && to->i == ONNX_FLOAT16) to->i = ONNX_FLOAT;
        }
    }
    return Q8_OK;
}

q8_status q8_pass_widen_fp16(q8_graph *g, q8_error *err) {
    if (!graph_has_fp16(g)) return Q8_OK;
    return widen(g, true, err);
}
