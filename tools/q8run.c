/* q8run: run an ONNX (FP32) or .q8 (INT8) model on input files.
 *
 *   q8run MODEL(.onnx|.q8) --input [NAME=]FILE(.npy|.pb)... [--out DIR]
 *         [--device cpu|cuda] [--threads N] [--bench N] [--json]
 *         [--input-shape NAME=DIMS]... [--bind NAME=FILE]...
 */
#include <errno.h>
#include <math.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "q8.h"

#define MAX_INPUTS 64

static void usage(FILE *f) {
    fprintf(f,
            "usage: q8run MODEL(.onnx|.q8) --input [NAME=]FILE(.npy|.pb)... [--out DIR]\n"
            "             [--device cpu|cuda] [--threads N] [--bench N] [--json]\n"
            "             [--input-shape NAME=DIMS]... [--print N] [--labels FILE.npy]\n"
            "             [--bind NAME=FILE]... [--fixed-threads] [--profile | --profile-nodes]\n"
            "             [--strict-device]\n"
            "  Runs the model once on the inputs (or N timed times with --bench) and\n"
            "  writes each output to DIR/<name>.npy, or prints them without --out.\n"
            "  --bind: the input's value is known at load; what it decides (shapes,\n"
            "  If branches) folds away. A .q8 checks it against the value it was built for.\n"
            "  --fixed-threads: always split the work over the threads (by default, runs\n"
            "  use one thread while that measures faster; the outputs are the same).\n"
            "  --profile: time every node; print per run the time of each op type and\n"
            "  the 12 slowest nodes (stderr). --profile-nodes: every node in graph order.\n"
            "  --device cuda runs a node CUDA has no kernel for on the host (said on\n"
            "  stderr); --strict-device refuses the model instead.\n");
}

typedef struct input_arg {
    char *name; /* NULL: positional */
    const char *path;
    q8_host_tensor *t;
} input_arg;

/* --json: the model's inputs and outputs as callers exchange them. */
static void print_json_io(const q8_model *m) {
    for (int side = 0; side < 2; side++) {
        int n = side ? q8_model_num_outputs(m) : q8_model_num_inputs(m);
        printf(", \"%s\": [", side ? "outputs" : "inputs");
        for (int i = 0; i < n; i++) {
            q8_tensor_info t;
            if ((side ? q8_model_output_info : q8_model_input_info)(m, i, &t, NULL) != Q8_OK) continue;
            printf("%s{\"name\": ", i ? ", " : "");
            q8_cli_json_str(stdout, t.name);
            printf(", \"dtype\": \"%s\", \"shape\": [", q8_dtype_name(t.dtype));
            for (int d = 0; d < t.ndim; d++) printf("%s%lld", d ? ", " : "", (long long)t.dims[d]);
            printf("]}");
        }
        printf("]");
    }
}

/* Time per op type and the slowest nodes, per run (stderr, so that --json's
 * last stdout line stays the JSON); all: every node, in graph order. */
