#define _GNU_SOURCE /* O_TMPFILE */
#include "common.h"

#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
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

/* Every block has a header just before it. Large blocks are mapped
 * directly: their zero pages cost nothing until touched (an arena that a
 * run fills later, weights being read in) and their memory goes back to the
 * system when freed, where malloc would keep a freed weight in its heap. */
#define ALLOC_MAP_MIN ((size_t)64 << 10)

typedef struct alloc_hdr {
    size_t map_bytes;       /* mapped: bytes of the mapping, which starts a page before */
    size_t magic;
} alloc_hdr;
#define ALLOC_MAGIC ((size_t)0x71386d656d6f7279ull)
_Static_assert(sizeof(alloc_hdr) <= Q8_ALIGN, "the header fits in one alignment unit");

static size_t page_bytes(void) {
    long p = sysconf(_SC_PAGESIZE);
    return p >= Q8_ALIGN ? (size_t)p : 4096;
}

void *q8_aligned_alloc(size_t bytes) {
    size_t n = q8_align_up(bytes ? bytes : 1, Q8_ALIGN);
    if (n < bytes || n > SIZE_MAX / 2) return NULL;
    uint8_t *p;
    size_t map = 0;
    if (n >= ALLOC_MAP_MIN) {
        size_t page = page_bytes();
        map = n + page;
        void *m = mmap(NULL, map, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) return NULL;
        p = (uint8_t *)m + page;
    } else {
        uint8_t *raw = aligned_alloc(Q8_ALIGN, n + Q8_ALIGN);
        if (!raw) return NULL;
        memset(raw, 0, n + Q8_ALIGN);
        p = raw + Q8_ALIGN;
    }
    alloc_hdr *h = (alloc_hdr *)(p - Q8_ALIGN);
    h->map_bytes = map;
    h->magic = ALLOC_MAGIC;
    return p;
}

void q8_heap_trim(void) {
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}

void q8_aligned_free(void *ptr) {
    if (!ptr) return;
    uint8_t *p = ptr;
    alloc_hdr *h = (alloc_hdr *)(p - Q8_ALIGN);
    Q8_ASSERT(h->magic == ALLOC_MAGIC);
    h->magic = 0;
    if (h->map_bytes) munmap(p - page_bytes(), h->map_bytes);
    else free(p - Q8_ALIGN);
}

char *q8_strdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

