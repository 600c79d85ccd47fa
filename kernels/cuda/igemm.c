/* INT8 GEMM with int32 output through cuBLASLt: the "TN" layout IMMA
 * needs (both operands K-contiguous), CUBLAS_COMPUTE_32I, int32 alpha = 1
 * and beta = 0, one algorithm per GEMM chosen by cublasLtMatmulAlgoGetHeuristic
 * when the session is created, a fixed workspace in the node's arena
 * scratch. In column-major terms: D (m x n, ldc) = op(A)^T-stored (A is
 * k x m, lda) times B (k x n, ldb). The exact int32 sums are the same on
 * every algorithm; the epilogue kernels requantize them afterwards.
 *
 * When the heuristic offers no algorithm for a shape (or fails in any way),
 * a plain kernel (igemm_simple.cu) with the same meaning of every parameter
 * runs instead, and the session counts it (q8_session_stats.igemm_fallbacks:
 * a slow path must never be silent); in emulation (Q8_CUDA_EMULATE) that
 * kernel's host loop replaces cuBLASLt. */
#include <string.h>

#include "backend_cuda.h"

q8_status q8_cu_lt_describe(cublasLtHandle_t lt, cu_igemm *gm, size_t max_ws,
                            size_t *ws_needed, bool *none, cublasStatus_t *why, q8_error *err) {
    cublasLtMatmulPreference_t pref = NULL;
    *none = false;
    q8_status s = Q8_CUBLAS_CHECK(cublasLtMatmulDescCreate(&gm->desc, CUBLAS_COMPUTE_32I,
                                                           CUDA_R_32I));
    cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    if (s == Q8_OK)
        s = Q8_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(gm->desc, CUBLASLT_MATMUL_DESC_TRANSA,
                                                           &ta, sizeof ta));
    if (s == Q8_OK)
        s = Q8_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(gm->desc, CUBLASLT_MATMUL_DESC_TRANSB,
                                                           &tb, sizeof tb));
    if (s == Q8_OK)
        s = Q8_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&gm->la, CUDA_R_8I, (uint64_t)gm->k,
                                                       (uint64_t)gm->m, gm->lda));
    if (s == Q8_OK)
        s = Q8_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&gm->lb, CUDA_R_8I, (uint64_t)gm->k,
                                                       (uint64_t)gm->n, gm->ldb));
    if (s == Q8_OK)
        s = Q8_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&gm->lc, CUDA_R_32I, (uint64_t)gm->m,
                                                       (uint64_t)gm->n, gm->ldc));
    if (s == Q8_OK && gm->batch > 1) {
        int32_t bc = (int32_t)gm->batch;
        cublasLtMatrixLayout_t l[3] = {gm->la, gm->lb, gm->lc};
        int64_t str[3] = {gm->sa, gm->sb, gm->sc};
        for (int i = 0; s == Q8_OK && i < 3; i++) {
            s = Q8_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(
                l[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &bc, sizeof bc));
            if (s == Q8_OK)
                s = Q8_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(
                    l[i], CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &str[i], sizeof str[i]));
        }
    }
    if (s == Q8_OK) s = Q8_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    uint64_t ws = max_ws;
    uint32_t align = 16; /* every operand pointer q8 passes is 16-byte aligned */
    if (s == Q8_OK)
        s = Q8_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
            pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    cublasLtMatmulPreferenceAttributes_t al[4] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    for (int i = 0; s == Q8_OK && i < 4; i++)
        s = Q8_CUBLAS_CHECK(
            cublasLtMatmulPreferenceSetAttribute(pref, al[i], &align, sizeof align));
    cublasLtMatmulHeuristicResult_t res;
    memset(&res, 0, sizeof res);
    int found = 0;
    *why = CUBLAS_STATUS_SUCCESS;
    if (s == Q8_OK) {
        /* Any failure of the heuristic means the plain kernel, not a failed
         * session: NOT_SUPPORTED is the usual one, but a library that
         * rejects a layout attribute must not stop the model either. */
        *why = cublasLtMatmulAlgoGetHeuristic(lt, gm->desc, gm->la, gm->lb, gm->lc,
                                              gm->lc, pref, 1, &res, &found);
        if (*why != CUBLAS_STATUS_SUCCESS) found = 0;
    }
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (s != Q8_OK) {
        /* the caller names the node */
    } else if (found < 1 || res.state != CUBLAS_STATUS_SUCCESS) {
        if (*why == CUBLAS_STATUS_SUCCESS && found >= 1) *why = res.state;
        *none = true; /* the caller falls back to the plain kernel */
        q8_cu_igemm_free(gm);
        return Q8_OK;
    } else if (res.workspaceSize > max_ws) {
        s = q8_fail(err, Q8_ERR_BACKEND, "cuBLASLt's algorithm wants %zu workspace bytes, more "
                    "than the %zu allowed", (size_t)res.workspaceSize, max_ws);
    }
    if (s != Q8_OK) {
        q8_cu_igemm_free(gm);
        return s;
    }
    gm->algo = res.algo;
    *ws_needed = res.workspaceSize;
    return Q8_OK;
}

/* q8_cu_lt_describe for a node: failures (not a missing algorithm) name it. */
static q8_status igemm_describe(cu_ctx *c, const q8_node *n, cu_igemm *gm, size_t max_ws,
                                size_t *ws_needed, bool *none, cublasStatus_t *why,
                                q8_error *err) {
    q8_status s = q8_cu_lt_describe(q8_cu_lt(c), gm, max_ws, ws_needed, none, why, err);
    if (s != Q8_OK) q8_fail_prefix(err, "node '%s' (%s)", n->name, n->op_type);
    return s;
}

