#include "qop_util.h"

#include <string.h>

#include "layout.h"
#include "qepi.h"

q8_status q8_qop_path(const q8_node *n, q8_igemm_path *path, q8_error *err) {
    *path = Q8_IGEMM_AUTO;
    const char *s = q8_attr_str(n, "_igemm_path", NULL);
    if (!s) return Q8_OK;
    for (int p = 0; p < Q8_IGEMM_PATH_COUNT; p++)
        if (strcmp(s, q8_igemm_path_name(p)) == 0) {
            if (!q8_igemm_path_supported(p))
                return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n,
                                    "_igemm_path '%s' is not supported by this CPU", s);
            *path = p;
            return Q8_OK;
        }
    return q8_node_fail(err, Q8_ERR_FORMAT, n, "unknown _igemm_path '%s'", s);
}

bool q8_qop_plan_sparse(const q8_tensor *wt, const q8_prep_env *env, q8_igemm_path path,
                        int64_t N, int64_t K, size_t dense_bytes, size_t header_bytes,
                        q8_isp *isp, size_t *off) {
    if (!env->releases || !wt->owns_data || !q8_isp_kept(path)) return false;
    size_t o = *off, at = q8_qop_reserve(&o, sizeof *isp);
    Q8_ASSERT(at == q8_isp_at(header_bytes)); /* nothing reserved before it */
    q8_isp_plan(isp, N, K, q8_isp_nonzeros(wt->data, q8_tensor_stored_bytes(wt)), &o);
    if ((double)(o - at) > Q8_ISP_MAX_SHARE * (double)dense_bytes) return false;
    *off = o;
    return true;
}