static void print_profile(const q8_session *s, int runs, bool all) {
    int n = q8_session_num_nodes(s);
    const char *types[256];
    double type_ms[256] = {0}, total = 0;
    int type_count[256] = {0}, nt = 0;
    double *ms = calloc((size_t)n + 1, sizeof(double));
    int *order = malloc(sizeof(int) * ((size_t)n + 1));
    if (!ms || !order) {
        free(ms);
        free(order);
        return;
    }
    for (int i = 0; i < n; i++) {
        const char *name, *op;
        q8_session_node_profile(s, i, &name, &op, &ms[i], NULL);
        ms[i] /= runs;
        total += ms[i];
        order[i] = i;
        int k = 0;
        while (k < nt && strcmp(types[k], op) != 0) k++;
        if (k == nt && nt < 256) types[nt++] = op;
        if (k < 256) {
            type_ms[k] += ms[i];
            type_count[k]++;
        }
    }
    fprintf(stderr, "profile: %.3f ms per run in %d nodes\n", total, n);
    for (int a = 0; a < nt; a++)
        for (int b = a + 1; b < nt; b++)
            if (type_ms[b] > type_ms[a]) {
                double t = type_ms[a]; type_ms[a] = type_ms[b]; type_ms[b] = t;
                int c = type_count[a]; type_count[a] = type_count[b]; type_count[b] = c;
                const char *x = types[a]; types[a] = types[b]; types[b] = x;
            }
    for (int k = 0; k < nt; k++)
        fprintf(stderr, "  %-24s %4d nodes %9.3f ms %5.1f%%\n", types[k], type_count[k], type_ms[k],
                total > 0 ? 100 * type_ms[k] / total : 0);
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++)
            if (ms[order[b]] > ms[order[a]]) {
                int t = order[a]; order[a] = order[b]; order[b] = t;
            }
    if (all)
        for (int k = 0; k < n; k++) order[k] = k;
    fprintf(stderr, all ? "  nodes in graph order:\n" : "  slowest nodes:\n");
    for (int k = 0; k < n && (all || k < 12); k++) {
        const char *name, *op;
        double x;
        q8_session_node_profile(s, order[k], &name, &op, &x, NULL);
        fprintf(stderr, "  %9.3f ms  %s (%s)\n", ms[order[k]], name, op);
    }
    free(ms);
    free(order);
}

/* Top-1 accuracy of output 0 (argmax over its last axis) against integer
 * labels, one per row; prints it unless --json. */
static bool top1_accuracy(const q8_session *s, const char *model, const char *path, double *acc,
                          q8_error *err) {
    q8_host_tensor *lab = NULL;
    if (q8_tensor_file_read(path, &lab, err) != Q8_OK) return false;
    q8_tensor_info info;
    const void *data;
    q8_session_output(s, 0, &info, &data, NULL);
    bool ok = true;
    int64_t rows = 1, row = info.ndim ? info.dims[info.ndim - 1] : 1;
    for (int i = 0; i + 1 < info.ndim; i++) rows *= info.dims[i];
    if (info.dtype != Q8_F32 || row < 1) {
        q8_fail(err, Q8_ERR_ARG, "--labels: output '%s' is not a float score tensor", info.name);
        ok = false;
    } else if ((lab->dtype != Q8_I64 && lab->dtype != Q8_I32) || q8_host_tensor_numel(lab) != rows) {
        q8_fail(err, Q8_ERR_SHAPE, "--labels %s: expected %lld int64/int32 labels (one per row of '%s'), got %lld %s",
                path, (long long)rows, info.name, (long long)q8_host_tensor_numel(lab), q8_dtype_name(lab->dtype));
        ok = false;
    }
    int64_t hits = 0;
    for (int64_t r = 0; ok && r < rows; r++) {
        const float *v = (const float *)data + r * row;
        int64_t am = 0;
        for (int64_t i = 1; i < row; i++)
            if (v[i] > v[am]) am = i;
        int64_t want = lab->dtype == Q8_I64 ? ((const int64_t *)lab->data)[r] : ((const int32_t *)lab->data)[r];
        if (want < 0 || want >= row) {
            q8_fail(err, Q8_ERR_ARG, "--labels %s: label %lld (row %lld) is not a class of output "
                    "'%s' (0 to %lld)", path, (long long)want, (long long)r, info.name,
                    (long long)(row - 1));
            ok = false;
        }
        hits += am == want;
    }
    if (ok) {
        *acc = (double)hits / (double)rows;
        printf("%s: top-1 accuracy %.4f (%lld of %lld)\n", model, *acc, (long long)hits,
               (long long)rows);
    }
    q8_host_tensor_free(lab);
    return ok;
}

/* NaN and infinities in a float tensor (ReLU turns a NaN input into a
 * confident-looking answer, so they are worth a warning). */
