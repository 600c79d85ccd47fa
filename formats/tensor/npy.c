#include "npy.h"

#include <ctype.h>
#include <string.h>

static const struct { const char *code; q8_dtype dt; } npy_types[] = {
    {"f4", Q8_F32}, {"f8", Q8_F64}, {"f2", Q8_F16}, {"i1", Q8_I8},  {"u1", Q8_U8},
    {"i2", Q8_I16}, {"u2", Q8_U16}, {"i4", Q8_I32}, {"u4", Q8_U32}, {"i8", Q8_I64},
    {"u8", Q8_U64}, {"b1", Q8_BOOL},
};

/* Find the value text after 'key': in the header dict. */
static const char *dict_value(const char *h, const char *key) {
    char pat[32];
    snprintf(pat, sizeof pat, "'%s'", key);
    const char *p = strstr(h, pat);
    if (!p) {
        snprintf(pat, sizeof pat, "\"%s\"", key);
        p = strstr(h, pat);
    }
    if (!p) return NULL;
    p += strlen(pat);
    while (*p == ' ') p++;
    if (*p != ':') return NULL;
    p++;
    while (*p == ' ') p++;
    return p;
}

static void byteswap(uint8_t *d, size_t n, size_t es) {
    for (size_t i = 0; i < n; i++, d += es)
        for (size_t a = 0, b = es - 1; a < b; a++, b--) {
            uint8_t t = d[a];
            d[a] = d[b];
            d[b] = t;
        }
}

q8_status q8_npy_parse(const uint8_t *buf, size_t len, const char *what,
                       q8_tensor **out, q8_error *err) {
    *out = NULL;
    if (len < 10 || memcmp(buf, "\x93NUMPY", 6) != 0)
        return q8_fail(err, Q8_ERR_FORMAT, "'%s' is not a .npy file (bad magic)", what);
    int major = buf[6];
    size_t hlen, hoff;
    if (major == 1) {
        hlen = (size_t)buf[8] | (size_t)buf[9] << 8;
        hoff = 10;
    } else if (major == 2 || major == 3) {
        if (len < 12) return q8_fail(err, Q8_ERR_FORMAT, "'%s': truncated .npy header", what);
        hlen = (size_t)buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 | (size_t)buf[11] << 24;
        hoff = 12;
    } else {
        return q8_fail(err, Q8_ERR_FORMAT, "'%s': unsupported .npy version %d", what, major);
    }
    if (hlen > len - hoff || hlen > 1 << 20)
        return q8_fail(err, Q8_ERR_FORMAT, "'%s': .npy header runs past the end", what);
    char *h = malloc(hlen + 1);
    if (!h) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    memcpy(h, buf + hoff, hlen);
    h[hlen] = 0;
    q8_status s = Q8_OK;
    q8_tensor *t = NULL;
    const char *descr = dict_value(h, "descr");
    const char *fo = dict_value(h, "fortran_order");
    const char *sh = dict_value(h, "shape");
    if (!descr || !fo || !sh) {
        s = q8_fail(err, Q8_ERR_FORMAT, "'%s': .npy header lacks descr, fortran_order or shape", what);
        goto out;
    }
    if (strncmp(fo, "False", 5) != 0) {
        s = q8_fail(err, Q8_ERR_UNSUPPORTED,
                    "'%s': Fortran-order arrays are not supported (save np.ascontiguousarray(x))", what);
        goto out;
    }
    char q = *descr;
    if ((q != '\'' && q != '"') || strlen(descr) < 5) {
        s = q8_fail(err, Q8_ERR_FORMAT, "'%s': bad .npy descr", what);
        goto out;
    }
    char endian = descr[1];
    q8_dtype dt = Q8_UNDEFINED;
    for (size_t i = 0; i < sizeof npy_types / sizeof npy_types[0]; i++)
        if (strncmp(descr + 2, npy_types[i].code, 2) == 0 && descr[4] == q) dt = npy_types[i].dt;
    if (dt == Q8_UNDEFINED || (endian != '<' && endian != '>' && endian != '|' && endian != '=')) {
        const char *e = strchr(descr + 1, q);
        s = q8_fail(err, Q8_ERR_UNSUPPORTED, "'%s': unsupported .npy dtype %.*s", what,
                    e ? (int)(e - descr + 1) : 8, descr);
        goto out;
    }
    if (*sh != '(') {
        s = q8_fail(err, Q8_ERR_FORMAT, "'%s': bad .npy shape", what);
        goto out;
    }
    int64_t dims[Q8_MAX_DIMS];
    int nd = 0;
    const char *p = sh + 1;
    for (;;) {
        while (*p == ' ' || *p == ',') p++;
        if (*p == ')') break;
        if (!isdigit((unsigned char)*p)) {
            s = q8_fail(err, Q8_ERR_FORMAT, "'%s': bad .npy shape", what);
            goto out;
        }
        if (nd == Q8_MAX_DIMS) {
            s = q8_fail(err, Q8_ERR_UNSUPPORTED, "'%s': more than %d dims", what, Q8_MAX_DIMS);
            goto out;
        }
        int64_t v = 0;
        while (isdigit((unsigned char)*p)) {
            if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *p - '0', &v)) {
                s = q8_fail(err, Q8_ERR_FORMAT, "'%s': .npy dim too large", what);
                goto out;
            }
            p++;
        }
        dims[nd++] = v;
    }
    int64_t numel;
    if (!q8_shape_numel(dims, nd, &numel)) {
        s = q8_fail(err, Q8_ERR_FORMAT, "'%s': .npy shape too large", what);
        goto out;
    }
    size_t es = q8_dtype_size(dt), nbytes = (size_t)numel * es, off = hoff + hlen;
    if (len - off != nbytes) {
        s = q8_fail(err, Q8_ERR_FORMAT, "'%s': .npy data has %zu bytes, shape needs %zu", what,
                    len - off, nbytes);
        goto out;
    }
    t = calloc(1, sizeof *t);
    if (!t || !(t->name = q8_strdup(""))) {
        s = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
        goto out;
    }
    t->producer = -1;
    t->q.axis = -1;
    q8_tensor_set_shape(t, dt, dims, nd);
    if ((s = q8_tensor_alloc_data(t, err)) != Q8_OK) goto out;
    if (nbytes) memcpy(t->data, buf + off, nbytes);
    if (endian == '>' && es > 1) byteswap(t->data, (size_t)numel, es);
    *out = t;
    t = NULL;
