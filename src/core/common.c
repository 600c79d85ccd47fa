#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

_Noreturn void q8_assert_fail(const char *file, int line, const char *cond) {
    fprintf(stderr, "q8: internal error at %s:%d: assertion '%s' failed\n", file,
            line, cond);
    abort();
}

q8_status q8_fail(q8_error *err, q8_status st, const char *fmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->status = st;
    }
    return st;
}

q8_status q8_fail_prefix(q8_error *err, const char *fmt, ...) {
    if (!err) return Q8_OK; /* nothing to prefix: callers keep their own status */
    char prefix[256], old[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    size_t pl = strlen(prefix), ol = strlen(old), cap = sizeof err->msg - 1;
    if (pl > cap) pl = cap;
    memcpy(err->msg, prefix, pl);
    size_t at = pl;
    if (at + 2 <= cap) {
        memcpy(err->msg + at, ": ", 2);
        at += 2;
    }
    if (ol > cap - at) ol = cap - at;
    memcpy(err->msg + at, old, ol);
    err->msg[at + ol] = 0;
    return err->status;
}

const char *q8_status_str(q8_status s) {
    switch (s) {
    case Q8_OK: return "ok";
    case Q8_ERR_ARG: return "invalid argument";
    case Q8_ERR_IO: return "I/O error";
    case Q8_ERR_FORMAT: return "malformed file";
    case Q8_ERR_UNSUPPORTED: return "unsupported";
    case Q8_ERR_SHAPE: return "shape error";
    case Q8_ERR_NOMEM: return "out of memory";
    case Q8_ERR_BACKEND: return "backend error";
    }
    return "unknown status";
}

static const struct { const char *name; size_t size; } dtype_table[Q8_DTYPE_COUNT] = {
    [Q8_UNDEFINED] = {"undefined", 0}, [Q8_F32] = {"float32", 4},
    [Q8_F64] = {"float64", 8},         [Q8_F16] = {"float16", 2},
    [Q8_I8] = {"int8", 1},             [Q8_U8] = {"uint8", 1},
    [Q8_I16] = {"int16", 2},           [Q8_U16] = {"uint16", 2},
    [Q8_I32] = {"int32", 4},           [Q8_U32] = {"uint32", 4},
    [Q8_I64] = {"int64", 8},           [Q8_U64] = {"uint64", 8},
    [Q8_BOOL] = {"bool", 1},           [Q8_STRING] = {"string", 0},
    [Q8_BF16] = {"bfloat16", 2},
};

const char *q8_dtype_name(q8_dtype t) {
    return (t >= 0 && t < Q8_DTYPE_COUNT) ? dtype_table[t].name : "invalid";
}

size_t q8_dtype_size(q8_dtype t) {
    return (t >= 0 && t < Q8_DTYPE_COUNT) ? dtype_table[t].size : 0;
}

bool q8_dtype_is_float(q8_dtype t) {
    return t == Q8_F32 || t == Q8_F64 || t == Q8_F16 || t == Q8_BF16;
}

bool q8_dtype_is_int(q8_dtype t) {
    switch (t) {
    case Q8_I8: case Q8_U8: case Q8_I16: case Q8_U16: case Q8_I32:
    case Q8_U32: case Q8_I64: case Q8_U64: return true;
    default: return false;
    }
}

void *q8_aligned_alloc(size_t bytes) {
    size_t n = q8_align_up(bytes ? bytes : 1, Q8_ALIGN);
    if (n < bytes) return NULL;
    void *p = aligned_alloc(Q8_ALIGN, n);
    if (p) memset(p, 0, n);
    return p;
}

void q8_aligned_free(void *p) { free(p); }

char *q8_strdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

bool q8_shape_numel(const int64_t *dims, int ndim, int64_t *out) {
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) {
        if (dims[i] < 0) return false;
        if (__builtin_mul_overflow(n, dims[i], &n)) return false;
        if (n > ((int64_t)1 << 58)) return false;
    }
    *out = n;
    return true;
}

const char *q8_shape_str(const int64_t *dims, int ndim, char *buf, size_t n) {
    size_t used = 0;
    buf[0] = 0;
    if (ndim == 0) {
        snprintf(buf, n, "scalar");
        return buf;
    }
    for (int i = 0; i < ndim && used < n; i++)
        used += (size_t)snprintf(buf + used, n - used, i ? "x%lld" : "%lld",
                                 (long long)dims[i]);
    return buf;
}

q8_status q8_read_file(const char *path, uint8_t **data, size_t *len, q8_error *err) {
    *data = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return q8_fail(err, Q8_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        return q8_fail(err, Q8_ERR_IO, "'%s' is not a regular file", path);
    }
    size_t n = (size_t)st.st_size;
    uint8_t *buf = malloc(n + 1);
    if (!buf) {
        fclose(f);
        return q8_fail(err, Q8_ERR_NOMEM, "cannot allocate %zu bytes to read '%s'", n, path);
    }
    if (n && fread(buf, 1, n, f) != n) {
        free(buf);
        fclose(f);
        return q8_fail(err, Q8_ERR_IO, "cannot read '%s'", path);
    }
    fclose(f);
    buf[n] = 0;
    *data = buf;
    *len = n;
    return Q8_OK;
}

q8_status q8_write_file_atomic(const char *path, const void *data, size_t len,
                               q8_error *err) {
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 16);
    if (!tmp) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    snprintf(tmp, plen + 16, "%s.tmpXXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        q8_status st = q8_fail(err, Q8_ERR_IO, "cannot create a file next to '%s': %s",
                               path, strerror(errno));
        free(tmp);
        return st;
    }
    const uint8_t *p = data;
    size_t left = len;
    while (left) {
        ssize_t w = write(fd, p, left);
        if (w < 0) {
            if (errno == EINTR) continue;
            break;
        }
        p += w;
        left -= (size_t)w;
    }
    bool ok = left == 0 && fsync(fd) == 0;
    ok = (close(fd) == 0) && ok;
    /* mkstemp creates 0600; give the file the usual permissions. */
    if (ok) {
        mode_t mask = umask(0);
        umask(mask);
        ok = chmod(tmp, 0666 & ~mask) == 0;
    }
    if (ok && rename(tmp, path) != 0) ok = false;
    if (!ok) {
        int e = errno;
        unlink(tmp);
        free(tmp);
        return q8_fail(err, Q8_ERR_IO, "cannot write '%s': %s", path, strerror(e));
    }
    free(tmp);
    return Q8_OK;
}

q8_status q8_map_file(const char *path, q8_mapping *m, q8_error *err) {
    m->base = NULL;
    m->size = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return q8_fail(err, Q8_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return q8_fail(err, Q8_ERR_IO, "'%s' is not a regular file", path);
    }
    if (st.st_size == 0) {
        close(fd);
        return q8_fail(err, Q8_ERR_FORMAT, "'%s' is empty", path);
    }
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return q8_fail(err, Q8_ERR_IO, "cannot map '%s': %s", path, strerror(errno));
    m->base = p;
    m->size = (size_t)st.st_size;
    return Q8_OK;
}

void q8_unmap_file(q8_mapping *m) {
    if (m->base) munmap(m->base, m->size);
    m->base = NULL;
    m->size = 0;
}
