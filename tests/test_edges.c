/* Bad input at the edges (issue 14, docs/robustness.md): special files at
 * output paths, FIFOs wherever q8 reads, degenerate calibration data,
 * non-finite weights, outputs that are inputs under another name, options
 * that would be ignored, and the messages a person gets. Mostly through the
 * command-line tools, each run under a time limit, so that a hang fails the
 * test instead of stalling it. */
#define _GNU_SOURCE /* O_TMPFILE */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "model.h"
#include "npy.h"
#include "onnx.pb-c.h"
#include "calibrate.h"
#include "onnx_import.h"
#include "passes.h"
#include "q8_tools.h"
#include "samples.h"
#include "testutil.h"

#define MNIST Q8_SOURCE_DIR "/models/mnist"
#define CORPUS Q8_SOURCE_DIR "/tests/corpus/onnx"
#define QUANTIZE Q8_BINARY_DIR "/quantize"
#define Q8RUN Q8_BINARY_DIR "/q8run"
#define Q8REPORT Q8_BINARY_DIR "/q8report"
#define LIMIT 20 /* seconds a command may take here; a blocked read ends as SIGALRM */
/* a command that does the whole job (calibration, the range choice, pruning
 * with its re-fit) may take longer, under qemu most of all */
#define OK_LIMIT 300

/* ---- helpers ---- */

static q8t_cmd run(const char *tmp, char *const argv[]) { return q8t_run_cmd(tmp, LIMIT, argv); }

/* The command failed with `code` and one stderr line "TOOL: ...SUB...". */
static void expect_fail(const char *tmp, char *const argv[], int code, const char *sub) {
    q8t_cmd r = run(tmp, argv);
    const char *tool = strrchr(argv[0], '/') + 1;
    cr_expect(r.exited, "%s %s: killed by signal %d (a hang?)", tool, argv[1], r.code);
    cr_expect(r.exited && r.code == code, "%s %s: exit %d, expected %d; stderr: %s", tool,
              argv[1], r.code, code, r.err);
    const char *nl = strchr(r.err, '\n');
    cr_expect(!strncmp(r.err, tool, strlen(tool)) && nl &&
                  (nl[1] == 0 || !strncmp(nl + 1, "usage:", 6)),
              "%s: not one error line: [%s]", tool, r.err);
    cr_expect(strstr(r.err, sub), "%s: stderr lacks \"%s\": %s", tool, sub, r.err);
    q8t_cmd_free(&r);
}

static void expect_ok(const char *tmp, char *const argv[], q8t_cmd *keep) {
    q8t_cmd r = q8t_run_cmd(tmp, OK_LIMIT, argv);
    cr_assert(r.exited && r.code == 0, "%s: exit %d: %s", argv[0], r.code, r.err);
    if (keep) *keep = r;
    else q8t_cmd_free(&r);
}

static void fifo(char *out, size_t n, const char *dir, const char *name) {
    q8t_path(out, n, dir, name);
    cr_assert_eq(mkfifo(out, 0600), 0, "mkfifo %s: %s", out, strerror(errno));
}

static bool is_kind(const char *path, mode_t kind, bool follow) {
    struct stat st;
    return (follow ? stat(path, &st) : lstat(path, &st)) == 0 && (st.st_mode & S_IFMT) == kind;
}

static void npy_f32(const char *path, const int64_t *dims, int nd, const float *x) {
    q8_error err = {0};
    cr_assert_eq(q8_npy_write(path, Q8_F32, dims, nd, x, &err), Q8_OK, "%s", err.msg);
}

static void npy_i64(const char *path, int64_t n, const int64_t *v) {
    q8_error err = {0};
    cr_assert_eq(q8_npy_write(path, Q8_I64, &n, 1, v, &err), Q8_OK, "%s", err.msg);
}

/* n samples of rows x 1x28x28 in dir (made), every value v, named
 * s000.npy, s001.npy, ... */
static void samples_of(const char *dir, int n, float v, int64_t rows) {
    mkdir(dir, 0755);
    float *x = malloc(sizeof(float) * 784 * (size_t)(rows ? rows : 1));
    for (int64_t i = 0; i < 784 * rows; i++) x[i] = v;
    for (int i = 0; i < n; i++) {
        char p[512], name[32];
        snprintf(name, sizeof name, "s%03d.npy", i);
        q8t_path(p, sizeof p, dir, name);
        int64_t d[4] = {rows, 1, 28, 28};
        npy_f32(p, d, 4, x);
    }
    free(x);
}

/* Copy the shipped calibration samples into dir (made). */
static void copy_calib(const char *dir, int n) {
    mkdir(dir, 0755);
    for (int i = 0; i < n; i++) {
        char from[512], to[512];
        snprintf(from, sizeof from, MNIST "/calib/calib_%03d.npy", i);
        snprintf(to, sizeof to, "%s/calib_%03d.npy", dir, i);
        size_t len;
        char *b = q8t_slurp(from, &len);
        cr_assert(b, "%s", from);
        q8t_write_file(to, b, len);
        free(b);
    }
}

static q8_status quantize_lib(const char *onnx, const char *out, const char *calib,
                              q8_calib_method m, q8_error *err) {
    q8_quantize_options o = {.calib_dir = calib, .method = m, .percentile = 99.99, .n_threads = 2};
    q8_quantize_result r;
    return q8_quantize_model(onnx, out, &o, &r, err);
}

/* ---- 1. outputs: a special file is never replaced ---- */

Test(edges, outputs_never_replace_special_files, .timeout = 300) {
    char *tmp = q8t_tmpdir("edges");
    char f[512], link[512], dev[512], sock[512], out[512], y[512], r[512], rj[512];
    fifo(f, sizeof f, tmp, "out.q8");
    q8t_path(link, sizeof link, tmp, "link.q8");
    cr_assert_eq(symlink(f, link), 0);
    char *q1[] = {QUANTIZE, MNIST "/mlp.onnx", "-o", f, "--calib", MNIST "/calib", NULL};
    expect_fail(tmp, q1, 1, "refusing to replace");
    cr_expect(is_kind(f, S_IFIFO, false), "the FIFO was replaced");
    char *q2[] = {QUANTIZE, MNIST "/mlp.onnx", "-o", link, "--calib", MNIST "/calib", NULL};
    expect_fail(tmp, q2, 1, "it is a FIFO, not a regular file");
    cr_expect(is_kind(link, S_IFLNK, false) && is_kind(f, S_IFIFO, false));
    /* a device node (a private copy of /dev/null's; mknod needs root) */
    q8t_path(dev, sizeof dev, tmp, "null");
    if (mknod(dev, S_IFCHR | 0666, makedev(1, 3)) == 0) {
        char *q3[] = {QUANTIZE, MNIST "/mlp.onnx", "-o", dev, "--calib", MNIST "/calib", NULL};
        expect_fail(tmp, q3, 1, "it is a character device, not a regular file");
        cr_expect(is_kind(dev, S_IFCHR, false), "the device node was replaced");
    } else {
        cr_log_info("mknod: %s: the device case is left out here", strerror(errno));
    }
    /* a socket */
    q8t_path(sock, sizeof sock, tmp, "sock.q8");
    int sfd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", sock);
    cr_assert(sfd >= 0 && bind(sfd, (struct sockaddr *)&sa, sizeof sa) == 0, "%s", strerror(errno));
    char *q4[] = {QUANTIZE, MNIST "/mlp.onnx", "-o", sock, "--calib", MNIST "/calib", NULL};
    expect_fail(tmp, q4, 1, "it is a socket");
    close(sfd);
    /* q8run --out: an output file that is a FIFO */
    q8t_path(out, sizeof out, tmp, "out");
    mkdir(out, 0755);
    fifo(y, sizeof y, out, "logits.npy");
    char *r1[] = {Q8RUN, MNIST "/cnn.onnx", "--input", MNIST "/sample.npy", "--out", out, NULL};
    expect_fail(tmp, r1, 1, "refusing to replace");
    cr_expect(is_kind(y, S_IFIFO, false), "q8run replaced the FIFO");
    /* q8report: one of its three files is a FIFO: refused before measuring */
    q8t_path(r, sizeof r, tmp, "r.html");
    fifo(rj, sizeof rj, tmp, "r.json");
    char *p1[] = {Q8REPORT, MNIST "/mlp.onnx", MNIST "/mlp.onnx", "--data", MNIST "/sample.npy",
                  "-o", r, NULL};
    expect_fail(tmp, p1, 1, "refusing to replace");
    cr_expect(is_kind(rj, S_IFIFO, false) && access(r, F_OK) != 0);
    q8t_rm_rf(tmp);
    free(tmp);
}