out:
    q8_tensor_free(t);
    free(h);
    return s;
}

q8_status q8_npy_read(const char *path, q8_tensor **out, q8_error *err) {
    uint8_t *buf;
    size_t len;
    Q8_TRY(q8_read_file(path, &buf, &len, err));
    q8_status s = q8_npy_parse(buf, len, path, out, err);
    free(buf);
    return s;
}

q8_status q8_npy_encode(q8_dtype dtype, const int64_t *dims, int ndim, const void *data,
                        uint8_t **buf, size_t *len, q8_error *err) {
    const char *code = NULL;
    for (size_t i = 0; i < sizeof npy_types / sizeof npy_types[0]; i++)
        if (npy_types[i].dt == dtype) code = npy_types[i].code;
    if (!code)
        return q8_fail(err, Q8_ERR_UNSUPPORTED, "cannot write %s to .npy", q8_dtype_name(dtype));
    char shape[256] = "";
    size_t sl = 0;
    for (int i = 0; i < ndim; i++)
        sl += (size_t)snprintf(shape + sl, sizeof shape - sl, "%lld,%s", (long long)dims[i],
                               i + 1 < ndim ? " " : "");
    if (ndim > 1) shape[sl - 1] = 0; /* "(2, 3)" not "(2, 3,)" */
    char h[512];
    int hl = snprintf(h, sizeof h, "{'descr': '%c%s', 'fortran_order': False, 'shape': (%s), }",
                      code[1] == '1' ? '|' : '<', code, shape);
    /* Pad with spaces so the data starts on a 64-byte boundary, newline last. */
    size_t total = q8_align_up(10 + (size_t)hl + 1, 64);
    int64_t numel;
    Q8_ASSERT(q8_shape_numel(dims, ndim, &numel));
    size_t nbytes = (size_t)numel * q8_dtype_size(dtype);
    uint8_t *b = malloc(total + nbytes);
    if (!b) return q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    memcpy(b, "\x93NUMPY\x01\x00", 8);
    size_t hlen = total - 10;
    b[8] = (uint8_t)(hlen & 0xff);
    b[9] = (uint8_t)(hlen >> 8);
    memcpy(b + 10, h, (size_t)hl);
    memset(b + 10 + hl, ' ', total - 10 - (size_t)hl - 1);
    b[total - 1] = '\n';
    if (nbytes) memcpy(b + total, data, nbytes);
    *buf = b;
    *len = total + nbytes;
    return Q8_OK;
}

q8_status q8_npy_write(const char *path, q8_dtype dtype, const int64_t *dims, int ndim,
                       const void *data, q8_error *err) {
    uint8_t *buf;
    size_t len;
    Q8_TRY(q8_npy_encode(dtype, dims, ndim, data, &buf, &len, err));
    q8_status s = q8_write_file_atomic(path, buf, len, err);
    free(buf);
    return s;
}
