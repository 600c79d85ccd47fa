/* PRelu on the CPU (semantics and params: src/core/ops/prelu.c). */
#include "ew_kernels.h"

Q8_EW_BINARY_ROW(prelu_f32, float, float, float, a < 0 ? a * b : a)
Q8_EW_BINARY_ROW(prelu_f64, double, double, double, a < 0 ? a * b : a)

static const q8_bcast_row_fn prelu_rows[Q8_DTYPE_COUNT] = {
    [Q8_F32] = prelu_f32, [Q8_F64] = prelu_f64,
};

static void prelu_run(const q8_exec *x, const q8_node *n) {
    q8_ew_binary_run(x, n, prelu_rows, Q8_EW_GRAIN);
}

const q8_cpu_op q8_cpu_prelu = {.run = prelu_run};
