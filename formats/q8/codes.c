/* The .q8 file's own numbers for dtypes, attribute types and ops
 * (docs/format.md): explicit, written once and never reused, so that the
 * in-memory enums (q8_dtype, q8_attr_type, op_list.h) may change order
 * freely without changing what a file means. A new op gets the next free
 * number here; test_q8file checks that every op has a unique one. */
#include "codes.h"

/* ONNX TensorProto.DataType numbers, a known convention. */
static const uint8_t dtype_codes[Q8_DTYPE_COUNT] = {
    [Q8_F32] = 1, [Q8_U8] = 2, [Q8_I8] = 3, [Q8_U16] = 4, [Q8_I16] = 5, [Q8_I32] = 6,
    [Q8_I64] = 7, [Q8_STRING] = 8, [Q8_BOOL] = 9, [Q8_F16] = 10, [Q8_F64] = 11,
    [Q8_U32] = 12, [Q8_U64] = 13, [Q8_BF16] = 16,
};

/* ONNX AttributeProto.AttributeType numbers. */
static const uint8_t attr_codes[] = {
    [Q8_ATTR_FLOAT] = 1, [Q8_ATTR_INT] = 2, [Q8_ATTR_STRING] = 3, [Q8_ATTR_TENSOR] = 4,
    [Q8_ATTR_GRAPH] = 5, [Q8_ATTR_FLOATS] = 6, [Q8_ATTR_INTS] = 7, [Q8_ATTR_STRINGS] = 8,
};

