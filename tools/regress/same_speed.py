#!/usr/bin/python3
"""Speed check for refactors: q8run of a reference commit against this tree's,
side by side in one run, on the shipped and zoo models, FP32 and INT8.

    /usr/bin/python3 tools/regress/same_speed.py [--ref REV] [--build DIR]
        [--threads 2] [--runs 20] [--rounds 3] [--only m1,m2] [--instructions]

The reference is built as tools/regress/same_outputs.py builds it (and shares
its cache). For each model, each side's own `quantize` makes its .q8; then R
rounds alternate the two q8run processes (`--bench N --json --threads T`),
each side's figure is the median of its R medians, and the table gives
new/old (> 1: this tree is slower) with the spread of the rounds. The load
average before and after is printed: on a busy machine the ratios are noise.
With --instructions the measure is instead the instructions each q8run
executes (valgrind --tool=callgrind; load + --runs runs, one thread), which
no other process disturbs: a refactor's cost in code, not in seconds (valgrind
hides AVX-512, so both sides run their AVX2 paths). Exit 0 always (a
judgement, not a test).
"""
import re
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from same_outputs import TOP, build_ref, make_models, quantize  # noqa: E402


def bench(bld, model, inputs, threads, runs, instructions=False):
    cmd = [os.path.join(bld, "q8run"), model, "--bench", str(runs), "--json",
           "--threads", str(threads)]
    for k, v in inputs.items():
        cmd += ["--input", f"{k}={v}"]
    if instructions:
        cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"] + cmd
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return None
    if instructions:
        m = re.search(r"Collected : (\d+)", p.stderr)
        return int(m.group(1)) / 1e6 if m else None
    return json.loads(p.stdout.strip().splitlines()[-1])["median_ms"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ref", default="HEAD")
    ap.add_argument("--build", default=os.path.join(TOP, "build"))
    ap.add_argument("--cache", default=os.path.expanduser(os.environ.get("Q8_CACHE", "~/.cache/q8")) + "/regress")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only")
    ap.add_argument("--instructions", action="store_true",
                    help="count instructions under valgrind instead of timing")
    a = ap.parse_args()
    if a.instructions:
        a.rounds, a.threads = 1, 1
    sha, ref = build_ref(a.ref, a.cache, False)
    new = os.path.abspath(a.build)
    models = [m for m in make_models(a.cache) if not m[0].endswith("_b64")]
    if a.only:
        keep = set(a.only.split(","))
        models = [m for m in models if m[0] in keep]
    work = tempfile.mkdtemp(prefix="q8-speed-")
    load0 = os.getloadavg()
    unit = "M instructions" if a.instructions else "ms"
    print(f"| model | kind | old {unit} | new {unit} | new/old | rounds new/old |")
    print("|---|---|---:|---:|---:|---|")
    for name, onnx, inputs, calib, shape in models:
        for kind in ("fp32", "int8"):
            files = {}
            for side, bld in (("old", ref), ("new", new)):
                if kind == "fp32":
                    files[side] = onnx
                    continue
                q = os.path.join(work, f"{name}.{side}.q8")
                if quantize(bld, onnx, q, calib, shape, []).returncode != 0:
                    files = None
                    break
                files[side] = q
            if not files:
                continue
            ms = {"old": [], "new": []}
            for r in range(a.rounds):
                order = ("old", "new") if r % 2 == 0 else ("new", "old")
                for side in order:
                    t = bench(ref if side == "old" else new, files[side], inputs, a.threads, a.runs,
                              a.instructions)
                    if t is not None:
                        ms[side].append(t)
            if len(ms["old"]) < a.rounds or len(ms["new"]) < a.rounds:
                print(f"| {name} | {kind} | failed | | | |")
                continue
            o, n = statistics.median(ms["old"]), statistics.median(ms["new"])
            if o <= 0:
                print(f"| {name} | {kind} | {o:.3f} | {n:.3f} | - | too fast to compare |")
                continue
            per = ", ".join(f"{x / y:.2f}" if y > 0 else "-" for x, y in zip(ms["new"], ms["old"]))
            print(f"| {name} | {kind} | {o:.3f} | {n:.3f} | {n / o:.2f} | {per} |", flush=True)
    load1 = os.getloadavg()
    print(f"\nreference {sha[:12]} vs {new}; {a.threads} threads, {a.runs} runs x {a.rounds} rounds; "
          f"load average {load0[0]:.2f} before, {load1[0]:.2f} after ({os.cpu_count()} CPUs)")


if __name__ == "__main__":
    main()
