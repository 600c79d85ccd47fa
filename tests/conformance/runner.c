#include "runner.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "half.h"
#include "model.h"
#include "onnx_import.h"
#include "onnx_tensor.h"
#include "passes.h"
#include "q8.h"

#define MAX_IO 32

static const char *const suites[] = {"node", "pytorch-converted", "pytorch-operator", "simple"};

typedef struct skip_list {
    char **names;
    int n;
} skip_list;

static void load_skips(const char *path, skip_list *s) {
    s->names = NULL;
    s->n = 0;
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f) return;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        if (*p == '#' || *p == '\n' || !*p) continue;
        size_t len = strcspn(p, " \t\n");
        p[len] = 0;
        s->names = realloc(s->names, sizeof(char *) * (size_t)(s->n + 1));
        s->names[s->n++] = strdup(p);
    }
    fclose(f);
}

static bool is_skipped(const skip_list *s, const char *name) {
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->names[i], name) == 0) return true;
    return false;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names of the entries of dir that start with prefix. */
static int list_dir(const char *dir, const char *prefix, char ***out) {
    DIR *d = opendir(dir);
    *out = NULL;
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, prefix, strlen(prefix)) != 0) continue;
        *out = realloc(*out, sizeof(char *) * (size_t)(n + 1));
        (*out)[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(*out, (size_t)n, sizeof(char *), cmp_str);
    return n;
}

static void free_list(char **l, int n) {
    for (int i = 0; i < n; i++) free(l[i]);
    free(l);
}

/* input_0.pb, input_1.pb, ... in numeric order */
static int load_numbered(const char *dir, const char *stem, q8_tensor **ts, char *why, size_t wn) {
    int n = 0;
    for (; n < MAX_IO; n++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s_%d.pb", dir, stem, n);
        FILE *f = fopen(path, "rb");
        if (!f) break;
        fclose(f);
        q8_error err = {0};
        if (q8_pb_read(path, &ts[n], &err) != Q8_OK) {
            snprintf(why, wn, "%s", err.msg);
            for (int i = 0; i < n; i++) q8_tensor_free(ts[i]);
            return -1;
        }
    }
    return n;
}

static double as_double(q8_dtype dt, const void *p, int64_t i) {
    switch (dt) {
    case Q8_F32: return ((const float *)p)[i];
    case Q8_F64: return ((const double *)p)[i];
    case Q8_I8: return ((const int8_t *)p)[i];
    case Q8_U8: case Q8_BOOL: return ((const uint8_t *)p)[i];
    case Q8_I16: return ((const int16_t *)p)[i];
    case Q8_U16: return ((const uint16_t *)p)[i];
    case Q8_I32: return ((const int32_t *)p)[i];
    case Q8_U32: return ((const uint32_t *)p)[i];
    case Q8_I64: return (double)((const int64_t *)p)[i];
    case Q8_U64: return (double)((const uint64_t *)p)[i];
    case Q8_F16: return q8_f16_to_f32(((const uint16_t *)p)[i]);
    case Q8_BF16: return q8_bf16_to_f32(((const uint16_t *)p)[i]);
    default: return NAN;
    }
}

/* Compare as ONNX's backend tests do: rtol 1e-3, atol 1e-7 (we allow 1e-5
 * absolute for float32 sums in a different order). */
static bool compare(const q8_tensor_info *got, const void *gd, const q8_tensor *want, char *why,
                    size_t wn) {
    char a[96], b[96];
    bool same_shape = got->ndim == want->ndim;
    for (int i = 0; same_shape && i < got->ndim; i++) same_shape = got->dims[i] == want->dims[i];
    if (!same_shape) {
        snprintf(why, wn, "output shape %s, expected %s", q8_shape_str(got->dims, got->ndim, a, sizeof a),
                 q8_shape_str(want->dims, want->ndim, b, sizeof b));
        return false;
    }
    if (got->dtype != want->dtype) {
        snprintf(why, wn, "output dtype %s, expected %s", q8_dtype_name(got->dtype),
                 q8_dtype_name(want->dtype));
        return false;
    }
    int64_t n = q8_tensor_numel(want);
    for (int64_t i = 0; i < n; i++) {
        double g = as_double(got->dtype, gd, i), w = as_double(want->dtype, want->data, i);
        if (isnan(w) && isnan(g)) continue;
        if (isinf(w) && g == w) continue;
        if (!(fabs(g - w) <= 1e-5 + 1e-3 * fabs(w))) {
            snprintf(why, wn, "output '%s'[%lld] = %.9g, expected %.9g", got->name, (long long)i, g, w);
            return false;
        }
    }
    return true;
}

/* Mark for binding the inputs (of ins, by position in the graph's inputs)
 * whose values tensor t is computed from; the count marked, or -1. Shape and
 * Size read only their input's shape: the walk stops there, so a data input
 * is not bound because a shape is taken of it. */
