/* Little-endian byte buffers: a growable writer and a bounds-checked reader
 * (every read checks the remaining length; a failed read poisons the
 * cursor so callers check once at the end of a record). */
#ifndef Q8_BYTES_H
#define Q8_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct q8_wbuf {
    uint8_t *p;
    size_t len, cap;
    bool oom;
} q8_wbuf;

bool q8_wbuf_put(q8_wbuf *b, const void *data, size_t n);
bool q8_wbuf_zeros(q8_wbuf *b, size_t n);
bool q8_wbuf_align(q8_wbuf *b, size_t a);
static inline bool q8_wbuf_u8(q8_wbuf *b, uint8_t v) { return q8_wbuf_put(b, &v, 1); }
static inline bool q8_wbuf_u16(q8_wbuf *b, uint16_t v) { return q8_wbuf_put(b, &v, 2); }
static inline bool q8_wbuf_u32(q8_wbuf *b, uint32_t v) { return q8_wbuf_put(b, &v, 4); }
static inline bool q8_wbuf_i32(q8_wbuf *b, int32_t v) { return q8_wbuf_put(b, &v, 4); }
static inline bool q8_wbuf_u64(q8_wbuf *b, uint64_t v) { return q8_wbuf_put(b, &v, 8); }
static inline bool q8_wbuf_i64(q8_wbuf *b, int64_t v) { return q8_wbuf_put(b, &v, 8); }
static inline bool q8_wbuf_f32(q8_wbuf *b, float v) { return q8_wbuf_put(b, &v, 4); }
static inline bool q8_wbuf_f64(q8_wbuf *b, double v) { return q8_wbuf_put(b, &v, 8); }
/* u32 length + bytes, no terminator */
bool q8_wbuf_str(q8_wbuf *b, const char *s);
void q8_wbuf_free(q8_wbuf *b);

typedef struct q8_rbuf {
    const uint8_t *p, *end;
    bool ok;
} q8_rbuf;

static inline q8_rbuf q8_rbuf_make(const void *p, size_t n) {
    return (q8_rbuf){(const uint8_t *)p, (const uint8_t *)p + n, true};
}
static inline size_t q8_rbuf_left(const q8_rbuf *r) { return r->ok ? (size_t)(r->end - r->p) : 0; }
/* Pointer to the next n bytes (NULL and poisoned if fewer remain). */
const void *q8_rbuf_take(q8_rbuf *r, size_t n);
uint8_t q8_rbuf_u8(q8_rbuf *r);
uint16_t q8_rbuf_u16(q8_rbuf *r);
uint32_t q8_rbuf_u32(q8_rbuf *r);
int32_t q8_rbuf_i32(q8_rbuf *r);
uint64_t q8_rbuf_u64(q8_rbuf *r);
int64_t q8_rbuf_i64(q8_rbuf *r);
float q8_rbuf_f32(q8_rbuf *r);
double q8_rbuf_f64(q8_rbuf *r);
/* Malloc'd NUL-terminated copy of a string of at most max bytes; NULL when
 * the record is bad (cursor poisoned) or on out-of-memory. */
char *q8_rbuf_str(q8_rbuf *r, size_t max);

#endif
