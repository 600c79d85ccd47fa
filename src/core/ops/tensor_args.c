#include "ops/tensor_args.h"

#include "op.h"

q8_status q8_ta_elem_size(const q8_graph *g, const q8_node *n, int i, size_t *esize,
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

q8_status q8_ta_norm_axes(const q8_node *n, const char *what, int64_t *axes, int count, int rank,
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

const char *q8_ta_list_str(const int64_t *v, int n, char *buf, size_t size) {
    size_t used = (size_t)snprintf(buf, size, "[");
    for (int i = 0; i < n && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, i ? ", %lld" : "%lld", (long long)v[i]);
    if (used < size) snprintf(buf + used, size - used, "]");
    return buf;
}
