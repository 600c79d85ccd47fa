#!/usr/bin/env bash
# Pack real and zoo models for tools/bench/gpu_models.sh (the CUDA backend vs
# the CPU executor on the GPU machine) into one archive to `carry`:
#   tools/bench/prepare_gpu_models.sh ARCHIVE BUILD_DIR SRC_DIR...
# Each SRC_DIR holds M.q8 with M.inputs/NAME.npy (as
# prepare_bench.sh and prepare_kit_bench.sh lay them out). For every model
# that loads here, the CPU's outputs (BUILD_DIR/q8run, 2 threads) are stored
# beside it as the reference: M.cpu/NAME.npy, and the emulated CUDA
# backend's as M.emu/NAME.npy where those differ. Needs a -DQ8_CUDA=ON
# BUILD_DIR. Models over Q8_GPU_MODEL_MAX
# bytes (default 4 MB) are left out: a device call carries 64 MiB in all.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 ARCHIVE BUILD_DIR SRC_DIR..." >&2; exit 2; }
archive=$1 build=$(cd "$2" && pwd)
shift 2
max=${Q8_GPU_MODEL_MAX:-4000000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/models"
for dir in "$@"; do
    # .q8 only: the CUDA backend runs INT8 models (FP32 Conv/MatMul are CPU-only)
    for f in "$dir"/*.q8; do
        [ -f "$f" ] || continue
        base=$(basename "$f") m=${base%.*} ext=${base##*.}
        [ -d "$dir/$m.inputs" ] || continue
        [ "$(stat -L -c %s "$f")" -le "$max" ] || { echo "skip $base: over $max bytes"; continue; }
        name=$m.$ext
        ins=()
        for x in "$dir/$m.inputs"/*.npy; do ins+=(--input "$(basename "$x" .npy)=$x"); done
        mkdir -p "$work/models/$name.cpu"
        if ! "$build/q8run" "$f" "${ins[@]}" --threads 2 --out "$work/models/$name.cpu" > /dev/null 2> "$work/err"; then
            echo "skip $base: $(head -1 "$work/err")"
            rm -rf "$work/models/$name.cpu"
            continue
        fi
        # where the CUDA kernels sum floats in another order (the direct
        # float32 Conv), the emulated backend's outputs are the exact
        # reference for the GPU's (the same kernels, run on the host)
        mkdir -p "$work/models/$name.emu"
        if Q8_CUDA_EMULATE=1 "$build/q8run" "$f" "${ins[@]}" --device cuda \
               --out "$work/models/$name.emu" > /dev/null 2>&1 &&
           ! diff -rq "$work/models/$name.cpu" "$work/models/$name.emu" > /dev/null; then
            echo "$name: emulated CUDA differs from the CPU (float sums reordered); kept as $name.emu"
        else
            rm -rf "$work/models/$name.emu"
        fi
        cp -L "$f" "$work/models/$name"
        cp -rL "$dir/$m.inputs" "$work/models/$name.inputs"   # the folder may be a link
        echo "packed $name"
    done
done
tar -C "$work" -cJf "$archive" models
ls -la "$archive"
