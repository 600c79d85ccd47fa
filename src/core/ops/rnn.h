/* The recurrent layers RNN, GRU and LSTM (ONNX opset 14 forms, float32).
 *
 * Inputs: X, W, R, B, sequence_lens, initial_h (and initial_c, P for LSTM),
 * all but X, W, R optional. Outputs: Y, Y_h (and Y_c for LSTM), each
 * optional. With G gates (RNN 1, GRU 3 in order z r h, LSTM 4 in order
 * i o f c), D directions, S steps, N batch rows, I inputs, H hidden:
 *   X [S, N, I] (layout 1: [N, S, I]); W [D, G*H, I]; R [D, G*H, H];
 *   B [D, 2*G*H] (Wb then Rb; absent: zeros); sequence_lens [N] int32;
 *   initial_h, initial_c, Y_h, Y_c [D, N, H] (layout 1: [N, D, H]);
 *   P [D, 3*H] (peepholes i o f); Y [S, D, N, H] (layout 1: [N, S, D, H]).
 * Per direction and batch row n with length L = sequence_lens[n] (S when
 * absent), the forward direction runs steps t = 0 .. L-1 and the reverse one
 * t = L-1 .. 0, with Wb+Rb added to every gate's input and `clip` (when
 * set) bounding every activation's input to [-clip, clip]:
 *   RNN:  H = f(x W^T + H R^T)
 *   GRU:  z = f(..z), r = f(..r); hidden gate g(x Wh^T + (r .* H) Rh^T),
 *         or with linear_before_reset g(x Wh^T + r .* (H Rh^T + Rbh))
 *         (Rbh then inside the product); H = (1 - z) .* h + z .* H
 *   LSTM: i = f(.. + Pi .* C), f = f(.. + Pf .* C) (1 - i with
 *         input_forget), c = g(..), C = f .* C + i .* c,
 *         o = f(.. + Po .* C_new), H = o .* h(C) (h of the clipped C).
 * Y at steps t >= L is zero; Y_h / Y_c are the states after the last step
 * of each row, zero where L is 0. sequence_lens read at run time are
 * clamped to [0, S] (a constant one out of that range is refused). */
#ifndef Q8_CORE_OPS_RNN_H
#define Q8_CORE_OPS_RNN_H

#include <stdbool.h>

#include "common.h"

typedef enum q8_rnn_cell { Q8_RNN_SIMPLE, Q8_RNN_GRU, Q8_RNN_LSTM } q8_rnn_cell;

/* The activations the ONNX recurrent ops allow (alpha a, beta b). */
typedef enum q8_rnn_act_kind {
    Q8_RNN_ACT_RELU,
    Q8_RNN_ACT_TANH,
    Q8_RNN_ACT_SIGMOID,
    Q8_RNN_ACT_AFFINE,           /* a*x + b */
    Q8_RNN_ACT_LEAKY_RELU,       /* x >= 0 ? x : a*x */
    Q8_RNN_ACT_THRESHOLDED_RELU, /* x > a ? x : 0 */
    Q8_RNN_ACT_SCALED_TANH,      /* a * tanh(b*x) */
    Q8_RNN_ACT_HARD_SIGMOID,     /* min(max(a*x + b, 0), 1) */
    Q8_RNN_ACT_ELU,              /* x >= 0 ? x : a*(e^x - 1) */
    Q8_RNN_ACT_SOFTSIGN,         /* x / (1 + |x|) */
    Q8_RNN_ACT_SOFTPLUS,         /* log(1 + e^x) */
} q8_rnn_act_kind;

typedef struct q8_rnn_act {
    q8_rnn_act_kind kind;
    float alpha, beta;
} q8_rnn_act;

/* Input and output positions. */
enum {
    Q8_RNN_IN_X, Q8_RNN_IN_W, Q8_RNN_IN_R, Q8_RNN_IN_B, Q8_RNN_IN_LENS, Q8_RNN_IN_H0,
    Q8_RNN_IN_C0, Q8_RNN_IN_P,
};
enum { Q8_RNN_OUT_Y, Q8_RNN_OUT_YH, Q8_RNN_OUT_YC };

typedef struct q8_rnn_params {
    q8_rnn_cell cell;
    int gates;                  /* G: 1, 3 or 4 */
    int dirs;                   /* D: 1 or 2 */
    bool reverse;               /* D == 1 and direction "reverse" */
    bool batch_first;           /* layout 1 */
    int64_t seq, batch, input, hidden; /* S, N, I, H */
    bool has_b, has_lens, has_h0, has_c0, has_p; /* optional inputs present */
    bool linear_before_reset;   /* GRU */
    bool input_forget;          /* LSTM */
    float clip;                 /* > 0: bound of every activation's input; 0: none */
    /* Per direction: f, g, h (RNN uses f; GRU f, g; LSTM f, g, h). */
    q8_rnn_act act[2][3];
} q8_rnn_params;

#endif
