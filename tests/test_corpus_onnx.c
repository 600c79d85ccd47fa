/* The malformed-ONNX corpus (tests/corpus/onnx, made by make_corpus.py):
 * every file must make q8_model_load fail with a clear message, and q8run
 * exit 1 with one "q8run: ..." line on stderr and nothing in --out. Also
 * q8run's usage errors (exit 2) and its all-or-nothing output writing. */
#define _GNU_SOURCE /* nftw */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "npy.h"
#include "q8.h"
#include "q8_tools.h"
#include "testutil.h"

#define CORPUS Q8_SOURCE_DIR "/tests/corpus/onnx"
#define Q8RUN Q8_BINARY_DIR "/q8run"

/* ---- small helpers ---- */

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *f) {
    (void)st, (void)flag, (void)f;
    return remove(p);
}

static void rm_rf(const char *dir) { nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS); }

static char *make_tmpdir(void) {
    char *d = strdup("/tmp/q8corpusXXXXXX");
    cr_assert(d && mkdtemp(d), "mkdtemp: %s", strerror(errno));
    return d;
}

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char *b = malloc(cap + 1);
    size_t r;
    while (b && (r = fread(b + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) b = realloc(b, (cap *= 2) + 1);
    }
    fclose(f);
    if (b) b[n] = 0;
    if (len) *len = n;
    return b;
}

static void copy_file(const char *from, const char *to) {
    size_t n;
    char *b = slurp(from, &n);
    cr_assert(b, "cannot read %s", from);
    FILE *f = fopen(to, "wb");
    cr_assert(f && fwrite(b, 1, n, f) == n && fclose(f) == 0, "cannot write %s", to);
    free(b);
}

static int count_entries(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

typedef struct run_result {
    bool exited;      /* false: killed by a signal */
    int code;         /* exit code, or the signal */
    char *out, *err;  /* captured stdout / stderr (malloc'd) */
} run_result;

/* Run argv (argv[0] a path) with stdout/stderr captured, under a time limit. */
static run_result run_cmd(const char *tmp, char *const argv[]) {
    char op[4096], ep[4096];
    snprintf(op, sizeof op, "%s/.stdout", tmp);
    snprintf(ep, sizeof ep, "%s/.stderr", tmp);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        int o = open(op, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(ep, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int in = open("/dev/null", O_RDONLY);
        if (o < 0 || e < 0 || in < 0) _exit(127);
        dup2(o, 1);
        dup2(e, 2);
        dup2(in, 0);
        alarm(60); /* a hang becomes SIGALRM, reported as a signal */
        execv(argv[0], argv);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0) cr_assert(errno == EINTR);
    run_result r = {.exited = WIFEXITED(st),
                    .code = WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st)};
    r.out = slurp(op, NULL);
    r.err = slurp(ep, NULL);
    unlink(op);
    unlink(ep);
    cr_assert(r.out && r.err);
    return r;
}

static void free_result(run_result *r) {
    free(r->out);
    free(r->err);
}

/* Exactly one line, "q8run: ..." */
static bool one_error_line(const char *s) {
    size_t n = strlen(s);
    return n > 8 && strncmp(s, "q8run: ", 7) == 0 && strchr(s, '\n') == s + n - 1;
}

static void write_x_npy(const char *path) {
    float x[2] = {-1.0f, 2.0f};
    int64_t dims[1] = {2};
    q8_error err = {0};
    cr_assert_eq(q8_npy_write(path, Q8_F32, dims, 1, x, &err), Q8_OK, "%s", err.msg);
}

/* ---- the MANIFEST ---- */

typedef struct entry {
    char file[256], sub[256], runsub[256];
} entry;

static int read_manifest(entry **out) {
    FILE *f = fopen(CORPUS "/MANIFEST", "r");
    cr_assert(f, "cannot open %s/MANIFEST", CORPUS);
    entry *es = NULL;
    int n = 0;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n') continue;
        line[strcspn(line, "\n")] = 0;
        char *t1 = strchr(line, '\t');
        cr_assert(t1, "MANIFEST line without a tab: %s", line);
        *t1++ = 0;
        char *t2 = strchr(t1, '\t');
        if (t2) *t2++ = 0;
        es = realloc(es, sizeof *es * (size_t)(n + 1));
        snprintf(es[n].file, sizeof es[n].file, "%s", line);
        snprintf(es[n].sub, sizeof es[n].sub, "%s", t1);
        snprintf(es[n].runsub, sizeof es[n].runsub, "%s", t2 ? t2 : t1);
        n++;
    }
    fclose(f);
    cr_assert_gt(n, 50, "MANIFEST has only %d entries", n);
    *out = es;
    return n;
}

