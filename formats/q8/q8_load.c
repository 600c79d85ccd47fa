/* q8_model_load: a .q8 file mapped read-only, parsed, its shapes inferred
 * again and checked against what the file states. Dense constants are used
 * in place from the mapping. ONNX files load through q8_model_open
 * (q8_tools.h), which needs the tools library. */
#include <string.h>

#include "bind.h"
#include "control.h"
#include "layout.h"
#include "model.h"
#include "q8file.h"
#include "shapes.h"

/* t's values in layout l, in memory of their own. */
static q8_status relayout(q8_tensor *t, q8_layout l, q8_error *err) {
    q8_wshape ws;
    if (!q8_layout_shape(t, &ws)) return Q8_OK;
    const void *plain;
    void *tmp;
    Q8_TRY(q8_tensor_plain(t, &plain, &tmp, err));
    int8_t *laid = q8_aligned_alloc(q8_layout_bytes(l, ws));
    if (!laid) {
        q8_aligned_free(tmp);
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory laying out '%s'", t->name);
    }
    q8_layout_pack(l, plain, ws, laid);
    q8_aligned_free(tmp);
    q8_tensor_free_data(t);
    t->data = laid;
    t->owns_data = true;
    t->layout = (uint8_t)l;
    return Q8_OK;
}

/* A .q8 file: map it, parse, then resolve ops and check every shape again;
 * the shapes the file states must agree with what inference derives. */
static q8_status load_q8(const char *path, const q8_load_options *opts, q8_model **out,
                         q8_error *err) {
    q8_mapping map;
    Q8_TRY(q8_map_file(path, &map, err));
    q8_meta meta = {0};
    q8_graph *g = NULL;
    q8_status s = q8_file_parse(map.base, map.size, &g, &meta, err);
    int64_t(*dims)[Q8_MAX_DIMS] = NULL;
    int *ndim = NULL;
    if (s == Q8_OK) {
        dims = malloc(sizeof *dims * ((size_t)g->n_tensors + 1));
        ndim = malloc(sizeof *ndim * ((size_t)g->n_tensors + 1));
        if (!dims || !ndim) s = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    }
    if (s == Q8_OK) {
        for (int i = 0; i < g->n_tensors; i++) {
            ndim[i] = g->tensors[i]->ndim;
            memcpy(dims[i], g->tensors[i]->dims, sizeof dims[i]);
        }
        s = q8_graph_toposort(g, err);
    }
    if (s == Q8_OK) s = q8_graph_check_control(g, err);
    /* a .q8 is built: an input is bound when it is quantized, not at load */
    for (int i = 0; s == Q8_OK && opts && i < opts->n_input_values; i++)
        if (q8_graph_find_bound(g, opts->input_values[i].name) < 0)
            s = q8_fail(err, Q8_ERR_ARG, "input '%s' was not bound when this .q8 was made: bind "
                        "it when quantizing (quantize --bind %s=FILE)",
                        opts->input_values[i].name ? opts->input_values[i].name : "?",
                        opts->input_values[i].name ? opts->input_values[i].name : "NAME");
    if (s == Q8_OK) s = q8_graph_fix_inputs(g, opts, err);
    if (s == Q8_OK) s = q8_graph_infer_shapes(g, err);
    for (int i = 0; s == Q8_OK && i < g->n_tensors; i++) {
        const q8_tensor *t = g->tensors[i];
        if (t->producer < 0 || !t->shape_known) continue;
        bool same = t->ndim == ndim[i];
        for (int d = 0; same && d < t->ndim; d++) same = t->dims[d] == dims[i][d];
        if (!same) {
            char a[96], b[96];
            s = q8_fail(err, Q8_ERR_FORMAT, "tensor '%s': the file says shape %s, the graph gives %s",
                        t->name, q8_shape_str(dims[i], ndim[i], a, sizeof a),
                        q8_shape_str(t->dims, t->ndim, b, sizeof b));
        }
    }
    /* A weight stored in a kernel layout must be read by kernels that read
     * that layout (everything else reads constants plain). One exception:
     * files from before version 10 store rows4 for the convs that read
     * taps4 now; those are laid out again, into memory of their own. */
    for (int i = 0; s == Q8_OK && i < g->n_tensors; i++) {
        q8_tensor *t = g->tensors[i];
        q8_layout want = t->layout != Q8_LAYOUT_PLAIN ? q8_layout_for_cpu(g, i) : Q8_LAYOUT_PLAIN;
        if (want == Q8_LAYOUT_TAPS4 && t->layout == Q8_LAYOUT_ROWS4)
            s = relayout(t, want, err);
        else if (want != t->layout)
            s = q8_fail(err, Q8_ERR_FORMAT, "tensor '%s': stored in layout %s, but the nodes "
                        "that read it read layout %s", t->name,
                        q8_layout_name((q8_layout)t->layout), q8_layout_name(want));
    }
    /* Bitmask-encoded (pruned) and deflated weights were expanded into
     * memory of their own: lay them out now as the writer would have stored
     * them dense, so a session reads them in place instead of keeping a
     * packed copy beside the expansion, and holds what the dense file's
     * session holds. */
    for (int i = 0; s == Q8_OK && i < g->n_tensors; i++) {
        q8_tensor *t = g->tensors[i];
        q8_layout want = t->owns_data && t->layout == Q8_LAYOUT_PLAIN ? q8_layout_to_store(g, i)
                                                                      : Q8_LAYOUT_PLAIN;
        if (want != Q8_LAYOUT_PLAIN) s = relayout(t, want, err);
    }
    free(dims);
    free(ndim);
    if (s == Q8_OK) s = q8_model_from_graph(g, path, out, err);
    else q8_graph_free(g);
    if (s != Q8_OK) {
        q8_fail_prefix(err, "%s", path);
        q8_meta_free(&meta);
        q8_unmap_file(&map);
        return s;
    }
    (*out)->meta = meta;
    (*out)->map = map;
    (*out)->quantized = true;
    return Q8_OK;
}

q8_status q8_model_load(const char *path, const q8_load_options *opts, q8_model **out,
                        q8_error *err) {
    if (!path || !out) return q8_fail(err, Q8_ERR_ARG, "q8_model_load: NULL argument");
    *out = NULL;
    if (!q8_file_has_magic(path)) {
        /* the runtime reads .q8 files only; say what to do about anything else */
        q8_mapping probe;
        Q8_TRY(q8_map_file(path, &probe, err));
        q8_unmap_file(&probe);
        return q8_fail(err, Q8_ERR_UNSUPPORTED,
                       "%s: not a .q8 file (the q8 runtime loads .q8 models: convert an ONNX "
                       "model with `quantize`, or open it with q8_model_open from q8_tools.h)",
                       path);
    }
    return load_q8(path, opts, out, err);
}