static int bind_sources(const q8_graph *g, int t, q8_tensor *const *ins, char *const *names,
                        int ni, bool *frozen, int *nfrozen) {
    if (t < 0) return -1;
    bool *mark = calloc((size_t)g->n_tensors + 1, sizeof(bool));
    if (!mark) return -1;
    mark[t] = true;
    for (int i = g->n_nodes - 1; i >= 0; i--) {
        const q8_node *n = g->nodes[i];
        bool out = false;
        for (int k = 0; k < n->n_outputs; k++) out |= n->outputs[k] >= 0 && mark[n->outputs[k]];
        bool shape_only = !strcmp(n->op_type, "Shape") || !strcmp(n->op_type, "Size");
        for (int k = 0; out && !shape_only && k < n->n_inputs; k++)
            if (n->inputs[k] >= 0) mark[n->inputs[k]] = true;
    }
    int count = 0;
    for (int i = 0; i < ni; i++) {
        int ti = q8_graph_find(g, names[i]);
        if (!frozen[i] && ti >= 0 && mark[ti]) {
            frozen[i] = true;
            (*nfrozen)++;
            count++;
        }
    }
    free(mark);
    return count ? count : -1;
}

/* ONNX node tests feed the tensors that decide shapes (Reshape's shape,
 * Resize's scales, ReduceSum's axes, ...) as graph inputs, while q8 fixes
 * shapes at load time. Their values are known at load, as a user's would
 * be: when loading fails because an input must be constant, that input is
 * bound to its test value (q8_load_options.input_values, as q8run --bind
 * does) and the load is retried. frozen[i] marks such inputs. */
static q8_status load_model(const char *path, q8_tensor *const *ins, int ni, bool *frozen,
                            int *nfrozen, q8_model **out, q8_error *err) {
    for (int attempt = 0; attempt <= ni; attempt++) {
        q8_graph *g = NULL;
        Q8_TRY(q8_onnx_load(path, &g, err));
        if (g->n_inputs != ni) {
            q8_graph_free(g);
            return q8_fail(err, Q8_ERR_FORMAT, "model has %d inputs, test data %d", g->n_inputs,
                           ni);
        }
        q8_input_shape shapes[MAX_IO];
        q8_input_value values[MAX_IO];
        char *names[MAX_IO];
        int ns = 0, nv = 0;
        for (int i = 0; i < ni; i++) {
            names[i] = g->tensors[g->inputs[i]]->name;
            if (!frozen[i]) {
                shapes[ns].name = names[i];
                shapes[ns].ndim = ins[i]->ndim;
                memcpy(shapes[ns++].dims, ins[i]->dims, sizeof shapes[0].dims);
                continue;
            }
            values[nv] = (q8_input_value){.name = names[i], .dtype = ins[i]->dtype,
                                          .ndim = ins[i]->ndim, .data = ins[i]->data};
            memcpy(values[nv++].dims, ins[i]->dims, sizeof values[0].dims);
        }
        q8_load_options lo = {.input_shapes = shapes, .n_input_shapes = ns,
                              .input_values = values, .n_input_values = nv};
        q8_status s = q8_passes_run(g, &lo, err);
        if (s == Q8_OK) return q8_model_from_graph(g, path, out, err);
        /* "... input 2 ('scales') must be a constant ...": the name lies
         * between "('" and "')"; find it among the inputs not yet bound. */
        const char *c = s == Q8_ERR_UNSUPPORTED ? strstr(err->msg, "') must be a constant") : NULL;
        const char *o = c;
        while (o && o > err->msg + 1 && !(o[-1] == '\'' && o[-2] == '(')) o--;
        int hit = -1;
        for (int i = 0; c && o > err->msg + 1 && i < ni && hit < 0; i++) {
            size_t len = (size_t)(c - o);
            if (!frozen[i] && strlen(names[i]) == len && strncmp(names[i], o, len) == 0) hit = i;
        }
        /* a value computed from inputs: bind the integer inputs it reads */
        if (c && hit < 0 && o > err->msg + 1) {
            char want[512];
            snprintf(want, sizeof want, "%.*s", (int)(c - o), o);
            hit = bind_sources(g, q8_graph_find(g, want), ins, names, ni, frozen, nfrozen);
        } else if (hit >= 0) {
            frozen[hit] = true;
            (*nfrozen)++;
        }
        q8_graph_free(g);
        if (hit < 0) return s;
    }
    return q8_fail(err, Q8_ERR_FORMAT, "could not load the model");
}

