/* Tensor file formats: .npy read/write round trips and the corrupt .npy
 * corpus (tests/corpus/npy), ONNX TensorProto .pb reading, and atomic
 * writes (no temp file left, target untouched on failure). */
#define _GNU_SOURCE /* nftw */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "npy.h"
#include "onnx.pb-c.h"
#include "onnx_tensor.h"
#include "testutil.h"

#define NPY_CORPUS Q8_SOURCE_DIR "/tests/corpus/npy"

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *f) {
    (void)st, (void)flag, (void)f;
    return remove(p);
}

static char *make_tmpdir(void) {
    char *d = strdup("/tmp/q8formatsXXXXXX");
    cr_assert(d && mkdtemp(d), "mkdtemp: %s", strerror(errno));
    return d;
}

static void rm_tmpdir(char *d) {
    chmod(d, 0755);
    nftw(d, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(d);
}

static int count_entries(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

static void write_bytes(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    cr_assert(f && fwrite(data, 1, n, f) == n && fclose(f) == 0, "cannot write %s", path);
}

static char *read_text(const char *path) {
    uint8_t *b;
    size_t n;
    q8_error err = {0};
    cr_assert_eq(q8_read_file(path, &b, &n, &err), Q8_OK, "%s", err.msg);
    return (char *)b;
}

/* ---- .npy round trips ---- */

static const q8_dtype npy_dtypes[] = {Q8_F32, Q8_F64, Q8_F16, Q8_I8,  Q8_U8,  Q8_I16,
                                      Q8_U16, Q8_I32, Q8_U32, Q8_I64, Q8_U64, Q8_BOOL};

static void fill_random(q8t_rng *r, q8_dtype dt, uint8_t *p, size_t nbytes) {
    for (size_t i = 0; i < nbytes; i++) p[i] = (uint8_t)q8t_next(r);
    if (dt == Q8_BOOL)
        for (size_t i = 0; i < nbytes; i++) p[i] &= 1;
}

Test(npy, round_trip_every_dtype_and_rank) {
    char *tmp = make_tmpdir();
    q8t_rng r = q8t_seed(7);
    for (size_t d = 0; d < sizeof npy_dtypes / sizeof npy_dtypes[0]; d++) {
        for (int rank = 0; rank <= 6; rank++) {
            for (int empty = 0; empty <= (rank > 0); empty++) {
                q8_dtype dt = npy_dtypes[d];
                int64_t dims[Q8_MAX_DIMS], numel = 1;
                for (int i = 0; i < rank; i++) {
                    dims[i] = (i % 3) + 1 + (i == 0 ? 12 : 0); /* 13, 2, 3, 1, 2, 3 */
                    if (empty && i == rank - 1) dims[i] = 0;
                    numel *= dims[i];
                }
                size_t nbytes = (size_t)numel * q8_dtype_size(dt);
                uint8_t *data = malloc(nbytes + 1);
                fill_random(&r, dt, data, nbytes);
                char path[4096];
                snprintf(path, sizeof path, "%s/t_%s_%d_%d.npy", tmp, q8_dtype_name(dt), rank,
                         empty);
                q8_error err = {0};
                cr_assert_eq(q8_npy_write(path, dt, dims, rank, data, &err), Q8_OK, "%s", err.msg);
                q8_tensor *t = NULL;
                cr_assert_eq(q8_npy_read(path, &t, &err), Q8_OK, "%s: %s", path, err.msg);
                cr_expect_eq(t->dtype, dt, "%s", path);
                cr_expect_eq(t->ndim, rank, "%s", path);
                for (int i = 0; i < rank && i < t->ndim; i++)
                    cr_expect_eq(t->dims[i], dims[i], "%s dim %d", path, i);
                cr_expect(t->shape_known && t->data);
                if (nbytes)
                    cr_expect_eq(memcmp(t->data, data, nbytes), 0, "%s: data differs", path);
                q8_tensor_free(t);
                /* The data starts on a 64-byte boundary, as numpy writes it. */
                uint8_t *buf;
                size_t len;
                cr_assert_eq(q8_npy_encode(dt, dims, rank, data, &buf, &len, &err), Q8_OK);
                cr_expect_eq((len - nbytes) % 64, 0, "%s: header of %zu bytes", path, len - nbytes);
                cr_expect_eq(buf[len - nbytes - 1], '\n');
                free(buf);
                free(data);
            }
        }
    }
    cr_expect_eq(count_entries(tmp), 12 * 13, "temp files left behind");
    rm_tmpdir(tmp);
}

Test(npy, reads_numpy_headers) {
    /* Written by hand as numpy would: big-endian data, version 2 and 3
     * headers, double quotes, a scalar. */
    const char *h1 = "{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }";
    uint8_t buf[256];
    size_t hl = strlen(h1);
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (uint8_t)(hl + 1);
    buf[9] = 0;
    memcpy(buf + 10, h1, hl);
    buf[10 + hl] = '\n';
    const uint8_t be[8] = {0, 0, 1, 2, 0xff, 0xff, 0xff, 0xfe};
    memcpy(buf + 11 + hl, be, 8);
    q8_tensor *t = NULL;
    q8_error err = {0};
    cr_assert_eq(q8_npy_parse(buf, 19 + hl, "be", &t, &err), Q8_OK, "%s", err.msg);
    cr_expect_eq(t->dtype, Q8_I32);
    cr_expect_eq(((int32_t *)t->data)[0], 258);
    cr_expect_eq(((int32_t *)t->data)[1], -2);
    q8_tensor_free(t);

    const char *h3 = "{\"descr\": \"<f8\", \"fortran_order\": False, \"shape\": ()}";
    hl = strlen(h3);
    memcpy(buf, "\x93NUMPY\x03\x00", 8);
    buf[8] = (uint8_t)(hl + 1);
    buf[9] = buf[10] = buf[11] = 0;
    memcpy(buf + 12, h3, hl);
    buf[12 + hl] = '\n';
    double v = -2.5;
    memcpy(buf + 13 + hl, &v, 8);
    cr_assert_eq(q8_npy_parse(buf, 21 + hl, "v3", &t, &err), Q8_OK, "%s", err.msg);
    cr_expect_eq(t->dtype, Q8_F64);
    cr_expect_eq(t->ndim, 0);
    cr_expect_eq(*(double *)t->data, -2.5);
    q8_tensor_free(t);
}

Test(npy, writer_refuses_what_npy_cannot_hold) {
    int64_t d = 2;
    uint16_t x[2] = {0};
    uint8_t *buf = NULL;
    size_t len;
    q8_error err = {0};
    cr_expect_neq(q8_npy_encode(Q8_BF16, &d, 1, x, &buf, &len, &err), Q8_OK);
    cr_expect(strstr(err.msg, "cannot write bfloat16 to .npy"), "%s", err.msg);
    cr_expect_neq(q8_npy_encode(Q8_STRING, &d, 1, x, &buf, &len, &err), Q8_OK);
    cr_expect_null(buf);
}

/* Every file of tests/corpus/npy must fail with its message. */
Test(npy, corrupt_corpus) {
    FILE *f = fopen(NPY_CORPUS "/MANIFEST", "r");
    cr_assert(f, "no %s/MANIFEST", NPY_CORPUS);
    char line[1024];
    int n = 0, bad = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n') continue;
        line[strcspn(line, "\n")] = 0;
        char *sub = strchr(line, '\t');
        cr_assert(sub, "bad MANIFEST line %s", line);
        *sub++ = 0;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", NPY_CORPUS, line);
        q8_tensor *t = (q8_tensor *)1;
        q8_error err = {0};
        q8_status s = q8_npy_read(path, &t, &err);
        n++;
        if (s == Q8_OK) {
            cr_log_error("%s: read, expected \"%s\"", line, sub);
            q8_tensor_free(t);
            bad++;
        } else if (!strstr(err.msg, sub) || t != NULL || err.status != s) {
            cr_log_error("%s: error \"%s\" lacks \"%s\"", line, err.msg, sub);
            bad++;
        }
    }
    fclose(f);
    cr_expect_gt(n, 25);
    cr_assert_eq(bad, 0, "%d of %d corrupt .npy files misbehave", bad, n);
}

/* ---- TensorProto .pb ---- */

static q8_status pb_roundtrip(Onnx__TensorProto *tp, q8_tensor **out, q8_error *err) {
    size_t n = onnx__tensor_proto__get_packed_size(tp);
    uint8_t *buf = malloc(n + 1);
    onnx__tensor_proto__pack(tp, buf);
    q8_status s = q8_pb_parse(buf, n, "test.pb", out, err);
    free(buf);
    return s;
}

static void init_tp(Onnx__TensorProto *tp, int32_t type, int64_t *dims, size_t ndims) {
    onnx__tensor_proto__init(tp);
    tp->name = "t";
    tp->has_data_type = 1;
    tp->data_type = type;
    tp->dims = dims;
    tp->n_dims = ndims;
}

Test(pb, typed_fields) {
    int64_t dims[2] = {2, 2};
    Onnx__TensorProto tp;
    q8_tensor *t;
    q8_error err = {0};

    float f[4] = {1.5f, -2, 0, 3e9f};
    init_tp(&tp, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, dims, 2);
    tp.float_data = f;
    tp.n_float_data = 4;
    cr_assert_eq(pb_roundtrip(&tp, &t, &err), Q8_OK, "%s", err.msg);
    cr_expect(t->dtype == Q8_F32 && t->ndim == 2 && t->dims[0] == 2 && t->dims[1] == 2);
    cr_expect_eq(memcmp(t->data, f, sizeof f), 0);
    cr_expect_str_eq(t->name, "t");
    q8_tensor_free(t);

    double d[4] = {1e300, -0.5, 2, 3};
    init_tp(&tp, ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE, dims, 2);
    tp.double_data = d;
    tp.n_double_data = 4;
    cr_assert_eq(pb_roundtrip(&tp, &t, &err), Q8_OK, "%s", err.msg);
    cr_expect(t->dtype == Q8_F64 && memcmp(t->data, d, sizeof d) == 0);
    q8_tensor_free(t);

    int64_t i64[4] = {INT64_MIN, -1, 0, INT64_MAX};
    init_tp(&tp, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, dims, 2);
    tp.int64_data = i64;
    tp.n_int64_data = 4;
    cr_assert_eq(pb_roundtrip(&tp, &t, &err), Q8_OK, "%s", err.msg);
    cr_expect(t->dtype == Q8_I64 && memcmp(t->data, i64, sizeof i64) == 0);
    q8_tensor_free(t);

    uint64_t u64[4] = {0, 1, UINT32_MAX, UINT64_MAX};
    init_tp(&tp, ONNX__TENSOR_PROTO__DATA_TYPE__UINT64, dims, 2);
    tp.uint64_data = u64;
    tp.n_uint64_data = 4;
    cr_assert_eq(pb_roundtrip(&tp, &t, &err), Q8_OK, "%s", err.msg);
    cr_expect(t->dtype == Q8_U64 && memcmp(t->data, u64, sizeof u64) == 0);
    q8_tensor_free(t);
    tp.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__UINT32;
    cr_assert_eq(pb_roundtrip(&tp, &t, &err), Q8_OK, "%s", err.msg);
    const uint32_t u32[4] = {0, 1, UINT32_MAX, UINT32_MAX};
    cr_expect(t->dtype == Q8_U32 && memcmp(t->data, u32, sizeof u32) == 0);
    q8_tensor_free(t);

    /* int32_data carries every type of 32 bits or less. */
    int32_t i32[4] = {-128, -1, 127, 1000000};
    struct { int32_t type; q8_dtype dt; } small[] = {
        {ONNX__TENSOR_PROTO__DATA_TYPE__INT32, Q8_I32},
        {ONNX__TENSOR_PROTO__DATA_TYPE__INT16, Q8_I16},
        {ONNX__TENSOR_PROTO__DATA_TYPE__UINT16, Q8_U16},
        {ONNX__TENSOR_PROTO__DATA_TYPE__INT8, Q8_I8},
        {ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, Q8_U8},
        {ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, Q8_BOOL},
        {ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16, Q8_F16},
        {ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16, Q8_BF16},
    };
    for (size_t k = 0; k < sizeof small / sizeof small[0]; k++) {
        init_tp(&tp, small[k].type, dims, 2);
        tp.int32_data = i32;
        tp.n_int32_data = 4;
        cr_assert_eq(pb_roundtrip(&tp, &t, &err), Q8_OK, "%s", err.msg);
        cr_expect_eq(t->dtype, small[k].dt);
        for (int i = 0; i < 4; i++) {
            int64_t want = i32[i], got;
            switch (q8_dtype_size(small[k].dt)) {
            case 1: got = small[k].dt == Q8_I8 ? ((int8_t *)t->data)[i] : ((uint8_t *)t->data)[i];
                    want = small[k].dt == Q8_I8 ? (int8_t)i32[i] : (uint8_t)i32[i]; break;
            case 2: got = small[k].dt == Q8_I16 ? ((int16_t *)t->data)[i]
                                                : ((uint16_t *)t->data)[i];
                    want = small[k].dt == Q8_I16 ? (int16_t)i32[i] : (uint16_t)i32[i]; break;
            default: got = ((int32_t *)t->data)[i]; break;
            }
            cr_expect_eq(got, want, "%s[%d]: %lld, expected %lld", q8_dtype_name(small[k].dt), i,
                         (long long)got, (long long)want);
        }
        q8_tensor_free(t);
    }
}

Test(pb, raw_data_every_dtype) {
    static const int32_t types[] = {
        ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT,  ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE,
        ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16, ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16,
        ONNX__TENSOR_PROTO__DATA_TYPE__INT8,   ONNX__TENSOR_PROTO__DATA_TYPE__UINT8,
        ONNX__TENSOR_PROTO__DATA_TYPE__INT16,  ONNX__TENSOR_PROTO__DATA_TYPE__UINT16,
        ONNX__TENSOR_PROTO__DATA_TYPE__INT32,  ONNX__TENSOR_PROTO__DATA_TYPE__UINT32,
        ONNX__TENSOR_PROTO__DATA_TYPE__INT64,  ONNX__TENSOR_PROTO__DATA_TYPE__UINT64,
        ONNX__TENSOR_PROTO__DATA_TYPE__BOOL,
    };
    q8t_rng r = q8t_seed(3);
    int64_t dims[3] = {3, 1, 5};
    uint8_t raw[15 * 8 + 1]; /* + 1: the too-long case */
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        q8_dtype dt = q8_onnx_dtype(types[k]);
        size_t nb = 15 * q8_dtype_size(dt);
        fill_random(&r, dt, raw, nb);
        Onnx__TensorProto tp;
        init_tp(&tp, types[k], dims, 3);
        tp.has_raw_data = 1;
        tp.raw_data.data = raw;
        tp.raw_data.len = nb;
        q8_tensor *t;
        q8_error err = {0};
        cr_assert_eq(pb_roundtrip(&tp, &t, &err), Q8_OK, "%s", err.msg);
        cr_expect(t->dtype == dt && t->ndim == 3 && t->dims[2] == 5);
        cr_expect_eq(memcmp(t->data, raw, nb), 0, "%s", q8_dtype_name(dt));
        q8_tensor_free(t);
        /* One byte short or long: refused. */
        tp.raw_data.len = nb - 1;
        cr_expect_neq(pb_roundtrip(&tp, &t, &err), Q8_OK);
        cr_expect(strstr(err.msg, "raw_data has"), "%s", err.msg);
        tp.raw_data.len = nb + 1;
        cr_expect_neq(pb_roundtrip(&tp, &t, &err), Q8_OK);
        cr_expect(strstr(err.msg, "raw_data has"), "%s", err.msg);
    }
    /* An empty tensor and a scalar. */
    Onnx__TensorProto tp;
    int64_t zero = 0;
    init_tp(&tp, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, &zero, 1);
    q8_tensor *t;
    q8_error err = {0};
    cr_assert_eq(pb_roundtrip(&tp, &t, &err), Q8_OK, "%s", err.msg);
    cr_expect(t->ndim == 1 && t->dims[0] == 0 && t->data);
    q8_tensor_free(t);
    float one = 4;
    init_tp(&tp, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, NULL, 0);
    tp.float_data = &one;
    tp.n_float_data = 1;
    cr_assert_eq(pb_roundtrip(&tp, &t, &err), Q8_OK, "%s", err.msg);
    cr_expect(t->ndim == 0 && *(float *)t->data == 4);
    q8_tensor_free(t);
}

