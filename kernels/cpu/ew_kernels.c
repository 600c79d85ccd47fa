/* Shared run of the plain binary elementwise ops. */
#include "ew_kernels.h"

void q8_ew_binary_run(const q8_exec *x, const q8_node *n, const q8_bcast_row_fn *rows,
                      int64_t grain) {
    const q8_tensor *a = q8_in(x->g, n, 0), *b = q8_in(x->g, n, 1), *o = q8_out(x->g, n, 0);
    const void *in[2] = {Q8_IN_PTR(x, n, 0), Q8_IN_PTR(x, n, 1)};
    size_t sz[2] = {q8_dtype_size(a->dtype), q8_dtype_size(b->dtype)};
    Q8_ASSERT(rows[a->dtype]); /* the core's dtype set and these rows disagree */
    q8_bcast_run(x->pool, n->params, Q8_OUT_PTR(x, n, 0), q8_dtype_size(o->dtype), in, sz,
                 rows[a->dtype], NULL, grain);
}
