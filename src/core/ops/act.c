/* Fused activations: parsing the `_act*` attributes (see act.h). */
#include "ops/act.h"

#include <math.h>
#include <string.h>

q8_status q8_act_from_node(const q8_node *n, q8_act *act, q8_error *err) {
    memset(act, 0, sizeof *act);
    const q8_attr *a = q8_attr_find(n, "_act");
    if (!a) return Q8_OK;
    if (a->type != Q8_ATTR_STRING || !a->s)
        return q8_node_fail(err, Q8_ERR_FORMAT, n, "attribute _act must be a string");
    const char *s = a->s;
    if (strcmp(s, "Relu") == 0) {
        act->kind = Q8_ACT_RELU;
    } else if (strcmp(s, "Clip") == 0) {
        act->kind = Q8_ACT_CLIP;
        act->p0 = q8_attr_float(n, "_act_min", -INFINITY);
        act->p1 = q8_attr_float(n, "_act_max", INFINITY);
        if (act->p0 > act->p1)
            return q8_node_fail(err, Q8_ERR_FORMAT, n, "_act_min %g is above _act_max %g",
                                (double)act->p0, (double)act->p1);
    } else if (strcmp(s, "LeakyRelu") == 0) {
        act->kind = Q8_ACT_LEAKY_RELU;
        act->p0 = q8_attr_float(n, "_act_alpha", 0.01f);
    } else if (strcmp(s, "Sigmoid") == 0) {
        act->kind = Q8_ACT_SIGMOID;
    } else if (strcmp(s, "HardSigmoid") == 0) {
        act->kind = Q8_ACT_HARD_SIGMOID;
        act->p0 = q8_attr_float(n, "_act_alpha", 0.2f);
        act->p1 = q8_attr_float(n, "_act_beta", 0.5f);
    } else if (strcmp(s, "HardSwish") == 0) {
        act->kind = Q8_ACT_HARD_SWISH;
        act->p0 = 1.0f / 6.0f;
        act->p1 = 0.5f;
    } else {
        return q8_node_fail(err, Q8_ERR_UNSUPPORTED, n, "fused activation '%s' is not supported",
                            s);
    }
    return Q8_OK;
}