Test(corpus_onnx, model_load_fails_cleanly) {
    entry *es;
    int n = read_manifest(&es), bad = 0;
    for (int i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", CORPUS, es[i].file);
        q8_model *m = NULL;
        q8_error err = {0};
        q8_status s = q8_model_open(path, NULL, &m, &err);
        if (s == Q8_OK) {
            cr_log_error("%s: loaded, expected an error containing \"%s\"", es[i].file, es[i].sub);
            q8_model_free(m);
            bad++;
        } else if (!strstr(err.msg, es[i].sub)) {
            cr_log_error("%s: error \"%s\" lacks \"%s\"", es[i].file, err.msg, es[i].sub);
            bad++;
        } else if (err.status != s || m) {
            cr_log_error("%s: status %d, err.status %d, model %p", es[i].file, s, err.status,
                         (void *)m);
            bad++;
        }
    }
    free(es);
    cr_assert_eq(bad, 0, "%d of %d corpus files misbehave (see above)", bad, n);
}

Test(corpus_onnx, q8run_fails_cleanly, .timeout = 600) {
    entry *es;
    int n = read_manifest(&es), bad = 0;
    char *tmp = make_tmpdir();
    char xnpy[4096], outdir[4096];
    snprintf(xnpy, sizeof xnpy, "%s/x.npy", tmp);
    snprintf(outdir, sizeof outdir, "%s/out", tmp);
    write_x_npy(xnpy);
    for (int i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", CORPUS, es[i].file);
        char *argv[] = {Q8RUN, path, "--input", xnpy, "--out", outdir, NULL};
        run_result r = run_cmd(tmp, argv);
        bool want_ok = strcmp(es[i].runsub, "OK") == 0;
        if (!r.exited) {
            cr_log_error("%s: q8run killed by signal %d; stderr: %s", es[i].file, r.code, r.err);
            bad++;
        } else if (want_ok) {
            if (r.code != 0) {
                cr_log_error("%s: q8run exit %d, expected success; stderr: %s", es[i].file, r.code,
                             r.err);
                bad++;
            }
        } else if (r.code != 1) {
            cr_log_error("%s: q8run exit %d, expected 1; stderr: %s", es[i].file, r.code, r.err);
            bad++;
        } else if (!one_error_line(r.err)) {
            cr_log_error("%s: q8run stderr is not one 'q8run: ' line: [%s]", es[i].file, r.err);
            bad++;
        } else if (!strstr(r.err, es[i].runsub)) {
            cr_log_error("%s: q8run error \"%s\" lacks \"%s\"", es[i].file, r.err, es[i].runsub);
            bad++;
        } else if (access(outdir, F_OK) == 0 || count_entries(tmp) != 1) {
            cr_log_error("%s: q8run left files behind (%d in --out, %d in the folder)", es[i].file,
                         count_entries(outdir), count_entries(tmp));
            bad++;
        }
        free_result(&r);
        rm_rf(outdir);
    }
    rm_rf(tmp);
    free(tmp);
    free(es);
    cr_assert_eq(bad, 0, "%d of %d corpus files misbehave in q8run (see above)", bad, n);
}

/* ---- valid models: load, run, and give the expected outputs ---- */

static double value_at(q8_dtype dt, const void *p, int64_t i) {
    switch (dt) {
    case Q8_F32: return ((const float *)p)[i];
    case Q8_I64: return (double)((const int64_t *)p)[i];
    default: return NAN;
    }
}

/* One EXPECTED line: run the model on x = [-1, 2] (dynamic dims fixed by
 * the input) and compare each named output. Returns false with a reason. */
