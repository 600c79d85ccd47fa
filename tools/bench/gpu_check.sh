#!/usr/bin/env bash
# Correctness of the CUDA backend on a GPU machine, in one command well inside
# the device tool's 10-minute limit, building nothing there:
#
#   tools/bench/gpu_check.sh BUNDLE [OUT]
#
# BUNDLE: binaries built here with -DQ8_CUDA=ON and packed by
# ../shared/tools/device-bundle (bin/test_cuda, bin/q8run, bin/quantize); see
# docs/cuda.md. OUT defaults to $OUT. Each step has its own time limit and
# appends its result to OUT/summary.md and OUT/steps.jsonl as soon as it ends
# (logs beside them), so an overrun keeps what came before:
#   1. the GPU and driver                                           (10 s)
#   2. test_cuda, GPU suite only (every op and model vs the CPU)    (150 s)
#   3. compute-sanitizer memcheck on the op tests and the MLP       (150 s)
#   4. racecheck on the kernels that use shared memory              (60 s)
#   5. synccheck on the warp-shuffle kernels                        (60 s)
#   6. q8run: an MNIST model with Q8_CUDA_MAP=force and =0, outputs compared (30 s)
#   7. gpu_igemm_bench: q8's cuBLASLt INT8 GEMM at 4096^3, checked and timed (30 s)
# Q8_CHECK_LIMITS="test_cuda=120 memcheck=60 ..." overrides step limits (0
# skips a step): the device budget is 15 minutes a session, all calls together.
set -uo pipefail
# shellcheck source=gpu_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/gpu_lib.sh"
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
export Q8_SOURCE_DIR=$src   # test_cuda reads models/mnist from this tree
: > "$summary"
: > "$results"
echo "# q8 GPU correctness: $(date -u '+%Y-%m-%d %H:%M UTC')" >> "$summary"
echo >> "$summary"

t=$(elapsed)
gpu=$(timeout 10 nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -1)
record gpu $? $(( $(elapsed) - t )) "$gpu; bundle $(ls "$bundle/bin" | tr '\n' ' ')"

limit() { # NAME DEFAULT: the step's seconds, from Q8_CHECK_LIMITS if named there
    local v
    v=$(tr ' ' '\n' <<< "${Q8_CHECK_LIMITS:-}" | sed -n "s/^$1=//p" | tail -1)
    echo "${v:-$2}"
}

# 2. the GPU suite (cuda/*); the emulated suite is the host's business
t=$(elapsed)
lim=$(limit test_cuda 150)
if [ "$lim" -gt 0 ]; then
timeout "$lim" "${Q8ENV[@]}" "$bundle/bin/test_cuda" --jobs 1 --verbose --filter 'cuda/*' > "$out/tests.log" 2>&1
rc=$?
# on the GPU machine a skipped GPU test is a failure (no device, no cuBLASLt)
[ $rc -eq 0 ] && grep -a -q '^\[SKIP\] cuda::' "$out/tests.log" && rc=3
record test_cuda $rc $(( $(elapsed) - t )) "$(grep -a 'Synthesis' "$out/tests.log" | tail -1); $(grep -a -c '^\[SKIP\]' "$out/tests.log") skipped; fails: $(grep -a '^\[FAIL\]' "$out/tests.log" | head -5 | tr '\n' ' ')"
grep -a -E 'INT8 GEMM\(s\) on the plain kernel' "$out/tests.log" | sed 's/^/    /' | head -8 | tee -a "$summary"
fi

san() { # NAME TOOL LIMIT FILTER [TEST_BINARY, default test_cuda]
    local name=$1 tool=$2 limit filter=$4 bin=${5:-test_cuda}
    limit=$(limit "$name" "$3")
    [ "$limit" -gt 0 ] || return 0
    if ! command -v compute-sanitizer > /dev/null; then
        record "$name" 127 0 "compute-sanitizer not found"
        return
    fi
    local t=$(elapsed)
    timeout "$limit" "${Q8ENV[@]}" compute-sanitizer --tool "$tool" --target-processes all --error-exitcode 9 \
        "$bundle/bin/$bin" --jobs 1 --filter "$filter" > "$out/$name.log" 2>&1
    local rc=$?
    record "$name" $rc $(( $(elapsed) - t )) "(9: errors, 124: time limit) $(grep -a -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/$name.log" | sort | uniq -c | tr '\n' ' ')$(grep -a 'Synthesis' "$out/$name.log" | tail -1)"
}
# 3. memcheck: every op test and one model (the larger models take minutes)
san memcheck memcheck 150 'cuda/!(mnist_cnn*|mnist_vit)'
# 3b. memcheck on the float32 Conv through the op harness (1-D to 3-D,
#     groups, dilations, pads, fused activations): off unless given a limit
[ -x "$bundle/bin/test_ops_gemm" ] && san memcheck_conv memcheck 0 'conv_op/*' test_ops_gemm
# 4. racecheck: shared-memory kernels (tiled im2col in QConv/QConvTranspose,
#    the block reductions of softmax, layernorm, pooling and reduce)
san racecheck racecheck 60 'cuda/@(qconv|qconvtranspose|softmax|layernorm|reduce|pooling)'
# 5. synccheck: the kernels with warp shuffles and barriers
san synccheck synccheck 60 'cuda/@(softmax|layernorm|reduce|pooling|batchnorm)'

# 6. the Jetson path (weights read in place from the mapped file) on this GPU
if [ "$(limit cuda_map 30)" -gt 0 ]; then
t=$(elapsed)
m="$out/map"
mkdir -p "$m"
rc=0
timeout 60 "${Q8ENV[@]}" "$bundle/bin/quantize" "$src/models/mnist/cnn.onnx" -o "$m/cnn.q8" --calib "$src/models/mnist/calib" \
    --input-shape input=1000x1x28x28 > "$m/quantize.log" 2>&1 || rc=$?
for mode in force 0; do
    mkdir -p "$m/$mode"
    Q8_CUDA_MAP=$mode Q8_CUDA_VERBOSE=1 timeout 30 "${Q8ENV[@]}" "$bundle/bin/q8run" "$m/cnn.q8" --device cuda \
        --input "$src/models/mnist/test_x.npy" --labels "$src/models/mnist/test_y.npy" \
        --out "$m/$mode" --json > "$m/$mode.json" 2> "$m/$mode.log" || rc=$?
done
same=$(cmp -s "$m/force/logits.npy" "$m/0/logits.npy" && echo "identical outputs" || echo "OUTPUTS DIFFER")
record cuda_map $rc $(( $(elapsed) - t )) "$same; force: $(tail -1 "$m/force.json" | cut -c1-400); $(grep -a 'in place\|cannot map\|failed' "$m/force.log" | head -2 | tr '\n' ' ')"
cp "$m/force.json" "$out/cuda_map_force.json" 2>/dev/null || true
rm -rf "$m"
fi

# 7. q8's own cuBLASLt INT8 GEMM (checked against the host, then timed)
lim=$(limit igemm 30)
if [ "$lim" -gt 0 ] && [ -x "$bundle/bin/gpu_igemm_bench" ]; then
    t=$(elapsed)
    timeout "$lim" "${Q8ENV[@]}" "$bundle/bin/gpu_igemm_bench" 4096 4096 4096 50 4 > "$out/igemm.json" 2> "$out/igemm.log"
    record igemm $? $(( $(elapsed) - t )) "$(tail -1 "$out/igemm.json" | cut -c1-400) $(head -2 "$out/igemm.log" | tr '\n' ' ')"
fi

echo
cat "$summary"
