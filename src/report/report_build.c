/* q8_report_build: everything q8report measures, in the order that keeps
 * the numbers clean: costs first (forked children, while this process is
 * still small and has no threads), then accuracy. */
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "onnx_import.h"
#include "passes.h"
#include "q8file.h"
#include "report.h"
#include "sha256.h"
#include "tensor_file.h"

/* The sample-set code speaks of --calib; here the folder is --data. */
static q8_status as_data_flag(q8_error *err, q8_status st) {
    if (st != Q8_OK && err && !strncmp(err->msg, "--calib", 7)) {
        char tmp[sizeof err->msg];
        snprintf(tmp, sizeof tmp, "--data%s", err->msg + 7);
        memcpy(err->msg, tmp, sizeof tmp);
    }
    return st;
}

/* --data FILE: one sample of a one-input model. */
static q8_status one_sample(const char *path, const char *name, int n_inputs, q8_sample_set *s,
                            q8_error *err) {
    memset(s, 0, sizeof *s);
    if (n_inputs == 0)
        return q8_fail(err, Q8_ERR_ARG,
                       "--data %s: every input of the model is bound (--bind, or the .q8's "
                       "bound values): there is no input left for a sample file to feed",
                       path);
    if (n_inputs != 1)
        return q8_fail(err, Q8_ERR_ARG,
                       "--data %s: the model has %d inputs that take samples: give a "
                       "folder with one subfolder per input",
                       path, n_inputs);
    if (!q8_is_tensor_file_name(path))
        return q8_fail(err, Q8_ERR_ARG, "--data %s: not a folder nor a .npy/.pb file", path);
    s->paths = calloc(1, sizeof(char **));
    if (s->paths) s->paths[0] = calloc(1, sizeof(char *));
    s->names = calloc(1, sizeof(char *));
    if (!s->paths || !s->paths[0] || !s->names || !(s->paths[0][0] = q8_strdup(path)) ||
        !(s->names[0] = q8_strdup(name))) {
        if (s->paths) {
            if (s->paths[0]) free(s->paths[0][0]);
            free(s->paths[0]);
        }
        free(s->paths);
        free(s->names);
        memset(s, 0, sizeof *s);
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    }
    s->n_inputs = 1;
    s->n_samples = 1;
    return Q8_OK;
}

void q8_report_inputs_free(q8_tensor_info *inputs, int n) {
    for (int i = 0; inputs && i < n; i++) free((char *)inputs[i].name);
    free(inputs);
}

q8_status q8_report_open_samples(const char *onnx_path, const char *data_dir,
                                 const q8_input_value *bound, int n_bound, q8_sample_set *s,
                                 q8_tensor_info **inputs, q8_input_shape **shapes, q8_error *err) {
    *inputs = NULL;
    *shapes = NULL;
    q8_graph *raw = NULL;
    q8_status st = q8_onnx_load(onnx_path, &raw, err);
    /* the one input a single sample file is for: the first not bound */
    const char *free_in = NULL;
    int n_free = 0;
    for (int k = 0; st == Q8_OK && k < raw->n_inputs; k++) {
        const char *name = raw->tensors[raw->inputs[k]]->name;
        if (!q8_input_is_bound(name, bound, n_bound) && !n_free++) free_in = name;
    }
    struct stat sb;
    bool one_file = stat(data_dir, &sb) == 0 && S_ISREG(sb.st_mode);
    if (st == Q8_OK && one_file) st = one_sample(data_dir, free_in, n_free, s, err);
    else if (st == Q8_OK)
        st = as_data_flag(err, q8_samples_from_dir_bound(data_dir, raw, bound, n_bound, s, err));
    int n = st == Q8_OK ? s->n_inputs : 0;
    if (st == Q8_OK) {
        *inputs = calloc((size_t)n, sizeof(q8_tensor_info));
        *shapes = calloc((size_t)n, sizeof(q8_input_shape));
        if (!*inputs || !*shapes) st = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    }
    for (int k = 0; st == Q8_OK && k < n; k++) {
        q8_tensor *t;
        st = q8_sample_load(s, 0, k, &t, err);
        if (st != Q8_OK) break;
        q8_tensor_info *in = &(*inputs)[k];
        in->name = q8_strdup(s->names[k]);
        in->dtype = t->dtype;
        in->ndim = t->ndim;
        memcpy(in->dims, t->dims, sizeof in->dims);
        q8_tensor_free(t);
        if (!in->name) st = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        (*shapes)[k].name = in->name;
        (*shapes)[k].ndim = in->ndim;
        memcpy((*shapes)[k].dims, in->dims, sizeof in->dims);
    }
    q8_graph_free(raw);
    if (st != Q8_OK) {
        q8_report_inputs_free(*inputs, n);
        free(*shapes);
        *inputs = NULL;
        *shapes = NULL;
        q8_samples_free(s);
    }
    return st;
}