static int64_t count_nonfinite(q8_dtype dt, const void *data, int64_t n) {
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        if (dt == Q8_F32) bad += !isfinite(((const float *)data)[i]);
        else if (dt == Q8_F64) bad += !isfinite(((const double *)data)[i]);
        else if (dt == Q8_F16) bad += (((const uint16_t *)data)[i] & 0x7c00) == 0x7c00;
        else if (dt == Q8_BF16) bad += (((const uint16_t *)data)[i] & 0x7f80) == 0x7f80;
        else return 0;
    }
    return bad;
}

static void warn_nonfinite(const char *what, const char *name, const char *file, q8_dtype dt,
                           const int64_t *dims, int ndim, const void *data) {
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= dims[i];
    int64_t bad = count_nonfinite(dt, data, n);
    if (!bad) return;
    char msg[600];
    snprintf(msg, sizeof msg, "%s '%s'%s%s%s holds %lld NaN or infinite value%s of %lld: %s", what,
             name, file ? " (" : "", file ? file : "", file ? ")" : "", (long long)bad,
             bad == 1 ? "" : "s", (long long)n,
             file ? "the outputs are not meaningful" : "check the inputs and the model");
    q8_cli_warn("q8run", msg);
}

/* Encode every output first, check that their file names differ, then
 * write them all or none. */
static q8_status write_outputs(q8_session *s, int n_out, const char *out_dir, const char *model,
                               const input_arg *inputs, int n_inputs, const char *labels,
                               q8_error *err) {
    char **paths = calloc((size_t)n_out + 1, sizeof *paths);
    uint8_t **bufs = calloc((size_t)n_out + 1, sizeof *bufs);
    size_t *lens = calloc((size_t)n_out + 1, sizeof *lens);
    const char **names = calloc((size_t)n_out + 1, sizeof *names);
    q8_status st = Q8_OK;
    if (!paths || !bufs || !lens || !names) st = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    for (int i = 0; i < n_out && st == Q8_OK; i++) {
        q8_tensor_info info;
        const void *data;
        q8_session_output(s, i, &info, &data, NULL);
        names[i] = info.name;
        char fname[256];
        q8_cli_sanitize(info.name, fname, sizeof fname);
        size_t plen = strlen(out_dir) + strlen(fname) + 8;
        if (!(paths[i] = malloc(plen))) {
            st = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
            break;
        }
        snprintf(paths[i], plen, "%s/%s.npy", out_dir, fname);
        for (int j = 0; j < i && st == Q8_OK; j++)
            if (strcmp(paths[i], paths[j]) == 0)
                st = q8_fail(err, Q8_ERR_ARG, "outputs '%s' and '%s' would both be written to '%s'",
                             names[j], names[i], paths[i]);
        /* never over what this run reads */
        const char *in = q8_same_file(paths[i], model) ? model
                         : labels && q8_same_file(paths[i], labels) ? labels : NULL;
        for (int k = 0; !in && k < n_inputs; k++)
            if (q8_same_file(paths[i], inputs[k].path)) in = inputs[k].path;
        if (st == Q8_OK && in)
            st = q8_fail(err, Q8_ERR_ARG, "refusing to overwrite '%s', which this run reads, with "
                         "output '%s'", in, info.name);
        if (st == Q8_OK)
            st = q8_npy_encode(info.dtype, info.dims, info.ndim, data, &bufs[i], &lens[i], err);
        if (st == Q8_ERR_UNSUPPORTED || st == Q8_ERR_NOMEM) q8_fail_prefix(err, "output '%s'", info.name);
    }
    errno = 0;
    if (st == Q8_OK && !q8_cli_mkdirs(out_dir))
        st = q8_fail(err, Q8_ERR_IO, "cannot create the output folder '%s': %s", out_dir,
                     errno ? strerror(errno) : "not a folder");
    if (st == Q8_OK)
        st = q8_write_files_atomic((const char *const *)paths, (const void *const *)bufs, lens,
                                   n_out, err);
    for (int i = 0; i < n_out && paths && bufs; i++) {
        free(paths[i]);
        free(bufs[i]);
    }
    free(paths);
    free(bufs);
    free(lens);
    free(names);
    return st;
}

