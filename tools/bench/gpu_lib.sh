# Shared by gpu_check.sh and gpu_bench.sh (sourced, not run). Sets:
#   bundle, out, start, summary (markdown), results (JSON lines, one per step)
# and defines:
#   Q8ENV                an `env ...` prefix that runs a bundle program with the
#                        bundle's libraries, for that program only (PyTorch's
#                        environment stays untouched): timeout 9 "${Q8ENV[@]}" "$bundle/bin/q8run" ...
#   record NAME RC SECONDS DETAIL   append one step to summary.md and
#                        steps.jsonl at once, so that a later overrun loses
#                        nothing already measured
#   elapsed              seconds since the script started
[ $# -ge 1 ] || { echo "usage: $0 BUNDLE [OUT]" >&2; exit 2; }
bundle=$(cd "$1" && pwd)
out=${2:-${OUT:-/tmp/q8gpu_out}}
mkdir -p "$out"
start=$(date +%s)
elapsed() { echo $(( $(date +%s) - start )); }
summary="$out/summary.md"
results="$out/steps.jsonl"

# cuBLASLt 13 from the system CUDA, or else from PyTorch's nvidia-cublas wheel.
# q8 loads it with dlopen (kernels/cuda/lt_load.c), so ldd cannot tell:
# try to load it the way q8 will.
q8_libpath="$bundle/lib:/usr/local/cuda/lib64"
if ! LD_LIBRARY_PATH="$q8_libpath:${LD_LIBRARY_PATH:-}" python3 -c \
        'import ctypes; ctypes.CDLL("libcublasLt.so.13")' 2> /dev/null; then
    for d in $(python3 - <<'PY' 2>/dev/null
import glob, os, site
for p in site.getsitepackages():
    for lib in glob.glob(os.path.join(p, "nvidia", "**", "libcublasLt.so*"), recursive=True):
        print(os.path.dirname(lib))
PY
    ); do q8_libpath="$q8_libpath:$d"; done
fi
export Q8_LIBPATH=$q8_libpath   # gpu_bench.py runs q8's programs with it

Q8ENV=(env "LD_LIBRARY_PATH=$Q8_LIBPATH:${LD_LIBRARY_PATH:-}")

json_str() { python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$1"; }

record() {
    local name=$1 rc=$2 secs=$3 detail=$4
    echo "- $name: exit $rc in ${secs} s: $detail" | tee -a "$summary"
    echo "{\"step\": $(json_str "$name"), \"exit\": $rc, \"s\": $secs, \"detail\": $(json_str "$detail")}" >> "$results"
}
