#include "onnx_tensor.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto_guard.h"

q8_dtype q8_onnx_dtype(int32_t onnx_type) {
    switch (onnx_type) {
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: return Q8_F32;
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8: return Q8_U8;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT8: return Q8_I8;
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT16: return Q8_U16;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT16: return Q8_I16;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: return Q8_I32;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: return Q8_I64;
    case ONNX__TENSOR_PROTO__DATA_TYPE__STRING: return Q8_STRING;
    case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL: return Q8_BOOL;
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16: return Q8_F16;
    case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: return Q8_F64;
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT32: return Q8_U32;
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT64: return Q8_U64;
    case ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16: return Q8_BF16;
    default: return Q8_UNDEFINED;
    }
}

/* Parse a non-negative decimal integer string. */
static bool parse_u64(const char *s, uint64_t *v) {
    if (!s || !*s) return false;
    uint64_t r = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return false;
        if (__builtin_mul_overflow(r, 10, &r) || __builtin_add_overflow(r, (uint64_t)(*s - '0'), &r))
            return false;
    }
    *v = r;
    return true;
}

/* External data must stay inside the model's folder: no absolute paths, no
 * "..", and the resolved path (symlinks followed) must be under base_dir.
 * Opens the file and checks that it holds nbytes at the offset, before the
 * caller allocates anything; *f is positioned at the data. */
static q8_status open_external(const Onnx__TensorProto *tp, const char *base_dir,
                               const char *name, size_t nbytes, FILE **out, q8_error *err) {
    *out = NULL;
    const char *loc = NULL;
    uint64_t offset = 0, length = nbytes;
    bool has_len = false;
    for (size_t i = 0; i < tp->n_external_data; i++) {
        const Onnx__StringStringEntryProto *e = tp->external_data[i];
        if (!e->key) continue;
        if (strcmp(e->key, "location") == 0) loc = e->value;
        else if (strcmp(e->key, "offset") == 0) {
            if (!parse_u64(e->value, &offset))
                return q8_fail(err, Q8_ERR_FORMAT, "tensor '%s': bad external data offset '%s'",
                               name, e->value ? e->value : "");
        } else if (strcmp(e->key, "length") == 0) {
            if (!parse_u64(e->value, &length))
                return q8_fail(err, Q8_ERR_FORMAT, "tensor '%s': bad external data length '%s'",
                               name, e->value ? e->value : "");
            has_len = true;
        }
    }
    if (!loc || !*loc)
        return q8_fail(err, Q8_ERR_FORMAT, "tensor '%s': external data without a location", name);
    if (!base_dir)
        return q8_fail(err, Q8_ERR_FORMAT, "tensor '%s': external data is not allowed here", name);
    if (loc[0] == '/' || strstr(loc, "..") || strchr(loc, '\\'))
        return q8_fail(err, Q8_ERR_FORMAT,
                       "tensor '%s': external data location '%s' leaves the model's folder",
                       name, loc);
    if (has_len && length != nbytes)
        return q8_fail(err, Q8_ERR_FORMAT,
                       "tensor '%s': external data length %llu, but its shape needs %zu bytes",
                       name, (unsigned long long)length, nbytes);
    char path[PATH_MAX], real_dir[PATH_MAX], real_file[PATH_MAX];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", base_dir, loc) >= sizeof path)
        return q8_fail(err, Q8_ERR_FORMAT, "tensor '%s': external data path too long", name);
    if (!realpath(base_dir, real_dir) || !realpath(path, real_file))
        return q8_fail(err, Q8_ERR_IO, "tensor '%s': cannot open external data '%s': %s", name,
                       path, strerror(errno));
    size_t dl = strlen(real_dir);
    if (dl == 1) dl = 0; /* the model is in "/" */
    if (strncmp(real_file, real_dir, dl) != 0 || real_file[dl] != '/')
        return q8_fail(err, Q8_ERR_FORMAT,
                       "tensor '%s': external data '%s' resolves outside the model's folder",
                       name, loc);
    int fd;
    size_t fsize;
    if (q8_open_regular(real_file, &fd, &fsize, err) != Q8_OK)
        return q8_fail_prefix(err, "tensor '%s': external data", name);
    q8_status s = Q8_OK;
    FILE *f = NULL;
    if (offset > (uint64_t)fsize || nbytes > (uint64_t)fsize - offset) {
        s = q8_fail(err, Q8_ERR_FORMAT,
                    "tensor '%s': external data '%s' has %zu bytes, needs %zu at offset %llu",
                    name, path, fsize, nbytes, (unsigned long long)offset);
    } else if (!(f = fdopen(fd, "rb"))) {
        s = q8_fail(err, Q8_ERR_IO, "tensor '%s': cannot open external data '%s': %s", name,
                    path, strerror(errno));
    } else if (fseeko(f, (off_t)offset, SEEK_SET) != 0) {
        s = q8_fail(err, Q8_ERR_IO, "tensor '%s': cannot read external data '%s'", name, path);
    }
    if (s != Q8_OK) {
        if (f) fclose(f);
        else close(fd);
        return s;
    }
    *out = f;
    return Q8_OK;
}