static int file_kind(const char *path, q8_error *err) {
    uint8_t head[8];
    size_t got;
    if (q8_read_head(path, head, 8, &got, err) != Q8_OK) return -1;
    return got == 8 && q8_file_is_q8(head, 8);
}

/* The FP32 reference of the per-layer comparison: an ONNX model as the
 * quantizer sees it (src/passes: smooth activations kept as nodes, not
 * fused into the conv before them), so that the output of a conv whose
 * activation became a table in INT8 has an FP32 value to compare with; a
 * .q8 as it is. */
static q8_status open_reference(const char *path, const q8_load_options *lo, q8_model **m,
                                q8_error *err) {
    int kind = file_kind(path, err);
    if (kind < 0) return err->status;
    if (kind == 1) return q8_model_open(path, lo, m, err);
    q8_graph *g = NULL;
    q8_status st = q8_onnx_load(path, &g, err);
    if (st == Q8_OK) st = q8_passes_run_for_quantize(g, lo, err);
    if (st == Q8_OK) return q8_model_from_graph(g, path, m, err); /* takes g */
    q8_graph_free(g);
    return st;
}

void q8_report_free(q8_report *r) {
    for (int i = 0; i < r->n_models; i++) q8_report_model_free(&r->models[i]);
    free(r->models);
    q8_report_inputs_free(r->inputs, r->n_inputs);
    free(r->data_dir);
    free(r->labels_path);
    memset(r, 0, sizeof *r);
}

/* Provenance of a .q8 from its metadata. */
static q8_status read_meta(const q8_model *m, const char *fp32_sha, q8_report_model *rm,
                           q8_error *err) {
    const q8_meta *meta = &m->meta;
    const q8_meta_entry *e;
    if ((e = q8_meta_get(meta, "calib.method")) && e->type == Q8_META_STR &&
        !(rm->calib_method = q8_strdup(e->s)))
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    if ((e = q8_meta_get(meta, "prune.mode")) && e->type == Q8_META_STR &&
        !(rm->prune_mode = q8_strdup(e->s)))
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    e = q8_meta_get(meta, "prune.fraction");
    rm->prune_fraction = e && e->type == Q8_META_FLOAT ? e->f : 0;
    e = q8_meta_get(meta, "source.sha256");
    rm->source_matches = e && e->type == Q8_META_STR && fp32_sha ? !strcmp(e->s, fp32_sha) : -1;
    if ((e = q8_meta_get(meta, "search.trials")) && e->type == Q8_META_INT) {
        rm->search_trials = (int)e->i;
        e = q8_meta_get(meta, "search.met");
        rm->search_met = e && e->type == Q8_META_INT && e->i;
        e = q8_meta_get(meta, "search.max_drop_points");
        rm->search_max_drop = e && e->type == Q8_META_FLOAT ? e->f : NAN;
        e = q8_meta_get(meta, "search.drop_points");
        rm->search_drop = e && e->type == Q8_META_FLOAT ? e->f : NAN;
        e = q8_meta_get(meta, "search.auto");
        rm->search_auto = e && e->type == Q8_META_INT && e->i;
        e = q8_meta_get(meta, "search.min_sqnr_db");
        rm->search_min_sqnr = e && e->type == Q8_META_FLOAT ? e->f : NAN;
        e = q8_meta_get(meta, "search.sqnr_db");
        rm->search_sqnr = e && e->type == Q8_META_FLOAT ? e->f : NAN;
        e = q8_meta_get(meta, "search.metric");
        if (e && e->type == Q8_META_STR && !(rm->search_metric = q8_strdup(e->s)))
            return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        e = q8_meta_get(meta, "search.dense_layers");
        if (e && e->type == Q8_META_STR && !(rm->search_dense = q8_strdup(e->s)))
            return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    }
    rm->fp32_layers = calloc((size_t)meta->n + 1, sizeof(char *));
    if (!rm->fp32_layers) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    for (int i = 0; i < meta->n; i++) {
        const char *k = meta->e[i].key;
        size_t len = strlen(k);
        if (strncmp(k, "layer.", 6) || len < 6 + 5 || strcmp(k + len - 5, ".fp32")) continue;
        char *name = malloc(len);
        if (!name) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        memcpy(name, k + 6, len - 11);
        name[len - 11] = 0;
        rm->fp32_layers[rm->n_fp32_layers++] = name;
    }
    return Q8_OK;
}

