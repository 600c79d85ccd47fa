#include "bytes.h"

#include <stdlib.h>

static bool grow(q8_wbuf *b, size_t n) {
    if (b->oom) return false;
    if (b->len + n < b->len) return !(b->oom = true);
    if (b->len + n <= b->cap) return true;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n) {
        if (cap > SIZE_MAX / 2) return !(b->oom = true);
        cap *= 2;
    }
    uint8_t *p = realloc(b->p, cap);
    if (!p) return !(b->oom = true);
    b->p = p;
    b->cap = cap;
    return true;
}

bool q8_wbuf_put(q8_wbuf *b, const void *data, size_t n) {
    if (!grow(b, n)) return false;
    if (n) memcpy(b->p + b->len, data, n);
    b->len += n;
    return true;
}

bool q8_wbuf_zeros(q8_wbuf *b, size_t n) {
    if (!grow(b, n)) return false;
    if (n) memset(b->p + b->len, 0, n);
    b->len += n;
    return true;
}

bool q8_wbuf_align(q8_wbuf *b, size_t a) {
    size_t pad = (a - b->len % a) % a;
    return q8_wbuf_zeros(b, pad);
}

bool q8_wbuf_str(q8_wbuf *b, const char *s) {
    size_t n = s ? strlen(s) : 0;
    return q8_wbuf_u32(b, (uint32_t)n) && q8_wbuf_put(b, s, n);
}

void q8_wbuf_free(q8_wbuf *b) {
    free(b->p);
    memset(b, 0, sizeof *b);
}

const void *q8_rbuf_take(q8_rbuf *r, size_t n) {
    if (!r->ok || (size_t)(r->end - r->p) < n) {
        r->ok = false;
        return NULL;
    }
    const void *p = r->p;
    r->p += n;
    return p;
}

#define RB_GET(name, type)                                                     \
    type q8_rbuf_##name(q8_rbuf *r) {                                          \
        type v = 0;                                                            \
        const void *p = q8_rbuf_take(r, sizeof v);                             \
        if (p) memcpy(&v, p, sizeof v);                                        \
        return v;                                                              \
    }
RB_GET(u8, uint8_t)
RB_GET(u16, uint16_t)
RB_GET(u32, uint32_t)
RB_GET(i32, int32_t)
RB_GET(u64, uint64_t)
RB_GET(i64, int64_t)
RB_GET(f32, float)
RB_GET(f64, double)

char *q8_rbuf_str(q8_rbuf *r, size_t max) {
    uint32_t n = q8_rbuf_u32(r);
    if (!r->ok || n > max) {
        r->ok = false;
        return NULL;
    }
    const char *p = q8_rbuf_take(r, n);
    if (!p) return NULL;
    if (memchr(p, 0, n)) {
        r->ok = false;
        return NULL;
    }
    char *s = malloc((size_t)n + 1);
    if (!s) return NULL;
    memcpy(s, p, n);
    s[n] = 0;
    return s;
}

bool q8_wbuf_uv(q8_wbuf *b, uint64_t v) {
    uint8_t tmp[10];
    size_t n = 0;
    do {
        tmp[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v) tmp[n] |= 0x80;
        n++;
    } while (v);
    return q8_wbuf_put(b, tmp, n);
}

bool q8_wbuf_sv(q8_wbuf *b, int64_t v) {
    return q8_wbuf_uv(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

bool q8_wbuf_vstr(q8_wbuf *b, const char *s) {
    size_t n = s ? strlen(s) : 0;
    return q8_wbuf_uv(b, n) && q8_wbuf_put(b, s, n);
}

bool q8_wbuf_fstr(q8_wbuf *b, const char *prev, const char *s) {
    size_t shared = 0;
    if (!s) s = "";
    while (prev && prev[shared] && prev[shared] == s[shared]) shared++;
    return q8_wbuf_uv(b, shared) && q8_wbuf_vstr(b, s + shared);
}

uint64_t q8_rbuf_uv(q8_rbuf *r) {
    uint64_t v = 0;
    for (int i = 0; i < 10; i++) {
        const uint8_t *p = q8_rbuf_take(r, 1);
        if (!p) return 0;
        if (i == 9 && *p > 1) break; /* past 64 bits */
        v |= (uint64_t)(*p & 0x7f) << (7 * i);
        if (!(*p & 0x80)) return v;
    }
    r->ok = false;
    return 0;
}

int64_t q8_rbuf_sv(q8_rbuf *r) {
    uint64_t u = q8_rbuf_uv(r);
    return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

/* n bytes at the cursor after a prefix of `shared` bytes of prev. */
static char *take_text(q8_rbuf *r, const char *prev, uint64_t shared, size_t max) {
    uint64_t n = q8_rbuf_uv(r);
    if (!r->ok || n > max || shared > max - n) {
        r->ok = false;
        return NULL;
    }
    const char *p = q8_rbuf_take(r, (size_t)n);
    if (!p) return NULL;
    if (memchr(p, 0, (size_t)n)) {
        r->ok = false;
        return NULL;
    }
    char *s = malloc((size_t)(shared + n) + 1);
    if (!s) return NULL;
    if (shared) memcpy(s, prev, (size_t)shared);
    memcpy(s + shared, p, (size_t)n);
    s[shared + n] = 0;
    return s;
}

char *q8_rbuf_vstr(q8_rbuf *r, size_t max) { return take_text(r, NULL, 0, max); }

char *q8_rbuf_fstr(q8_rbuf *r, const char *prev, size_t max) {
    uint64_t shared = q8_rbuf_uv(r);
    if (!r->ok || shared > (prev ? strlen(prev) : 0)) {
        r->ok = false;
        return NULL;
    }
    return take_text(r, prev, shared, max);
}
