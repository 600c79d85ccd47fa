/* cuBLASLt through dlopen: see lt_load.h for why. */
#define Q8_LT_LOADER
#include "lt_load.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#define Q8_STR_(x) #x
#define Q8_STR(x) Q8_STR_(x)

/* the library's functions, resolved once */
static struct {
#define Q8_LT_POINTER(f) __typeof__(f) *f;
    Q8_LT_FUNCS(Q8_LT_POINTER)
#undef Q8_LT_POINTER
} lt;
static bool loaded;
static char load_error[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
    /* the major version q8 was built against (its ABI): by the library path,
     * then in the toolkit q8 was built with (linked, it came with an rpath),
     * then any version, checked below */
    static const char *const names[] = {
        "libcublasLt.so." Q8_STR(CUBLAS_VER_MAJOR),
#ifdef Q8_CUBLASLT_DIR
        Q8_CUBLASLT_DIR "/libcublasLt.so." Q8_STR(CUBLAS_VER_MAJOR),
#endif
        "libcublasLt.so"};
    void *h = NULL;
    char first_error[256] = "";
    for (size_t i = 0; !h && i < sizeof names / sizeof names[0]; i++) {
        h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        const char *e = h ? NULL : dlerror();
        if (e && !first_error[0]) snprintf(first_error, sizeof first_error, "%s", e);
    }
    if (!h) {
        snprintf(load_error, sizeof load_error, "cannot load cuBLASLt: %s", first_error);
        return;
    }
#define Q8_LT_RESOLVE(f)                                                                      \
    if (!(*(void **)&lt.f = dlsym(h, #f))) {                                                  \
        snprintf(load_error, sizeof load_error, "cuBLASLt has no %s", #f);                    \
        return;                                                                               \
    }
    Q8_LT_FUNCS(Q8_LT_RESOLVE)
#undef Q8_LT_RESOLVE
    size_t v = lt.cublasLtGetVersion();
    if (v / 10000 != CUBLAS_VER_MAJOR) { /* another ABI: not callable safely */
        snprintf(load_error, sizeof load_error,
                 "cuBLASLt %zu found, but q8 was built against major version %d", v,
                 CUBLAS_VER_MAJOR);
        return;
    }
    loaded = true; /* the handle stays open for the process's life */
}

bool q8_cu_lt_load(char *why, size_t n) {
    pthread_once(&once, load);
    if (!loaded && why && n) snprintf(why, n, "%s", load_error);
    return loaded;
}

#define LT_FORWARD(f, params, args)                                                           \
    cublasStatus_t q8_lt_##f params {                                                         \
        if (!q8_cu_lt_load(NULL, 0)) return CUBLAS_STATUS_NOT_INITIALIZED;                    \
        return lt.f args;                                                                     \
    }

LT_FORWARD(cublasLtCreate, (cublasLtHandle_t *h), (h))
LT_FORWARD(cublasLtDestroy, (cublasLtHandle_t h), (h))
LT_FORWARD(cublasLtMatmul,
           (cublasLtHandle_t h, cublasLtMatmulDesc_t d, const void *alpha, const void *A,
            cublasLtMatrixLayout_t la, const void *B, cublasLtMatrixLayout_t lb,
            const void *beta, const void *C, cublasLtMatrixLayout_t lc, void *D,
            cublasLtMatrixLayout_t ld, const cublasLtMatmulAlgo_t *algo, void *ws,
            size_t ws_bytes, cudaStream_t stream),
           (h, d, alpha, A, la, B, lb, beta, C, lc, D, ld, algo, ws, ws_bytes, stream))
LT_FORWARD(cublasLtMatmulAlgoGetHeuristic,
           (cublasLtHandle_t h, cublasLtMatmulDesc_t d, cublasLtMatrixLayout_t la,
            cublasLtMatrixLayout_t lb, cublasLtMatrixLayout_t lc, cublasLtMatrixLayout_t ld,
            cublasLtMatmulPreference_t pref, int requested,
            cublasLtMatmulHeuristicResult_t results[], int *returned),
           (h, d, la, lb, lc, ld, pref, requested, results, returned))
LT_FORWARD(cublasLtMatmulDescCreate,
           (cublasLtMatmulDesc_t *d, cublasComputeType_t compute, cudaDataType_t scale),
           (d, compute, scale))
LT_FORWARD(cublasLtMatmulDescDestroy, (cublasLtMatmulDesc_t d), (d))
LT_FORWARD(cublasLtMatmulDescSetAttribute,
           (cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr, const void *buf,
            size_t bytes),
           (d, attr, buf, bytes))
LT_FORWARD(cublasLtMatmulPreferenceCreate, (cublasLtMatmulPreference_t *p), (p))
LT_FORWARD(cublasLtMatmulPreferenceDestroy, (cublasLtMatmulPreference_t p), (p))
LT_FORWARD(cublasLtMatmulPreferenceSetAttribute,
           (cublasLtMatmulPreference_t p, cublasLtMatmulPreferenceAttributes_t attr,
            const void *buf, size_t bytes),
           (p, attr, buf, bytes))
LT_FORWARD(cublasLtMatrixLayoutCreate,
           (cublasLtMatrixLayout_t *l, cudaDataType type, uint64_t rows, uint64_t cols,
            int64_t ld),
           (l, type, rows, cols, ld))
LT_FORWARD(cublasLtMatrixLayoutDestroy, (cublasLtMatrixLayout_t l), (l))
LT_FORWARD(cublasLtMatrixLayoutSetAttribute,
           (cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t attr, const void *buf,
            size_t bytes),
           (l, attr, buf, bytes))

size_t q8_lt_cublasLtGetVersion(void) {
    return q8_cu_lt_load(NULL, 0) ? lt.cublasLtGetVersion() : 0;
}