q8_status q8_cu_igemm_plan(cu_prep *pr, const q8_node *n, cu_igemm *gm, int64_t m, int64_t nn,
                           int64_t k, int64_t lda, int64_t ldb, int64_t ldc, int64_t batch,
                           int64_t sa, int64_t sb, int64_t sc, q8_error *err) {
    /* the callers pad every one of these; a violation is a bug in q8 */
    Q8_ASSERT(m > 0 && nn > 0 && k > 0 && batch > 0);
    Q8_ASSERT(m % 4 == 0 && k % 4 == 0 && lda % 16 == 0 && ldb % 16 == 0 && ldc % 4 == 0);
    Q8_ASSERT(lda >= k && ldb >= k && ldc >= m);
    Q8_ASSERT(batch == 1 || (sa % 16 == 0 && sb % 16 == 0 && sc % 4 == 0));
    memset(gm, 0, sizeof *gm);
    *gm = (cu_igemm){.m = m, .n = nn, .k = k, .lda = lda, .ldb = ldb, .ldc = ldc,
                     .batch = batch, .sa = sa, .sb = sb, .sc = sc};
    if (m > INT32_MAX || nn > INT32_MAX || k > INT32_MAX || batch > INT32_MAX)
        return q8_cu_unsupported(err, n, "a GEMM of %lld x %lld x %lld (x %lld batches): dims "
                                 "must stay below 2^31", (long long)m, (long long)nn,
                                 (long long)k, (long long)batch);
    if (!pr->c || q8_cu_stream(pr->c)->emu) {
        gm->ws = q8_cu_scratch(pr, 0);
        return Q8_OK; /* checking only, or the reference loop: no workspace */
    }
    /* memo: the workspace to reserve, or NO_ALGO: the plain kernel */
    const size_t NO_ALGO = SIZE_MAX;
    size_t need = 0;
    bool none = false;
    cublasStatus_t why = CUBLAS_STATUS_SUCCESS;
    if (!pr->fill) {
        Q8_TRY(igemm_describe(pr->c, n, gm, q8_cu_lt_workspace(), &need, &none, &why, err));
        q8_cu_igemm_free(gm);
        *pr->memo = none ? NO_ALGO : need;
    } else if (*pr->memo != NO_ALGO) {
        Q8_TRY(igemm_describe(pr->c, n, gm, *pr->memo, &need, &none, &why, err));
        gm->ready = !none; /* none: the heuristic changed its mind, the plain kernel */
    }
    gm->simple = *pr->memo == NO_ALGO || (pr->fill && !gm->ready);
    /* the first pass reserved the workspace: both passes reserve the same */
    gm->ws_bytes = *pr->memo == NO_ALGO ? 0 : *pr->memo;
    gm->ws = q8_cu_scratch(pr, gm->ws_bytes);
    if (gm->simple && pr->fill) {
        q8_cu_note_gemm_fallback(pr->c);
        const char *verbose = getenv("Q8_CUDA_VERBOSE");
        if (verbose && *verbose && strcmp(verbose, "0") != 0)
            fprintf(stderr, "q8 cuda: node '%s': cuBLASLt has no INT8 algorithm for m=%lld "
                            "n=%lld k=%lld (%lld batches; %s): plain kernel\n", n->name,
                    (long long)m, (long long)nn, (long long)k, (long long)batch,
                    q8_cublas_status_name(why));
    }
    return Q8_OK;
}

q8_status q8_cu_igemm_run(cu_ctx *c, const q8_node *n, const cu_igemm *gm, const int8_t *A,
                          const int8_t *B, int32_t *C, q8_error *err) {
    const q8cu_stream *st = q8_cu_stream(c);
    if (st->emu || gm->simple) {
        q8cu_igemm_args a = {A, B, C, gm->m, gm->n, gm->k, gm->lda, gm->ldb, gm->ldc, gm->batch,
                             gm->sa, gm->sb, gm->sc};
        return q8_cu_launch_check(q8cu_igemm_simple(st, &a), n, "the plain INT8 GEMM", err);
    }
    Q8_ASSERT(gm->ready);
    cublasStatus_t s = q8_cu_lt_matmul(q8_cu_lt(c), gm, A, B, C, st->stream);
    if (s != CUBLAS_STATUS_SUCCESS)
        return q8_node_fail(err, Q8_ERR_BACKEND, n, "cuBLASLt error %s (%d) in cublasLtMatmul "
                            "(m=%lld n=%lld k=%lld, %zu workspace bytes at %u mod 256)",
                            q8_cublas_status_name(s), (int)s, (long long)gm->m,
                            (long long)gm->n, (long long)gm->k, gm->ws_bytes,
                            (unsigned)((uintptr_t)gm->ws % 256));
    return Q8_OK;
}

cublasStatus_t q8_cu_lt_matmul(cublasLtHandle_t lt, const cu_igemm *gm, const int8_t *A,
                               const int8_t *B, int32_t *C, cudaStream_t stream) {
    int32_t alpha = 1, beta = 0;
    return cublasLtMatmul(lt, gm->desc, &alpha, A, gm->la, B, gm->lb, &beta, C, gm->lc, C, gm->lc,
                          &gm->algo, gm->ws, gm->ws_bytes, stream);
}

void q8_cu_igemm_free(cu_igemm *gm) {
    if (gm->lc) cublasLtMatrixLayoutDestroy(gm->lc);
    if (gm->lb) cublasLtMatrixLayoutDestroy(gm->lb);
    if (gm->la) cublasLtMatrixLayoutDestroy(gm->la);
    if (gm->desc) cublasLtMatmulDescDestroy(gm->desc);
    gm->lc = gm->lb = gm->la = NULL;
    gm->desc = NULL;
    gm->ready = false;
}
