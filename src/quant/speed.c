/* quantize --speed-check: keep in FP32 the layers that INT8 makes slower, by
 * measuring both on this machine.
 *
 * The model is quantized as asked (at the calibration samples' shapes) and
 * both it and the FP32 model run calibration sample 0 with per-node timing;
 * each node's time is the minimum over the runs (robust to a busy machine).
 * An INT8 layer costs its own node plus what exists only for it: the
 * QuantizeLinear nodes feeding it (shared ones split between their
 * consumers) and the DequantizeLinear nodes reading its outputs. Its FP32
 * form costs the node of the same name in the FP32 model. Layers whose INT8
 * cost exceeds the FP32 cost by more than the margin are kept in FP32; the
 * model with those fallbacks is timed whole against the first one and
 * written only if it is faster (keeping a layer FP32 adds conversions around
 * it), else the first is. Decisions are recorded in the .q8's metadata;
 * the file then runs the same bytes everywhere. */
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bind_calib.h"
#include "model.h"
#include "report.h"
#include "samples.h"
#include "speed.h"

#define SPEED_MARGIN 1.10   /* INT8 must lose by more than 10% */
#define SPEED_MIN_MS 0.002  /* and by more than 2 us: below that, noise */

void q8_speed_result_free(q8_speed_result *r) {
    for (int i = 0; i < r->n_layers; i++) free(r->layers[i].node);
    free(r->layers);
    memset(r, 0, sizeof *r);
}

/* Per-node minimum time over runs of sample 0 (ms), into ms[n_nodes]; *whole
 * gets the minimum of the runs' sums. */
static q8_status time_nodes(const q8_model *m, const q8_sample_set *s, const q8_input_shape *sh,
                            int runs, int n_threads, double **ms, double *whole, q8_error *err) {
    /* every run on the pool: node times of one kind, as the FP32 and INT8
     * models are compared node by node */
    q8_session_options so = {.n_threads = n_threads, .profile = 1, .fixed_threads = 1};
    q8_session *sess = NULL;
    Q8_TRY(q8_session_create(m, &so, &sess, err));
    int n = q8_session_num_nodes(sess);
    double *best = malloc(sizeof(double) * (size_t)(n + 1)),
           *prev = calloc((size_t)(n + 1), sizeof(double));
    q8_status st = best && prev ? Q8_OK : q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    for (int k = 0; st == Q8_OK && k < s->n_inputs; k++) {
        q8_tensor *t = NULL;
        st = q8_sample_load(s, 0, k, &t, err);
        if (st == Q8_OK)
            st = q8_session_set_input(sess, sh[k].name, t->dtype, t->dims, t->ndim, t->data, err);
        q8_tensor_free(t);
    }
    for (int i = 0; i < n && best; i++) best[i] = INFINITY;
    *whole = INFINITY;
    for (int r = -2; st == Q8_OK && r < runs; r++) { /* two warm-up runs */
        st = q8_session_run(sess, err);
        double sum = 0;
        for (int i = 0; st == Q8_OK && i < n; i++) {
            const char *name, *op;
            double tot;
            st = q8_session_node_profile(sess, i, &name, &op, &tot, err);
            if (st == Q8_OK && r >= 0 && tot - prev[i] < best[i]) best[i] = tot - prev[i];
            sum += tot - prev[i];
            prev[i] = tot;
        }
        if (r >= 0 && sum < *whole) *whole = sum;
    }
    free(prev);
    q8_session_free(sess);
    if (st != Q8_OK) free(best);
    else *ms = best;
    return st;
}

static bool is_q8_op(const q8_node *n, const char *op) {
    return !strcmp(n->domain, "q8") && !strcmp(n->op_type, op);
}

static bool is_onnx_op(const q8_node *n, const char *op) {
    return !*n->domain && !strcmp(n->op_type, op);
}

static int consumers(const q8_graph *g, int t) {
    int c = 0;
    for (int i = 0; i < g->n_nodes; i++)
        for (int k = 0; k < g->nodes[i]->n_inputs; k++) c += g->nodes[i]->inputs[k] == t;
    return c;
}

static int producer(const q8_graph *g, int t) {
    for (int i = 0; i < g->n_nodes; i++)
        for (int k = 0; k < g->nodes[i]->n_outputs; k++)
            if (g->nodes[i]->outputs[k] == t) return i;
    return -1;
}

/* An INT8 layer's time: the node, its share of the QuantizeLinear nodes
 * feeding it, the DequantizeLinear nodes reading it. */