int main(int argc, char **argv) {
    static const struct option opts[] = {
        {"input", required_argument, 0, 'i'},  {"out", required_argument, 0, 'o'},
        {"device", required_argument, 0, 'd'}, {"threads", required_argument, 0, 't'},
        {"bench", required_argument, 0, 'b'},  {"json", no_argument, 0, 'j'},
        {"input-shape", required_argument, 0, 's'}, {"print", required_argument, 0, 'p'},
        {"labels", required_argument, 0, 'l'},  {"profile", no_argument, 0, 'P'},
        {"help", no_argument, 0, 'h'},          {"bind", required_argument, 0, 'B'},
        {"fixed-threads", no_argument, 0, 'F'}, {"profile-nodes", no_argument, 0, 'N'},
        {"strict-device", no_argument, 0, 'S'}, {0, 0, 0, 0}};
    input_arg binds[MAX_INPUTS];
    q8_input_value values[MAX_INPUTS];
    int n_binds = 0;
    input_arg inputs[MAX_INPUTS];
    q8_input_shape shapes[MAX_INPUTS];
    int n_inputs = 0, n_shapes = 0;
    const char *out_dir = NULL, *labels_path = NULL;
    long threads = 0, bench = 0, print_max = 16;
    bool json = false, print_given = false, profile = false, fixed_threads = false;
    bool strict_device = false;
    bool profile_nodes = false;
    q8_device device = Q8_DEVICE_CPU;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "i:o:d:t:b:js:p:l:PhB:FNS", opts, NULL)) != -1) {
        switch (c) {
        case 'B': {
            char *eq = strchr(optarg, '=');
            if (!eq || eq == optarg || n_binds == MAX_INPUTS) {
                fprintf(stderr, "q8run: --bind wants NAME=FILE (at most %d)\n", MAX_INPUTS);
                return 2;
            }
            *eq = 0;
            binds[n_binds].name = optarg;
            binds[n_binds].path = eq + 1;
            binds[n_binds++].t = NULL;
            break;
        }
        case 'i': {
            if (n_inputs == MAX_INPUTS) {
                fprintf(stderr, "q8run: at most %d --input\n", MAX_INPUTS);
                return 2;
            }
            char *eq = strchr(optarg, '=');
            inputs[n_inputs].name = NULL;
            inputs[n_inputs].path = optarg;
            inputs[n_inputs].t = NULL;
            if (eq) {
                *eq = 0;
                inputs[n_inputs].name = optarg;
                inputs[n_inputs].path = eq + 1;
            }
            n_inputs++;
            break;
        }
        case 'o': out_dir = optarg; break;
        case 'd':
            if (strcmp(optarg, "cpu") == 0) device = Q8_DEVICE_CPU;
            else if (strcmp(optarg, "cuda") == 0) device = Q8_DEVICE_CUDA;
            else {
                fprintf(stderr, "q8run: --device must be cpu or cuda, not '%s'\n", optarg);
                return 2;
            }
            break;
        case 't':
            if (!q8_cli_parse_int(optarg, 1, 1024, &threads)) {
                fprintf(stderr, "q8run: --threads needs a number from 1 to 1024, not '%s'\n", optarg);
                return 2;
            }
            break;
        case 'b':
            if (!q8_cli_parse_int(optarg, 1, 1000000, &bench)) {
                fprintf(stderr, "q8run: --bench needs a number of runs >= 1, not '%s'\n", optarg);
                return 2;
            }
            break;
        case 'j': json = true; break;
        case 's':
            if (n_shapes == MAX_INPUTS || !q8_cli_parse_input_shape(optarg, &shapes[n_shapes])) {
                fprintf(stderr, "q8run: --input-shape wants NAME=DIMS like data=1x3x224x224\n");
                return 2;
            }
            if (!q8_cli_dims_positive("q8run", &shapes[n_shapes])) return 2;
            n_shapes++;
            break;
        case 'p':
            print_given = true;
            if (!q8_cli_parse_int(optarg, 0, 1L << 30, &print_max)) {
                fprintf(stderr, "q8run: --print needs a count\n");
                return 2;
            }
            break;
        case 'l': labels_path = optarg; break;
        case 'P': profile = true; break;
        case 'N': profile = profile_nodes = true; break;
        case 'F': fixed_threads = true; break;
        case 'S': strict_device = true; break;
        case 'h': usage(stdout); return 0;
        default:
            fprintf(stderr, "q8run: unknown or incomplete option '%s'\n", argv[optind - 1]);
            usage(stderr);
            return 2;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, optind >= argc ? "q8run: no model given\n" : "q8run: one model only\n");
        usage(stderr);
        return 2;
    }
    const char *model_path = argv[optind];
    /* no --input: right for a model without inputs (MelWeightMatrix of
     * constants); otherwise the count check below names what is missing */

    int rc = 1;
    q8_error err = {0};
    q8_model *m = NULL;
    bool taken = false;
    q8_session *s = NULL;
    for (int i = 0; i < n_inputs; i++)
        if (q8_tensor_file_read(inputs[i].path, &inputs[i].t, &err) != Q8_OK) goto done;
    /* Without --input-shape, the input files fix any dynamic dims. */
    if (n_shapes == 0) {
        for (int i = 0; i < n_inputs; i++) {
            shapes[i].name = inputs[i].name;
            shapes[i].ndim = inputs[i].t->ndim;
            memcpy(shapes[i].dims, inputs[i].t->dims, sizeof shapes[i].dims);
        }
        n_shapes = n_inputs;
    }
    for (int i = 0; i < n_binds; i++) {
        if (q8_tensor_file_read(binds[i].path, &binds[i].t, &err) != Q8_OK) goto done;
        values[i] = (q8_input_value){.name = binds[i].name, .dtype = binds[i].t->dtype,
                                     .ndim = binds[i].t->ndim, .data = binds[i].t->data};
        memcpy(values[i].dims, binds[i].t->dims, sizeof values[i].dims);
    }
    q8_load_options lo = {.input_shapes = shapes, .n_input_shapes = n_shapes,
                          .input_values = values, .n_input_values = n_binds};
    /* no --input for a model that has inputs is a usage error (exit 2) */
    bool none_given = n_inputs == 0 && n_binds == 0;
    if (q8_model_open(model_path, &lo, &m, &err) != Q8_OK) {
        if (none_given) {
            q8_fail_prefix(&err, "no --input given");
            rc = 2;
        }
        goto done;
    }
    /* an --input naming a bound input is checked, not counted */
    int n_model_in = q8_model_num_inputs(m);
    for (int i = 0; i < n_inputs; i++)
        for (int k = 0; inputs[i].name && k < q8_model_num_bound(m); k++) {
            q8_tensor_info bi;
            const void *bd;
            q8_model_bound_info(m, k, &bi, &bd, NULL);
            n_model_in += strcmp(bi.name, inputs[i].name) == 0;
        }
    if (n_inputs != n_model_in) {
        q8_fail(&err, Q8_ERR_ARG, "the model has %d inputs, %d --input given", n_model_in,
                n_inputs);
        if (none_given) rc = 2;
        goto done;
    }
    q8_session_options so = {.n_threads = (int)threads, .device = device, .profile = profile,
                             .fixed_threads = fixed_threads, .strict_device = strict_device};
    /* one session: it takes the model, and holds each weight the kernels
     * packed once */
    q8_status cs = q8_session_create_owning(m, &so, &s, &err);
    taken = true; /* the session's now (freed with it), or already freed */
    if (cs != Q8_OK) goto done;
    q8_session_stats hs;
    q8_session_stats_get(s, &hs);
    if (hs.host_nodes) /* a slow path is never silent */
        fprintf(stderr, "q8run: %d node(s) run on the host (the %s backend has no kernel for "
                        "them): %s\n", hs.host_nodes, device == Q8_DEVICE_CUDA ? "cuda" : "device",
                hs.host_ops);
    for (int i = 0; i < n_inputs; i++) {
        const char *name = inputs[i].name;
        q8_tensor_info info;
        if (!name) {
            q8_model_input_info(m, i, &info, NULL);
            name = info.name;
        }
        if (q8_session_set_input(s, name, inputs[i].t->dtype, inputs[i].t->dims, inputs[i].t->ndim,
                                 inputs[i].t->data, &err) != Q8_OK) {
            q8_fail_prefix(&err, "%s", inputs[i].path);
            goto done;
        }
        warn_nonfinite("input", name, inputs[i].path, inputs[i].t->dtype, inputs[i].t->dims,
                       inputs[i].t->ndim, inputs[i].t->data);
        /* the session has its own copy: a large input (an image) is not
         * held twice while the model runs */
        q8_host_tensor_free(inputs[i].t);
        inputs[i].t = NULL;
    }
    int runs = bench > 0 ? (int)bench : 1;
    double *times = malloc(sizeof(double) * (size_t)runs);
    double *dev_times = malloc(sizeof(double) * (size_t)runs);
    if (!times || !dev_times) {
        free(times);
        free(dev_times);
        q8_fail(&err, Q8_ERR_NOMEM, "out of memory");
        goto done;
    }
    /* Warm-up: caches, page faults, thread start-up, and on the CPU with
     * threads the runs that prime the pool and time it against one thread
     * (docs/cli.md, "Threads, by measurement": 5 ms of runs, 2 to 16 of
     * them, then 9): at least 6 runs, and with threads on until those are
     * past (25 runs, or 5 ms + 12 runs' time). Six were too few for a
     * sub-millisecond model: its timed runs began with the measurements'
     * runs on one thread. */
    int warm = bench > 0 ? (runs < 3 ? 1 : 6) : 0;
    bool adaptive = bench > 0 && runs >= 3 && threads != 1 && !fixed_threads &&
                    device == Q8_DEVICE_CPU;
    q8_status rs = Q8_OK;
    double warm_ms = 0, last_ms = 0;
    int warmed = 0;
    for (; rs == Q8_OK; warmed++) {
        if (warmed >= warm && (!adaptive || warmed >= 25 || warm_ms >= 5.0 + 12.0 * last_ms))
            break;
        double t0 = q8_cli_now_ms();
        rs = q8_session_run(s, &err);
        last_ms = q8_cli_now_ms() - t0;
        warm_ms += last_ms;
    }
    /* end to end (inputs in, outputs out), and on the device alone where the
     * backend measures it */
    int dev_runs = 0;
    for (int i = 0; i < runs && rs == Q8_OK; i++) {
        double t0 = q8_cli_now_ms();
        rs = q8_session_run(s, &err);
        times[i] = q8_cli_now_ms() - t0;
        q8_session_stats st;
        q8_session_stats_get(s, &st);
        if (st.device_ms >= 0) dev_times[dev_runs++] = st.device_ms;
    }
    double med, mn, mx, dmed = -1, dmn, dmx;
    if (rs == Q8_OK) q8_cli_stats(times, runs, &med, &mn, &mx);
    if (rs == Q8_OK && dev_runs == runs) q8_cli_stats(dev_times, runs, &dmed, &dmn, &dmx);
    free(times);
    free(dev_times);
    if (rs != Q8_OK) goto done;

    int n_out = q8_model_num_outputs(m);
    for (int i = 0; i < n_out; i++) {
        q8_tensor_info info;
        const void *data;
        q8_session_output(s, i, &info, &data, NULL);
        warn_nonfinite("output", info.name, NULL, info.dtype, info.dims, info.ndim, data);
    }
    if (out_dir && write_outputs(s, n_out, out_dir, model_path, inputs, n_inputs, labels_path,
                                 &err) != Q8_OK)
        goto done;
    for (int i = 0; i < n_out; i++) {
        q8_tensor_info info;
        const void *data;
        q8_session_output(s, i, &info, &data, NULL);
        if (out_dir) {
            char fname[256];
            q8_cli_sanitize(info.name, fname, sizeof fname);
            if (!json) printf("wrote %s/%s.npy\n", out_dir, fname);
        } else if ((!json || bench == 0) && (!labels_path || print_given)) {
            q8_cli_print_tensor(stdout, info.name, info.dtype, info.dims, info.ndim, data,
                                (int)print_max);
        }
    }
    double top1 = -1;
    if (labels_path && !top1_accuracy(s, model_path, labels_path, &top1, &err)) goto done;
    if (profile) print_profile(s, runs + warmed, profile_nodes);
    q8_memory_info mi;
    q8_session_memory(s, &mi);
    if (bench > 0 && !json)
        printf("bench: %d runs, median %.3f ms, min %.3f ms, max %.3f ms; weights %zu B, arena %zu B\n",
               runs, med, mn, mx, mi.weights_bytes, mi.arena_bytes);
    if (json) {
        printf("{\"model\": ");
        q8_cli_json_str(stdout, model_path);
        printf(", \"device\": \"%s\", \"threads\": %ld, \"runs\": %d, \"median_ms\": %.4f, "
               "\"min_ms\": %.4f, \"max_ms\": %.4f, \"weights_bytes\": %zu, \"arena_bytes\": %zu, "
               "\"peak_rss_bytes\": %zu",
               device == Q8_DEVICE_CUDA ? "cuda" : "cpu", threads ? threads : (long)q8_cpu_count(),
               runs, med, mn, mx,
               mi.weights_bytes, mi.arena_bytes, q8_cli_peak_rss());
        q8_session_stats st;
        q8_session_stats_get(s, &st);
        if (device == Q8_DEVICE_CUDA) {
            printf(", \"device_bytes\": %zu, \"device_delta_bytes\": %zu, "
                   "\"igemm_fallbacks\": %d, \"cuda_graph\": %s, \"mapped_weights_bytes\": %zu, "
                   "\"weights_staging_bytes\": %zu, \"library\": ",
                   mi.device_bytes, mi.device_delta_bytes, st.igemm_fallbacks,
                   st.graph ? "true" : "false", st.mapped_weights_bytes,
                   st.weights_staging_bytes);
            q8_cli_json_str(stdout, st.library);
            printf(", \"host_nodes\": %d, \"host_bytes\": %zu, \"host_ops\": ", st.host_nodes,
                   st.host_bytes);
            q8_cli_json_str(stdout, st.host_ops);
            if (dmed >= 0)
                printf(", \"device_median_ms\": %.4f, \"device_min_ms\": %.4f", dmed, dmn);
        } else {
            printf(", \"single_thread\": %s", st.single_thread ? "true" : "false");
        }
        if (top1 >= 0) printf(", \"top1\": %.6f", top1);
        print_json_io(m);
        printf("}\n");
    }
    rc = 0;
done:
    if (rc) q8_cli_error("q8run", err.msg);
    q8_session_free(s);
    if (!taken) q8_model_free(m);
    for (int i = 0; i < n_inputs; i++) q8_host_tensor_free(inputs[i].t);
    for (int i = 0; i < n_binds; i++) q8_host_tensor_free(binds[i].t);
    return rc;
}
