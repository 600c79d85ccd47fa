#include "zsection.h"

#include <limits.h>
#include <stdlib.h>
#include <zlib.h>

/* One zlib stream of src at level 9 with the given memory level and
 * strategy: a new buffer (*out, the caller frees it) and its length, or 0
 * (and *out NULL) when out of memory or past what one deflate call can
 * take. */
static size_t deflate_with(const uint8_t *src, size_t n, int mem_level, int strategy,
                           uint8_t **out) {
    *out = NULL;
    z_stream z = {0};
    if (n > UINT_MAX || deflateInit2(&z, 9, Z_DEFLATED, 15, mem_level, strategy) != Z_OK)
        return 0;
    uLong cap = deflateBound(&z, (uLong)n); /* this stream's settings' bound */
    uint8_t *buf = cap <= UINT_MAX ? malloc(cap) : NULL;
    size_t len = 0;
    if (buf) {
        z.next_in = (Bytef *)src;
        z.avail_in = (uInt)n;
        z.next_out = buf;
        z.avail_out = (uInt)cap;
        if (deflate(&z, Z_FINISH) == Z_STREAM_END) len = (size_t)z.total_out;
    }
    deflateEnd(&z);
    if (len) *out = buf;
    else free(buf);
    return len;
}

bool q8_zsection_deflate(const uint8_t *src, size_t n, q8_wbuf *out) {
    uint8_t *buf;
    /* compress2's settings (memory level 8, the default strategy): the
     * same stream as before this helper */
    size_t len = deflate_with(src, n, 8, Z_DEFAULT_STRATEGY, &buf);
    bool ok = len && q8_wbuf_put(out, buf, len);
    free(buf);
    return ok;
}

bool q8_zdata_deflate(const uint8_t *src, size_t n, q8_wbuf *out) {
    if (n == 0 || n > UINT32_MAX) return false; /* the reader's bounds */
    uint8_t *a, *b;
    size_t la = deflate_with(src, n, 9, Z_DEFAULT_STRATEGY, &a);
    size_t lb = deflate_with(src, n, 9, Z_HUFFMAN_ONLY, &b);
    bool ok = (la || lb) && (lb && (!la || lb < la) ? q8_wbuf_put(out, b, lb)
                                                     : q8_wbuf_put(out, a, la));
    free(a);
    free(b);
    return ok;
}

/* Inflate exactly `declared` bytes from exactly the n stored ones into dst;
 * NULL, or why not (*got: the bytes inflated). */
static const char *inflate_exact(const uint8_t *src, size_t n, uint8_t *dst, uint64_t declared,
                                 uint64_t *got, bool *nomem) {
    z_stream z = {0};
    *got = 0;
    *nomem = false;
    if (inflateInit(&z) != Z_OK) {
        *nomem = true;
        return "out of memory";
    }
    z.next_in = (Bytef *)src;
    z.avail_in = (uInt)n; /* n <= compressBound(declared), far below UINT_MAX */
    z.next_out = dst;
    z.avail_out = (uInt)declared;
    int rc = inflate(&z, Z_FINISH);
    /* exactly the declared bytes, from exactly the stored ones */
    bool whole = rc == Z_STREAM_END && z.avail_out == 0 && z.avail_in == 0;
    *got = z.total_out;
    inflateEnd(&z); /* z's counters stay readable */
    if (whole) return NULL;
    return rc == Z_STREAM_END && z.avail_in ? "bytes after the stream's end"
           : rc == Z_STREAM_END              ? "fewer bytes than the table says"
           : rc == Z_BUF_ERROR && !z.avail_in ? "truncated stream"
           : rc == Z_BUF_ERROR               ? "more bytes than the table says"
                                             : "bad compressed stream";
}

/* declared bytes from n stored: within the bounds (1 to max, at most
 * deflate's best ratio, no more stored than deflate could make). */
static bool sizes_ok(size_t n, uint64_t declared, uint64_t max) {
    return declared > 0 && declared <= max && declared / Q8_ZSECTION_RATIO <= n &&
           n <= compressBound((uLong)declared);
}

q8_status q8_zsection_inflate(const char *what, const uint8_t *src, size_t n,
                              uint64_t declared, uint8_t **out, q8_error *err) {
    *out = NULL;
    /* bounded before allocating: a small file cannot claim a huge section */
    if (!sizes_ok(n, declared, Q8_ZSECTION_MAX))
        return q8_fail(err, Q8_ERR_FORMAT,
                       "%s section: declares %llu bytes inflated from %zu stored (limits: 1 to "
                       "%llu bytes, %u times the stored size): corrupt file",
                       what, (unsigned long long)declared, n,
                       (unsigned long long)Q8_ZSECTION_MAX, Q8_ZSECTION_RATIO);
    uint8_t *buf = malloc((size_t)declared);
    if (!buf) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    uint64_t got;
    bool nomem;
    const char *why = inflate_exact(src, n, buf, declared, &got, &nomem);
    if (why) {
        free(buf);
        if (nomem) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        return q8_fail(err, Q8_ERR_FORMAT,
                       "%s section: %s (%llu of %llu declared bytes inflated; corrupt file)",
                       what, why, (unsigned long long)got, (unsigned long long)declared);
    }
    *out = buf;
    return Q8_OK;
}

q8_status q8_zdata_inflate(const char *name, const uint8_t *src, size_t n, uint8_t *dst,
                           uint64_t bytes, q8_error *err) {
    if (!sizes_ok(n, bytes, UINT32_MAX))
        return q8_fail(err, Q8_ERR_FORMAT,
                       "tensor '%s': %llu bytes cannot be the deflated form of %zu stored "
                       "(at most %u times): corrupt file",
                       name, (unsigned long long)bytes, n, Q8_ZSECTION_RATIO);
    uint64_t got;
    bool nomem;
    const char *why = inflate_exact(src, n, dst, bytes, &got, &nomem);
    if (!why) return Q8_OK;
    if (nomem) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    return q8_fail(err, Q8_ERR_FORMAT,
                   "tensor '%s': deflated data: %s (%llu of %llu bytes inflated; corrupt file)",
                   name, why, (unsigned long long)got, (unsigned long long)bytes);
}
