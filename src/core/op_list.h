/* Every op q8 knows, listed once: X(ID, sym, domain, name) gives the op id
 * Q8_OP_<ID>, its schema q8_schema_<sym> (src/core/ops/) and each backend's
 * entry (q8_cpu_<sym> in kernels/cpu/ops/, the CUDA table by id). domain ""
 * is ai.onnx; "q8" holds the ops the quantizer emits and internal forms.
 * The .q8 file stores ops by explicit codes of its own (formats/q8), so the
 * order here can change freely. */
#ifndef Q8_OP_LIST_H
#define Q8_OP_LIST_H

#define Q8_OP_LIST(X) \
    /* elementwise math and activations */ \
    X(RELU, relu, "", "Relu") \
    X(LEAKY_RELU, leaky_relu, "", "LeakyRelu") \
    X(SIGMOID, sigmoid, "", "Sigmoid") \
    X(HARD_SIGMOID, hard_sigmoid, "", "HardSigmoid") \
    X(HARD_SWISH, hard_swish, "", "HardSwish") \
    X(TANH, tanh, "", "Tanh") \
    X(ELU, elu, "", "Elu") \
    X(SELU, selu, "", "Selu") \
    X(ERF, erf, "", "Erf") \
    X(GELU, gelu, "", "Gelu") \
    X(GELU_MS, gelu_ms, "com.microsoft", "Gelu") \
    X(SQRT, sqrt, "", "Sqrt") \
    X(EXP, exp, "", "Exp") \
    X(LOG, log, "", "Log") \
    X(ABS, abs, "", "Abs") \
    X(NEG, neg, "", "Neg") \
    X(RECIPROCAL, reciprocal, "", "Reciprocal") \
    X(FLOOR, floor, "", "Floor") \
    X(CEIL, ceil, "", "Ceil") \
    X(ROUND, round, "", "Round") \
    X(SIGN, sign, "", "Sign") \
    X(SOFTPLUS, softplus, "", "Softplus") \
    X(SOFTSIGN, softsign, "", "Softsign") \
    X(NOT, not, "", "Not") \
    X(SIN, sin, "", "Sin") \
    X(COS, cos, "", "Cos") \
    X(TAN, tan, "", "Tan") \
    X(ASIN, asin, "", "Asin") \
    X(ACOS, acos, "", "Acos") \
    X(ATAN, atan, "", "Atan") \
    X(SINH, sinh, "", "Sinh") \
    X(COSH, cosh, "", "Cosh") \
    X(ASINH, asinh, "", "Asinh") \
    X(ACOSH, acosh, "", "Acosh") \
    X(ATANH, atanh, "", "Atanh") \
    X(THRESHOLDED_RELU, thresholded_relu, "", "ThresholdedRelu") \
    X(CELU, celu, "", "Celu") \
    X(SHRINK, shrink, "", "Shrink") \
    X(CLIP, clip, "", "Clip") \
    X(PRELU, prelu, "", "PRelu") \
    X(ADD, add, "", "Add") \
    X(SUB, sub, "", "Sub") \
    X(MUL, mul, "", "Mul") \
    X(DIV, div, "", "Div") \
    X(MOD, mod, "", "Mod") \
    X(POW, pow, "", "Pow") \
    X(MAX, max, "", "Max") \
    X(MIN, min, "", "Min") \
    X(SUM, sum, "", "Sum") \
    X(MEAN, mean, "", "Mean") \
    X(EQUAL, equal, "", "Equal") \
    X(GREATER, greater, "", "Greater") \
    X(LESS, less, "", "Less") \
    X(GREATER_OR_EQUAL, greater_or_equal, "", "GreaterOrEqual") \
    X(LESS_OR_EQUAL, less_or_equal, "", "LessOrEqual") \
    X(AND, and, "", "And") \
    X(OR, or, "", "Or") \
    X(XOR, xor, "", "Xor") \
    X(WHERE, where, "", "Where") \
    X(EXPAND, expand, "", "Expand") \
    X(CAST, cast, "", "Cast") \
    X(CAST_LIKE, cast_like, "", "CastLike") \
    /* GEMM and convolution */ \
    X(GEMM, gemm, "", "Gemm") \
    X(MATMUL, matmul, "", "MatMul") \
    X(CONV, conv, "", "Conv") \
    X(CONV_TRANSPOSE, conv_transpose, "", "ConvTranspose") \
    /* pooling, normalization, softmax, reductions, resize */ \
    X(BATCH_NORM, batch_norm, "", "BatchNormalization") \
    X(MAX_POOL, max_pool, "", "MaxPool") \
    X(AVERAGE_POOL, average_pool, "", "AveragePool") \
    X(GLOBAL_AVERAGE_POOL, global_average_pool, "", "GlobalAveragePool") \
    X(GLOBAL_MAX_POOL, global_max_pool, "", "GlobalMaxPool") \
    X(SOFTMAX, softmax, "", "Softmax") \
    X(LOG_SOFTMAX, log_softmax, "", "LogSoftmax") \
    X(LAYER_NORM, layer_norm, "", "LayerNormalization") \
    X(REDUCE_SUM, reduce_sum, "", "ReduceSum") \
    X(REDUCE_MEAN, reduce_mean, "", "ReduceMean") \
    X(REDUCE_MAX, reduce_max, "", "ReduceMax") \
    X(REDUCE_MIN, reduce_min, "", "ReduceMin") \
    X(REDUCE_PROD, reduce_prod, "", "ReduceProd") \
    X(REDUCE_L1, reduce_l1, "", "ReduceL1") \
    X(REDUCE_L2, reduce_l2, "", "ReduceL2") \
    X(REDUCE_SUM_SQUARE, reduce_sum_square, "", "ReduceSumSquare") \
    X(REDUCE_LOG_SUM, reduce_log_sum, "", "ReduceLogSum") \
    X(REDUCE_LOG_SUM_EXP, reduce_log_sum_exp, "", "ReduceLogSumExp") \
    X(ARG_MAX, arg_max, "", "ArgMax") \
    X(ARG_MIN, arg_min, "", "ArgMin") \
    X(HARDMAX, hardmax, "", "Hardmax") \
    X(CUMSUM, cumsum, "", "CumSum") \
    X(TRILU, trilu, "", "Trilu") \
    X(DEPTH_TO_SPACE, depth_to_space, "", "DepthToSpace") \
    X(SPACE_TO_DEPTH, space_to_depth, "", "SpaceToDepth") \
    X(TOPK, topk, "", "TopK") \
    X(ONEHOT, onehot, "", "OneHot") \
    X(IS_NAN, is_nan, "", "IsNaN") \
    X(IS_INF, is_inf, "", "IsInf") \
    X(EYE_LIKE, eye_like, "", "EyeLike") \
    X(SCATTER_ELEMENTS, scatter_elements, "", "ScatterElements") \
    X(SCATTER, scatter, "", "Scatter") \
    X(SCATTER_ND, scatter_nd, "", "ScatterND") \
    X(INSTANCE_NORMALIZATION, instance_normalization, "", "InstanceNormalization") \
    X(MEAN_VARIANCE_NORMALIZATION, mean_variance_normalization, "", "MeanVarianceNormalization") \
    X(LRN, lrn, "", "LRN") \
    X(BIT_SHIFT, bit_shift, "", "BitShift") \
    X(HANN_WINDOW, hann_window, "", "HannWindow") \
    X(HAMMING_WINDOW, hamming_window, "", "HammingWindow") \
    X(BLACKMAN_WINDOW, blackman_window, "", "BlackmanWindow") \
    X(REVERSE_SEQUENCE, reverse_sequence, "", "ReverseSequence") \
    X(DET, det, "", "Det") \
    X(GRID_SAMPLE, grid_sample, "", "GridSample") \
    X(EINSUM, einsum, "", "Einsum") \
    X(NLL_LOSS, nll_loss, "", "NegativeLogLikelihoodLoss") \
    X(SOFTMAX_CROSS_ENTROPY_LOSS, softmax_cross_entropy_loss, "", "SoftmaxCrossEntropyLoss") \
    X(MAX_UNPOOL, max_unpool, "", "MaxUnpool") \
    X(ROI_ALIGN, roi_align, "", "RoiAlign") \
    X(TFIDF_VECTORIZER, tfidf_vectorizer, "", "TfIdfVectorizer") \
    X(DFT, dft, "", "DFT") \
    X(STFT, stft, "", "STFT") \
    X(MEL_WEIGHT_MATRIX, mel_weight_matrix, "", "MelWeightMatrix") \
    X(RESIZE, resize, "", "Resize") \
    /* recurrent layers */ \
    X(RNN, rnn, "", "RNN") \
    X(GRU, gru, "", "GRU") \
    X(LSTM, lstm, "", "LSTM") \
    /* shape and data movement */ \
    X(IDENTITY, identity, "", "Identity") \
    X(RESHAPE, reshape, "", "Reshape") \
    X(FLATTEN, flatten, "", "Flatten") \
    X(SQUEEZE, squeeze, "", "Squeeze") \
    X(UNSQUEEZE, unsqueeze, "", "Unsqueeze") \
    X(DROPOUT, dropout, "", "Dropout") \
    X(TRANSPOSE, transpose, "", "Transpose") \
    X(CONCAT, concat, "", "Concat") \
    X(SPLIT, split, "", "Split") \
    X(SLICE, slice, "", "Slice") \
    X(GATHER, gather, "", "Gather") \
    X(GATHER_ELEMENTS, gather_elements, "", "GatherElements") \
    X(GATHER_ND, gather_nd, "", "GatherND") \
    X(PAD, pad, "", "Pad") \
    X(TILE, tile, "", "Tile") \
    X(SHAPE, shape, "", "Shape") \
    X(SIZE, size, "", "Size") \
    X(CONSTANT_OF_SHAPE, constant_of_shape, "", "ConstantOfShape") \
    X(RANGE, range, "", "Range") \
    X(DROPOUT_MASK, dropout_mask, "q8", "DropoutMask") \
    /* INT8: the q8 domain ops the quantizer emits, ONNX quantization and integer ops */ \
    X(QCONV, qconv, "q8", "QConv") \
    X(QCONV_TRANSPOSE, qconv_transpose, "q8", "QConvTranspose") \
    X(QGEMM, qgemm, "q8", "QGemm") \
    X(QMATMUL, qmatmul, "q8", "QMatMul") \
    X(QUANTIZE_LINEAR, quantize_linear, "", "QuantizeLinear") \
    X(DEQUANTIZE_LINEAR, dequantize_linear, "", "DequantizeLinear") \
    X(MATMUL_INTEGER, matmul_integer, "", "MatMulInteger") \
    X(QLINEAR_MATMUL, qlinear_matmul, "", "QLinearMatMul") \
    X(CONV_INTEGER, conv_integer, "", "ConvInteger") \
    X(QLINEAR_CONV, qlinear_conv, "", "QLinearConv") \
    X(DYNAMIC_QUANTIZE_LINEAR, dynamic_quantize_linear, "", "DynamicQuantizeLinear") \
    X(QLUT, qlut, "q8", "QLut") \
    X(QADD, qadd, "q8", "QAdd") \
    X(QMUL, qmul, "q8", "QMul") \
    X(QMUL_F, qmul_f, "q8", "QMulF") \
    X(QPRELU, qprelu, "q8", "QPRelu") \
    /* elementwise float steps fused into one pass (src/passes/fuse_ewchain.c) */ \
    X(EWCHAIN, ewchain, "q8", "EwChain") \
    X(QGLOBAL_AVERAGE_POOL, qglobal_average_pool, "q8", "QGlobalAveragePool") \
    /* control flow: an If whose branches are scopes of the graph (src/core/control.h) */ \
    X(IF, if, "q8", "If")

/* Op ids, one per entry of op_list.h; Q8_OP_NONE: not resolved / unknown. */
typedef enum q8_op_id {
    Q8_OP_NONE = 0,
#define Q8_OP_ENUM_(ID, sym, domain, name) Q8_OP_##ID,
    Q8_OP_LIST(Q8_OP_ENUM_)
#undef Q8_OP_ENUM_
    Q8_OP_COUNT
} q8_op_id;

#endif