/* A .q8 has fixed input shapes: when they are not the samples', say so. */
static void shape_hint(const char *path, const q8_tensor_info *in, int n, q8_error *err) {
    q8_model *m = NULL;
    q8_error e2 = {0};
    if (q8_model_open(path, NULL, &m, &e2) != Q8_OK) return;
    for (int k = 0; k < n && k < m->g->n_inputs; k++) {
        const q8_tensor *t = m->g->tensors[m->g->inputs[k]];
        bool same = t->ndim == in[k].ndim;
        for (int d = 0; same && d < t->ndim; d++) same = t->dims[d] == in[k].dims[d];
        if (same) continue;
        char a[96], b[96], msg[sizeof err->msg];
        q8_shape_str(t->dims, t->ndim, a, sizeof a);
        q8_shape_str(in[k].dims, in[k].ndim, b, sizeof b);
        snprintf(msg, sizeof msg, "%s: it was built for %s=%s and the --data samples are %s; "
                 "quantize it with --input-shape %s=%s (or give samples of its shape)",
                 path, t->name, a, b, t->name, b);
        memcpy(err->msg, msg, sizeof msg);
        break;
    }
    q8_model_free(m);
}

static q8_status sha_of_file(const char *path, char out[65], q8_error *err) {
    uint8_t *buf;
    size_t len;
    Q8_TRY(q8_read_file(path, &buf, &len, err));
    q8_sha256_hex(buf, len, out);
    free(buf);
    return Q8_OK;
}

/* The inputs the .q8 at path binds, copied into v (names and values
 * malloc'd: free with free_bound), the model closed again so that it is not
 * in the measuring processes' memory. */
static void free_bound(q8_input_value *v, int n) {
    for (int i = 0; i < n; i++) {
        free((char *)v[i].name);
        free((void *)v[i].data);
    }
}

static q8_status bound_of(const char *path, q8_input_value *v, int *n, q8_error *err) {
    *n = 0;
    q8_model *m = NULL;
    q8_status st = q8_model_open(path, NULL, &m, err);
    for (int i = 0; st == Q8_OK && i < q8_model_num_bound(m) && *n < 64; i++) {
        q8_tensor_info info;
        const void *data;
        st = q8_model_bound_info(m, i, &info, &data, err);
        if (st != Q8_OK) break;
        size_t bytes = q8_dtype_size(info.dtype);
        for (int d = 0; d < info.ndim; d++) bytes *= (size_t)info.dims[d];
        void *copy = malloc(bytes + 1);
        char *name = q8_strdup(info.name);
        if (!copy || !name) {
            free(copy);
            free(name);
            st = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
            break;
        }
        memcpy(copy, data, bytes);
        v[*n] = (q8_input_value){.name = name, .dtype = info.dtype, .ndim = info.ndim,
                                 .data = copy};
        memcpy(v[(*n)++].dims, info.dims, sizeof info.dims);
    }
    q8_model_free(m);
    return st;
}