Test(pb, refused) {
    int64_t dims[1] = {2};
    Onnx__TensorProto tp;
    q8_tensor *t = NULL;
    q8_error err = {0};
    float f[3] = {1, 2, 3};
    init_tp(&tp, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, dims, 1);
    tp.float_data = f;
    tp.n_float_data = 3;
    cr_expect_neq(pb_roundtrip(&tp, &t, &err), Q8_OK);
    cr_expect(strstr(err.msg, "'test.pb': tensor 't': float_data has 3 values, its shape needs 2"),
              "%s", err.msg);
    cr_expect_null(t);

    init_tp(&tp, ONNX__TENSOR_PROTO__DATA_TYPE__STRING, dims, 1);
    cr_expect_neq(pb_roundtrip(&tp, &t, &err), Q8_OK);
    cr_expect(strstr(err.msg, "string tensors are not supported"), "%s", err.msg);

    init_tp(&tp, 1234, dims, 1);
    cr_expect_neq(pb_roundtrip(&tp, &t, &err), Q8_OK);
    cr_expect(strstr(err.msg, "unknown data type 1234"), "%s", err.msg);

    /* A .pb on its own has no folder to take external data from. */
    Onnx__StringStringEntryProto loc = ONNX__STRING_STRING_ENTRY_PROTO__INIT, *locp = &loc;
    loc.key = "location";
    loc.value = "data.bin";
    init_tp(&tp, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, dims, 1);
    tp.has_data_location = 1;
    tp.data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    tp.external_data = &locp;
    tp.n_external_data = 1;
    cr_expect_neq(pb_roundtrip(&tp, &t, &err), Q8_OK);
    cr_expect(strstr(err.msg, "external data is not allowed here"), "%s", err.msg);

    /* Huge declared shape, tiny data: refused without allocating it. */
    int64_t big[2] = {1 << 20, 1 << 20};
    init_tp(&tp, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, big, 2);
    tp.float_data = f;
    tp.n_float_data = 3;
    cr_expect_neq(pb_roundtrip(&tp, &t, &err), Q8_OK);
    cr_expect(strstr(err.msg, "float_data has 3 values"), "%s", err.msg);

    /* Wire garbage. */
    const uint8_t junk[] = {0x0a, 0xff, 0xff, 0xff, 0x0f, 1, 2};
    cr_expect_neq(q8_pb_parse(junk, sizeof junk, "junk.pb", &t, &err), Q8_OK);
    cr_expect(strstr(err.msg, "'junk.pb' is not a valid TensorProto"), "%s", err.msg);
    cr_expect_neq(q8_pb_read("/nonexistent/x.pb", &t, &err), Q8_OK);
    cr_expect(strstr(err.msg, "cannot open '/nonexistent/x.pb'"), "%s", err.msg);
}