/* ---- 9. a write killed by a signal leaves no temp file ---- */

/* The child's write is killed midway by a real signal (SIGXFSZ: the file
 * size limit is below the data's size), deterministically, with no race. */
Test(edges, killed_write_leaves_nothing, .timeout = 120) {
    char *tmp = q8t_tmpdir("edges");
    int probe = open(tmp, O_TMPFILE | O_WRONLY, 0600);
    if (probe < 0) { /* docs/robustness.md: then the temp has a name */
        q8t_rm_rf(tmp);
        free(tmp);
        cr_skip_test("this file system has no O_TMPFILE");
    }
    close(probe);
    char out[512];
    q8t_path(out, sizeof out, tmp, "big.q8");
    pid_t pid = fork();
    if (pid == 0) {
        struct rlimit no_core = {0, 0}, fsize = {1 << 20, 1 << 20};
        setrlimit(RLIMIT_CORE, &no_core);
        setrlimit(RLIMIT_FSIZE, &fsize);
        size_t n = 4u << 20;
        char *buf = calloc(n, 1);
        q8_error err = {0};
        q8_write_file_atomic(out, buf, n, &err);
        _exit(0); /* not reached: SIGXFSZ ends the process */
    }
    int st;
    cr_assert(waitpid(pid, &st, 0) == pid);
    cr_expect(WIFSIGNALED(st) && WTERMSIG(st) == SIGXFSZ, "the child was not killed: %d", st);
    DIR *d = opendir(tmp);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        cr_log_error("left behind: %s", e->d_name);
        n++;
    }
    if (d) closedir(d);
    cr_expect_eq(n, 0, "a killed write left %d files", n);
    q8t_rm_rf(tmp);
    free(tmp);
}

/* ---- 2. a FIFO anywhere q8 reads never blocks ---- */

Test(edges, fifos_never_block, .timeout = 300) {
    char *tmp = q8t_tmpdir("edges");
    char f[512], calib[512], cf[512], x[512], ext[512], model[512], data[512], out[512];
    fifo(f, sizeof f, tmp, "fifo.npy");
    q8t_path(out, sizeof out, tmp, "o.q8");
    char *a1[] = {Q8RUN, f, "--input", MNIST "/sample.npy", NULL};
    expect_fail(tmp, a1, 1, "is a FIFO, not a regular file");
    char *a2[] = {Q8RUN, MNIST "/cnn.onnx", "--input", f, NULL};
    expect_fail(tmp, a2, 1, "is a FIFO, not a regular file");
    char *a3[] = {Q8RUN, MNIST "/cnn.onnx", "--input", MNIST "/sample.npy", "--labels", f, NULL};
    expect_fail(tmp, a3, 1, "is a FIFO, not a regular file");
    char *a4[] = {QUANTIZE, f, "-o", out, "--calib", MNIST "/calib", NULL};
    expect_fail(tmp, a4, 1, "is a FIFO, not a regular file");
    /* one file of --calib / --data */
    q8t_path(calib, sizeof calib, tmp, "calib");
    copy_calib(calib, 3);
    fifo(cf, sizeof cf, calib, "calib_999.npy");
    char *a5[] = {QUANTIZE, MNIST "/mlp.onnx", "-o", out, "--calib", calib, NULL};
    expect_fail(tmp, a5, 1, "is a FIFO, not a regular file");
    char *a6[] = {Q8REPORT, MNIST "/mlp.onnx", f, "--data", MNIST "/sample.npy", "-o", out, NULL};
    expect_fail(tmp, a6, 1, "is a FIFO, not a regular file");
    char q[512], rep[512];
    q8t_path(q, sizeof q, tmp, "m.q8");
    q8t_path(rep, sizeof rep, tmp, "r.html");
    q8_error err = {0};
    cr_assert_eq(quantize_lib(MNIST "/mlp.onnx", q, MNIST "/calib", Q8_CALIB_PERCENTILE, &err),
                 Q8_OK, "%s", err.msg);
    char *a6b[] = {Q8REPORT, MNIST "/mlp.onnx", q, "--data", calib, "-o", rep, NULL};
    expect_fail(tmp, a6b, 1, "calib_999.npy' is a FIFO, not a regular file");
    /* the .q8 runtime alone (q8_model_load), in a child that a hang would kill */
    pid_t pid = fork();
    if (pid == 0) {
        alarm(LIMIT);
        q8_model *m = NULL;
        q8_error err = {0};
        _exit(q8_model_load(f, NULL, &m, &err) != Q8_OK && strstr(err.msg, "is a FIFO") ? 0 : 1);
    }
    int st;
    cr_assert(waitpid(pid, &st, 0) == pid);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "q8_model_load on a FIFO: status %d", st);
    /* an external-data file */
    q8t_path(ext, sizeof ext, tmp, "ext");
    mkdir(ext, 0755);
    q8t_path(model, sizeof model, ext, "ext_ok.onnx");
    size_t len;
    char *b = q8t_slurp(CORPUS "/special/ext_ok.onnx", &len);
    q8t_write_file(model, b, len);
    free(b);
    fifo(data, sizeof data, ext, "data.bin");
    q8t_path(x, sizeof x, tmp, "x.npy");
    int64_t d2 = 2;
    npy_f32(x, &d2, 1, (const float[]){-1, 2});
    char *a7[] = {Q8RUN, model, "--input", x, NULL};
    expect_fail(tmp, a7, 1, "is a FIFO, not a regular file");
    q8t_rm_rf(tmp);
    free(tmp);
}

/* ---- 3. degenerate calibration data ---- */

