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
/* Version 4's compact forms (docs/format.md, "Compact numbers"): an
 * unsigned LEB128 varint (7 bits a byte, low first, at most 10 bytes), a
 * signed one (zigzag: 0, -1, 1, -2 ... as 0, 1, 2, 3 ...), a string as
 * varint length + bytes, and a front-coded string: the length of the prefix
 * it shares with prev, then the rest as a varint string. */
bool q8_wbuf_uv(q8_wbuf *b, uint64_t v);
bool q8_wbuf_sv(q8_wbuf *b, int64_t v);
bool q8_wbuf_vstr(q8_wbuf *b, const char *s);
bool q8_wbuf_fstr(q8_wbuf *b, const char *prev, const char *s);
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
/* The compact forms; a varint longer than 10 bytes or past 2^64 poisons. */
uint64_t q8_rbuf_uv(q8_rbuf *r);
int64_t q8_rbuf_sv(q8_rbuf *r);
char *q8_rbuf_vstr(q8_rbuf *r, size_t max);
/* A front-coded string after prev (NULL: none before; nothing shared): the
 * shared prefix may not pass prev's end, the whole at most max bytes. */
char *q8_rbuf_fstr(q8_rbuf *r, const char *prev, size_t max);

#endif