/* Run one test case folder; true on pass, else why is filled. */
static bool run_case(const char *dir, int n_threads, char *why, size_t wn) {
    char path[4096];
    char **sets;
    int nsets = list_dir(dir, "test_data_set_", &sets);
    if (nsets <= 0) {
        snprintf(why, wn, "no test data sets");
        free_list(sets, nsets < 0 ? 0 : nsets);
        return false;
    }
    bool ok = true;
    for (int s = 0; s < nsets && ok; s++) {
        char sd[4096];
        snprintf(sd, sizeof sd, "%s/%s", dir, sets[s]);
        q8_tensor *ins[MAX_IO], *outs[MAX_IO];
        int ni = load_numbered(sd, "input", ins, why, wn);
        if (ni < 0) {
            ok = false;
            break;
        }
        int no = load_numbered(sd, "output", outs, why, wn);
        if (no < 0) {
            for (int i = 0; i < ni; i++) q8_tensor_free(ins[i]);
            ok = false;
            break;
        }
        q8_error err = {0};
        q8_model *m = NULL;
        q8_session *sess = NULL;
        bool frozen[MAX_IO] = {false};
        int nfrozen = 0;
        snprintf(path, sizeof path, "%s/model.onnx", dir);
        if (load_model(path, ins, ni, frozen, &nfrozen, &m, &err) != Q8_OK) {
            /* drop the path prefix for a shorter report */
            const char *msg = strncmp(err.msg, path, strlen(path)) == 0 ? err.msg + strlen(path) + 2 : err.msg;
            snprintf(why, wn, "%s", msg);
            ok = false;
        } else if (q8_model_num_inputs(m) != ni - nfrozen || q8_model_num_outputs(m) != no) {
            snprintf(why, wn, "model has %d inputs / %d outputs, test data %d / %d",
                     q8_model_num_inputs(m) + nfrozen, q8_model_num_outputs(m), ni, no);
            ok = false;
        } else {
            q8_session_options so = {.n_threads = n_threads};
            if (q8_session_create(m, &so, &sess, &err) != Q8_OK) {
                snprintf(why, wn, "%s", err.msg);
                ok = false;
            }
            for (int i = 0, k = 0; ok && i < ni; i++) {
                if (frozen[i]) continue;
                q8_tensor_info info;
                q8_model_input_info(m, k++, &info, NULL);
                if (q8_session_set_input(sess, info.name, ins[i]->dtype, ins[i]->dims, ins[i]->ndim,
                                         ins[i]->data, &err) != Q8_OK) {
                    snprintf(why, wn, "%s", err.msg);
                    ok = false;
                }
            }
            if (ok && q8_session_run(sess, &err) != Q8_OK) {
                snprintf(why, wn, "%s", err.msg);
                ok = false;
            }
            for (int i = 0; ok && i < no; i++) {
                q8_tensor_info info;
                const void *d;
                q8_session_output(sess, i, &info, &d, NULL);
                ok = compare(&info, d, outs[i], why, wn);
            }
        }
        q8_session_free(sess);
        q8_model_free(m);
        for (int i = 0; i < ni; i++) q8_tensor_free(ins[i]);
        for (int i = 0; i < no; i++) q8_tensor_free(outs[i]);
    }
    free_list(sets, nsets);
    return ok;
}

bool q8c_run(const q8c_options *o, q8c_result *r) {
    memset(r, 0, sizeof *r);
    skip_list sk;
    load_skips(o->skip_file, &sk);
    bool any = false;
    for (size_t si = 0; si < sizeof suites / sizeof suites[0]; si++) {
        char sdir[4096];
        snprintf(sdir, sizeof sdir, "%s/%s", o->data_dir, suites[si]);
        char **tests;
        int nt = list_dir(sdir, "test_", &tests);
        if (nt < 0) continue;
        any = true;
        for (int i = 0; i < nt; i++) {
            if (o->filter && !strstr(tests[i], o->filter)) continue;
            char dir[4096], why[600] = "";
            snprintf(dir, sizeof dir, "%s/%s", sdir, tests[i]);
            bool skipped = is_skipped(&sk, tests[i]);
            if (skipped && !o->check_skipped) {
                r->skip++;
                continue;
            }
            bool ok = run_case(dir, o->n_threads, why, sizeof why);
            if (skipped) {
                r->skip++;
                if (ok) {
                    r->stale++;
                    printf("STALE %s (listed as skipped, but passes)\n", tests[i]);
                }
                continue;
            }
            if (ok) {
                r->pass++;
                if (o->verbose) printf("PASS  %s\n", tests[i]);
            } else {
                r->fail++;
                printf("FAIL  %s/%s: %s\n", suites[si], tests[i], why);
                if (o->report) fprintf(o->report, "%s\t%s\n", tests[i], why);
            }
        }
        free_list(tests, nt);
    }
    for (int i = 0; i < sk.n; i++) free(sk.names[i]);
    free(sk.names);
    return any;
}