static void expect_calib_refused(const char *tmp, const char *dir, const char *sub) {
    char out[512];
    q8t_path(out, sizeof out, tmp, "o.q8");
    q8_error err = {0};
    cr_expect_neq(quantize_lib(MNIST "/cnn.onnx", out, dir, Q8_CALIB_PERCENTILE, &err), Q8_OK,
                  "%s: quantized anyway", dir);
    cr_expect(strstr(err.msg, sub), "%s: '%s' not in: %s", dir, sub, err.msg);
    cr_expect_neq(access(out, F_OK), 0, "%s: a model was written", dir);
}

Test(edges, degenerate_calibration_data_is_refused, .timeout = 300) {
    char *tmp = q8t_tmpdir("edges");
    char d[512];
    q8t_path(d, sizeof d, tmp, "nan");
    samples_of(d, 4, NAN, 1);
    expect_calib_refused(tmp, d, "holds 784 NaN or infinite values of 784");
    q8t_path(d, sizeof d, tmp, "inf");
    samples_of(d, 4, INFINITY, 1);
    expect_calib_refused(tmp, d, "NaN or infinite");
    q8t_path(d, sizeof d, tmp, "zero");
    samples_of(d, 4, 0, 1);
    expect_calib_refused(tmp, d, "input 'input' is 0 in all 4 samples");
    q8t_path(d, sizeof d, tmp, "denormal");
    samples_of(d, 4, 1e-40f, 1);
    expect_calib_refused(tmp, d, "zeros or denormals only");
    /* one sample with no rows: first in sorted order, then later */
    q8t_path(d, sizeof d, tmp, "rows0");
    samples_of(d, 1, 0.5f, 0);
    copy_calib(d, 3);
    expect_calib_refused(tmp, d, "has shape 0x1x28x28: no values to measure");
    q8t_path(d, sizeof d, tmp, "rows0_late");
    copy_calib(d, 3);
    char p[600];
    snprintf(p, sizeof p, "%s/z.npy", d);
    int64_t dz[4] = {0, 1, 28, 28};
    npy_f32(p, dz, 4, NULL);
    expect_calib_refused(tmp, d, "z.npy: input 'input' has shape 0x1x28x28");
    /* one NaN among good values is refused too, naming the file */
    q8t_path(d, sizeof d, tmp, "one_nan");
    copy_calib(d, 3);
    float *x = malloc(sizeof(float) * 784);
    for (int i = 0; i < 784; i++) x[i] = 0.1f;
    x[100] = NAN;
    snprintf(p, sizeof p, "%s/bad.npy", d);
    int64_t d1[4] = {1, 1, 28, 28};
    npy_f32(p, d1, 4, x);
    free(x);
    expect_calib_refused(tmp, d, "bad.npy: input 'input' holds 1 NaN or infinite values of 784");
    q8t_rm_rf(tmp);
    free(tmp);
}

typedef struct warnings {
    char text[8192];
    int n;
} warnings;

static void collect(void *arg, const char *msg) {
    warnings *w = arg;
    size_t used = strlen(w->text);
    snprintf(w->text + used, sizeof w->text - used, "%s\n", msg);
    w->n++;
}

/* Finite inputs whose activations overflow: a warning names the tensors,
 * and those with no finite value stay in FP32. */
Test(edges, nonfinite_activations_are_named, .timeout = 300) {
    char *tmp = q8t_tmpdir("edges");
    char d[512], out[512];
    q8t_path(d, sizeof d, tmp, "huge");
    samples_of(d, 4, 3e38f, 1);
    q8t_path(out, sizeof out, tmp, "o.q8");
    warnings w = {.n = 0};
    q8_quantize_options o = {.calib_dir = d, .method = Q8_CALIB_PERCENTILE, .percentile = 99.99,
                             .n_threads = 2, .warn = collect, .warn_arg = &w};
    q8_quantize_result r;
    q8_error err = {0};
    cr_assert_eq(q8_quantize_model(MNIST "/mlp.onnx", out, &o, &r, &err), Q8_OK, "%s", err.msg);
    cr_log_info("%s", w.text);
    cr_expect(strstr(w.text, "1 tensor held NaN or infinite values on the samples (left out of "
                             "their ranges): '/net/net.2/Relu_output_0'"),
              "no warning names the overflowing tensor: %s", w.text);
    q8t_rm_rf(tmp);
    free(tmp);
}

/* A tensor with no finite value at all (sqrt of negative samples) has no
 * range to give: it stays in FP32 (threshold 0), with a warning. */
Test(edges, all_nonfinite_tensor_stays_fp32) {
    char *tmp = q8t_tmpdir("edges");
    char p[512];
    for (int i = 0; i < 3; i++) {
        char name[32];
        snprintf(name, sizeof name, "%d.npy", i);
        q8t_path(p, sizeof p, tmp, name);
        int64_t d = 4;
        npy_f32(p, &d, 1, (const float[]){-1, -2, -3, -4});
    }
    q8t_in in = {.name = "x", .dtype = Q8_F32, .ndim = 1, .dims = {4}};
    q8_graph *g = q8t_graph1("Sqrt", &in, 1, 1);
    q8_error err = {0};
    cr_assert_eq(q8_passes_run(g, NULL, &err), Q8_OK, "%s", err.msg);
    q8_sample_set s;
    cr_assert_eq(q8_samples_from_dir(tmp, g, &s, &err), Q8_OK, "%s", err.msg);
    warnings w = {.n = 0};
    q8_calib_options o = {.method = Q8_CALIB_ENTROPY, .n_threads = 1, .warn = collect,
                          .warn_arg = &w};
    q8_calibration c;
    cr_assert_eq(q8_calibrate(g, &s, &o, &c, &err), Q8_OK, "%s", err.msg);
    int y = g->outputs[0];
    cr_expect_eq(c.threshold[y], 0.0f, "threshold %g", (double)c.threshold[y]);
    cr_expect(c.threshold[g->inputs[0]] > 3.9f);
    char want[128];
    snprintf(want, sizeof want, "every value of 1 tensor was NaN or infinite on the samples: "
             "'%s'; it stays in FP32", g->tensors[y]->name);
    cr_expect(strstr(w.text, want), "%s", w.text);
    q8_calibration_free(&c);
    q8_samples_free(&s);
    q8_graph_free(g);
    q8t_rm_rf(tmp);
    free(tmp);
}

/* ---- 4. one outlier sample ---- */

/* The shipped samples plus one copy of the first with one pixel at 1e6
 * (65 samples): percentile and entropy must keep the accuracy they have
 * without it; minmax, whose range is the largest |x| by definition, warns
 * and names the tensors and the way out. */
