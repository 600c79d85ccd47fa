#include "qop_util.h"

#include <string.h>

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
