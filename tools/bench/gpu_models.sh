#!/usr/bin/env bash
# The CUDA backend on real and zoo models against the CPU executor, on the GPU
# machine (archive made here by tools/bench/prepare_gpu_models.sh):
#   tools/bench/gpu_models.sh BUNDLE ARCHIVE [OUT]
# For each model: q8run --device cuda, outputs compared with the CPU's stored
# ones (INT8 .q8 models bit for bit where the output is the last int8 op's
# dequantization, float ops within 1e-4 relative; where the emulated CUDA
# backend differs from the CPU, as with a float32 Conv, its bytes instead),
# the same run with Q8_CUDA_MAP=force (weights read in place from the mapped
# file) compared byte for byte with the copied-weights run, then --bench 50 --json (device time,
# device bytes, cuBLASLt fallbacks). Appends a line per model to
# OUT/summary.md and OUT/steps.jsonl as soon as it is done.
set -uo pipefail
[ $# -ge 2 ] || { echo "usage: $0 BUNDLE ARCHIVE [OUT]" >&2; exit 2; }
archive=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
set -- "$1" "${3:-${OUT:-/tmp/q8gpu_out}}"
# shellcheck source=gpu_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/gpu_lib.sh"
work=$(mktemp -d)
tar -C "$work" -xJf "$archive"
cmp_py='
import json, sys, glob, os
import numpy as np
ref, got = sys.argv[1], sys.argv[2]
worst, ident, n = 0.0, 0, 0
for f in sorted(glob.glob(os.path.join(ref, "*.npy"))):
    a = np.load(f); b = np.load(os.path.join(got, os.path.basename(f)))
    n += 1
    if a.shape != b.shape or a.dtype != b.dtype:
        print(json.dumps({"error": f"{os.path.basename(f)}: {b.dtype}{b.shape} vs cpu {a.dtype}{a.shape}"})); sys.exit(1)
    if a.tobytes() == b.tobytes(): ident += 1; continue
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    rel = float(np.linalg.norm(a64 - b64) / max(np.linalg.norm(a64), 1e-30))
    if not np.isfinite(rel): rel = float("inf")
    worst = max(worst, rel)
print(json.dumps({"outputs": n, "identical": ident, "worst_rel": worst}))
sys.exit(0 if worst <= 1e-4 else 1)
'
for f in "$work"/models/*.q8; do
    [ -f "$f" ] || continue
    name=$(basename "$f")
    t=$(elapsed)
    ins=()
    for x in "$f.inputs"/*.npy; do ins+=(--input "$(basename "$x" .npy)=$x"); done
    mkdir -p "$work/o/$name/copy" "$work/o/$name/map"
    rc=0
    timeout 60 "${Q8ENV[@]}" "$bundle/bin/q8run" "$f" "${ins[@]}" --device cuda --out "$work/o/$name/copy" \
        > /dev/null 2> "$work/o/$name/err" || rc=$?
    if [ $rc -ne 0 ]; then
        record "model $name" $rc $(( $(elapsed) - t )) "cuda run failed: $(head -2 "$work/o/$name/err" | tr '\n' ' ')"
        continue
    fi
    c=$(python3 -c "$cmp_py" "$f.cpu" "$work/o/$name/copy" 2>&1) || {
        # float sums in another order than the CPU's: the emulation's bytes
        # are the reference, the CPU's distance is reported
        if [ -d "$f.emu" ]; then
            c="$c; vs emulated $(python3 -c "$cmp_py" "$f.emu" "$work/o/$name/copy" 2>&1)" || rc=1
        else
            rc=1
        fi
    }
    Q8_CUDA_MAP=force timeout 60 "${Q8ENV[@]}" "$bundle/bin/q8run" "$f" "${ins[@]}" --device cuda \
        --out "$work/o/$name/map" > /dev/null 2>&1 || rc=2
    same=different
    diff -rq "$work/o/$name/copy" "$work/o/$name/map" > /dev/null && same=same || rc=3
    b=$(timeout 60 "${Q8ENV[@]}" "$bundle/bin/q8run" "$f" "${ins[@]}" --device cuda --bench 50 --json 2>&1 \
        | tail -1 | python3 -c '
import json, sys
j = json.loads(sys.stdin.read())
print(" ".join(f"{k}={j[k]}" for k in ("device_median_ms", "median_ms", "device_bytes", "device_delta_bytes",
      "weights_staging_bytes", "igemm_fallbacks", "cuda_graph", "host_nodes", "host_ops") if k in j))' 2>&1) || rc=4
    record "model $name" $rc $(( $(elapsed) - t )) "vs cpu $c; map=force $same; $b"
done
rm -rf "$work"