Test(edges, one_outlier_sample, .timeout = 300) {
    char *tmp = q8t_tmpdir("edges");
    char clean[512], dirty[512], p[600], q[512];
    q8t_path(clean, sizeof clean, tmp, "clean");
    q8t_path(dirty, sizeof dirty, tmp, "dirty");
    copy_calib(clean, 64);
    copy_calib(dirty, 64);
    q8_tensor *x = NULL;
    q8_error err = {0};
    cr_assert_eq(q8_npy_read(MNIST "/calib/calib_000.npy", &x, &err), Q8_OK, "%s", err.msg);
    ((float *)x->data)[14 * 28 + 14] = 1e6f;
    snprintf(p, sizeof p, "%s/outlier.npy", dirty);
    npy_f32(p, x->dims, x->ndim, x->data);
    q8_tensor_free(x);
    q8t_path(q, sizeof q, tmp, "m.q8");
    static const q8_calib_method methods[2] = {Q8_CALIB_PERCENTILE, Q8_CALIB_ENTROPY};
    q8_input_shape test_set = {.name = "input", .ndim = 4, .dims = {1000, 1, 28, 28}};
    q8_quantize_result r;
    for (int i = 0; i < 2; i++) {
        q8_quantize_options o = {.calib_dir = clean, .method = methods[i], .percentile = 99.99,
                                 .n_threads = 2, .input_shapes = &test_set, .n_input_shapes = 1};
        cr_assert_eq(q8_quantize_model(MNIST "/cnn.onnx", q, &o, &r, &err), Q8_OK, "%s",
                     err.msg);
        double want = q8t_mnist_top1(q);
        warnings w = {.n = 0};
        o.calib_dir = dirty;
        o.warn = collect;
        o.warn_arg = &w;
        cr_assert_eq(q8_quantize_model(MNIST "/cnn.onnx", q, &o, &r, &err), Q8_OK, "%s",
                     err.msg);
        double got = q8t_mnist_top1(q);
        cr_expect(got >= want - 0.005, "method %d: top-1 %.4f with the outlier, %.4f without",
                  methods[i], got, want);
        cr_expect(strstr(w.text, "outlier.npy is an outlier: input 'input' reaches 1e+06") &&
                      strstr(w.text, "percentile and entropy leave it out of every range"),
                  "%s", w.text);
    }
    warnings w = {.n = 0};
    q8_quantize_options o = {.calib_dir = dirty, .method = Q8_CALIB_MINMAX, .n_threads = 2,
                             .warn = collect, .warn_arg = &w};
    cr_assert_eq(q8_quantize_model(MNIST "/cnn.onnx", q, &o, &r, &err), Q8_OK, "%s", err.msg);
    cr_expect(strstr(w.text, "calibration (minmax): the outlier sample alone sets the range of") &&
                  strstr(w.text, "'input'") &&
                  strstr(w.text, "use --calib-method percentile or entropy"), "%s", w.text);
    q8t_rm_rf(tmp);
    free(tmp);
}

/* ---- 10. several inputs: samples are paired by file name ---- */

static void pair_files(const char *dir, const char *input, int first) {
    char sub[512], p[600];
    q8t_path(sub, sizeof sub, dir, input);
    mkdir(sub, 0755);
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/%03d.npy", sub, first + i);
        int64_t d[2] = {1, 2};
        npy_f32(p, d, 2, (const float[]){(float)i, 1});
    }
}

Test(edges, multi_input_samples_pair_by_name) {
    q8_graph *g = NULL;
    q8_error err = {0};
    cr_assert_eq(q8_onnx_load(CORPUS "/special/two_dynamic.onnx", &g, &err), Q8_OK, "%s",
                 err.msg);
    char *tmp = q8t_tmpdir("edges");
    char bad[512], good[512];
    q8t_path(bad, sizeof bad, tmp, "bad");
    mkdir(bad, 0755);
    pair_files(bad, "a", 0);
    pair_files(bad, "b", 10);
    q8_sample_set s;
    cr_expect_neq(q8_samples_from_dir(bad, g, &s, &err), Q8_OK);
    cr_expect(strstr(err.msg, "a/000.npy' of input 'a' has no file of the same name for input "
                              "'b' (its file in sorted order is '"), "%s", err.msg);
    q8t_path(good, sizeof good, tmp, "good");
    mkdir(good, 0755);
    pair_files(good, "a", 0);
    pair_files(good, "b", 0);
    cr_expect_eq(q8_samples_from_dir(good, g, &s, &err), Q8_OK, "%s", err.msg);
    cr_expect_eq(s.n_samples, 3);
    q8_samples_free(&s);
    q8_graph_free(g);
    q8t_rm_rf(tmp);
    free(tmp);
}

/* ---- 5. non-finite weights, a negative variance ---- */

/* cnn.onnx with element k of initializer `name` set to v, written to out. */
static void patched_cnn(const char *out, const char *name, int k, float v) {
    size_t len;
    uint8_t *buf = (uint8_t *)q8t_slurp(MNIST "/cnn.onnx", &len);
    cr_assert(buf);
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, buf);
    cr_assert(mp && mp->graph);
    bool done = false;
    for (size_t i = 0; i < mp->graph->n_initializer; i++) {
        Onnx__TensorProto *t = mp->graph->initializer[i];
        if (strcmp(t->name, name)) continue;
        if (t->has_raw_data) {
            cr_assert((size_t)(k + 1) * 4 <= t->raw_data.len);
            memcpy(t->raw_data.data + 4 * k, &v, 4);
        } else {
            cr_assert((size_t)k < t->n_float_data);
            t->float_data[k] = v;
        }
        done = true;
    }
    cr_assert(done, "no initializer %s", name);
    size_t n = onnx__model_proto__get_packed_size(mp);
    uint8_t *o = malloc(n);
    onnx__model_proto__pack(mp, o);
    q8t_write_file(out, o, n);
    free(o);
    onnx__model_proto__free_unpacked(mp, NULL);
    free(buf);
}

static void expect_weights_refused(const char *tmp, const char *name, int k, float v,
                                   const char *sub) {
    char m[512], out[512];
    q8t_path(m, sizeof m, tmp, "patched.onnx");
    q8t_path(out, sizeof out, tmp, "o.q8");
    patched_cnn(m, name, k, v);
    q8_error err = {0};
    cr_expect_neq(quantize_lib(m, out, MNIST "/calib", Q8_CALIB_PERCENTILE, &err), Q8_OK,
                  "%s[%d] = %g: quantized anyway", name, k, (double)v);
    char quoted[128];
    snprintf(quoted, sizeof quoted, "'%s'", name);
    cr_expect(strstr(err.msg, quoted) && strstr(err.msg, sub), "%s: %s", name, err.msg);
    cr_expect_neq(access(out, F_OK), 0);
}

Test(edges, nonfinite_weights_are_refused_by_name, .timeout = 300) {
    char *tmp = q8t_tmpdir("edges");
    expect_weights_refused(tmp, "features.0.weight", 5, NAN, "1 NaN and 0 infinite values");
    expect_weights_refused(tmp, "features.4.weight", 0, INFINITY, "0 NaN and 1 infinite values");
    expect_weights_refused(tmp, "classifier.1.bias", 3, -INFINITY, "cannot quantize non-finite");
    expect_weights_refused(tmp, "features.1.running_var", 3, -1.0f, "cannot be negative");
    expect_weights_refused(tmp, "features.5.running_mean", 0, NAN, "NaN");
    q8t_rm_rf(tmp);
    free(tmp);
}

/* ---- 6. q8report never writes over what it reads, whatever the spelling ---- */

