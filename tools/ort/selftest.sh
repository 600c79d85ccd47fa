#!/bin/sh
# Self-test of tools/ort (and a bit of tools/zoo, tools/bench) on what today's
# q8 can run (Relu): tensor I/O round trips, compare.py passing on an exact
# match and failing on a perturbed q8 output, run_ort.js on backend test data,
# and one benchmark table. Needs: npm ci done in tools/ort, build/q8run.
#   sh tools/ort/selftest.sh [Q8RUN]
set -eu
cd "$(dirname "$0")/../.."
PY=/usr/bin/python3
Q8RUN=${1:-${Q8RUN:-build/q8run}}
T=$(mktemp -d /tmp/q8ortself.XXXXXX)
trap 'rm -rf "$T"' EXIT
step() { printf '\n== %s\n' "$*"; }

step "tensor_io.js round trips"
$PY tools/ort/test_tensor_io.py | tail -1

step "zoo: tiny_relu_op13"
$PY tools/zoo/make_zoo.py "$T/zoo" --only tiny_relu_op13 | tail -1
M=$T/zoo/tiny_relu_op13.onnx
X=x=$T/zoo/tiny_relu_op13.inputs/x.npy

step "compare.py, q8run vs ORT (must pass)"
$PY tools/ort/compare.py "$M" --input "$X" --q8run "$Q8RUN" --threads 2

step "compare.py with a q8run whose output is off by 1e-3 (must fail with 1)"
cat > "$T/badq8run" <<EOS
#!/bin/sh
"$(realpath "$Q8RUN")" "\$@" || exit \$?
while [ \$# -gt 0 ]; do [ "\$1" = --out ] && out=\$2; shift; done
$PY -c "import numpy as np; p='\$out/y_0.npy'; a=np.load(p); a*=np.float32(1.001); np.save(p, a)"
EOS
chmod +x "$T/badq8run"
rc=0
$PY tools/ort/compare.py "$M" --input "$X" --q8run "$T/badq8run" || rc=$?
[ "$rc" = 1 ] || { echo "selftest: expected exit 1, got $rc"; exit 1; }
echo "(exit 1 as expected)"

step "run_ort.js on the ONNX backend test data (relu, conv, softmax, gather)"
for f in node/test_relu node/test_conv_with_strides_padding node/test_softmax_axis_1 \
         node/test_gather_0 pytorch-converted/test_Conv2d; do
  $PY tools/ort/check_testdata.py --filter "$f" | tail -1
done

step "benchmark table"
$PY tools/bench/cpu_vs_ort.py --q8run "$Q8RUN" --threads 2 --runs 5 --rounds 1 "$M" 2>/dev/null |
  grep '^|'
echo
echo "selftest: all passed"
