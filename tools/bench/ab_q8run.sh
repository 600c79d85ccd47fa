#!/usr/bin/env bash
# Two q8run builds on the same models, side by side: for each MODEL, R rounds
# alternate OLD and NEW (`--bench N --threads T`); each side's figure is the
# median of its round medians, printed with the rounds and new/old (> 1: NEW
# is slower). Inputs: every STEM.inputs/NAME.npy beside the model (the layout
# of prepare_bench.sh and prepare_kit_bench.sh). For a kernel change checked
# against the commit it started from, on any model (tools/regress/
# same_speed.py builds the reference itself but runs only the shipped and zoo
# models).
#   tools/bench/ab_q8run.sh OLD_Q8RUN NEW_Q8RUN THREADS MODEL...
# Environment: ROUNDS (default 3), RUNS (default 30).
set -euo pipefail
if [ $# -lt 4 ]; then
    echo "usage: ab_q8run.sh OLD_Q8RUN NEW_Q8RUN THREADS MODEL..." >&2
    exit 2
fi
old=$1 new=$2 threads=$3
shift 3
rounds=${ROUNDS:-3} runs=${RUNS:-30}
median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
bench() { # BIN MODEL ARGS...: the run's median ms
    local bin=$1 model=$2
    shift 2
    "$bin" "$model" "$@" --threads "$threads" --bench "$runs" 2>&1 |
        sed -n 's/.*median \([0-9.]*\) ms.*/\1/p'
}
printf '| model | old ms | new ms | new/old | old rounds | new rounds |\n|---|---:|---:|---:|---|---|\n'
for model in "$@"; do
    stem=${model%.*}
    args=()
    # NAME may hold a '/' (a subfolder): TensorFlow's input names do
    while IFS= read -r f; do
        rel=${f#"$stem".inputs/}
        args+=(--input "${rel%.npy}=$f")
    done < <(find "$stem".inputs -name '*.npy' 2>/dev/null | sort)
    o=() n=()
    for _ in $(seq "$rounds"); do
        o+=("$(bench "$old" "$model" "${args[@]}")")
        n+=("$(bench "$new" "$model" "${args[@]}")")
    done
    if [ -z "${o[*]// /}" ] || [ -z "${n[*]// /}" ]; then
        echo "ab_q8run: $model: a run printed no median (run q8run on it by hand)" >&2
        exit 1
    fi
    mo=$(printf '%s\n' "${o[@]}" | median) mn=$(printf '%s\n' "${n[@]}" | median)
    printf '| %s | %s | %s | %.3f | %s | %s |\n' "$(basename "$model")" "$mo" "$mn" \
        "$(awk -v a="$mn" -v b="$mo" 'BEGIN {print a / b}')" "${o[*]}" "${n[*]}"
done