bool q8_shape_numel(const int64_t *dims, int ndim, int64_t *out) {
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) {
        /* every dim bounded too: a zero elsewhere must not let a later
         * product of dims (strides, loop bounds) overflow */
        if (dims[i] < 0 || dims[i] > ((int64_t)1 << 58)) return false;
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

/* ---- files ---- */

const char *q8_file_kind(unsigned mode) {
    switch (mode & S_IFMT) {
    case S_IFREG: return "a regular file";
    case S_IFDIR: return "a folder";
    case S_IFIFO: return "a FIFO";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFSOCK: return "a socket";
    case S_IFLNK: return "a symbolic link";
    default: return "a special file";
    }
}

static q8_status not_regular(const char *path, unsigned mode, q8_error *err) {
    return q8_fail(err, Q8_ERR_IO, "'%s' is %s, not a regular file", path, q8_file_kind(mode));
}

q8_status q8_open_regular(const char *path, int *fd_out, size_t *size, q8_error *err) {
    *fd_out = -1;
    *size = 0;
    /* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
     * writer, forever; the fstat below then refuses it. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    struct stat st;
    if (fd < 0) {
        int e = errno;
        if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) /* a socket: ENXIO */
            return not_regular(path, st.st_mode, err);
        return q8_fail(err, Q8_ERR_IO, "cannot open '%s': %s", path, strerror(e));
    }
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return q8_fail(err, Q8_ERR_IO, "cannot open '%s': %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return not_regular(path, st.st_mode, err);
    }
    if ((uint64_t)st.st_size >= SIZE_MAX / 2) {
        close(fd);
        return q8_fail(err, Q8_ERR_IO, "'%s' is too large", path);
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    *fd_out = fd;
    *size = (size_t)st.st_size;
    return Q8_OK;
}

/* Read exactly n bytes unless the file ends first; *got: how many. */
static bool read_all(int fd, uint8_t *buf, size_t n, size_t *got) {
    size_t at = 0;
    while (at < n) {
        ssize_t r = read(fd, buf + at, n - at);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return false;
        if (r == 0) break;
        at += (size_t)r;
    }
    *got = at;
    return true;
}

q8_status q8_read_head(const char *path, void *buf, size_t n, size_t *got, q8_error *err) {
    int fd;
    size_t size;
    *got = 0;
    Q8_TRY(q8_open_regular(path, &fd, &size, err));
    bool ok = read_all(fd, buf, n, got);
    int e = errno;
    close(fd);
    return ok ? Q8_OK : q8_fail(err, Q8_ERR_IO, "cannot read '%s': %s", path, strerror(e));
}

q8_status q8_read_file(const char *path, uint8_t **data, size_t *len, q8_error *err) {
    *data = NULL;
    *len = 0;
    int fd;
    size_t n, got = 0;
    Q8_TRY(q8_open_regular(path, &fd, &n, err));
    uint8_t *buf = malloc(n + 1);
    if (!buf) {
        close(fd);
        return q8_fail(err, Q8_ERR_NOMEM, "cannot allocate %zu bytes to read '%s'", n, path);
    }
    bool ok = read_all(fd, buf, n, &got);
    int e = errno;
    close(fd);
    if (!ok || got != n) {
        free(buf);
        return q8_fail(err, Q8_ERR_IO, "cannot read '%s': %s", path,
                       ok ? "it changed size while being read" : strerror(e));
    }
    buf[n] = 0;
    *data = buf;
    *len = n;
    return Q8_OK;
}

q8_status q8_map_file(const char *path, q8_mapping *m, q8_error *err) {
    m->base = NULL;
    m->size = 0;
    int fd;
    size_t size;
    Q8_TRY(q8_open_regular(path, &fd, &size, err));
    if (size == 0) {
        close(fd);
        return q8_fail(err, Q8_ERR_FORMAT, "'%s' is empty", path);
    }
    void *p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    int e = errno;
    close(fd);
    if (p == MAP_FAILED) return q8_fail(err, Q8_ERR_IO, "cannot map '%s': %s", path, strerror(e));
    m->base = p;
    m->size = size;
    return Q8_OK;
}

void q8_mapping_drop(const q8_mapping *m, const void *p, size_t n) {
    const uint8_t *b = m->base, *q = p;
    if (!b || !n || q < b || q - b >= (ptrdiff_t)m->size) return;
    size_t page = page_bytes();
    size_t lo = (size_t)(q - b) / page * page, hi = (size_t)(q - b) + n;
    if (hi > m->size) hi = m->size;
    /* read-only and never written: the pages come back from the file if
     * touched again */
    madvise((uint8_t *)m->base + lo, hi - lo, MADV_DONTNEED);
}

void q8_unmap_file(q8_mapping *m) {
    if (m->base) munmap(m->base, m->size);
    m->base = NULL;
    m->size = 0;
}

int q8_same_file(const char *a, const char *b) {
    struct stat sa, sb;
    return a && b && stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

q8_status q8_check_output_path(const char *path, q8_error *err) {
    if (!path || !*path) return q8_fail(err, Q8_ERR_ARG, "an output path is empty");
    struct stat st;
    if (stat(path, &st) != 0) {
        /* nothing there (a dangling link: the rename replaces the link) */
        if (errno == ENOENT) return Q8_OK;
        return q8_fail(err, Q8_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    }
    if (S_ISREG(st.st_mode)) return Q8_OK;
    return q8_fail(err, Q8_ERR_IO, "refusing to replace '%s': it is %s, not a regular file",
                   path, q8_file_kind(st.st_mode));
}

/* A file being written: unnamed (O_TMPFILE) until it is complete, or, where
 * the file system lacks O_TMPFILE, named "<path>.tmpXXXXXX" from the start. */
typedef struct temp_file {
    int fd;
    char *name;             /* the named temp, or NULL */
} temp_file;

static char *dir_of(const char *path) {
    const char *slash = strrchr(path, '/');
    if (!slash) return q8_strdup(".");
    if (slash == path) return q8_strdup("/");
    size_t n = (size_t)(slash - path);
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, path, n);
        d[n] = 0;
    }
    return d;
}

static mode_t current_umask(void) {
    mode_t mask = umask(0);
    umask(mask);
    return mask;
}

static q8_status temp_open(const char *path, bool unnamed, temp_file *t, q8_error *err) {
    t->fd = -1;
    t->name = NULL;
#ifdef O_TMPFILE
    char *dir = unnamed ? dir_of(path) : NULL;
    if (unnamed && !dir) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    if (dir) t->fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666); /* umask applies */
    free(dir);
    if (t->fd >= 0) return Q8_OK;
#else
    (void)unnamed;
#endif
    size_t plen = strlen(path) + 16;
    if (!(t->name = malloc(plen))) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    snprintf(t->name, plen, "%s.tmpXXXXXX", path);
    t->fd = mkstemp(t->name);
    if (t->fd < 0) {
        int e = errno;
        free(t->name);
        t->name = NULL;
        return q8_fail(err, Q8_ERR_IO, "cannot create a file next to '%s': %s", path, strerror(e));
    }
    /* mkstemp creates 0600; give the file the usual permissions. */
    fchmod(t->fd, 0666 & ~current_umask());
    return Q8_OK;
}