Test(edges, report_never_overwrites_its_inputs, .timeout = 300) {
    char *tmp = q8t_tmpdir("edges");
    char rp[512], q[512], alias[512], o[512], hl[512], o2[512];
    q8t_path(rp, sizeof rp, tmp, "rp");
    mkdir(rp, 0755);
    q8t_path(q, sizeof q, rp, "m.json");
    q8_error err = {0};
    cr_assert_eq(quantize_lib(MNIST "/mlp.onnx", q, MNIST "/calib", Q8_CALIB_PERCENTILE, &err),
                 Q8_OK, "%s", err.msg);
    size_t before, after;
    char *b0 = q8t_slurp(q, &before);
    snprintf(alias, sizeof alias, "%s/./m.json", rp);
    snprintf(o, sizeof o, "%s/m.html", rp);
    char *a1[] = {Q8REPORT, MNIST "/mlp.onnx", alias, "--data", MNIST "/sample.npy", "-o", o,
                  NULL};
    expect_fail(tmp, a1, 2, "refusing to overwrite");
    /* a hard link to the .q8 */
    q8t_path(hl, sizeof hl, tmp, "h.md");
    cr_assert_eq(link(q, hl), 0);
    q8t_path(o2, sizeof o2, tmp, "h.html");
    char *a2[] = {Q8REPORT, MNIST "/mlp.onnx", q, "--data", MNIST "/sample.npy", "-o", o2, NULL};
    expect_fail(tmp, a2, 2, "refusing to overwrite");
    char *b1 = q8t_slurp(q, &after);
    cr_expect(b1 && after == before && !memcmp(b0, b1, before), "the .q8 was changed");
    free(b0);
    free(b1);
    q8t_rm_rf(tmp);
    free(tmp);
}

/* ---- 7. empty folders give their message (no qsort of nothing) ---- */

Test(edges, empty_sample_folders, .timeout = 300) {
    char *tmp = q8t_tmpdir("edges");
    char e[512], out[512], q[512];
    q8t_path(e, sizeof e, tmp, "empty");
    mkdir(e, 0755);
    q8t_path(out, sizeof out, tmp, "o.q8");
    q8_error err = {0};
    cr_expect_neq(quantize_lib(MNIST "/mlp.onnx", out, e, Q8_CALIB_PERCENTILE, &err), Q8_OK);
    cr_expect(!strncmp(err.msg, "--calib: no .npy or .pb files in", 32), "%s", err.msg);
    q8t_path(q, sizeof q, tmp, "m.q8");
    cr_assert_eq(quantize_lib(MNIST "/mlp.onnx", q, MNIST "/calib", Q8_CALIB_PERCENTILE, &err),
                 Q8_OK, "%s", err.msg);
    char *a[] = {Q8REPORT, MNIST "/mlp.onnx", q, "--data", e, "-o", out, NULL};
    expect_fail(tmp, a, 1, "q8report: --data: no .npy or .pb files in");
    q8t_rm_rf(tmp);
    free(tmp);
}

/* ---- 8. -o without a file name; batch 0 ---- */

Test(edges, report_output_must_name_a_file, .timeout = 120) {
    char *tmp = q8t_tmpdir("edges");
    char d[512], dslash[600], dhtml[600];
    q8t_path(d, sizeof d, tmp, "d");
    mkdir(d, 0755);
    snprintf(dslash, sizeof dslash, "%s/", d);
    snprintf(dhtml, sizeof dhtml, "%s/.html", d);
    /* a real .q8, so that without the check the report would be written */
    char q[512];
    q8t_path(q, sizeof q, tmp, "m.q8");
    q8_error err = {0};
    cr_assert_eq(quantize_lib(MNIST "/mlp.onnx", q, MNIST "/calib", Q8_CALIB_PERCENTILE, &err),
                 Q8_OK, "%s", err.msg);
    const char *bad[] = {"", dslash, dhtml};
    for (int i = 0; i < 3; i++) {
        char *a[] = {Q8REPORT, MNIST "/mlp.onnx", q, "--data", MNIST "/sample.npy", "-o",
                     (char *)bad[i], "--runs", "1", NULL};
        expect_fail(tmp, a, 2, "names no file");
    }
    DIR *dir = opendir(d);
    int n = 0;
    for (struct dirent *e; dir && (e = readdir(dir));) n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (dir) closedir(dir);
    cr_expect_eq(n, 0, "hidden report files were written");
    q8t_rm_rf(tmp);
    free(tmp);
}

Test(edges, zero_batch_is_refused, .timeout = 120) {
    char *tmp = q8t_tmpdir("edges");
    char out[512];
    q8t_path(out, sizeof out, tmp, "o.q8");
    char *a[] = {QUANTIZE, MNIST "/cnn.onnx", "-o", out, "--calib", MNIST "/calib",
                 "--input-shape", "input=0x1x28x28", NULL};
    expect_fail(tmp, a, 2, "--input-shape input=0x1x28x28: every dim must be at least 1");
    char *b[] = {Q8RUN, MNIST "/cnn.onnx", "--input", MNIST "/sample.npy", "--input-shape",
                 "input=0x1x28x28", NULL};
    expect_fail(tmp, b, 2, "every dim must be at least 1");
    /* the library refuses it too */
    q8_input_shape sh = {.name = "input", .ndim = 4, .dims = {0, 1, 28, 28}};
    q8_quantize_options o = {.calib_dir = MNIST "/calib", .input_shapes = &sh, .n_input_shapes = 1,
                             .method = Q8_CALIB_PERCENTILE, .percentile = 99.99};
    q8_quantize_result r;
    q8_error err = {0};
    cr_expect_neq(q8_quantize_model(MNIST "/cnn.onnx", out, &o, &r, &err), Q8_OK);
    cr_expect(strstr(err.msg, "every dim must be at least 1"), "%s", err.msg);
    cr_expect_neq(access(out, F_OK), 0);
    q8t_rm_rf(tmp);
    free(tmp);
}

/* ---- 10. options that used to be ignored ---- */

