/* q8.QGlobalAveragePool on the CPU (the op: src/core/ops/qgap.h): exact
 * int32 plane sums (a loop compiled for each x86 vector width, clones.h:
 * integer sums, the same on every clone) and one requantization per plane;
 * threads over planes. */
#include "clones.h"
#include "cpu_op.h"
#include "ops/qgap.h"

Q8_CLONES static int32_t plane_sum(const int8_t *x, int64_t n) {
    int32_t s = 0;
    for (int64_t i = 0; i < n; i++) s += x[i];
    return s;
}

typedef struct qgap_args {
    const q8_qgap_params *p;
    const int8_t *x;
    int8_t *y;
} qgap_args;

static void qgap_rows(void *arg, int64_t r0, int64_t r1, int tid) {
    (void)tid;
    const qgap_args *a = arg;
    int64_t s = a->p->s;
    for (int64_t r = r0; r < r1; r++) a->y[r] = q8_qgap_one(a->p, plane_sum(a->x + r * s, s));
}

static void qgap_run(const q8_exec *x, const q8_node *n) {
    const q8_qgap_params *p = n->params;
    qgap_args a = {p, Q8_IN_PTR(x, n, 0), Q8_OUT_PTR(x, n, 0)};
    q8_parallel_for(x->pool, p->rows, p->s >= 65536 ? 1 : 65536 / p->s, qgap_rows, &a);
}

const q8_cpu_op q8_cpu_qglobal_average_pool = {.run = qgap_run};
