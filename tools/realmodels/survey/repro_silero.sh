#!/bin/sh
# Reproduces the Silero VAD v5/v6 (@ricky0123/vad-web@0.0.31, spox export, opset 16, If on 'sr') findings.
# Before 2026-12-02 (commits 06938d9, 96937b9) F1-F4 failed as their lines say; they run now.
# Needs: fetch_models.sh run first (models + inputs under ~/.cache/q8/survey).
HERE=$(cd "$(dirname "$0")" && pwd)
S=${Q8_SURVEY_DIR:-$HOME/.cache/q8/survey}; B=${Q8_BUILD:-$HERE/../../../build}; M=$S/models/silero_v5.onnx; I=$S/inputs/silero_v5; mkdir -p $S/repro
IN="--input input=$I/heldout/input/0000.npy --input state=$I/heldout/state/0000.npy"
echo "## F1: q8run refuses the model when 'sr' is a runtime input (ORT runs it; the failing LSTM is in the untaken 8 kHz branch)"
$B/q8run $M $IN --input sr=$I/sr.npy --out $S/repro/f1
node $HERE/../../ort/run_ort.js $M $IN --input sr=$I/sr.npy --print 2
echo "## (works with --bind)"; $B/q8run $M $IN --bind sr=$I/sr.npy --out $S/repro/f1b
echo "## F2: --min-sqnr ignores --bind: quantize exits 1, no .q8"
$B/quantize $M -o $S/repro/f2.q8 --calib $I/calib --bind sr=$I/sr.npy --wide-range int8 --min-sqnr 20; echo "rc=$?"
echo "## F2b: the automatic FP32 fallback probe (default --min-sqnr auto) dies the same way, as a warning"
$B/quantize $M -o $S/repro/f2b.q8 --calib $I/calib --bind sr=$I/sr.npy --wide-range int8; echo "rc=$?"
echo "## F3: q8report cannot compare it at all (no --bind option)"
$B/q8report $M $S/repro/f2b.q8 --data $I/calib -o $S/repro/f3.html; echo "rc=$?"
echo "## F5: default quantize keeps the whole VAD FP32: '0 INT8 nodes'"
$B/quantize $M -o $S/repro/f5.q8 --calib $I/calib --bind sr=$I/sr.npy; echo "rc=$?"
echo "## F4: --bind sr=FILE is given, yet calib/ must also hold an sr/ subfolder"
mkdir -p $S/repro/calib_nosr; cp -r $I/calib/input $I/calib/state $S/repro/calib_nosr/
$B/quantize $M -o $S/repro/f4.q8 --calib $S/repro/calib_nosr --bind sr=$I/sr.npy; echo "rc=$?"