q8_status q8_report_build(const char *const *paths, int n, const q8_report_options *o,
                          q8_report *r, q8_error *err) {
    memset(r, 0, sizeof *r);
    if (n < 2) return q8_fail(err, Q8_ERR_ARG, "give the FP32 .onnx model and at least one .q8");
    if (!o->data_dir) return q8_fail(err, Q8_ERR_ARG, "--data DIR is required");
    if (o->runs < 1) return q8_fail(err, Q8_ERR_ARG, "--runs must be >= 1");
    for (int i = 0; i < n; i++) {
        int k = file_kind(paths[i], err);
        if (k < 0) return err->status;
        if (i == 0 && k)
            return q8_fail(err, Q8_ERR_ARG, "%s is a .q8: the first model must be the FP32 .onnx",
                           paths[0]);
        if (i > 0 && !k)
            return q8_fail(err, Q8_ERR_ARG, "%s is not a .q8 file (made by quantize)", paths[i]);
    }
    r->device = o->device;
    r->n_threads = o->n_threads > 0 ? o->n_threads : q8_cpu_count();
    r->runs = o->runs;
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(r->created, sizeof r->created, "%Y-%m-%dT%H:%M:%SZ", &tm);
    r->models = calloc((size_t)n, sizeof(q8_report_model));
    r->data_dir = q8_strdup(o->data_dir);
    r->labels_path = o->labels_path ? q8_strdup(o->labels_path) : NULL;
    if (!r->models || !r->data_dir || (o->labels_path && !r->labels_path)) {
        q8_report_free(r);
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    }
    r->n_models = n;
    q8_status st = Q8_OK;
    for (int i = 0; i < n && st == Q8_OK; i++) {
        r->models[i].quantized = i > 0;
        r->models[i].top1_hits = r->models[i].agree = -1;
        r->models[i].source_matches = -1;
        if (!(r->models[i].path = q8_strdup(paths[i])))
            st = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    }

    /* The bound inputs: --bind's, else those the first .q8 binds (quantize
     * --bind, or constant in its calibration samples), at its values. */
    const q8_input_value *bound = o->input_values;
    int n_bound = o->n_input_values;
    q8_input_value from_q8[64];
    int n_from_q8 = 0;
    if (st == Q8_OK && !n_bound) {
        st = bound_of(paths[1], from_q8, &n_from_q8, err);
        bound = from_q8;
        n_bound = n_from_q8;
    }

    /* The samples and their shapes. A bound input the .q8 gave (not
     * --bind) is still read where DIR has samples of it: a session checks
     * them against the bound value. */
    q8_sample_set samples = {0};
    q8_input_shape *shapes = NULL;
    q8_input_value no_samples[64];
    int n_no_samples = 0;
    for (int i = 0; i < n_bound; i++) {
        char sub[4096];
        snprintf(sub, sizeof sub, "%s/%s", o->data_dir, bound[i].name);
        struct stat sb;
        bool has = bound != o->input_values && stat(sub, &sb) == 0 && S_ISDIR(sb.st_mode);
        if (!has) no_samples[n_no_samples++] = bound[i];
    }
    if (st == Q8_OK)
        st = q8_report_open_samples(paths[0], o->data_dir, no_samples, n_no_samples, &samples,
                                    &r->inputs, &shapes, err);
    if (st == Q8_OK) {
        r->n_samples = samples.n_samples;
        r->n_inputs = samples.n_inputs;
    }
    /* Give the parser's freed memory back before forking the measurements. */
    malloc_trim(0);

    /* the FP32 model with the bound inputs' values; the .q8 files record theirs */
    q8_load_options lq = {.input_shapes = shapes, .n_input_shapes = samples.n_inputs};
    q8_load_options lf = lq;
    lf.input_values = bound;
    lf.n_input_values = n_bound;
    for (int i = 0; i < n && st == Q8_OK; i++) {
        st = q8_report_measure(paths[i], &samples, i ? &lq : &lf, o->device, o->n_threads, o->runs,
                               &r->models[i].cost, err);
        if (st != Q8_OK && strncmp(err->msg, paths[i], strlen(paths[i])))
            q8_fail_prefix(err, "%s", paths[i]);
        if (st != Q8_OK && i > 0) shape_hint(paths[i], r->inputs, r->n_inputs, err);
    }

    /* Accuracy, on the CPU. */
    q8_model **models = calloc((size_t)n, sizeof(q8_model *));
    q8_tensor *labels = NULL;
    char sha[65] = {0};
    if (!models && st == Q8_OK) st = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    if (st == Q8_OK) st = open_reference(paths[0], &lf, &models[0], err);
    for (int i = 1; i < n && st == Q8_OK; i++) st = q8_model_open(paths[i], &lq, &models[i], err);
    if (st == Q8_OK && o->labels_path) {
        st = q8_tensor_file_load(o->labels_path, &labels, err);
        if (st != Q8_OK) q8_fail_prefix(err, "--labels");
    }
    if (st == Q8_OK) st = sha_of_file(paths[0], sha, err);
    for (int i = 1; i < n && st == Q8_OK; i++) st = read_meta(models[i], sha, &r->models[i], err);
    if (st == Q8_OK) {
        q8_compare_options co = {.labels = labels, .per_layer = true, .n_threads = o->n_threads};
        st = q8_report_compare(models[0], (const q8_model *const *)models + 1, n - 1, &samples, &co,
                               r->models, err);
    }
    q8_tensor_free(labels);
    for (int i = 0; models && i < n; i++) q8_model_free(models[i]);
    free(models);
    free(shapes);
    q8_samples_free(&samples);
    free_bound(from_q8, n_from_q8);
    if (st != Q8_OK) q8_report_free(r);
    return st;
}
