/* Squeeze and Unsqueeze (src/core/ops/squeeze.c): views, which the planner
 * aliases. */
#include "cpu_op.h"

const q8_cpu_op q8_cpu_squeeze = {.run = NULL};
const q8_cpu_op q8_cpu_unsqueeze = {.run = NULL};
