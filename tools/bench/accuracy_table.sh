#!/usr/bin/env bash
# Accuracy and size of the shipped MNIST models: FP32, INT8 with each
# calibration method, INT8 + 50% unstructured pruning, INT8 + 2:4 pruning.
# Prints a markdown table (the one in docs/accuracy.md).
#   tools/bench/accuracy_table.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
top=$(cd "$(dirname "$0")/../.." && pwd)
m=$top/models/mnist
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

top1() { "$build/q8run" "$1" --input "$m/test_x.npy" --labels "$m/test_y.npy" --json | tail -1 |
         sed -E 's/.*"top1": ([0-9.]+).*/\1/'; }
size() { stat -c %s "$1"; }
pct() { awk -v a="$1" 'BEGIN { printf "%.1f", 100 * a }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }

echo "| model | FP32 top-1 | INT8 minmax | INT8 percentile 99.99 | INT8 entropy | INT8 mse | INT8 auto (default) | INT8 + 50% pruning | INT8 + 2:4 | ONNX bytes | .q8 bytes (ratio) | + 50% (ratio) | + 2:4 (ratio) |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for name in mlp cnn vit; do
    onnx=$m/$name.onnx
    # the first layer is protected from pruning (see docs/accuracy.md)
    case $name in
        cnn) skip=(--prune-skip /features/features.0/Conv) ;;
        vit) skip=(--prune-skip /patch/Conv) ;;
        *) skip=() ;;
    esac
    q() { "$build/quantize" "$onnx" -o "$tmp/$1.q8" --calib "$m/calib" \
          --input-shape input=1000x1x28x28 "${@:2}" > /dev/null; }
    q minmax --calib-method minmax
    q percentile --calib-method percentile
    q entropy --calib-method entropy
    q mse --calib-method mse
    q auto
    q pruned --prune 0.5 "${skip[@]}"
    q sparse24 --prune-mode 2:4 "${skip[@]}"
    fp=$(top1 "$onnx")
    ob=$(size "$onnx")
    echo "| $name | $(pct "$fp") | $(pct "$(top1 "$tmp/minmax.q8")") | $(pct "$(top1 "$tmp/percentile.q8")") |" \
         "$(pct "$(top1 "$tmp/entropy.q8")") | $(pct "$(top1 "$tmp/mse.q8")") |" \
         "$(pct "$(top1 "$tmp/auto.q8")") | $(pct "$(top1 "$tmp/pruned.q8")") | $(pct "$(top1 "$tmp/sparse24.q8")") |" \
         "$ob | $(size "$tmp/auto.q8") ($(ratio "$(size "$tmp/auto.q8")" "$ob")) |" \
         "$(size "$tmp/pruned.q8") ($(ratio "$(size "$tmp/pruned.q8")" "$ob")) |" \
         "$(size "$tmp/sparse24.q8") ($(ratio "$(size "$tmp/sparse24.q8")" "$ob")) |"
done
