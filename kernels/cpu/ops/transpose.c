/* Transpose: out[i_0..i_{r-1}] = in[...] with out dim k = in dim perm[k]
 * (default perm: reversed). Dims that stay adjacent are merged and size-1
 * dims dropped first, so 2-D, last-two-dims swaps and NCHW<->NHWC all become
 * a (batched) 2-D transpose, done in cache blocks; when the innermost dim
 * stays innermost the copy is whole rows (memcpy). Generic over element size. */
#include <string.h>

#include "tensor_util.h"

#define TILE 32

typedef struct transpose_params {
    q8_strided s;   /* the input seen in output order, simplified */
    int jdim;       /* tiled mode: output dim whose input stride is 1; -1: row copy */
} transpose_params;

static q8_status transpose_infer(q8_graph *g, q8_node *n, q8_error *err) {
    Q8_TRY(q8_check_io(n, 1, 1, 1, 1, err));
    size_t es;
    Q8_TRY(q8_tu_elem_size(g, n, 0, &es, err));
    const q8_tensor *x = q8_in(g, n, 0);
    int r = x->ndim, np;
    int64_t perm[Q8_MAX_DIMS];
    const int64_t *pa = q8_attr_ints(n, "perm", &np);
    char sb[160];
    if (pa) {
        bool seen[Q8_MAX_DIMS] = {0}, ok = np == r;
        for (int i = 0; ok && i < np; i++) {
            ok = pa[i] >= 0 && pa[i] < r && !seen[pa[i]];
            if (ok) seen[pa[i]] = true;
        }
        if (!ok)
            return q8_node_fail(err, Q8_ERR_SHAPE, n,
                                "perm %s is not a permutation of 0..%d (input rank %d)",
                                q8_tu_list_str(pa, np, sb, sizeof sb), r - 1, r);
        for (int i = 0; i < r; i++) perm[i] = pa[i];
    } else {
        for (int i = 0; i < r; i++) perm[i] = r - 1 - i;
    }
    transpose_params *p = q8_node_params(n, sizeof *p, err);
    if (!p) return Q8_ERR_NOMEM;
    int64_t in_stride[Q8_MAX_DIMS], dims[Q8_MAX_DIMS];
    q8_tu_strides(x->dims, r, in_stride);
    p->s.ndim = r;
    p->s.esize = es;
    for (int k = 0; k < r; k++) {
        dims[k] = x->dims[perm[k]];
        p->s.dims[k] = dims[k];
        p->s.stride[k] = in_stride[perm[k]];
    }
    q8_tu_strided_simplify(&p->s);
    p->jdim = -1;
    int nd = p->s.ndim;
    if (nd >= 2 && p->s.stride[nd - 1] != 1)
        for (int k = 0; k < nd - 1; k++)
            if (p->s.stride[k] == 1) p->jdim = k;
    Q8_ASSERT(nd < 2 || p->s.stride[nd - 1] == 1 || p->jdim >= 0);
    return q8_set_output(g, n, 0, x->dtype, dims, r, err);
}

typedef struct tile_args {
    const transpose_params *p;
    const uint8_t *src;
    uint8_t *dst;
    int64_t ostride[Q8_MAX_DIMS];   /* dense output strides */
    int64_t jblocks;
} tile_args;

#define TILE_COPY(T)                                                                               \
    do {                                                                                           \
        const T *s = (const T *)a->src + soff;                                                     \
        T *d = (T *)a->dst + doff;                                                                 \
        for (int64_t lb = 0; lb < nl; lb += TILE) {                                                \
            int64_t le = lb + TILE < nl ? lb + TILE : nl;                                          \
            for (int64_t j = j0; j < j1; j++)                                                      \
                for (int64_t l = lb; l < le; l++) d[j * dj + l] = s[j + l * sl];                   \
        }                                                                                          \
    } while (0)

/* One task: outer index (all dims but jdim and the last) x a block of TILE
 * rows along jdim; inside, TILE x TILE blocks so reads and writes both stay
 * in cache. */
static void tile_range(void *arg, int64_t b, int64_t e, int thread) {
    const tile_args *a = arg;
    const q8_strided *st = &a->p->s;
    int nd = st->ndim, jd = a->p->jdim;
    int64_t nl = st->dims[nd - 1], sl = st->stride[nd - 1], dj = a->ostride[jd];
    size_t es = st->esize;
    for (int64_t t = b; t < e; t++) {
        int64_t jb = t % a->jblocks, r = t / a->jblocks, soff = 0, doff = 0;
        for (int k = nd - 2; k >= 0; k--) {
            if (k == jd) continue;
            int64_t c = r % st->dims[k];
            r /= st->dims[k];
            soff += c * st->stride[k];
            doff += c * a->ostride[k];
        }
        int64_t j0 = jb * TILE, j1 = j0 + TILE < st->dims[jd] ? j0 + TILE : st->dims[jd];
        switch (es) {
        case 1: TILE_COPY(uint8_t); break;
        case 2: TILE_COPY(uint16_t); break;
        case 4: TILE_COPY(uint32_t); break;
        case 8: TILE_COPY(uint64_t); break;
        default:
            for (int64_t j = j0; j < j1; j++)
                for (int64_t l = 0; l < nl; l++)
                    memcpy(a->dst + (size_t)(doff + j * dj + l) * es,
                           a->src + (size_t)(soff + j + l * sl) * es, es);
        }
    }
}

static void transpose_run(const q8_exec *x, const q8_node *n) {
    const transpose_params *p = n->params;
    const void *src = Q8_IN_PTR(x, n, 0);
    void *dst = Q8_OUT_PTR(x, n, 0);
    if (p->jdim < 0) {
        q8_tu_strided_copy(x->pool, dst, src, &p->s);
        return;
    }
    tile_args a = {.p = p, .src = src, .dst = dst};
    const q8_strided *st = &p->s;
    q8_tu_strides(st->dims, st->ndim, a.ostride);
    a.jblocks = (st->dims[p->jdim] + TILE - 1) / TILE;
    int64_t outer = q8_tu_prod(st->dims, 0, st->ndim - 1) / st->dims[p->jdim];
    size_t task_bytes = (size_t)TILE * (size_t)st->dims[st->ndim - 1] * st->esize;
    q8_parallel_for(x->pool, outer * a.jblocks, q8_tu_grain(task_bytes), tile_range, &a);
}

const q8_op_schema q8_schema_transpose = {.infer = transpose_infer};
const q8_cpu_op q8_cpu_transpose = {.run = transpose_run};
