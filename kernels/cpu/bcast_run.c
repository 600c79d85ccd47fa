/* The row-wise walk over a broadcast plan; see broadcast.h. */
#include "bcast_run.h"

typedef struct bcast_job {
    const q8_bcast *p;
    char *out;
    size_t out_size;
    const void *const *in;
    const size_t *in_size;
    q8_bcast_row_fn fn;
    const void *ctx;
} bcast_job;

/* Output elements [b, e): locate b once, then whole rows with a carry. */
static void bcast_range(void *arg, int64_t b, int64_t e, int thread) {
    const bcast_job *j = arg;
    const q8_bcast *p = j->p;
    int nd = p->ndim, ni = p->n_in;
    int64_t idx[Q8_MAX_DIMS], inner = p->dims[nd - 1];
    const char *row[Q8_BCAST_MAX_IN];  /* each input at the current row's start */
    const void *ptr[Q8_BCAST_MAX_IN];
    int64_t step[Q8_BCAST_MAX_IN];
    int64_t rem = b;
    for (int d = nd - 1; d >= 0; d--) {
        idx[d] = rem % p->dims[d];
        rem /= p->dims[d];
    }
    for (int k = 0; k < ni; k++) {
        const int64_t *st = p->strides + k * Q8_MAX_DIMS;
        int64_t off = 0;
        for (int d = 0; d < nd - 1; d++) off += idx[d] * st[d];
        row[k] = (const char *)j->in[k] + off * (int64_t)j->in_size[k];
        step[k] = st[nd - 1];
    }
    int64_t pos = b, i0 = idx[nd - 1];
    for (;;) {
        int64_t cnt = inner - i0 < e - pos ? inner - i0 : e - pos;
        for (int k = 0; k < ni; k++) ptr[k] = row[k] + i0 * step[k] * (int64_t)j->in_size[k];
        j->fn(j->out + pos * (int64_t)j->out_size, ptr, step, cnt, j->ctx);
        pos += cnt;
        if (pos >= e) break;
        i0 = 0;
        for (int d = nd - 2; d >= 0; d--) {
            bool carry = ++idx[d] == p->dims[d];
            if (carry) idx[d] = 0;
            for (int k = 0; k < ni; k++) {
                int64_t s = p->strides[k * Q8_MAX_DIMS + d] * (int64_t)j->in_size[k];
                row[k] += carry ? -s * (p->dims[d] - 1) : s;
            }
            if (!carry) break;
        }
    }
}

void q8_bcast_run(q8_pool *pool, const q8_bcast *p, void *out, size_t out_size,
                  const void *const *in, const size_t *in_size, q8_bcast_row_fn fn,
                  const void *ctx, int64_t grain) {
    bcast_job j = {p, out, out_size, in, in_size, fn, ctx};
    q8_parallel_for(pool, p->numel, grain, bcast_range, &j);
}