Test(pb, reads_onnx_test_data) {
    const char *p = "/usr/share/libonnx-testdata/data/node/test_relu/test_data_set_0/input_0.pb";
    if (access(p, R_OK) != 0) {
        cr_log_info("skipped: %s not installed", p);
        return;
    }
    q8_tensor *t;
    q8_error err = {0};
    cr_assert_eq(q8_pb_read(p, &t, &err), Q8_OK, "%s", err.msg);
    cr_expect(t->dtype == Q8_F32 && t->ndim == 3 && t->dims[0] == 3 && t->dims[1] == 4 &&
              t->dims[2] == 5);
    q8_tensor_free(t);
}

/* ---- atomic writes ---- */

static const float four[4] = {1, 2, 3, 4};
static const int64_t dim4 = 4;

Test(atomic_write, replaces_and_leaves_no_temp) {
    char *tmp = make_tmpdir();
    char path[4096];
    snprintf(path, sizeof path, "%s/y.npy", tmp);
    write_bytes(path, "old", 3);
    q8_error err = {0};
    mode_t old = umask(022);
    cr_assert_eq(q8_npy_write(path, Q8_F32, &dim4, 1, four, &err), Q8_OK, "%s", err.msg);
    umask(old);
    cr_expect_eq(count_entries(tmp), 1, "temp file left behind");
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_expect_eq(st.st_mode & 0777, 0644, "mode %o", (unsigned)(st.st_mode & 0777));
    q8_tensor *t;
    cr_assert_eq(q8_npy_read(path, &t, &err), Q8_OK, "%s", err.msg);
    cr_expect_eq(memcmp(t->data, four, sizeof four), 0);
    q8_tensor_free(t);
    rm_tmpdir(tmp);
}