static bool check_valid(const char *file, char *spec, char *why, size_t wn) {
    char path[4096];
    snprintf(path, sizeof path, "%s/valid/%s", CORPUS, file);
    const float x[2] = {-1, 2};
    q8_input_shape shape = {"x", 1, {2}};
    q8_load_options lo = {.input_shapes = &shape, .n_input_shapes = 1};
    q8_model *m = NULL;
    q8_session *s = NULL;
    q8_error err = {0};
    bool ok = false;
    const int64_t d2 = 2;
    if (q8_model_open(path, &lo, &m, &err) != Q8_OK ||
        q8_session_create(m, NULL, &s, &err) != Q8_OK ||
        q8_session_set_input(s, "x", Q8_F32, &d2, 1, x, &err) != Q8_OK ||
        q8_session_run(s, &err) != Q8_OK) {
        snprintf(why, wn, "%s", err.msg);
        goto out;
    }
    int n_found = 0;
    char *save = NULL;
    for (char *item = strtok_r(spec, ";", &save); item; item = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(item, '=');
        *eq = 0;
        int oi = -1;
        q8_tensor_info info;
        const void *data = NULL;
        for (int i = 0; i < q8_model_num_outputs(m); i++) {
            q8_session_output(s, i, &info, &data, NULL);
            if (strcmp(info.name, item) == 0) {
                oi = i;
                break;
            }
        }
        if (oi < 0) {
            snprintf(why, wn, "no output '%s'", item);
            goto out;
        }
        n_found++;
        int64_t numel = 1;
        for (int d = 0; d < info.ndim; d++) numel *= info.dims[d];
        int64_t k = 0;
        char *sv = NULL;
        for (char *v = strtok_r(eq + 1, ",", &sv); v; v = strtok_r(NULL, ",", &sv), k++) {
            if (k >= numel || value_at(info.dtype, data, k) != atof(v)) {
                snprintf(why, wn, "output '%s'[%lld] is %g, expected %s", item, (long long)k,
                         k < numel ? value_at(info.dtype, data, k) : NAN, v);
                goto out;
            }
        }
        if (k != numel) {
            snprintf(why, wn, "output '%s' has %lld values, expected %lld", item, (long long)numel,
                     (long long)k);
            goto out;
        }
    }
    if (n_found != q8_model_num_outputs(m)) {
        snprintf(why, wn, "the model has %d outputs, EXPECTED lists %d", q8_model_num_outputs(m),
                 n_found);
        goto out;
    }
    ok = true;
out:
    q8_session_free(s);
    q8_model_free(m);
    return ok;
}

Test(corpus_onnx, valid_models_run) {
    FILE *f = fopen(CORPUS "/valid/EXPECTED", "r");
    cr_assert(f, "no %s/valid/EXPECTED", CORPUS);
    char line[1024], why[600];
    int n = 0, bad = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n') continue;
        line[strcspn(line, "\n")] = 0;
        char *spec = strchr(line, '\t');
        cr_assert(spec, "bad EXPECTED line %s", line);
        *spec++ = 0;
        n++;
        if (!check_valid(line, spec, why, sizeof why)) {
            cr_log_error("%s: %s", line, why);
            bad++;
        }
    }
    fclose(f);
    cr_expect_gt(n, 10);
    cr_assert_eq(bad, 0, "%d of %d valid models fail", bad, n);
}

/* ---- external data cases that need a folder of their own ---- */

Test(corpus_onnx, external_data_symlink_escape) {
    char *tmp = make_tmpdir();
    char dir[4096], model[4096], secret[4096], link[4096];
    snprintf(dir, sizeof dir, "%s/model", tmp);
    cr_assert_eq(mkdir(dir, 0755), 0);
    snprintf(model, sizeof model, "%s/ext_symlink.onnx", dir);
    copy_file(CORPUS "/special/ext_symlink.onnx", model);
    snprintf(secret, sizeof secret, "%s/secret.bin", tmp);
    FILE *f = fopen(secret, "wb");
    cr_assert(f && fwrite("0123456789abcdef", 1, 16, f) == 16 && fclose(f) == 0);
    snprintf(link, sizeof link, "%s/link.bin", dir);
    cr_assert_eq(symlink("../secret.bin", link), 0);
    q8_model *m = NULL;
    q8_error err = {0};
    cr_assert_neq(q8_model_open(model, NULL, &m, &err), Q8_OK);
    cr_assert(strstr(err.msg, "resolves outside the model's folder"), "%s", err.msg);
    /* The same through an absolute symlink, and a symlinked folder. */
    unlink(link);
    cr_assert_eq(symlink(secret, link), 0);
    cr_assert_neq(q8_model_open(model, NULL, &m, &err), Q8_OK);
    cr_assert(strstr(err.msg, "resolves outside the model's folder"), "%s", err.msg);
    rm_rf(tmp);
    free(tmp);
}

