#!/usr/bin/env bash
# One device call's worth of GPU work, sized for the 15-minute device budget,
# everything written under a work folder that is archived into $OUT/r.tgz every
# 10 s (a call may come back with at most 8 files; an overrun keeps the rest):
#   tools/bench/gpu_round.sh check   # GPU test suite, op tests, models vs CPU, map, GEMM
#   tools/bench/gpu_round.sh bench   # PyTorch comparison (ResNet-50, BERT) + sanitizers
#   tools/bench/gpu_round.sh all     # both, one after the other (about 8 minutes)
#   tools/bench/gpu_round.sh checksan  # check, then the sanitizers alone (no PyTorch)
# Expects .bundle-gpu/bundle.tar.xz (tar of .bundle-cuda, made by
# ../shared/tools/device-bundle) and .bundle-gpu/models.tar.xz
# (tools/bench/prepare_gpu_models.sh); carry [".bundle-gpu"]. See docs/cuda.md.
set -uo pipefail
part=${1:?usage: gpu_round.sh check|bench|all|checksan}
src=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-/tmp/q8gpu_out}
w=/tmp/q8w
mkdir -p "$w" "$out"
tar -C /tmp -xJf "$src/.bundle-gpu/bundle.tar.xz"
b=/tmp/.bundle-cuda
pack() { tar -C "$w" -czf "$out/r.tgz.t" . && mv "$out/r.tgz.t" "$out/r.tgz"; }
# killed between archives, never in the middle of one (the last pack below
# rewrites the same file)
(trap 'exit 0' TERM; while :; do sleep 10 & wait $!; pack; done) &
packer=$!
nvidia-smi > "$w/nvidia-smi.txt" 2>&1
do_check() {
    Q8_CHECK_LIMITS=${Q8_CHECK_LIMITS:-"test_cuda=120 memcheck=0 racecheck=0 synccheck=0 cuda_map=30 igemm=30"} \
        bash "$src/tools/bench/gpu_check.sh" "$b" "$w/check" > /dev/null
    # the op test files: every graph on the CPU and on the GPU, compared
    (
        . "$src/tools/bench/gpu_lib.sh" "$b" "$w/ops"
        # every test file whose graphs q8t_run compares across backends
        for t in ${Q8_OP_TESTS:-test_ops_int8 test_ops_nn test_ops_math test_ops_tensor test_ops_gemm test_ops_rnn test_ops_spectral test_gather_tables test_added_tables test_canonicalize test_matmul_bias test_passes test_smoke}; do
            [ -x "$b/bin/$t" ] || { record "$t" 127 0 "not in the bundle" > /dev/null; continue; }
            s=$(elapsed)
            Q8_SOURCE_DIR=$src timeout "${Q8_OPS_LIMIT:-45}" "${Q8ENV[@]}" "$b/bin/$t" --jobs 8 > "$w/ops/$t.log" 2>&1
            rc=$?
            record "$t" $rc $(( $(elapsed) - s )) "$(grep -a Synthesis "$w/ops/$t.log" | tail -1); $(grep -a -m3 '\[FAIL\]\|\[----\].*:' "$w/ops/$t.log" | cut -c1-240 | tr '\n' ' ')" > /dev/null
        done
    )
    bash "$src/tools/bench/gpu_models.sh" "$b" "${Q8_GPU_MODELS:-$src/.bundle-gpu/models.tar.xz}" "$w/models" > /dev/null
}
do_perf() {
    Q8_BENCH_BUDGET=${Q8_BENCH_BUDGET:-240} bash "$src/tools/bench/gpu_bench.sh" "$b" "$w/bench" -- \
        ${Q8_BENCH_ARGS:-} > /dev/null
}
do_san() {
    Q8_CHECK_LIMITS=${Q8_SAN_LIMITS:-"test_cuda=0 memcheck=90 racecheck=40 synccheck=40 cuda_map=0 igemm=0"} \
        bash "$src/tools/bench/gpu_check.sh" "$b" "$w/san" > /dev/null
}
case $part in
check) do_check ;;
bench) do_perf; do_san ;;
all) do_check; do_perf; do_san ;;
checksan) do_check; do_san ;;
*) echo "gpu_round.sh: unknown part $part" >&2 ;;
esac
kill $packer 2> /dev/null
wait $packer 2> /dev/null
pack
cat "$w"/*/summary.md 2>/dev/null
[ -f "$w/bench/gpu_results.md" ] && cat "$w/bench/gpu_results.md"
exit 0