Test(edges, ignored_options_are_refused, .timeout = 900) {
    char *tmp = q8t_tmpdir("edges");
    char out[512];
    q8t_path(out, sizeof out, tmp, "o.q8");
#define Q(...) {QUANTIZE, MNIST "/cnn.onnx", "-o", out, "--calib", MNIST "/calib", __VA_ARGS__, NULL}
    char *a1[] = Q("--prune", "");
    expect_fail(tmp, a1, 2, "--prune wants a fraction");
    char *a2[] = Q("--percentile", "");
    expect_fail(tmp, a2, 2, "--percentile must be in");
    char *a3[] = Q("--calib-method", "minmax", "--percentile", "99.9");
    expect_fail(tmp, a3, 2, "--percentile goes with --calib-method percentile or auto");
    char *a4[] = Q("--prune", "0.3", "--prune-mode", "2:4");
    expect_fail(tmp, a4, 2, "--prune FRACTION goes with unstructured pruning");
    char *a5[] = Q("--prune-skip", "/features/features.0/Conv");
    expect_fail(tmp, a5, 2, "--prune-skip goes with --prune or --prune-mode");
    char *a6[] = Q("--prune-scope", "global");
    expect_fail(tmp, a6, 2, "--prune-scope goes with --prune FRACTION");
    char *a6b[] = Q("--prune-refit", "off");
    expect_fail(tmp, a6b, 2, "--prune-refit goes with --prune or --prune-mode");
    char *a6c[] = Q("--prune", "0.5", "--prune-scope", "layer", "--prune-protect", "none");
    expect_fail(tmp, a6c, 2, "--prune-protect goes with --prune FRACTION and --prune-scope sens");
    char *a6d[] = Q("--prune", "0.5", "--prune-refit", "yes");
    expect_fail(tmp, a6d, 2, "--prune-refit must be on, dense, layer or off");
    char *a6e2[] = Q("--calib-method", "best");
    expect_fail(tmp, a6e2, 2, "--calib-method must be auto, minmax, percentile, entropy or mse");
    char *a6f[] = Q("--min-sqnr", "high");
    expect_fail(tmp, a6f, 2, "--min-sqnr wants the output SQNR to reach in dB, e.g. 30");
    char *a6g[] = Q("--min-sqnr", "30", "--max-drop", "1", "--data", MNIST "/calib");
    expect_fail(tmp, a6g, 2, "--min-sqnr and --max-drop are two targets: give one");
    char *a6h[] = Q("--min-sqnr", "30", "--labels", MNIST "/test_y.npy");
    expect_fail(tmp, a6h, 2, "--min-sqnr compares with FP32: it takes no --labels");
    /* misspelled layer names */
    char *a7[] = Q("--prune", "0.5", "--prune-skip", "/features/features.0/Cnv");
    expect_fail(tmp, a7, 1, "--prune-skip: the model has no node named '/features/features.0/Cnv'");
    char *a8[] = Q("--fp32-layers", "/classifier/classifier.3/Gem");
    expect_fail(tmp, a8, 1, "--fp32-layers: the model has no node named");
    char *a9[] = Q("--fp32-layers", "/features/features.1/BatchNormalization");
    expect_fail(tmp, a9, 1, "does not survive the graph passes");
    char *a10[] = Q("--fp32-layers", "/features/features.3/MaxPool");
    expect_fail(tmp, a10, 1, "is a MaxPool, not one of the layers q8 quantizes");
    cr_expect_neq(access(out, F_OK), 0);
    /* the right names still work */
    char *ok[] = Q("--prune", "0.5", "--prune-skip", "/features/features.0/Conv", "--fp32-layers",
                   "/classifier/classifier.3/Gemm");
    expect_ok(tmp, ok, NULL);
    /* the default range choice says what it chose; auto takes --percentile */
    q8t_cmd r;
    char *au[] = Q("--percentile", "99.9");
    expect_ok(tmp, au, &r);
    cr_expect(strstr(r.out, "calibration auto: ") && strstr(r.out, "percentile ") &&
                  strstr(r.out, " dB, mse "), "%s", r.out);
    q8t_cmd_free(&r);
#undef Q
    q8t_rm_rf(tmp);
    free(tmp);
}

Test(edges, labels_out_of_range, .timeout = 300) {
    char *tmp = q8t_tmpdir("edges");
    char l1[512], l2[512], q[512], out[512];
    q8t_path(l1, sizeof l1, tmp, "neg.npy");
    npy_i64(l1, 1, (const int64_t[]){-5});
    q8t_path(l2, sizeof l2, tmp, "big.npy");
    npy_i64(l2, 1, (const int64_t[]){(int64_t)1 << 62});
    char *a1[] = {Q8RUN, MNIST "/cnn.onnx", "--input", MNIST "/sample.npy", "--labels", l1, NULL};
    expect_fail(tmp, a1, 1, "label -5 (row 0) is not a class of output 'logits' (0 to 9)");
    char *a2[] = {Q8RUN, MNIST "/cnn.onnx", "--input", MNIST "/sample.npy", "--labels", l2, NULL};
    expect_fail(tmp, a2, 1, "label 4611686018427387904 (row 0) is not a class");
    q8t_path(q, sizeof q, tmp, "m.q8");
    q8_error err = {0};
    cr_assert_eq(quantize_lib(MNIST "/mlp.onnx", q, MNIST "/calib", Q8_CALIB_PERCENTILE, &err),
                 Q8_OK, "%s", err.msg);
    q8t_path(out, sizeof out, tmp, "r.html");
    char *a3[] = {Q8REPORT, MNIST "/mlp.onnx", q, "--data", MNIST "/sample.npy", "--labels", l1,
                  "--runs", "1", "-o", out, NULL};
    expect_fail(tmp, a3, 1, "--labels: label -5 (row 0) is not a class");
    q8t_rm_rf(tmp);
    free(tmp);
}

/* ---- 11. messages ---- */

Test(edges, messages_say_what_is_wrong, .timeout = 300) {
    char *tmp = q8t_tmpdir("edges");
    char e[512], out[512], en[512], bn[512], a[512], want[700];
    q8t_path(e, sizeof e, tmp, "empty.onnx");
    q8t_write_file(e, "", 0);
    q8t_path(out, sizeof out, tmp, "o.q8");
    char *a1[] = {QUANTIZE, e, "-o", out, "--calib", MNIST "/calib", NULL};
    q8t_cmd r = run(tmp, a1);
    snprintf(want, sizeof want, "quantize: %s: the file is empty\n", e);
    cr_expect(r.exited && r.code == 1 && !strcmp(r.err, want), "exit %d: %s", r.code, r.err);
    q8t_cmd_free(&r);
    q8t_path(en, sizeof en, tmp, "empty.npy");
    q8t_write_file(en, "", 0);
    char *a2[] = {Q8RUN, MNIST "/cnn.onnx", "--input", en, NULL};
    expect_fail(tmp, a2, 1, "empty.npy' is empty");
    q8t_path(bn, sizeof bn, tmp, "text.npy");
    q8t_write_file(bn, "hello", 5);
    char *a3[] = {Q8RUN, MNIST "/cnn.onnx", "--input", bn, NULL};
    expect_fail(tmp, a3, 1, "is not a .npy file");
    /* one input of two, with dynamic dims: name the missing input */
    q8t_path(a, sizeof a, tmp, "a.npy");
    int64_t d[2] = {3, 2};
    npy_f32(a, d, 2, (const float[]){1, 2, 3, 4, 5, 6});
    char ain[600];
    snprintf(ain, sizeof ain, "a=%s", a);
    char *a4[] = {Q8RUN, CORPUS "/special/two_dynamic.onnx", "--input", ain, NULL};
    expect_fail(tmp, a4, 1, "input 'b' is missing");
    /* --print 0: the header alone */
    char *a5[] = {Q8RUN, MNIST "/cnn.onnx", "--input", MNIST "/sample.npy", "--print", "0", NULL};
    expect_ok(tmp, a5, &r);
    cr_expect_str_eq(r.out, "logits: float32 1x10 (10 values)\n");
    q8t_cmd_free(&r);
    q8t_rm_rf(tmp);
    free(tmp);
}

/* opendir refused (permissions; root reads any folder, so the child drops
 * to nobody first): the message says so, not "no .npy or .pb files". */
