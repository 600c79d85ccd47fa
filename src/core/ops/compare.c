/* Comparisons (Equal, Greater, Less, GreaterOrEqual, LessOrEqual) over all
 * numeric dtypes and bool, and the logical And, Or, Xor over bool; numpy
 * broadcasting, bool output. NaN compares unequal and unordered, as in
 * IEEE 754. Bools are read as "nonzero". Params: the broadcast plan
 * (ops/broadcast.h). */
#include "op.h"
#include "ops/elementwise.h"

#define CMP_DTYPES (Q8_EW_DT_NUMS | Q8_EW_DT(Q8_BOOL))

/* In place only helps where the input is 1 byte (bool), but is valid for
 * any: the planner only reuses an input of the output's byte size. */
#define CMP_OP(VAR, DTYPES)                                                                \
    static q8_status VAR##_infer(q8_graph *g, q8_node *n, q8_error *err) {               \
        return q8_ew_binary_infer(g, n, DTYPES, Q8_BOOL, err);                            \
    }                                                                                     \
    const q8_op_schema q8_schema_##VAR = {.infer = VAR##_infer, .flags = Q8_OPF_INPLACE};

CMP_OP(equal, CMP_DTYPES)
CMP_OP(greater, CMP_DTYPES)
CMP_OP(less, CMP_DTYPES)
CMP_OP(greater_or_equal, CMP_DTYPES)
CMP_OP(less_or_equal, CMP_DTYPES)
CMP_OP(and, Q8_EW_DT(Q8_BOOL))
CMP_OP(or, Q8_EW_DT(Q8_BOOL))
CMP_OP(xor, Q8_EW_DT(Q8_BOOL))
