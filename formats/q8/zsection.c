#include "zsection.h"

#include <limits.h>
#include <stdlib.h>
#include <zlib.h>

bool q8_zsection_deflate(const uint8_t *src, size_t n, q8_wbuf *out) {
    if (n > ULONG_MAX) return false;
    uLongf cap = compressBound((uLong)n);
    uint8_t *buf = malloc(cap ? cap : 1);
    if (!buf) return false;
    bool ok = compress2(buf, &cap, src, (uLong)n, 9) == Z_OK && q8_wbuf_put(out, buf, cap);
    free(buf);
    return ok;
}

q8_status q8_zsection_inflate(const char *what, const uint8_t *src, size_t n,
                              uint64_t declared, uint8_t **out, q8_error *err) {
    *out = NULL;
    /* bounded before allocating: a small file cannot claim a huge section */
    if (declared == 0 || declared > Q8_ZSECTION_MAX || declared / Q8_ZSECTION_RATIO > n ||
        n > compressBound((uLong)declared))
        return q8_fail(err, Q8_ERR_FORMAT,
                       "%s section: declares %llu bytes inflated from %zu stored (limits: 1 to "
                       "%llu bytes, %u times the stored size): corrupt file",
                       what, (unsigned long long)declared, n,
                       (unsigned long long)Q8_ZSECTION_MAX, Q8_ZSECTION_RATIO);
    uint8_t *buf = malloc((size_t)declared);
    if (!buf) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    z_stream z = {0};
    if (inflateInit(&z) != Z_OK) {
        free(buf);
        return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    }
    z.next_in = (Bytef *)src;
    z.avail_in = (uInt)n; /* n <= compressBound(declared), far below UINT_MAX */
    z.next_out = buf;
    z.avail_out = (uInt)declared;
    int rc = inflate(&z, Z_FINISH);
    /* exactly the declared bytes, from exactly the stored ones */
    bool whole = rc == Z_STREAM_END && z.avail_out == 0 && z.avail_in == 0;
    uint64_t got = z.total_out;
    inflateEnd(&z);  /* z's counters stay readable */
    if (!whole) {
        free(buf);
        const char *why = rc == Z_STREAM_END && z.avail_in ? "bytes after the stream's end"
                          : rc == Z_STREAM_END              ? "fewer bytes than the table says"
                          : rc == Z_BUF_ERROR && !z.avail_in ? "truncated stream"
                          : rc == Z_BUF_ERROR               ? "more bytes than the table says"
                                                            : "bad compressed stream";
        return q8_fail(err, Q8_ERR_FORMAT,
                       "%s section: %s (%llu of %llu declared bytes inflated; corrupt file)",
                       what, why, (unsigned long long)got, (unsigned long long)declared);
    }
    *out = buf;
    return Q8_OK;
}