static double int8_cost(const q8_graph *g, int i, const double *ms) {
    const q8_node *n = g->nodes[i];
    double c = ms[i];
    for (int k = 0; k < n->n_inputs; k++) {
        if (n->inputs[k] < 0) continue;
        int p = producer(g, n->inputs[k]);
        if (p >= 0 && is_onnx_op(g->nodes[p], "QuantizeLinear"))
            c += ms[p] / consumers(g, n->inputs[k]);
    }
    for (int k = 0; k < n->n_outputs; k++)
        for (int j = 0; n->outputs[k] >= 0 && j < g->n_nodes; j++) {
            const q8_node *d = g->nodes[j];
            if (is_onnx_op(d, "DequantizeLinear") && d->n_inputs && d->inputs[0] == n->outputs[k])
                c += ms[j];
        }
    return c;
}

static bool is_layer(const q8_node *n) {
    static const char *const ops[] = {"QConv", "QConvTranspose", "QGemm", "QMatMul", "QLut"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (is_q8_op(n, ops[i])) return true;
    return false;
}

static q8_status measure(const q8_model *fm, const q8_model *qm, const q8_sample_set *s,
                         const q8_input_shape *sh, int runs, int n_threads, q8_speed_result *r,
                         q8_error *err) {
    double *fms = NULL, *qms = NULL, fw, qw;
    Q8_TRY(time_nodes(fm, s, sh, runs, n_threads, &fms, &fw, err));
    q8_status st = time_nodes(qm, s, sh, runs, n_threads, &qms, &qw, err);
    const q8_graph *fg = fm->g, *qg = qm->g;
    r->fp32_ms = fw;
    r->int8_ms = qw;
    r->layers = st == Q8_OK ? calloc((size_t)qg->n_nodes + 1, sizeof *r->layers) : NULL;
    if (st == Q8_OK && !r->layers) st = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    for (int i = 0; st == Q8_OK && i < qg->n_nodes; i++) {
        const q8_node *n = qg->nodes[i];
        if (!is_layer(n)) continue;
        int f = -1;
        for (int j = 0; j < fg->n_nodes && f < 0; j++)
            if (!strcmp(fg->nodes[j]->name, n->name)) f = j;
        if (f < 0) continue; /* no FP32 node of that name: nothing to compare with */
        q8_speed_layer *L = &r->layers[r->n_layers];
        L->int8_ms = int8_cost(qg, i, qms);
        L->fp32_ms = fms[f];
        L->kept = L->int8_ms > L->fp32_ms * SPEED_MARGIN && L->int8_ms - L->fp32_ms > SPEED_MIN_MS;
        if (!(L->node = q8_strdup(n->name))) st = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        else r->n_layers++;
        r->n_kept += L->kept;
    }
    free(fms);
    free(qms);
    return st;
}

/* A name beside out that nothing has (a trial's write replaces the file). */
static q8_status trial_name(const char *out, char *buf, size_t n, q8_error *err) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    unsigned x = (unsigned)(ts.tv_nsec ^ getpid() * 40503);
    struct stat sb;
    for (int tries = 0; tries < 100; tries++) {
        x = x * 1103515245u + 12345u;
        snprintf(buf, n, "%s.speed%06x", out, x & 0xffffff);
        if (lstat(buf, &sb) != 0) return Q8_OK;
    }
    return q8_fail(err, Q8_ERR_IO, "cannot find a free file name next to '%s'", out);
}

/* Quantize at the samples' shapes to path, open it, remove the file. */
static q8_status trial(const char *onnx, const char *path, const q8_quantize_options *o,
                       const q8_input_shape *sh, int n_sh, const char *const *fp32, int n_fp32,
                       q8_model **qm, q8_error *err) {
    q8_quantize_options t = *o;
    t.input_shapes = sh;
    t.n_input_shapes = n_sh;
    t.quant.fp32_layers = fp32;
    t.quant.n_fp32_layers = n_fp32;
    q8_quantize_result qr;
    q8_status st = q8_quantize_model(onnx, path, &t, &qr, err);
    q8_load_options lo = {.input_shapes = sh, .n_input_shapes = n_sh};
    if (st == Q8_OK) st = q8_model_open(path, &lo, qm, err);
    unlink(path);
    return st;
}