Test(corpus_onnx, external_data_inside_loads) {
    char *tmp = make_tmpdir();
    char model[4096], data[4096], sub[4096], link[4096];
    snprintf(model, sizeof model, "%s/ext_ok.onnx", tmp);
    copy_file(CORPUS "/special/ext_ok.onnx", model);
    snprintf(data, sizeof data, "%s/data.bin", tmp);
    FILE *f = fopen(data, "wb");
    float v[4] = {1, 2, 3, 4};
    cr_assert(f && fwrite(v, 4, 4, f) == 4 && fclose(f) == 0);
    q8_model *m = NULL;
    q8_error err = {0};
    cr_assert_eq(q8_model_open(model, NULL, &m, &err), Q8_OK, "%s", err.msg);
    q8_model_free(m);
    /* A symlink that stays inside the folder is fine. */
    snprintf(sub, sizeof sub, "%s/real", tmp);
    cr_assert_eq(mkdir(sub, 0755), 0);
    snprintf(link, sizeof link, "%s/real/data.bin", tmp);
    cr_assert_eq(rename(data, link), 0);
    cr_assert_eq(symlink("real/data.bin", data), 0);
    cr_assert_eq(q8_model_open(model, NULL, &m, &err), Q8_OK, "%s", err.msg);
    q8_model_free(m);
    rm_rf(tmp);
    free(tmp);
}

/* ---- q8run: usage errors, missing files, outputs ---- */

