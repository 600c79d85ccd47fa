#include "tensor_util.h"

#include <string.h>

q8_status q8_tu_elem_size(const q8_graph *g, const q8_node *n, int i, size_t *esize,
                          q8_error *err) {
    const q8_tensor *t = q8_in(g, n, i);
    Q8_TRY(q8_check_input(g, n, i, Q8_UNDEFINED, err));
    size_t es = q8_dtype_size(t->dtype);
    if (es == 0 || t->dtype == Q8_STRING)
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n,
                            "input '%s' has dtype %s, which is not supported", t->name,
                            q8_dtype_name(t->dtype));
    *esize = es;
    return Q8_OK;
}

q8_status q8_tu_ints_arg(const q8_graph *g, const q8_node *n, const char *name, int since,
                         int input, int64_t *out, int max, int *count, bool *present,
                         q8_error *err) {
    *count = 0;
    *present = false;
    const q8_attr *a = q8_attr_find(n, name);
    if (g->opset < since) {
        if (!a) return Q8_OK;
        if (a->type != Q8_ATTR_INTS)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "attribute '%s' must be a list of ints",
                                name);
        if (a->n > max)
            return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n,
                                "'%s' has %d values, at most %d supported", name, a->n, max);
        if (a->n) memcpy(out, a->ints, sizeof(int64_t) * (size_t)a->n);
        *count = a->n;
        *present = true;
        return Q8_OK;
    }
    if (a)
        return q8_node_fail(err, Q8_ERR_FORMAT, n,
                            "'%s' is an input since opset %d, not an attribute (model opset %d)",
                            name, since, g->opset);
    if (!q8_in(g, n, input)) return Q8_OK;
    Q8_TRY(q8_const_ints(g, n, input, out, max, count, err));
    *present = true;
    return Q8_OK;
}

q8_status q8_tu_norm_axes(const q8_node *n, const char *what, int64_t *axes, int count, int rank,
                          q8_error *err) {
    for (int i = 0; i < count; i++) {
        int a;
        if (!q8_norm_axis(axes[i], rank, &a))
            return q8_node_fail(err, Q8_ERR_SHAPE, n, "%s value %lld is out of range for rank %d",
                                what, (long long)axes[i], rank);
        axes[i] = a;
        for (int j = 0; j < i; j++)
            if (axes[j] == a)
                return q8_node_fail(err, Q8_ERR_SHAPE, n, "%s names axis %d twice", what, a);
    }
    return Q8_OK;
}

const char *q8_tu_list_str(const int64_t *v, int n, char *buf, size_t size) {
    size_t used = (size_t)snprintf(buf, size, "[");
    for (int i = 0; i < n && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, i ? ", %lld" : "%lld", (long long)v[i]);
    if (used < size) snprintf(buf + used, size - used, "]");
    return buf;
}

void q8_tu_strides(const int64_t *dims, int ndim, int64_t *stride) {
    int64_t s = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        stride[i] = s;
        s *= dims[i];
    }
}

void q8_tu_strided_simplify(q8_strided *s) {
    int64_t numel = q8_tu_prod(s->dims, 0, s->ndim);
    if (numel == 0) {
        s->ndim = 1;
        s->dims[0] = 0;
        s->stride[0] = 1;
        return;
    }
    int k = 0;
    for (int i = 0; i < s->ndim; i++) {
        if (s->dims[i] == 1) continue;
        if (k > 0 && s->stride[k - 1] == s->stride[i] * s->dims[i]) {
            s->dims[k - 1] *= s->dims[i];
            s->stride[k - 1] = s->stride[i];
            continue;
        }
        s->dims[k] = s->dims[i];
        s->stride[k] = s->stride[i];
        k++;
    }
    s->ndim = k;
}

#define COPY_STRIDED(T)                                                                            \
    do {                                                                                           \
        T *dd = (T *)d;                                                                            \
        const T *ss = (const T *)s;                                                                \
        for (int64_t i = 0; i < n; i++) dd[i] = ss[i * stride];                                    \
    } while (0)

/* n elements, source stride in elements. Tensor data is aligned to its
 * element size (the arena and constants are 64-byte aligned). */
static void copy_row(uint8_t *d, const uint8_t *s, int64_t n, int64_t stride, size_t es) {
    if (stride == 1) {
        memcpy(d, s, (size_t)n * es);
        return;
    }
    switch (es) {
    case 1: COPY_STRIDED(uint8_t); break;
    case 2: COPY_STRIDED(uint16_t); break;
    case 4: COPY_STRIDED(uint32_t); break;
    case 8: COPY_STRIDED(uint64_t); break;
    default:
        for (int64_t i = 0; i < n; i++)
            memcpy(d + (size_t)i * es, s + i * stride * (int64_t)es, es);
    }
}

typedef struct sc_args {
    uint8_t *dst;
    const uint8_t *src;
    const q8_strided *s;
} sc_args;

static void sc_rows(void *p, int64_t b, int64_t e, int thread) {
    const sc_args *a = p;
    const q8_strided *s = a->s;
    int nd = s->ndim;
    size_t es = s->esize;
    int64_t len = s->dims[nd - 1], sl = s->stride[nd - 1];
    int64_t idx[Q8_MAX_DIMS], r = b, off = s->offset;
    for (int k = nd - 2; k >= 0; k--) {
        idx[k] = r % s->dims[k];
        r /= s->dims[k];
        off += idx[k] * s->stride[k];
    }
    uint8_t *d = a->dst + (size_t)b * (size_t)len * es;
    for (int64_t row = b; row < e; row++) {
        copy_row(d, a->src + off * (int64_t)es, len, sl, es);
        d += (size_t)len * es;
        for (int k = nd - 2; k >= 0; k--) { /* odometer over the outer dims */
            off += s->stride[k];
            if (++idx[k] < s->dims[k]) break;
            off -= s->stride[k] * s->dims[k];
            idx[k] = 0;
        }
    }
}

void q8_tu_strided_copy(q8_pool *pool, void *dst, const void *src, const q8_strided *s) {
    if (s->ndim == 0) {
        memcpy(dst, (const uint8_t *)src + s->offset * (int64_t)s->esize, s->esize);
        return;
    }
    int64_t len = s->dims[s->ndim - 1];
    if (len == 0) return;
    int64_t rows = q8_tu_prod(s->dims, 0, s->ndim - 1);
    sc_args a = {dst, src, s};
    q8_parallel_for(pool, rows, q8_tu_grain((size_t)len * s->esize), sc_rows, &a);
}

#define FILL(T)                                                                                    \
    do {                                                                                           \
        T v;                                                                                       \
        memcpy(&v, val, sizeof v);                                                                 \
        T *dd = dst;                                                                               \
        for (int64_t i = 0; i < n; i++) dd[i] = v;                                                 \
    } while (0)

void q8_tu_fill(void *dst, const void *val, int64_t n, size_t esize) {
    if (n <= 0) return;
    switch (esize) {
    case 1: memset(dst, *(const uint8_t *)val, (size_t)n); break;
    case 2: FILL(uint16_t); break;
    case 4: FILL(uint32_t); break;
    case 8: FILL(uint64_t); break;
    default:
        for (int64_t i = 0; i < n; i++) memcpy((uint8_t *)dst + (size_t)i * esize, val, esize);
    }
}
