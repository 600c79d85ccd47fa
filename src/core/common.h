/* Internal helpers shared by the whole library: assertions for bugs, error
 * reporting for bad input, checked arithmetic and allocation. */
#ifndef Q8_COMMON_H
#define Q8_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "q8.h"

#define Q8_ALIGN 64

/* A bug in q8, not bad input: print where and abort. */
#define Q8_ASSERT(cond)                                                        \
    do {                                                                       \
        if (!(cond)) q8_assert_fail(__FILE__, __LINE__, #cond);                \
    } while (0)

_Noreturn void q8_assert_fail(const char *file, int line, const char *cond);

/* Fill err (may be NULL) and return st. */
q8_status q8_fail(q8_error *err, q8_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Prefix an already filled message: "ctx: old message"; returns the status
 * err holds (callers that may get a NULL err keep their own status). */
q8_status q8_fail_prefix(q8_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define Q8_TRY(expr)                                                           \
    do {                                                                       \
        q8_status q8_try_st_ = (expr);                                         \
        if (q8_try_st_ != Q8_OK) return q8_try_st_;                            \
    } while (0)

/* Allocation: abort-free; callers turn NULL into Q8_ERR_NOMEM. */
void *q8_aligned_alloc(size_t bytes);   /* Q8_ALIGN-aligned, zeroed */
/* Give the heap's free pages back to the system (glibc keeps them, e.g.
 * after a model's protobuf is freed below later allocations). */
void q8_heap_trim(void);
void q8_aligned_free(void *p);
char *q8_strdup(const char *s);

/* Overflow-checked size arithmetic: return false on overflow. */
static inline bool q8_mul_size(size_t a, size_t b, size_t *out) {
    return !__builtin_mul_overflow(a, b, out);
}
static inline bool q8_add_size(size_t a, size_t b, size_t *out) {
    return !__builtin_add_overflow(a, b, out);
}
static inline size_t q8_align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

/* Number of elements of a shape; false on overflow or negative dims. The
 * limit keeps every byte count below 2^62. */
bool q8_shape_numel(const int64_t *dims, int ndim, int64_t *out);

/* "1x3x224x224" style rendering for messages. */
const char *q8_shape_str(const int64_t *dims, int ndim, char *buf, size_t n);

bool q8_dtype_is_float(q8_dtype t);
bool q8_dtype_is_int(q8_dtype t);

/* Normalize an axis in [-rank, rank) to [0, rank); false if out of range. */
static inline bool q8_norm_axis(int64_t axis, int rank, int *out) {
    if (axis < -rank || axis >= rank) return false;
    *out = (int)(axis < 0 ? axis + rank : axis);
    return true;
}

/* ---- files: every path q8 reads or writes goes through these ----
 * Reading opens without blocking (a FIFO would wait for a writer forever),
 * then fstat()s the open file and refuses anything but a regular file
 * before a byte is read. Writing refuses to replace anything but a regular
 * file or nothing (links followed), and goes through a temp file that has
 * no name until it is complete (see q8_write_files_atomic in q8.h). */

/* Open path read-only; *fd is an ordinary (blocking) descriptor of a
 * regular file, *size its size. Errors name the path and what it is ("a
 * FIFO, not a regular file"). */
q8_status q8_open_regular(const char *path, int *fd, size_t *size, q8_error *err);
/* The first n bytes (fewer if the file is shorter: *got says how many). */
q8_status q8_read_head(const char *path, void *buf, size_t n, size_t *got, q8_error *err);
/* "a FIFO", "a folder", "a character device", ... for an st_mode. */
const char *q8_file_kind(unsigned mode);

/* A read-only mapping of a whole file. */
typedef struct q8_mapping {
    void *base;             /* NULL: none */
    size_t size;
} q8_mapping;

/* Map a regular, non-empty file read-only. */
q8_status q8_map_file(const char *path, q8_mapping *m, q8_error *err);
void q8_unmap_file(q8_mapping *m);
/* Drop the resident pages of n bytes at p (inside m) once read: they stop
 * counting in the process's memory and are read from the file again if
 * touched. */
void q8_mapping_drop(const q8_mapping *m, const void *p, size_t n);

/* Read a whole regular file; *data is malloc'd (NUL-terminated for
 * convenience). */
q8_status q8_read_file(const char *path, uint8_t **data, size_t *len, q8_error *err);
/* One file, as q8_write_files_atomic. */
q8_status q8_write_file_atomic(const char *path, const void *data, size_t len,
                               q8_error *err);

#endif