Test(q8run, usage_errors_exit_2) {
    char *tmp = make_tmpdir();
    char xnpy[4096];
    snprintf(xnpy, sizeof xnpy, "%s/x.npy", tmp);
    write_x_npy(xnpy);
    char *m = CORPUS "/valid/relu.onnx";
    char *cases[][8] = {
        {Q8RUN, NULL},
        {Q8RUN, m, NULL},                                   /* no --input */
        {Q8RUN, "--input", xnpy, NULL},                     /* no model */
        {Q8RUN, m, m, "--input", xnpy, NULL},               /* two models */
        {Q8RUN, m, "--input", NULL},                        /* missing argument */
        {Q8RUN, m, "--input", xnpy, "--bogus", NULL},
        {Q8RUN, m, "--input", xnpy, "-z", NULL},
        {Q8RUN, m, "--input", xnpy, "--threads", "0", NULL},
        {Q8RUN, m, "--input", xnpy, "--threads", "2x", NULL},
        {Q8RUN, m, "--input", xnpy, "--bench", "-1", NULL},
        {Q8RUN, m, "--input", xnpy, "--device", "tpu", NULL},
        {Q8RUN, m, "--input", xnpy, "--input-shape", "x", NULL},
        {Q8RUN, m, "--input", xnpy, "--input-shape", "x=2y3", NULL},
        {Q8RUN, m, "--input", xnpy, "--input-shape", "=2", NULL},
        {Q8RUN, m, "--input", xnpy, "--print", "many", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_result r = run_cmd(tmp, cases[i]);
        cr_expect(r.exited && r.code == 2, "case %zu: exit %d (signal: %d), stderr: %s", i, r.code,
                  !r.exited, r.err);
        cr_expect(strncmp(r.err, "q8run: ", 7) == 0, "case %zu: stderr: %s", i, r.err);
        free_result(&r);
    }
    char *help[] = {Q8RUN, "--help", NULL};
    run_result r = run_cmd(tmp, help);
    cr_expect(r.exited && r.code == 0 && strstr(r.out, "usage: q8run"));
    free_result(&r);
    rm_rf(tmp);
    free(tmp);
}

/* --profile prints the op types and the slowest nodes, --profile-nodes every
 * node in graph order (stderr; the outputs on stdout as without it). */
Test(q8run, profile_lists_nodes) {
    char *tmp = make_tmpdir();
    char xnpy[4096];
    snprintf(xnpy, sizeof xnpy, "%s/x.npy", tmp);
    write_x_npy(xnpy);
    char *m = CORPUS "/valid/relu.onnx";
    char *prof[] = {Q8RUN, m, "--input", xnpy, "--bench", "3", "--profile", NULL};
    run_result r = run_cmd(tmp, prof);
    cr_expect(r.exited && r.code == 0, "exit %d, stderr: %s", r.code, r.err);
    cr_expect(strstr(r.err, "profile: ") && strstr(r.err, "slowest nodes:"), "stderr: %s", r.err);
    cr_expect(strstr(r.err, "(Relu)"), "stderr: %s", r.err);
    free_result(&r);
    char *all[] = {Q8RUN, m, "--input", xnpy, "--profile-nodes", NULL};
    r = run_cmd(tmp, all);
    cr_expect(r.exited && r.code == 0, "exit %d, stderr: %s", r.code, r.err);
    cr_expect(strstr(r.err, "nodes in graph order:") && strstr(r.err, "(Relu)"), "stderr: %s",
              r.err);
    cr_expect(!strstr(r.err, "slowest nodes:"), "stderr: %s", r.err);
    free_result(&r);
    rm_rf(tmp);
    free(tmp);
}

static void expect_fail1(const char *tmp, char *const argv[], const char *sub) {
    run_result r = run_cmd(tmp, argv);
    cr_expect(r.exited && r.code == 1, "%s: exit %d (signal: %d), stderr: %s", sub, r.code,
              !r.exited, r.err);
    cr_expect(one_error_line(r.err), "%s: stderr is not one line: [%s]", sub, r.err);
    cr_expect(strstr(r.err, sub), "stderr lacks \"%s\": %s", sub, r.err);
    free_result(&r);
}

Test(q8run, bad_files_exit_1) {
    char *tmp = make_tmpdir();
    char xnpy[4096], bad[4096], big[4096], out[4096];
    snprintf(xnpy, sizeof xnpy, "%s/x.npy", tmp);
    write_x_npy(xnpy);
    snprintf(out, sizeof out, "%s/out", tmp);
    char *m = CORPUS "/valid/relu.onnx";
    snprintf(bad, sizeof bad, "%s/bad.npy", tmp);
    FILE *f = fopen(bad, "wb");
    cr_assert(f && fwrite("\x93NUMPY\x01\x00\xff\xff", 1, 10, f) == 10 && fclose(f) == 0);
    snprintf(big, sizeof big, "%s/big.npy", tmp);
    float z[3] = {0};
    int64_t d3 = 3;
    q8_error err = {0};
    cr_assert_eq(q8_npy_write(big, Q8_F32, &d3, 1, z, &err), Q8_OK);

    char *a1[] = {Q8RUN, "/nonexistent/model.onnx", "--input", xnpy, "--out", out, NULL};
    expect_fail1(tmp, a1, "cannot open '/nonexistent/model.onnx'");
    char *a2[] = {Q8RUN, m, "--input", "/nonexistent/x.npy", "--out", out, NULL};
    expect_fail1(tmp, a2, "cannot open '/nonexistent/x.npy'");
    char *a3[] = {Q8RUN, m, "--input", bad, "--out", out, NULL};
    expect_fail1(tmp, a3, "header runs past the end");
    char *a4[] = {Q8RUN, m, "--input", big, "--out", out, NULL};
    expect_fail1(tmp, a4, "the model fixes dim 0 to 2, got 3");
    char *a5[] = {Q8RUN, m, "--input", "nosuch=" "/dev/null", "--out", out, NULL};
    expect_fail1(tmp, a5, "/dev/null");
    char *a6[] = {Q8RUN, m, "--input", xnpy, "--input", xnpy, "--out", out, NULL};
    expect_fail1(tmp, a6, "2 unnamed inputs given, the model has 1");
    char *a7[] = {Q8RUN, m, "--input", "nosuch=", "--out", out, NULL};
    expect_fail1(tmp, a7, "cannot open ''");
    char *a8[] = {Q8RUN, tmp, "--input", xnpy, "--out", out, NULL};
    expect_fail1(tmp, a8, "is a folder, not a regular file");
    char *a9[] = {Q8RUN, m, "--input", xnpy, "--out", xnpy, NULL};
    expect_fail1(tmp, a9, "cannot create the output folder");
    char *a10[] = {Q8RUN, m, "--input", xnpy, "--input-shape", "x=3", "--out", out, NULL};
    expect_fail1(tmp, a10, "the model fixes dim 0 to 2, got 3");
    cr_expect_neq(access(out, F_OK), 0, "q8run created --out on failure");
    rm_rf(tmp);
    free(tmp);
}

Test(q8run, writes_outputs) {
    char *tmp = make_tmpdir();
    char xnpy[4096], out[4096], y[4096];
    snprintf(xnpy, sizeof xnpy, "%s/x.npy", tmp);
    write_x_npy(xnpy);
    snprintf(out, sizeof out, "%s/out/sub", tmp);
    char *a[] = {Q8RUN, CORPUS "/valid/relu.onnx", "--input", xnpy, "--out", out, NULL};
    run_result r = run_cmd(tmp, a);
    cr_assert(r.exited && r.code == 0, "exit %d: %s", r.code, r.err);
    cr_expect_str_empty(r.err);
    free_result(&r);
    cr_expect_eq(count_entries(out), 1, "expected only y.npy in --out");
    snprintf(y, sizeof y, "%s/y.npy", out);
    q8_tensor *t = NULL;
    q8_error err = {0};
    cr_assert_eq(q8_npy_read(y, &t, &err), Q8_OK, "%s", err.msg);
    cr_expect(t->dtype == Q8_F32 && t->ndim == 1 && t->dims[0] == 2);
    cr_expect(((float *)t->data)[0] == 0.0f && ((float *)t->data)[1] == 2.0f);
    q8_tensor_free(t);
    rm_rf(tmp);
    free(tmp);
}

/* Output files are all written or none: names that clash once sanitized,
 * or an output .npy cannot hold, fail before anything is written. */
Test(q8run, outputs_all_or_nothing) {
    char *tmp = make_tmpdir();
    char xnpy[4096], out[4096], keep[4096];
    snprintf(xnpy, sizeof xnpy, "%s/x.npy", tmp);
    write_x_npy(xnpy);
    snprintf(out, sizeof out, "%s/out", tmp);
    cr_assert_eq(mkdir(out, 0755), 0);
    /* A file from an earlier run must stay as it was. */
    snprintf(keep, sizeof keep, "%s/y.npy", out);
    FILE *f = fopen(keep, "wb");
    cr_assert(f && fputs("old", f) >= 0 && fclose(f) == 0);

    char *a1[] = {Q8RUN, CORPUS "/special/out_name_clash.onnx", "--input", xnpy, "--out", out,
                  NULL};
    expect_fail1(tmp, a1, "outputs 'a/b' and 'a_b' would both be written to");
    char bx[4096];
    snprintf(bx, sizeof bx, "x=%s", xnpy);
    char *a2[] = {Q8RUN, CORPUS "/special/out_bf16.onnx", "--input", bx,
                  "--input", "b=" CORPUS "/special/b_bf16.pb", "--out", out, NULL};
    expect_fail1(tmp, a2, "cannot write bfloat16 to .npy");
    cr_expect_eq(count_entries(out), 1, "q8run left files in --out");
    char *old = slurp(keep, NULL);
    cr_expect_str_eq(old, "old");
    free(old);
    /* Without --out it prints, and bfloat16 is fine there. */
    char *a3[] = {Q8RUN, CORPUS "/special/out_bf16.onnx", "--input", bx,
                  "--input", "b=" CORPUS "/special/b_bf16.pb", NULL};
    run_result r = run_cmd(tmp, a3);
    cr_expect(r.exited && r.code == 0, "exit %d: %s", r.code, r.err);
    free_result(&r);
    rm_rf(tmp);
    free(tmp);
}