static void temp_discard(temp_file *t) {
    if (t->fd >= 0) close(t->fd);
    if (t->name) unlink(t->name);
    free(t->name);
    t->fd = -1;
    t->name = NULL;
}

static q8_status temp_write(temp_file *t, const char *path, const uint8_t *p, size_t left,
                            q8_error *err) {
    while (left) {
        ssize_t w = write(t->fd, p, left);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        p += w;
        left -= (size_t)w;
    }
    int e = left ? (errno ? errno : EIO) : 0;
    if (!e && fsync(t->fd) != 0) e = errno;
    if (close(t->fd) != 0 && !e) e = errno;
    t->fd = -1;
    return e ? q8_fail(err, Q8_ERR_IO, "cannot write '%s': %s", path, strerror(e)) : Q8_OK;
}

/* Give an unnamed temp a name beside path (just before the rename). */
static q8_status temp_name(temp_file *t, int fd, const char *path, q8_error *err) {
    size_t plen = strlen(path) + 32;
    if (!(t->name = malloc(plen))) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    unsigned x = (unsigned)ts.tv_nsec ^ (unsigned)getpid() * 2654435761u ^ (unsigned)(uintptr_t)t;
    for (int tries = 0; tries < 100; tries++) {
        x = x * 1103515245u + 12345u;
        snprintf(t->name, plen, "%s.tmp%06x", path, x & 0xffffff);
        if (linkat(AT_FDCWD, proc, AT_FDCWD, t->name, AT_SYMLINK_FOLLOW) == 0) return Q8_OK;
        if (errno != EEXIST) break;
    }
    int e = errno;
    free(t->name);
    t->name = NULL;
    return q8_fail(err, Q8_ERR_IO, "cannot write '%s': %s", path, strerror(e));
}

q8_status q8_write_files_atomic(const char *const *paths, const void *const *data,
                                const size_t *len, int n, q8_error *err) {
    if (n < 0 || (n > 0 && (!paths || !data || !len)))
        return q8_fail(err, Q8_ERR_ARG, "q8_write_files_atomic: bad arguments");
    for (int i = 0; i < n; i++) Q8_TRY(q8_check_output_path(paths[i], err));
    temp_file *t = calloc((size_t)n + 1, sizeof *t);
    int *keep = calloc((size_t)n + 1, sizeof *keep); /* unnamed temps stay open to be linked */
    if (!t || !keep) {
        free(t);
        free(keep);
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i < n; i++) t[i].fd = keep[i] = -1;
    q8_status s = Q8_OK;
    for (int i = 0; i < n && s == Q8_OK; i++) {
        s = temp_open(paths[i], true, &t[i], err);
        if (s == Q8_OK && !t[i].name && (keep[i] = dup(t[i].fd)) < 0)
            s = q8_fail(err, Q8_ERR_IO, "cannot write '%s': %s", paths[i], strerror(errno));
        if (s == Q8_OK) s = temp_write(&t[i], paths[i], data[i], len[i], err);
    }
    /* All complete: name the unnamed ones, check the targets again (they
     * may have changed meanwhile), rename. */
    for (int i = 0; i < n && s == Q8_OK; i++) {
        if (t[i].name || temp_name(&t[i], keep[i], paths[i], NULL) == Q8_OK) continue;
        /* no /proc to link through: write it again, named from the start */
        s = temp_open(paths[i], false, &t[i], err);
        if (s == Q8_OK) s = temp_write(&t[i], paths[i], data[i], len[i], err);
    }
    for (int i = 0; i < n && s == Q8_OK; i++) {
        s = q8_check_output_path(paths[i], err);
        if (s == Q8_OK && rename(t[i].name, paths[i]) != 0)
            s = q8_fail(err, Q8_ERR_IO, "cannot write '%s': %s", paths[i], strerror(errno));
        if (s == Q8_OK) {
            free(t[i].name);
            t[i].name = NULL;
        }
    }
    for (int i = 0; i < n; i++) {
        temp_discard(&t[i]);
        if (keep[i] >= 0) close(keep[i]);
    }
    free(t);
    free(keep);
    return s;
}

q8_status q8_write_file_atomic(const char *path, const void *data, size_t len,
                               q8_error *err) {
    const char *const paths[1] = {path};
    const void *const bufs[1] = {data};
    return q8_write_files_atomic(paths, bufs, &len, 1, err);
}