Test(atomic_write, missing_folder) {
    char *tmp = make_tmpdir();
    char path[4096];
    snprintf(path, sizeof path, "%s/no/such/y.npy", tmp);
    q8_error err = {0};
    cr_expect_neq(q8_npy_write(path, Q8_F32, &dim4, 1, four, &err), Q8_OK);
    cr_expect(strstr(err.msg, "cannot create a file next to"), "%s", err.msg);
    cr_expect_eq(count_entries(tmp), 0);
    rm_tmpdir(tmp);
}

Test(atomic_write, target_is_a_folder) {
    char *tmp = make_tmpdir();
    char path[4096], inside[4096];
    snprintf(path, sizeof path, "%s/y.npy", tmp);
    cr_assert_eq(mkdir(path, 0755), 0);
    snprintf(inside, sizeof inside, "%s/keep", path);
    write_bytes(inside, "k", 1);
    q8_error err = {0};
    cr_expect_neq(q8_npy_write(path, Q8_F32, &dim4, 1, four, &err), Q8_OK);
    cr_expect(strstr(err.msg, "refusing to replace") && strstr(err.msg, "it is a folder"), "%s",
              err.msg);
    cr_expect_eq(count_entries(tmp), 1, "temp file left behind");
    cr_expect_eq(count_entries(path), 1);
    rm_tmpdir(tmp);
}

