#!/bin/sh
# Run each exported model with onnxruntime-node on test_x.npy (batch 1000, then batch 1)
# and compare with the torch logits that train.py left in data/.
# Needs onnxruntime-node on NODE_PATH, e.g.:
#   mkdir /tmp/ort && cd /tmp/ort && npm install --ignore-scripts onnxruntime-node
#   NODE_PATH=/tmp/ort/node_modules ./check_onnx.sh [MODEL...]
set -eu
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for m in ${*:-mlp cnn vit vit_opset17}; do
    ref=data/${m%_opset17}_torch_logits.npy
    for b in 1000 1; do
        node ort_run.js "$m.onnx" test_x.npy "$tmp/$m.npy" --batch $b >/dev/null
        printf '%-12s batch %-4s ' "$m" "$b"
        /usr/bin/python3 eval.py "$tmp/$m.npy" --ref "$ref" | tr '\n' ' '
        echo
    done
done
