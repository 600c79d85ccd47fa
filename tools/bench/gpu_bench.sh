#!/usr/bin/env bash
# Benchmarks of the CUDA backend on a GPU machine, in one command well inside
# the device tool's 10-minute limit, building nothing there:
#
#   tools/bench/gpu_bench.sh BUNDLE [OUT] [-- GPU_BENCH_ARGS...]
#
# Runs tools/bench/gpu_bench.py (INT8 GEMM 4096^3 q8 vs torch._int_mm vs FP16
# cuBLAS at three workspace limits; ResNet-50 and a BERT-base encoder at batch
# 1 and 32: q8 INT8 vs PyTorch FP32/FP16 eager and CUDA graph vs onnxruntime;
# compute and end-to-end times, device memory, agreement) with a 480 s
# budget. PyTorch runs in its own environment; q8's programs get the bundle's
# libraries (Q8_LIBPATH) for themselves only. Results are written to OUT
# after every step (gpu_results.json, gpu_results.md, bench.log). A third
# command for where the time goes (PYTHON picks the interpreter, e.g. for
# the --smoke check here: PYTHON=/usr/bin/python3 gpu_bench.sh B O -- --smoke):
#   tools/bench/gpu_bench.sh BUNDLE "$OUT" -- --batches 32 --profile --runs 40
set -uo pipefail
# shellcheck source=gpu_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/gpu_lib.sh"
shift $(( $# >= 2 ? 2 : 1 ))
[ "${1:-}" = "--" ] && shift
budget=${Q8_BENCH_BUDGET:-480}
: > "$summary"
: > "$results"
t=$(elapsed)
timeout $(( budget + 40 )) "${PYTHON:-python3}" -u "$(dirname "${BASH_SOURCE[0]}")/gpu_bench.py" \
    --bundle "$bundle" --out "$out" --budget "$budget" "$@" > "$out/bench.log" 2>&1
record gpu_bench.py $? $(( $(elapsed) - t )) "$(tail -1 "$out/bench.log" | cut -c1-200)"
[ -f "$out/gpu_results.md" ] && cat "$out/gpu_results.md" || tail -40 "$out/bench.log"