/* The write itself fails midway (file size limit, as on a full disk). */
Test(atomic_write, write_fails_midway) {
    char *tmp = make_tmpdir();
    char path[4096];
    snprintf(path, sizeof path, "%s/y.npy", tmp);
    write_bytes(path, "old", 3);
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = {.rlim_cur = 100, .rlim_max = RLIM_INFINITY};
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
    float big[1000] = {0};
    int64_t n = 1000;
    q8_error err = {0};
    q8_status s = q8_npy_write(path, Q8_F32, &n, 1, big, &err);
    rl.rlim_cur = RLIM_INFINITY;
    setrlimit(RLIMIT_FSIZE, &rl);
    cr_expect_neq(s, Q8_OK);
    cr_expect(strstr(err.msg, "cannot write"), "%s", err.msg);
    cr_expect_eq(count_entries(tmp), 1, "temp file left behind");
    char *old = read_text(path);
    cr_expect_str_eq(old, "old", "the target was changed");
    free(old);
    rm_tmpdir(tmp);
}

Test(atomic_write, read_only_folder) {
    if (geteuid() == 0) {
        cr_log_info("skipped: root can write into a read-only folder "
                    "(write_fails_midway and target_is_a_folder cover the failure path)");
        return;
    }
    char *tmp = make_tmpdir();
    char path[4096];
    snprintf(path, sizeof path, "%s/y.npy", tmp);
    write_bytes(path, "old", 3);
    cr_assert_eq(chmod(tmp, 0555), 0);
    q8_error err = {0};
    cr_expect_neq(q8_npy_write(path, Q8_F32, &dim4, 1, four, &err), Q8_OK);
    cr_expect(strstr(err.msg, "cannot create a file next to"), "%s", err.msg);
    cr_expect_eq(count_entries(tmp), 1);
    char *old = read_text(path);
    cr_expect_str_eq(old, "old");
    free(old);
    rm_tmpdir(tmp);
}
