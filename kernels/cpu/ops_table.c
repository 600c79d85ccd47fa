/* The CPU backend's table by op id, filled from op_list.h: every op must
 * define q8_cpu_<sym> (kernels/cpu/ops/). */
#include "cpu_op.h"

const q8_cpu_op *const q8_cpu_ops[Q8_OP_COUNT] = {
#define Q8_CPU_ENTRY_(ID, sym, domain, name) [Q8_OP_##ID] = &q8_cpu_##sym,
    Q8_OP_LIST(Q8_CPU_ENTRY_)
#undef Q8_CPU_ENTRY_
};
