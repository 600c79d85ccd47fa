/* PRelu on the CPU (semantics and params: src/core/ops/prelu.c). */
#include "clones.h"
#include "ew_kernels.h"

/* out = a < 0 ? a * b : a, cloned per ISA. prelu.c is built without
 * trapping math (CMakeLists.txt): under it GCC kept the multiply under the
 * condition a branch per element (scalar, mispredicted at every sign
 * change: FaceMesh's 28 PRelu were 1.46 ms of its 2.0 ms in INT8); without
 * it GCC takes the product everywhere and blends. The same values. */
Q8_EW_BINARY_ROW_ATTR(Q8_CLONES, prelu_f32, float, float, float, a < 0 ? a * b : a)
Q8_EW_BINARY_ROW_ATTR(Q8_CLONES, prelu_f64, double, double, double, a < 0 ? a * b : a)

static const q8_bcast_row_fn prelu_rows[Q8_DTYPE_COUNT] = {
    [Q8_F32] = prelu_f32, [Q8_F64] = prelu_f64,
};

static void prelu_run(const q8_exec *x, const q8_node *n) {
    q8_ew_binary_run(x, n, prelu_rows, Q8_EW_GRAIN);
}

const q8_cpu_op q8_cpu_prelu = {.run = prelu_run};
