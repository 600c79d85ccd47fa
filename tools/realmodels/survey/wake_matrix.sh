#!/bin/sh
# Settings table for one wake-word head (wake_sets.py sets in $Q8_WAKE_DIR/sets/KEY, default ~/.cache/q8/survey/wake; survey inputs in
# ~/.cache/q8/survey/inputs/KEY): held-out = the 64 new windows + the survey's 4; each row is one
# wake_eval.py JSON line. usage: Q8_BUILD=build sh wake_matrix.sh KEY > KEY.jsonl
K=$1; I=$HOME/.cache/q8/survey/inputs/$K; W=${Q8_WAKE_DIR:-$HOME/.cache/q8/survey/wake}/sets/$K
H=$W/heldall; mkdir -p $H; cp $W/heldout/*.npy $H/; for i in 0 1 2 3; do cp $I/heldout/000$i.npy $H/o000$i.npy; done
E="nice -n 10 /usr/bin/python3 $(dirname "$0")/wake_eval.py $K"
L1=/layer1/Gemm; L2=/blocks.0/fcn_layer/Gemm
for C in orig new; do
  [ $C = orig ] && CD=$I/calib || CD=$W/calib
  $E $CD $H ${C}_default
  for m in minmax percentile mse entropy; do $E $CD $H ${C}_cm_$m --calib-method $m; done
  for w in nearest sums gptq; do $E $CD $H ${C}_wr_$w --weight-rounding $w; done
  $E $CD $H ${C}_heads --fp32-heads on
  $E $CD $H ${C}_fp32_L1 --fp32-layers $L1
  $E $CD $H ${C}_fp32_L2 --fp32-layers $L2
  $E $CD $H ${C}_minsqnr40 --min-sqnr 40
done