Test(edges, unreadable_calib_folder, .timeout = 120) {
    char *tmp = q8t_tmpdir("edges");
    char d[512];
    q8t_path(d, sizeof d, tmp, "locked");
    copy_calib(d, 2);
    q8_graph *g = NULL;
    q8_error err = {0};
    cr_assert_eq(q8_onnx_load(MNIST "/mlp.onnx", &g, &err), Q8_OK, "%s", err.msg);
    chmod(tmp, 0755);
    cr_assert_eq(chmod(d, 0), 0);
    pid_t pid = fork();
    if (pid == 0) {
        if (geteuid() == 0 && setuid(65534) != 0) _exit(3);
        q8_sample_set s;
        q8_status st = q8_samples_from_dir(d, g, &s, &err);
        _exit(st != Q8_OK && strstr(err.msg, "cannot read the folder") &&
                      strstr(err.msg, "Permission denied") ? 0 : 1);
    }
    int st;
    cr_assert(waitpid(pid, &st, 0) == pid);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", st);
    chmod(d, 0755);
    q8_graph_free(g);
    q8t_rm_rf(tmp);
    free(tmp);
}

/* ---- 12. NaN inputs: q8run warns ---- */

Test(edges, nonfinite_inputs_and_outputs_warn, .timeout = 300) {
    char *tmp = q8t_tmpdir("edges");
    char x[512], q[512];
    q8t_path(x, sizeof x, tmp, "nan.npy");
    float v[784];
    for (int i = 0; i < 784; i++) v[i] = i == 300 ? NAN : 0.5f;
    int64_t d[4] = {1, 1, 28, 28};
    npy_f32(x, d, 4, v);
    char *a1[] = {Q8RUN, MNIST "/cnn.onnx", "--input", x, NULL};
    q8t_cmd r;
    expect_ok(tmp, a1, &r);
    cr_expect(strstr(r.err, "q8run: warning: input 'input'") &&
                  strstr(r.err, "holds 1 NaN or infinite value of 784"), "%s", r.err);
    q8t_cmd_free(&r);
    /* an output that keeps the NaN warns too */
    char x2[512];
    q8t_path(x2, sizeof x2, tmp, "x2.npy");
    int64_t two = 2;
    npy_f32(x2, &two, 1, (const float[]){NAN, 1});
    char *a0[] = {Q8RUN, CORPUS "/valid/id_input_to_output.onnx", "--input", x2, NULL};
    expect_ok(tmp, a0, &r);
    cr_expect(strstr(r.err, "q8run: warning: output 'y' holds 1 NaN or infinite value of 2"),
              "%s", r.err);
    q8t_cmd_free(&r);
    /* the INT8 model turns the NaN into 0: the input warning stays */
    q8t_path(q, sizeof q, tmp, "m.q8");
    q8_error err = {0};
    cr_assert_eq(quantize_lib(MNIST "/cnn.onnx", q, MNIST "/calib", Q8_CALIB_PERCENTILE, &err),
                 Q8_OK, "%s", err.msg);
    char *a2[] = {Q8RUN, q, "--input", x, NULL};
    expect_ok(tmp, a2, &r);
    cr_expect(strstr(r.err, "q8run: warning: input 'input'"), "%s", r.err);
    q8t_cmd_free(&r);
    /* clean inputs: no warning */
    char *a3[] = {Q8RUN, q, "--input", MNIST "/sample.npy", NULL};
    expect_ok(tmp, a3, &r);
    cr_expect_str_empty(r.err);
    q8t_cmd_free(&r);
    q8t_rm_rf(tmp);
    free(tmp);
}

/* ---- --prune-refit's default kind: dense for --prune F, layer for 2:4 ---- */

static bool same_file(const char *a, const char *b) {
    size_t na, nb;
    char *x = q8t_slurp(a, &na), *y = q8t_slurp(b, &nb);
    bool same = x && y && na == nb && memcmp(x, y, na) == 0;
    free(x);
    free(y);
    return same;
}

Test(edges, prune_refit_default_kind, .timeout = 900) {
    char *tmp = q8t_tmpdir("edges");
    char o[4][512];
    for (int i = 0; i < 4; i++) {
        char name[16];
        snprintf(name, sizeof name, "o%d.q8", i);
        q8t_path(o[i], sizeof o[i], tmp, name);
    }
#define Q(k, ...) {QUANTIZE, MNIST "/mlp.onnx", "-o", o[k], "--calib", MNIST "/calib", \
                   "--calib-method", "minmax", __VA_ARGS__, NULL}
    char *a0[] = Q(0, "--prune-mode", "2:4");
    char *a1[] = Q(1, "--prune-mode", "2:4", "--prune-refit", "layer");
    char *a2[] = Q(2, "--prune-mode", "2:4", "--prune-refit", "dense");
    char *a3[] = Q(3, "--prune-mode", "2:4", "--prune-refit", "on");
    expect_ok(tmp, a0, NULL);
    expect_ok(tmp, a1, NULL);
    expect_ok(tmp, a2, NULL);
    expect_ok(tmp, a3, NULL);
    cr_expect(same_file(o[0], o[1]), "2:4's default re-fit is per layer");
    cr_expect(same_file(o[0], o[3]), "on is the default");
    cr_expect_not(same_file(o[0], o[2]), "dense is another fit");
    char *b0[] = Q(0, "--prune", "0.5", "--prune-protect", "none");
    char *b1[] = Q(1, "--prune", "0.5", "--prune-protect", "none", "--prune-refit", "dense");
    char *b2[] = Q(2, "--prune", "0.5", "--prune-protect", "none", "--prune-refit", "layer");
    expect_ok(tmp, b0, NULL);
    expect_ok(tmp, b1, NULL);
    expect_ok(tmp, b2, NULL);
    cr_expect(same_file(o[0], o[1]), "--prune F's default re-fit is dense");
    cr_expect_not(same_file(o[0], o[2]), "layer is another fit");
#undef Q
    q8t_rm_rf(tmp);
    free(tmp);
}

/* ---- quantize's default FP32 fallback (--min-sqnr auto) ---- */

/* x[1,1,8,8] -> Conv 1x1 (weights 1 and 1: two equal channels) -> Conv 1x1
 * (1, -0.995) -> y = 0.005 x. The second Conv's INT8 weights (one scale,
 * 1 / 127) round -0.995 to -126 / 127: y comes out 0.0079 x (output SQNR
 * about 5 dB), and that Conv in FP32 gets it back for 6 bytes of weights. */
static void cancelling_model_w(const char *path, int c, bool any_size, float w) {
    float w1[64], w2[64] = {1.0f, w};
    cr_assert(c >= 2 && c <= 64);
    for (int i = 0; i < c; i++) w1[i] = 1.0f;
    q8t_two_conv_model(path, c, w1, w2, any_size);
}

static void cancelling_model(const char *path, int c, bool any_size) {
    cancelling_model_w(path, c, any_size, -0.995f);
}

/* A temporary folder with the two-channel cancelling model (second weight
 * w) at onnx and 8 calibration samples at calib; out: where to write. */
static char *cancel_setup(float w, char *onnx, char *calib, char *out) {
    char *tmp = q8t_tmpdir("edges");
    q8t_path(onnx, 512, tmp, "cancel.onnx");
    q8t_path(calib, 512, tmp, "calib");
    q8t_path(out, 512, tmp, "o.q8");
    cancelling_model_w(onnx, 2, false, w);
    q8t_square_samples(calib, 8, 8, 5);
    return tmp;
}

