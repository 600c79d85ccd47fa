#include "cli_util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>


bool q8_cli_parse_dims(const char *s, int64_t *dims, int *ndim) {
    int n = 0;
    const char *p = s;
    if (!*p) return false;
    for (;;) {
        if (n == Q8_MAX_DIMS) return false;
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (end == p || errno || v < 0) return false;
        dims[n++] = v;
        if (!*end) break;
        if (*end != 'x' && *end != ',' && *end != 'X') return false;
        p = end + 1;
    }
    *ndim = n;
    return true;
}

bool q8_cli_parse_input_shape(char *s, q8_input_shape *out) {
    char *eq = strrchr(s, '=');
    if (!eq || eq == s) return false;
    *eq = 0;
    out->name = s;
    return q8_cli_parse_dims(eq + 1, out->dims, &out->ndim);
}

bool q8_cli_dims_positive(const char *tool, const q8_input_shape *s) {
    for (int d = 0; d < s->ndim; d++)
        if (s->dims[d] < 1) {
            char sb[128];
            fprintf(stderr, "%s: --input-shape %s=%s: every dim must be at least 1\n", tool,
                    s->name, q8_shape_str(s->dims, s->ndim, sb, sizeof sb));
            return false;
        }
    return true;
}

void q8_cli_sanitize(const char *name, char *out, size_t n) {
    size_t i = 0;
    for (; name[i] && i + 1 < n; i++) {
        char c = name[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == '-';
        out[i] = ok ? c : '_';
    }
    out[i] = 0;
    /* Never "", "." or "..": prefix an underscore. */
    if ((i == 0 || strcmp(out, ".") == 0 || strcmp(out, "..") == 0) && i + 2 <= n) {
        memmove(out + 1, out, i + 1);
        out[0] = '_';
    }
}

bool q8_cli_mkdirs(const char *dir) {
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf) return false;
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) return false;
        *p = '/';
    }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST) return false;
    struct stat st;
    return stat(buf, &st) == 0 && S_ISDIR(st.st_mode);
}

double q8_cli_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* VmHWM from /proc: getrusage's ru_maxrss also counts memory inherited at
 * fork from the parent (a Python driver with torch loaded reports hundreds
 * of MB for a 2 MB q8run). getrusage is the fallback off Linux. */
size_t q8_cli_peak_rss(void) {
    FILE *f = fopen("/proc/self/status", "r");
    if (f) {
        char line[256];
        size_t kb = 0;
        bool found = false;
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "VmHWM: %zu kB", &kb) == 1) {
                found = true;
                break;
            }
        fclose(f);
        if (found) return kb * 1024;
    }
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
    return (size_t)ru.ru_maxrss * 1024; /* kilobytes on Linux */
}

void q8_cli_json_str(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void q8_cli_stats(double *v, int n, double *median, double *mn, double *mx) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    *mn = v[0];
    *mx = v[n - 1];
    *median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double elem_as_double(q8_dtype dt, const void *data, int64_t i) {
    switch (dt) {
    case Q8_F32: return ((const float *)data)[i];
    case Q8_F64: return ((const double *)data)[i];
    case Q8_I8: return ((const int8_t *)data)[i];
    case Q8_U8: case Q8_BOOL: return ((const uint8_t *)data)[i];
    case Q8_I16: return ((const int16_t *)data)[i];
    case Q8_U16: return ((const uint16_t *)data)[i];
    case Q8_I32: return ((const int32_t *)data)[i];
    case Q8_U32: return ((const uint32_t *)data)[i];
    case Q8_I64: return (double)((const int64_t *)data)[i];
    case Q8_U64: return (double)((const uint64_t *)data)[i];
    default: return 0;
    }
}

void q8_cli_print_tensor(FILE *f, const char *name, q8_dtype dt, const int64_t *dims, int ndim,
                         const void *data, int max) {
    char sb[128];
    int64_t numel = 1;
    for (int i = 0; i < ndim; i++) numel *= dims[i];
    fprintf(f, "%s: %s %s", name, q8_dtype_name(dt), q8_shape_str(dims, ndim, sb, sizeof sb));
    if (max <= 0) { /* --print 0: the header alone */
        fprintf(f, " (%lld values)\n", (long long)numel);
        return;
    }
    fprintf(f, " [");
    for (int64_t i = 0; i < numel && i < max; i++)
        fprintf(f, "%s%.6g", i ? ", " : "", elem_as_double(dt, data, i));
    if (numel > max) fprintf(f, ", ... (%lld more)", (long long)(numel - max));
    fprintf(f, "]\n");
    /* For scores, the class of each row (argmax over the last axis). */
    bool is_float = dt == Q8_F32 || dt == Q8_F64 || dt == Q8_F16 || dt == Q8_BF16;
    if (is_float && ndim >= 1 && dims[ndim - 1] > 1 && numel > 0) {
        int64_t row = dims[ndim - 1], rows = numel / row;
        fprintf(f, "%s: argmax over the last axis [", name);
        for (int64_t r = 0; r < rows && r < max; r++) {
            int64_t am = 0;
            for (int64_t i = 1; i < row; i++)
                if (elem_as_double(dt, data, r * row + i) > elem_as_double(dt, data, r * row + am)) am = i;
            fprintf(f, "%s%lld", r ? ", " : "", (long long)am);
        }
        fprintf(f, "%s]\n", rows > max ? ", ..." : "");
    }
}

bool q8_cli_parse_int(const char *s, long lo, long hi, long *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!*s || *end || errno || v < lo || v > hi) return false;
    *out = v;
    return true;
}

/* msg on one line: control characters escaped */
static void print_line(const char *prefix, const char *msg) {
    char line[4 * sizeof ((q8_error *)0)->msg + 64];
    size_t k = 0;
    for (const unsigned char *p = (const unsigned char *)msg; *p && k + 5 < sizeof line; p++) {
        if (*p == '\n') k += (size_t)snprintf(line + k, sizeof line - k, "\\n");
        else if (*p < 0x20 || *p == 0x7f)
            k += (size_t)snprintf(line + k, sizeof line - k, "\\x%02x", *p);
        else line[k++] = (char)*p;
    }
    line[k] = 0;
    fprintf(stderr, "%s%s\n", prefix, line);
}

void q8_cli_error(const char *tool, const char *msg) {
    char prefix[64];
    snprintf(prefix, sizeof prefix, "%s: ", tool);
    print_line(prefix, msg && *msg ? msg : "failed (no message)");
}

void q8_cli_warn(const char *tool, const char *msg) {
    char prefix[64];
    snprintf(prefix, sizeof prefix, "%s: warning: ", tool);
    print_line(prefix, msg ? msg : "");
}

bool q8_cli_parse_bind(const char *tool, char *arg, q8_input_value *v, q8_host_tensor **t) {
    char *eq = strchr(arg, '=');
    if (!eq || eq == arg || !eq[1]) {
        fprintf(stderr, "%s: --bind wants NAME=FILE, not '%s'\n", tool, arg);
        return false;
    }
    *eq = 0;
    q8_error e = {0};
    if (q8_tensor_file_read(eq + 1, t, &e) != Q8_OK) {
        fprintf(stderr, "%s: --bind %s: %s\n", tool, arg, e.msg);
        return false;
    }
    *v = (q8_input_value){.name = arg, .dtype = (*t)->dtype, .ndim = (*t)->ndim,
                          .data = (*t)->data};
    memcpy(v->dims, (*t)->dims, sizeof v->dims);
    return true;
}
