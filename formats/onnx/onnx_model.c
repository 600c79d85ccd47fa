/* q8_model_open: a model of either kind. ONNX files are imported and run
 * through the passes (fixed shapes, folding, fusion) for FP32. */
#include "model.h"
#include "onnx_import.h"
#include "passes.h"
#include "q8_tools.h"
#include "q8file.h"

q8_status q8_model_open(const char *path, const q8_load_options *opts, q8_model **out,
                        q8_error *err) {
    if (!path || !out) return q8_fail(err, Q8_ERR_ARG, "q8_model_open: NULL argument");
    *out = NULL;
    if (q8_file_has_magic(path)) return q8_model_load(path, opts, out, err);
    q8_graph *g = NULL;
    Q8_TRY(q8_onnx_load(path, &g, err));
    q8_status s = q8_passes_run(g, opts, err);
    if (s != Q8_OK) {
        q8_fail_prefix(err, "%s", path);
        q8_graph_free(g);
        return s;
    }
    return q8_model_from_graph(g, path, out, err);
}