q8_status q8_quantize_speed(const char *onnx, const char *out, const q8_quantize_options *o,
                            int runs, q8_speed_result *r, q8_error *err) {
    memset(r, 0, sizeof *r);
    if (!o->calib_dir) return q8_fail(err, Q8_ERR_ARG, "--speed-check needs --calib DIR");
    if (runs < 1) return q8_fail(err, Q8_ERR_ARG, "--speed-check: runs must be >= 1");
    if (q8_same_file(onnx, out))
        return q8_fail(err, Q8_ERR_ARG, "refusing to overwrite the input model '%s'", onnx);
    Q8_TRY(q8_check_output_path(out, err));
    q8_sample_set s = {0};
    q8_tensor_info *inputs = NULL;
    q8_input_shape *sh = NULL;
    q8_model *fm = NULL, *qm = NULL, *km = NULL;
    const char **fp32 = NULL;
    q8_meta meta = {0};
    size_t plen = strlen(out) + 16;
    char *path = malloc(plen);
    q8_status st = path ? Q8_OK : q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    if (st == Q8_OK)
        st = q8_report_open_samples(onnx, o->calib_dir, o->input_values, o->n_input_values, &s,
                                    &inputs, &sh, err);
    if (st == Q8_OK) st = trial_name(out, path, plen, err);
    /* the FP32 model with the inputs the .q8 binds */
    q8_binds binds = {0};
    if (st == Q8_OK)
        st = q8_binds_for_quantize(onnx, &s, sh, o->input_values, o->n_input_values, &binds, err);
    q8_load_options lo = {.input_shapes = sh, .n_input_shapes = s.n_inputs,
                          .input_values = binds.v, .n_input_values = binds.n};
    if (st == Q8_OK) st = q8_model_open(onnx, &lo, &fm, err);
    if (st == Q8_OK)
        st = trial(onnx, path, o, sh, s.n_inputs, o->quant.fp32_layers, o->quant.n_fp32_layers,
                   &qm, err);
    if (st == Q8_OK) st = measure(fm, qm, &s, sh, runs, o->n_threads, r, err);
    int n_fp32 = o->quant.n_fp32_layers;
    if (st == Q8_OK && r->n_kept) {
        fp32 = calloc((size_t)(n_fp32 + r->n_kept), sizeof *fp32);
        if (!fp32) st = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        for (int i = 0; st == Q8_OK && i < o->quant.n_fp32_layers; i++)
            fp32[i] = o->quant.fp32_layers[i];
        for (int i = 0; st == Q8_OK && i < r->n_layers; i++)
            if (r->layers[i].kept) fp32[n_fp32++] = r->layers[i].node;
        if (st == Q8_OK) st = trial(onnx, path, o, sh, s.n_inputs, fp32, n_fp32, &km, err);
        double fw, kw, *kms = NULL;
        if (st == Q8_OK) st = time_nodes(km, &s, sh, runs, o->n_threads, &kms, &kw, err);
        /* the first model again, right after: both under the same load */
        if (st == Q8_OK) {
            free(kms);
            kms = NULL;
            st = time_nodes(qm, &s, sh, runs, o->n_threads, &kms, &fw, err);
        }
        free(kms);
        if (st == Q8_OK) {
            r->int8_kept_ms = kw;
            r->int8_ms = fw < r->int8_ms ? fw : r->int8_ms;
            r->reverted = !(kw < r->int8_ms);
        }
    }
    /* the file: at the deployment shapes, with the decisions in its metadata */
    if (st == Q8_OK) {
        char buf[64];
        snprintf(buf, sizeof buf, "%d runs, %d threads, margin %.2f", runs, o->n_threads,
                 SPEED_MARGIN);
        st = q8_meta_set_str(&meta, "speed.check", buf, err);
    }
    for (int i = 0; st == Q8_OK && i < r->n_layers; i++) {
        const q8_speed_layer *L = &r->layers[i];
        if (!L->kept) continue;
        char key[600], val[160];
        snprintf(key, sizeof key, "speed.layer.%s", L->node);
        snprintf(val, sizeof val, "INT8 %.4f ms vs FP32 %.4f ms: %s", L->int8_ms, L->fp32_ms,
                 r->reverted ? "INT8 kept (the model with FP32 fallbacks was not faster)"
                             : "kept in FP32");
        st = q8_meta_set_str(&meta, key, val, err);
    }
    if (st == Q8_OK) {
        q8_quantize_options fo = *o;
        if (r->n_kept && !r->reverted) {
            fo.quant.fp32_layers = fp32;
            fo.quant.n_fp32_layers = n_fp32;
        }
        fo.extra_meta = &meta;
        fo.warn = NULL; /* the first trial gave them */
        st = q8_quantize_model(onnx, out, &fo, &r->q, err);
    }
    q8_meta_free(&meta);
    free(fp32);
    q8_model_free(km);
    q8_model_free(qm);
    q8_model_free(fm);
    q8_binds_free(&binds); /* before the samples: it names their inputs */
    q8_report_inputs_free(inputs, s.n_inputs);
    free(sh);
    q8_samples_free(&s);
    free(path);
    if (st != Q8_OK) q8_speed_result_free(r);
    return st;
}
