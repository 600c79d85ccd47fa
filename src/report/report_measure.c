/* Cost of one model, measured in a forked child: its own heap and its own
 * peak resident memory (VmHWM), so models measured one after another do
 * not pollute each other's numbers. The child sends one fixed-size record
 * back through a pipe and exits with _exit (no atexit handlers, no second
 * flush of the parent's stdio buffers). */
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "report.h"

typedef struct child_result {
    q8_status status;
    char msg[sizeof(((q8_error *)0)->msg)];
    q8_report_cost cost;
} child_result;

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* VmHWM of this process, 0 if /proc is not there. */
static size_t peak_rss(void) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return 0;
    char line[256];
    size_t kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %zu kB", &kb) == 1) break;
    fclose(f);
    return kb * 1024;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted v. */
static double pct(const double *v, int n, double p) {
    int i = (int)ceil(p / 100.0 * n) - 1;
    return v[i < 0 ? 0 : i >= n ? n - 1 : i];
}

static q8_status measure_here(const char *path, const q8_sample_set *s,
                              const q8_load_options *lo, q8_device device, int n_threads,
                              int runs, q8_report_cost *c, q8_error *err) {
    const q8_input_shape *shapes = lo->input_shapes;
    q8_model *m = NULL;
    q8_session *sess = NULL;
    q8_tensor **in = calloc((size_t)s->n_inputs + 1, sizeof(q8_tensor *));
    double *ms = malloc(sizeof(double) * (size_t)runs);
    q8_status st = ms && in ? Q8_OK : q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    /* The inputs first, as an application (or q8run) has them before it
     * loads the model; the file buffers they were parsed from are given
     * back so that they do not count against the model. */
    for (int k = 0; st == Q8_OK && k < s->n_inputs; k++) {
        st = q8_sample_load(s, 0, k, &in[k], err);
        if (st != Q8_OK) q8_fail_prefix(err, "%s", s->paths[0][k]);
    }
    malloc_trim(0);
    if (st == Q8_OK) st = q8_model_open(path, lo, &m, err);
    q8_session_options so = {.n_threads = n_threads, .device = device};
    if (st == Q8_OK) st = q8_session_create(m, &so, &sess, err);
    for (int k = 0; st == Q8_OK && k < s->n_inputs; k++) {
        st = q8_session_set_input(sess, shapes[k].name, in[k]->dtype, in[k]->dims, in[k]->ndim,
                                  in[k]->data, err);
        if (st != Q8_OK) q8_fail_prefix(err, "%s", s->paths[0][k]);
    }
    /* warm-up: caches, page faults, thread start-up, and with threads the
     * six runs that time the pool against one thread (kernels/cpu/adapt.h) */
    for (int i = 0; st == Q8_OK && i < (runs < 3 ? 1 : 6); i++) st = q8_session_run(sess, err);
    for (int i = 0; st == Q8_OK && i < runs; i++) {
        double t0 = now_ms();
        st = q8_session_run(sess, err);
        ms[i] = now_ms() - t0;
    }
    if (st == Q8_OK) {
        q8_memory_info mi;
        q8_session_memory(sess, &mi);
        c->weights_bytes = mi.weights_bytes;
        c->arena_bytes = mi.arena_bytes;
        c->device_bytes = mi.device_bytes;
        qsort(ms, (size_t)runs, sizeof(double), cmp_double);
        c->lat.runs = runs;
        c->lat.min_ms = ms[0];
        c->lat.max_ms = ms[runs - 1];
        c->lat.median_ms = runs % 2 ? ms[runs / 2] : 0.5 * (ms[runs / 2 - 1] + ms[runs / 2]);
        c->lat.p10_ms = pct(ms, runs, 10);
        c->lat.p90_ms = pct(ms, runs, 90);
        c->peak_rss_bytes = peak_rss();
    }
    q8_session_free(sess);
    q8_model_free(m);
    for (int k = 0; in && k < s->n_inputs; k++) q8_tensor_free(in[k]);
    free(in);
    free(ms);
    return st;
}

static bool write_all(int fd, const void *p, size_t n) {
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        c += w;
        n -= (size_t)w;
    }
    return true;
}

static size_t read_all(int fd, void *p, size_t n) {
    char *c = p;
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, c + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    return got;
}

q8_status q8_report_measure(const char *path, const q8_sample_set *s, const q8_load_options *lo,
                            q8_device device, int n_threads, int runs, q8_report_cost *out,
                            q8_error *err) {
    memset(out, 0, sizeof *out);
    if (runs < 1) return q8_fail(err, Q8_ERR_ARG, "the number of timed runs must be >= 1");
    struct stat sb;
    if (stat(path, &sb) != 0)
        return q8_fail(err, Q8_ERR_IO, "%s: %s", path, strerror(errno));
    int fds[2];
    if (pipe(fds) != 0) return q8_fail(err, Q8_ERR_IO, "pipe: %s", strerror(errno));
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return q8_fail(err, Q8_ERR_IO, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        close(fds[0]);
        child_result *r = calloc(1, sizeof *r);
        if (!r) _exit(3);
        q8_error e = {0};
        r->status = measure_here(path, s, lo, device, n_threads, runs, &r->cost, &e);
        memcpy(r->msg, e.msg, sizeof r->msg);
        bool ok = write_all(fds[1], r, sizeof *r);
        _exit(ok ? 0 : 4);
    }
    close(fds[1]);
    child_result *r = calloc(1, sizeof *r);
    size_t got = r ? read_all(fds[0], r, sizeof *r) : 0;
    close(fds[0]);
    int ws = 0;
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {}
    q8_status st = Q8_OK;
    if (!r) {
        st = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    } else if (got != sizeof *r) {
        if (WIFSIGNALED(ws))
            st = q8_fail(err, Q8_ERR_BACKEND, "%s: the measuring process died (signal %d, %s)",
                         path, WTERMSIG(ws), strsignal(WTERMSIG(ws)));
        else
            st = q8_fail(err, Q8_ERR_BACKEND, "%s: the measuring process exited (status %d) "
                         "without a result", path, WIFEXITED(ws) ? WEXITSTATUS(ws) : -1);
    } else if (r->status != Q8_OK) {
        r->msg[sizeof r->msg - 1] = 0;
        st = q8_fail(err, r->status, "%s", r->msg);
    } else {
        *out = r->cost;
        out->file_bytes = (size_t)sb.st_size;
    }
    free(r);
    return st;
}
