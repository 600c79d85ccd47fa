/* NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (opset 12/13), as the
 * ONNX spec and its reference compute them. Input 0: x [N, C, d1..dk]
 * (float32 or float64; the log-probabilities for NLL, the scores for SCE);
 * input 1: the targets [N, d1..dk] (int32 or int64, read when the node runs);
 * optional input 2: the class weights [C] (default all 1).
 *
 * Per place (n, d) with target t: loss = -w[t] * lp[n, t, d], lp = x for NLL
 * and log_softmax(x) over axis 1 for SCE. A target equal to ignore_index
 * gives loss 0 and weight 0. A target outside [0, C) otherwise gives NaN
 * (the spec leaves it undefined; it is never read out of bounds).
 * reduction "none": the losses, shaped like the targets; "sum": their sum;
 * "mean" (default): their sum over the sum of the weights w[t] of the places
 * not ignored (NaN when every place is ignored, as the reference's 0/0).
 * (The ONNX reference's NLL, without weights and with ignore_index -1,
 * divides by every place instead: a quirk of its code, not the spec's
 * rule, which q8 and ONNX Runtime follow; no backend test has that case.)
 * SCE's optional output 1 is log_softmax(x), shaped like x. Sums run in
 * double, in order. */
#ifndef Q8_CORE_OPS_LOSS_H
#define Q8_CORE_OPS_LOSS_H

#include "common.h"

typedef enum q8_loss_reduction {
    Q8_LOSS_NONE,
    Q8_LOSS_SUM,
    Q8_LOSS_MEAN
} q8_loss_reduction;

typedef struct q8_loss_params {
    q8_dtype dtype;                 /* x, weights, outputs: float32 or float64 */
    q8_dtype target_dtype;          /* int32 or int64 */
    bool softmax;                   /* SCE: log_softmax over C first */
    bool has_weight, has_ignore;
    int64_t ignore_index;
    q8_loss_reduction reduction;
    int64_t n, c, d;                /* x seen as N x C x D (D: d1 * .. * dk, 1 if none) */
} q8_loss_params;

#endif