Test(edges, min_sqnr_auto_keeps_a_layer_fp32_only_below_the_floor, .timeout = 600) {
    char onnx[512], calib[512], out[512];
    char *tmp = cancel_setup(-0.995f, onnx, calib, out);
    q8t_cmd r;
    char *a[] = {QUANTIZE, onnx, "-o", out, "--calib", calib, NULL};
    expect_ok(tmp, a, &r);
    cr_expect(strstr(r.out, "< 12 dB: looking for layers to keep in FP32 within"), "%s", r.out);
    cr_expect(strstr(r.out, "layers kept in FP32 (1): c2"), "%s", r.out);
    q8t_cmd_free(&r);
    cr_expect(q8t_has_meta(out, "search.max_added_bytes"));
    cr_expect(q8t_has_meta(out, "search.auto"), "the default search is recorded as such");
    /* asked for: the same floor, recorded as the user's */
    char *a2[] = {QUANTIZE, onnx, "-o", out, "--calib", calib, "--min-sqnr", "12", NULL};
    expect_ok(tmp, a2, &r);
    q8t_cmd_free(&r);
    cr_expect(q8t_has_meta(out, "search.min_sqnr_db"));
    cr_expect_not(q8t_has_meta(out, "search.auto"));
    char *b[] = {QUANTIZE, onnx, "-o", out, "--calib", calib, "--min-sqnr", "off", NULL};
    expect_ok(tmp, b, &r);
    cr_expect_not(strstr(r.out, "looking for layers"), "%s", r.out);
    q8t_cmd_free(&r);
    cr_expect_not(q8t_has_meta(out, "search.min_sqnr_db"));
    /* the last --min-sqnr given wins: off after a target runs no search */
    char *b2[] = {QUANTIZE, onnx, "-o", out, "--calib", calib, "--min-sqnr", "30",
                  "--min-sqnr", "off", NULL};
    expect_ok(tmp, b2, &r);
    cr_expect_not(strstr(r.out, "searching:"), "%s", r.out);
    q8t_cmd_free(&r);
    /* the range methods that measure nothing while quantizing: no search */
    char *c[] = {QUANTIZE, onnx, "-o", out, "--calib", calib, "--calib-method", "minmax", NULL};
    expect_ok(tmp, c, &r);
    cr_expect_not(strstr(r.out, "looking for layers"), "%s", r.out);
    q8t_cmd_free(&r);
    /* a model above the floor is written once, as it was */
    char *d[] = {QUANTIZE, MNIST "/mlp.onnx", "-o", out, "--calib", MNIST "/calib", NULL};
    expect_ok(tmp, d, &r);
    cr_expect_not(strstr(r.out, "looking for layers"), "%s", r.out);
    q8t_cmd_free(&r);
    cr_expect_not(q8t_has_meta(out, "search.min_sqnr_db"));
    q8t_rm_rf(tmp);
    free(tmp);
}

/* Above the floor and under 20 dB, one step is tried if its layer gains
 * the output 3 dB or more: with -0.99 the second Conv's int8 weight is
 * -126 / 127, y = 0.0079 x for 0.01 x (about 13-14 dB), and that Conv in
 * FP32 gains far more than 3 dB: kept so, the search recorded. */
Test(edges, min_sqnr_auto_probes_one_large_step_above_the_floor, .timeout = 600) {
    char onnx[512], calib[512], out[512];
    char *tmp = cancel_setup(-0.99f, onnx, calib, out);
    q8t_cmd r;
    char *a[] = {QUANTIZE, onnx, "-o", out, "--calib", calib, NULL};
    expect_ok(tmp, a, &r);
    cr_expect(strstr(r.out, "< 20 dB: trying one layer in FP32 if it gains the output 3 dB"),
              "%s", r.out);
    cr_expect_not(strstr(r.out, "< 12 dB"), "%s", r.out);
    cr_expect(strstr(r.out, "layers kept in FP32 (1): c2"), "%s", r.out);
    q8t_cmd_free(&r);
    cr_expect(q8t_has_meta(out, "search.min_sqnr_db"));
    char *b[] = {QUANTIZE, onnx, "-o", out, "--calib", calib, "--min-sqnr", "off", NULL};
    expect_ok(tmp, b, &r);
    cr_expect_not(strstr(r.out, "trying one layer"), "%s", r.out);
    q8t_cmd_free(&r);
    cr_expect_not(q8t_has_meta(out, "search.min_sqnr_db"));
    q8t_rm_rf(tmp);
    free(tmp);
}

/* The search holds every activation of a run twice (the per-layer
 * comparison): 64 channels of 1024 x 1024 would be 520 MiB, over the
 * default search's 512: it says so and does not run. */
Test(edges, min_sqnr_auto_skips_models_too_large_to_compare, .timeout = 600) {
    char *tmp = q8t_tmpdir("edges");
    char onnx[512], calib[512], out[512];
    q8t_path(onnx, sizeof onnx, tmp, "cancel64.onnx");
    q8t_path(calib, sizeof calib, tmp, "calib");
    q8t_path(out, sizeof out, tmp, "o.q8");
    cancelling_model(onnx, 64, true);
    q8t_square_samples(calib, 2, 1024, 6);
    q8t_cmd r;
    char *a[] = {QUANTIZE, onnx, "-o", out, "--calib", calib, NULL};
    expect_ok(tmp, a, &r);
    cr_expect(strstr(r.out, "would hold 520 MiB of activations (over 512 MiB): not run"), "%s",
              r.out);
    cr_expect_not(strstr(r.out, "searching:"), "%s", r.out);
    q8t_cmd_free(&r);
    cr_expect_not(q8t_has_meta(out, "search.min_sqnr_db"));
    q8t_rm_rf(tmp);
    free(tmp);
}

/* ---- 13. A model without inputs runs without --input ---- */

Test(edges, model_without_inputs_runs_and_missing_inputs_are_named, .timeout = 300) {
    char *tmp = q8t_tmpdir("edges");
    char out[512], y[512];
    q8t_path(out, sizeof out, tmp, "out");
    cr_assert_eq(mkdir(out, 0755), 0);
    /* MelWeightMatrix of constants (the fuzz seed): 9 x 4 filters */
    char *a1[] = {Q8RUN, Q8_SOURCE_DIR "/tests/fuzz/seeds_onnx/op_melweightmatrix.onnx", "--out",
                  out, NULL};
    expect_ok(tmp, a1, NULL);
    q8t_path(y, sizeof y, out, "y.npy");
    q8_tensor *t = NULL;
    q8_error err = {0};
    cr_assert_eq(q8_npy_read(y, &t, &err), Q8_OK, "%s", err.msg);
    cr_assert(t->ndim == 2 && t->dims[0] == 9 && t->dims[1] == 4, "shape %dd", t->ndim);
    q8_tensor_free(t);
    /* a model that has an input, given none: with dynamic dims it cannot
     * load, and says so after naming what is missing; with fixed ones the
     * count is named */
    char *a2[] = {Q8RUN, MNIST "/cnn.onnx", NULL};
    expect_fail(tmp, a2, 2, "q8run: no --input given: ");
    char *a3[] = {Q8RUN, MNIST "/cnn.onnx", "--input-shape", "input=1x1x28x28", NULL};
    expect_fail(tmp, a3, 2, "the model has 1 inputs, 0 --input given");
    q8t_rm_rf(tmp);
    free(tmp);
}