/* The typed field that holds dt's values when there is no raw_data. */
static size_t typed_count(const Onnx__TensorProto *tp, q8_dtype dt, const char **field) {
    switch (dt) {
    case Q8_F32: *field = "float_data"; return tp->n_float_data;
    case Q8_F64: *field = "double_data"; return tp->n_double_data;
    case Q8_I64: *field = "int64_data"; return tp->n_int64_data;
    case Q8_U32: case Q8_U64: *field = "uint64_data"; return tp->n_uint64_data;
    default: *field = "int32_data"; return tp->n_int32_data; /* every type of <= 32 bits */
    }
}

static void copy_typed(const Onnx__TensorProto *tp, q8_dtype dt, int64_t numel, uint8_t *dst) {
    size_t es = q8_dtype_size(dt);
    switch (dt) {
    case Q8_F32: memcpy(dst, tp->float_data, (size_t)numel * es); break;
    case Q8_F64: memcpy(dst, tp->double_data, (size_t)numel * es); break;
    case Q8_I64: memcpy(dst, tp->int64_data, (size_t)numel * es); break;
    case Q8_U32: case Q8_U64:
        for (int64_t i = 0; i < numel; i++) {
            if (dt == Q8_U32) ((uint32_t *)dst)[i] = (uint32_t)tp->uint64_data[i];
            else ((uint64_t *)dst)[i] = tp->uint64_data[i];
        }
        break;
    default:
        for (int64_t i = 0; i < numel; i++) {
            int32_t v = tp->int32_data[i];
            switch (es) {
            case 1: dst[i] = (uint8_t)v; break;
            case 2: ((uint16_t *)dst)[i] = (uint16_t)v; break;
            default: ((int32_t *)dst)[i] = v; break;
            }
        }
        break;
    }
}

/* n bytes from src, which lies in map when map is given: copied a few MiB
 * at a time, each piece's file pages dropped once copied, so a large
 * weight is never resident twice. */
static void copy_raw(uint8_t *dst, const uint8_t *src, size_t n, const q8_mapping *map) {
    const size_t piece = map ? (size_t)4 << 20 : n;
    for (size_t o = 0; o < n; o += piece) {
        size_t k = n - o < piece ? n - o : piece;
        memcpy(dst + o, src + o, k); /* little-endian hosts only */
        if (map) q8_mapping_drop(map, src + o, k);
    }
}

q8_status q8_onnx_tensor_fill(const Onnx__TensorProto *tp, const char *base_dir,
                              q8_tensor *t, q8_error *err) {
    return q8_onnx_tensor_fill_mapped(tp, base_dir, NULL, t, err);
}

