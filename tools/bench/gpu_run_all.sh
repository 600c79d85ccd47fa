#!/usr/bin/env bash
# Everything q8 checks and measures on a GPU machine, in one command that ends
# within the device tool's 10-minute limit, building nothing there:
#
#   tools/bench/gpu_run_all.sh BUNDLE [OUT]
#
# BUNDLE: binaries built elsewhere with -DQ8_CUDA=ON and packed by
# /work/shared/tools/device-bundle (bin/q8run, bin/quantize, bin/test_cuda,
# bin/gpu_igemm_bench); see docs/cuda.md for the exact commands. OUT defaults
# to $OUT (the device tool's folder that comes back). Steps, each with its own
# time limit:
#   1. the GPU and its driver (nvidia-smi)                          -> summary.md
#   2. test_cuda (CUDA vs the CPU executor, every op + MNIST models) -> tests.log
#   3. test_cuda under compute-sanitizer memcheck                   -> memcheck.log
#   4. the tiled im2col and the row-wise kernels under racecheck     -> racecheck.log
#   5. tools/bench/gpu_bench.py: ResNet-50 and BERT-base, batch 1 and 32, q8 INT8
#      vs PyTorch FP32/FP16 eager and CUDA graph vs onnxruntime; INT8 GEMM 4096^3
#                                            -> gpu_results.md, gpu_results.json, bench.log
# The last lines printed are the summary and the benchmark table.
set -uo pipefail
[ $# -ge 1 ] || { echo "usage: $0 BUNDLE [OUT]" >&2; exit 2; }
bundle=$(cd "$1" && pwd)
out=${2:-${OUT:-/tmp/q8gpu_out}}
mkdir -p "$out"
tools_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)  # not "here": env.sh sets that
start=$(date +%s)
elapsed() { echo $(( $(date +%s) - start )); }
summary="$out/summary.md"
: > "$summary"
note() { echo "$*" | tee -a "$summary"; }

# shellcheck disable=SC1091
. "$bundle/env.sh"
# test_cuda reads models/mnist from this copy of the tree
export Q8_SOURCE_DIR=$(cd "$tools_dir/../.." && pwd)
# cuBLASLt 13 from the system CUDA, or from PyTorch's nvidia-cublas wheel.
if ldd "$bundle/bin/q8run" | grep -q "not found"; then
    for d in $(python3 - <<'PY' 2>/dev/null
import glob, os, site
for p in site.getsitepackages():
    for lib in glob.glob(os.path.join(p, "nvidia", "**", "libcublasLt.so*"), recursive=True):
        print(os.path.dirname(lib))
PY
    ); do export LD_LIBRARY_PATH="$d:$LD_LIBRARY_PATH"; done
fi
missing=$(ldd "$bundle/bin/q8run" | grep "not found" || true)

note "# q8 on the GPU: $(date -u '+%Y-%m-%d %H:%M UTC')"
note ""
note "- GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -1)"
note "- bundle: $bundle ($(ls "$bundle/bin" | tr '\n' ' '))"
[ -z "$missing" ] || note "- MISSING LIBRARIES: $missing"

# 2. the tests (suite cuda: on the GPU; cuda_emulated: the same checks on the host)
t=$(elapsed)
timeout 150 "$bundle/bin/test_cuda" --jobs 1 --verbose > "$out/tests.log" 2>&1
rc=$?
note "- test_cuda: exit $rc in $(( $(elapsed) - t )) s: $(grep -a 'Synthesis' "$out/tests.log" | tail -1); $(grep -a -c '^\[SKIP\]' "$out/tests.log") skipped"
grep -a -m1 '^\[SKIP\]' "$out/tests.log" | sed 's/^/    first skip: /' | tee -a "$summary"
grep -a -E '^\[FAIL\]|CRASH|\[----\] .*: ' "$out/tests.log" | head -20 | sed 's/^/    /' | tee -a "$summary"

# 3. memcheck over the GPU suite (Criterion forks one process per test), but
#    the two larger MNIST models, to stay within the time
if command -v compute-sanitizer >/dev/null; then
    t=$(elapsed)
    timeout 170 compute-sanitizer --tool memcheck --target-processes all --error-exitcode 9 \
        "$bundle/bin/test_cuda" --jobs 1 --filter 'cuda/!(mnist_cnn|mnist_vit)' \
        > "$out/memcheck.log" 2>&1
    rc=$?
    note "- memcheck: exit $rc in $(( $(elapsed) - t )) s (9: errors found, 124: time limit); $(grep -a -c 'Invalid\|ERROR SUMMARY: [1-9]' "$out/memcheck.log") error lines; $(grep -a 'Synthesis' "$out/memcheck.log" | tail -1)"
    grep -a -E 'ERROR SUMMARY|Invalid' "$out/memcheck.log" | sort | uniq -c | head -10 | sed 's/^/    /' | tee -a "$summary"
    # 4. racecheck: the tiled im2col (shared memory: qconv, qconvtranspose) and the
    #    warp-per-row kernels (shuffles)
    t=$(elapsed)
    timeout 80 compute-sanitizer --tool racecheck --target-processes all --error-exitcode 9 \
        "$bundle/bin/test_cuda" --jobs 1 --filter 'cuda/@(softmax|layernorm|qconv|qconvtranspose)' \
        > "$out/racecheck.log" 2>&1
    rc=$?
    note "- racecheck: exit $rc in $(( $(elapsed) - t )) s; $(grep -a 'RACECHECK SUMMARY\|ERROR SUMMARY' "$out/racecheck.log" | sort | uniq -c | tr '\n' ' ')"
else
    note "- compute-sanitizer: not found, memcheck and racecheck skipped"
fi

# 5. the benchmarks, in the time that is left (the whole call must end before 600 s)
budget=$(( 560 - $(elapsed) ))
note "- benchmark budget: $budget s"
timeout $(( budget + 20 )) python3 -u "$tools_dir/gpu_bench.py" --bundle "$bundle" --out "$out" \
    --budget "$budget" > "$out/bench.log" 2>&1
rc=$?
note "- gpu_bench.py: exit $rc after $(elapsed) s in all"
echo
cat "$summary"
echo
[ -f "$out/gpu_results.md" ] && cat "$out/gpu_results.md" || tail -30 "$out/bench.log"