static const uint16_t op_codes[Q8_OP_COUNT] = {
    [Q8_OP_RELU] = 1,
    [Q8_OP_LEAKY_RELU] = 2,
    [Q8_OP_SIGMOID] = 3,
    [Q8_OP_HARD_SIGMOID] = 4,
    [Q8_OP_HARD_SWISH] = 5,
    [Q8_OP_TANH] = 6,
    [Q8_OP_ELU] = 7,
    [Q8_OP_SELU] = 8,
    [Q8_OP_ERF] = 9,
    [Q8_OP_GELU] = 10,
    [Q8_OP_GELU_MS] = 11,
    [Q8_OP_SQRT] = 12,
    [Q8_OP_EXP] = 13,
    [Q8_OP_LOG] = 14,
    [Q8_OP_ABS] = 15,
    [Q8_OP_NEG] = 16,
    [Q8_OP_RECIPROCAL] = 17,
    [Q8_OP_FLOOR] = 18,
    [Q8_OP_CEIL] = 19,
    [Q8_OP_ROUND] = 20,
    [Q8_OP_SIGN] = 21,
    [Q8_OP_SOFTPLUS] = 22,
    [Q8_OP_SOFTSIGN] = 23,
    [Q8_OP_NOT] = 24,
    [Q8_OP_CLIP] = 25,
    [Q8_OP_PRELU] = 26,
    [Q8_OP_ADD] = 27,
    [Q8_OP_SUB] = 28,
    [Q8_OP_MUL] = 29,
    [Q8_OP_DIV] = 30,
    [Q8_OP_MOD] = 31,
    [Q8_OP_POW] = 32,
    [Q8_OP_MAX] = 33,
    [Q8_OP_MIN] = 34,
    [Q8_OP_SUM] = 35,
    [Q8_OP_MEAN] = 36,
    [Q8_OP_EQUAL] = 37,
    [Q8_OP_GREATER] = 38,
    [Q8_OP_LESS] = 39,
    [Q8_OP_GREATER_OR_EQUAL] = 40,
    [Q8_OP_LESS_OR_EQUAL] = 41,
    [Q8_OP_AND] = 42,
    [Q8_OP_OR] = 43,
    [Q8_OP_XOR] = 44,
    [Q8_OP_WHERE] = 45,
    [Q8_OP_EXPAND] = 46,
    [Q8_OP_CAST] = 47,
    [Q8_OP_CAST_LIKE] = 48,
    [Q8_OP_GEMM] = 49,
    [Q8_OP_MATMUL] = 50,
    [Q8_OP_CONV] = 51,
    [Q8_OP_CONV_TRANSPOSE] = 52,
    [Q8_OP_BATCH_NORM] = 53,
    [Q8_OP_MAX_POOL] = 54,
    [Q8_OP_AVERAGE_POOL] = 55,
    [Q8_OP_GLOBAL_AVERAGE_POOL] = 56,
    [Q8_OP_GLOBAL_MAX_POOL] = 57,
    [Q8_OP_SOFTMAX] = 58,
    [Q8_OP_LOG_SOFTMAX] = 59,
    [Q8_OP_LAYER_NORM] = 60,
    [Q8_OP_REDUCE_SUM] = 61,
    [Q8_OP_REDUCE_MEAN] = 62,
    [Q8_OP_REDUCE_MAX] = 63,
    [Q8_OP_REDUCE_MIN] = 64,
    [Q8_OP_REDUCE_PROD] = 65,
    [Q8_OP_REDUCE_L1] = 66,
    [Q8_OP_REDUCE_L2] = 67,
    [Q8_OP_REDUCE_SUM_SQUARE] = 68,
    [Q8_OP_REDUCE_LOG_SUM] = 69,
    [Q8_OP_REDUCE_LOG_SUM_EXP] = 70,
    [Q8_OP_RESIZE] = 71,
    /* 72 was Upsample: the importer makes it a Resize now; 72 stays unused */
    [Q8_OP_IDENTITY] = 73,
    [Q8_OP_RESHAPE] = 74,
    [Q8_OP_FLATTEN] = 75,
    [Q8_OP_SQUEEZE] = 76,
    [Q8_OP_UNSQUEEZE] = 77,
    [Q8_OP_DROPOUT] = 78,
    [Q8_OP_TRANSPOSE] = 79,
    [Q8_OP_CONCAT] = 80,
    [Q8_OP_SPLIT] = 81,
    [Q8_OP_SLICE] = 82,
    [Q8_OP_GATHER] = 83,
    [Q8_OP_GATHER_ELEMENTS] = 84,
    [Q8_OP_GATHER_ND] = 85,
    [Q8_OP_PAD] = 86,
    [Q8_OP_TILE] = 87,
    [Q8_OP_SHAPE] = 88,
    [Q8_OP_SIZE] = 89,
    [Q8_OP_CONSTANT_OF_SHAPE] = 90,
    [Q8_OP_RANGE] = 91,
    [Q8_OP_DROPOUT_MASK] = 92,
    [Q8_OP_QCONV] = 93,
    [Q8_OP_QCONV_TRANSPOSE] = 94,
    [Q8_OP_QGEMM] = 95,
    [Q8_OP_QMATMUL] = 96,
    [Q8_OP_QUANTIZE_LINEAR] = 97,
    [Q8_OP_DEQUANTIZE_LINEAR] = 98,
    [Q8_OP_MATMUL_INTEGER] = 99,
    [Q8_OP_QLINEAR_MATMUL] = 100,
    [Q8_OP_CONV_INTEGER] = 101,
    [Q8_OP_QLINEAR_CONV] = 102,
    [Q8_OP_DYNAMIC_QUANTIZE_LINEAR] = 103,
    [Q8_OP_QLUT] = 104,
    [Q8_OP_ARG_MAX] = 105,
    [Q8_OP_ARG_MIN] = 106,
    [Q8_OP_LSTM] = 107,
    [Q8_OP_GRU] = 108,
    [Q8_OP_RNN] = 109,
    /* 110..119: free for the ops of issue 11 beside these */
    [Q8_OP_IF] = 120,
    [Q8_OP_QADD] = 121,
    [Q8_OP_QMUL] = 122,
    [Q8_OP_QGLOBAL_AVERAGE_POOL] = 123,
    [Q8_OP_SIN] = 124,
    [Q8_OP_COS] = 125,
    [Q8_OP_TAN] = 126,
    [Q8_OP_ASIN] = 127,
    [Q8_OP_ACOS] = 128,
    [Q8_OP_ATAN] = 129,
    [Q8_OP_SINH] = 130,
    [Q8_OP_COSH] = 131,
    [Q8_OP_ASINH] = 132,
    [Q8_OP_ACOSH] = 133,
    [Q8_OP_ATANH] = 134,
    [Q8_OP_THRESHOLDED_RELU] = 135,
    [Q8_OP_CELU] = 136,
    [Q8_OP_SHRINK] = 137,
    [Q8_OP_HARDMAX] = 138,
    [Q8_OP_CUMSUM] = 139,
    [Q8_OP_TRILU] = 140,
    [Q8_OP_DEPTH_TO_SPACE] = 141,
    [Q8_OP_SPACE_TO_DEPTH] = 142,
    [Q8_OP_TOPK] = 143,
    [Q8_OP_ONEHOT] = 144,
    [Q8_OP_IS_NAN] = 145,
    [Q8_OP_IS_INF] = 146,
    [Q8_OP_EYE_LIKE] = 147,
    [Q8_OP_SCATTER_ELEMENTS] = 148,
    [Q8_OP_SCATTER] = 149,
    [Q8_OP_SCATTER_ND] = 150,
    [Q8_OP_INSTANCE_NORMALIZATION] = 151,
    [Q8_OP_MEAN_VARIANCE_NORMALIZATION] = 152,
    [Q8_OP_LRN] = 153,
    [Q8_OP_BIT_SHIFT] = 154,
    [Q8_OP_HANN_WINDOW] = 155,
    [Q8_OP_HAMMING_WINDOW] = 156,
    [Q8_OP_BLACKMAN_WINDOW] = 157,
    [Q8_OP_REVERSE_SEQUENCE] = 158,
    [Q8_OP_DET] = 159,
    [Q8_OP_GRID_SAMPLE] = 160,
    [Q8_OP_EINSUM] = 161,
    [Q8_OP_NLL_LOSS] = 162,
    [Q8_OP_SOFTMAX_CROSS_ENTROPY_LOSS] = 163,
    [Q8_OP_MAX_UNPOOL] = 164,
    [Q8_OP_ROI_ALIGN] = 165,
    [Q8_OP_DFT] = 166,
    [Q8_OP_STFT] = 167,
    [Q8_OP_MEL_WEIGHT_MATRIX] = 168,
    [Q8_OP_TFIDF_VECTORIZER] = 169,
    [Q8_OP_QMUL_F] = 170,
    [Q8_OP_EWCHAIN] = 171,
    [Q8_OP_QPRELU] = 172,
};

uint8_t q8_code_of_dtype(q8_dtype t) {
    return t > Q8_UNDEFINED && t < Q8_DTYPE_COUNT ? dtype_codes[t] : 0;
}

q8_dtype q8_dtype_of_code(uint8_t c) {
    for (int t = 1; t < Q8_DTYPE_COUNT; t++)
        if (c && dtype_codes[t] == c) return (q8_dtype)t;
    return Q8_UNDEFINED;
}

uint8_t q8_code_of_attr(q8_attr_type t) {
    return (size_t)t < sizeof attr_codes ? attr_codes[t] : 0;
}

bool q8_attr_of_code(uint8_t c, q8_attr_type *t) {
    for (size_t i = 0; i < sizeof attr_codes; i++)
        if (c && attr_codes[i] == c) {
            *t = (q8_attr_type)i;
            return true;
        }
    return false;
}

uint16_t q8_code_of_op(q8_op_id id) {
    return id > Q8_OP_NONE && id < Q8_OP_COUNT ? op_codes[id] : 0;
}

q8_op_id q8_op_of_code(uint16_t c) {
    for (int i = 1; i < Q8_OP_COUNT; i++)
        if (c && op_codes[i] == c) return (q8_op_id)i;
    return Q8_OP_NONE;
}