q8_status q8_onnx_tensor_fill_mapped(const Onnx__TensorProto *tp, const char *base_dir,
                                     const q8_mapping *map, q8_tensor *t, q8_error *err) {
    const char *name = t->name ? t->name : (tp->name ? tp->name : "");
    q8_dtype dt = q8_onnx_dtype(tp->data_type);
    if (dt == Q8_UNDEFINED)
        return q8_fail(err, Q8_ERR_UNSUPPORTED, "tensor '%s': unknown data type %d", name,
                       (int)tp->data_type);
    if (dt == Q8_STRING)
        return q8_fail(err, Q8_ERR_UNSUPPORTED, "tensor '%s': string tensors are not supported",
                       name);
    if (tp->n_dims > Q8_MAX_DIMS)
        return q8_fail(err, Q8_ERR_UNSUPPORTED, "tensor '%s': %zu dims, at most %d supported",
                       name, tp->n_dims, Q8_MAX_DIMS);
    if (tp->segment)
        return q8_fail(err, Q8_ERR_UNSUPPORTED, "tensor '%s': segmented tensors are not supported",
                       name);
    int64_t numel;
    if (!q8_shape_numel(tp->dims, (int)tp->n_dims, &numel))
        return q8_fail(err, Q8_ERR_FORMAT, "tensor '%s': shape has negative dims or is too large",
                       name);
    size_t es = q8_dtype_size(dt), nbytes = (size_t)numel * es;
    bool external = tp->has_data_location &&
                    tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    /* Check that the data is all there before allocating: a few bytes of
     * model must not make us allocate (and zero) gigabytes. */
    FILE *f = NULL;
    if (external) {
        Q8_TRY(open_external(tp, base_dir, name, nbytes, &f, err));
    } else if (tp->has_raw_data) {
        if (tp->raw_data.len != nbytes)
            return q8_fail(err, Q8_ERR_FORMAT,
                           "tensor '%s': raw_data has %zu bytes, its %s shape needs %zu", name,
                           tp->raw_data.len, q8_dtype_name(dt), nbytes);
    } else {
        const char *field;
        size_t have = typed_count(tp, dt, &field);
        if (have != (size_t)numel)
            return q8_fail(err, Q8_ERR_FORMAT,
                           "tensor '%s': %s has %zu values, its shape needs %lld", name, field,
                           have, (long long)numel);
    }
    q8_tensor_set_shape(t, dt, tp->dims, (int)tp->n_dims);
    q8_status s = q8_tensor_alloc_data(t, err);
    if (s == Q8_OK) {
        uint8_t *dst = t->data;
        if (external) {
            if (nbytes && fread(dst, 1, nbytes, f) != nbytes)
                s = q8_fail(err, Q8_ERR_IO, "tensor '%s': cannot read its external data", name);
        } else if (tp->has_raw_data) {
            copy_raw(dst, tp->raw_data.data, nbytes, map);
        } else if (numel) {
            copy_typed(tp, dt, numel, dst);
        }
    }
    if (f) fclose(f);
    if (s != Q8_OK) q8_tensor_free_data(t);
    return s;
}

q8_status q8_pb_parse(const uint8_t *buf, size_t len, const char *what,
                      q8_tensor **out, q8_error *err) {
    *out = NULL;
    const char *why;
    if (!q8_proto_check(&onnx__tensor_proto__descriptor, buf, len, Q8_PROTO_MAX_DEPTH, &why))
        return q8_fail(err, Q8_ERR_FORMAT, "'%s' is not a valid TensorProto: %s", what, why);
    Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, len, buf);
    if (!tp) return q8_fail(err, Q8_ERR_FORMAT, "'%s' is not a valid TensorProto", what);
    q8_tensor *t = calloc(1, sizeof *t);
    q8_status s = Q8_OK;
    if (!t || !(t->name = q8_strdup(tp->name ? tp->name : ""))) {
        s = q8_fail(err, Q8_ERR_NOMEM, "out of memory");
    } else {
        t->producer = -1;
        t->q.axis = -1;
        s = q8_onnx_tensor_fill(tp, NULL, t, err);
        if (s != Q8_OK) q8_fail_prefix(err, "'%s'", what);
    }
    onnx__tensor_proto__free_unpacked(tp, NULL);
    if (s != Q8_OK) {
        q8_tensor_free(t);
        return s;
    }
    *out = t;
    return Q8_OK;
}

q8_status q8_pb_read(const char *path, q8_tensor **out, q8_error *err) {
    uint8_t *buf;
    size_t len;
    Q8_TRY(q8_read_file(path, &buf, &len, err));
    q8_status s = q8_pb_parse(buf, len, path, out, err);
    free(buf);
    return s;
}
