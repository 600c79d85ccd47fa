#!/bin/sh
# Build the libFuzzer harnesses and run each for a bounded time.
#
#   tests/fuzz/run.sh SECONDS [BUILD_DIR]
#
# SECONDS is the total, split evenly between the harnesses (ONNX, npy/pb, .q8). BUILD_DIR
# (default build-fuzz) is configured with clang and -DQ8_FUZZ=ON if needed;
# the growing corpora live in BUILD_DIR/fuzz-corpus/<harness> (seeded from
# tests/corpus/onnx/valid, tests/fuzz/seeds_npy and the corrupt corpora in
# tests/corpus), crash reproducers in
# BUILD_DIR/fuzz-artifacts. Exits non-zero if a harness found anything.
# Reproduce: BUILD_DIR/tests/fuzz/fuzz_onnx BUILD_DIR/fuzz-artifacts/crash-...
set -eu
secs=${1:?usage: tests/fuzz/run.sh SECONDS [BUILD_DIR]}
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${2:-$src/build-fuzz}
jobs=${Q8_FUZZ_JOBS:-2}

if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$src" -B "$build" -DQ8_FUZZ=ON -DCMAKE_C_COMPILER=clang -DQ8_WERROR=ON \
        -DCMAKE_BUILD_TYPE=Debug >/dev/null
fi
cmake --build "$build" -j"$jobs" --target fuzz_onnx fuzz_npy fuzz_q8 >/dev/null

per=$((secs / 3))
[ "$per" -ge 1 ] || per=1
mkdir -p "$build/fuzz-artifacts"
# A single allocation above 2 GiB, or 2 GiB of RSS, counts as a bug: the
# inputs are tiny, so the loaders must refuse such sizes before allocating.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
status=0
for h in fuzz_onnx fuzz_npy fuzz_q8; do
    case $h in
    fuzz_onnx) seeds="$src/tests/corpus/onnx/valid $src/tests/corpus/onnx $src/tests/fuzz/seeds_onnx"; dict="-dict=$src/tests/fuzz/onnx.dict" ;;
    fuzz_npy) seeds="$src/tests/fuzz/seeds_npy $src/tests/corpus/npy"; dict="-dict=$src/tests/fuzz/npy.dict" ;;
    fuzz_q8) seeds="$src/tests/fuzz/seeds_q8"; dict="" ;;
    esac
    corpus="$build/fuzz-corpus/$h"
    mkdir -p "$corpus"
    echo "== $h: $per s"
    # shellcheck disable=SC2086
    if ! "$build/tests/fuzz/$h" "$corpus" $seeds $dict -max_total_time="$per" -timeout=10 \
            -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
            -artifact_prefix="$build/fuzz-artifacts/" 2>"$build/fuzz-$h.log"; then
        status=1
        echo "$h FOUND A BUG; see $build/fuzz-$h.log and $build/fuzz-artifacts/"
    fi
    grep -E '^stat::(number_of_executed_units|peak_rss_mb)|^#[0-9]+ *DONE' "$build/fuzz-$h.log" || true
done
exit $status
