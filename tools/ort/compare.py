#!/usr/bin/python3
"""Run a model with q8run and with ONNX Runtime on the same inputs and compare
every output.

  compare.py MODEL.onnx --input [NAME=]FILE... [--q8-model MODEL.q8] [--q8run PATH]
             [--rtol 1e-4] [--floor X] [--argmax-axis -1] [--min-argmax 1.0]
             [--threads N] [--keep DIR]

FP32 check (default): q8run and ORT both run MODEL.onnx.
Quantized check: --q8-model MODEL.q8 makes q8run run the .q8 while ORT runs the
.onnx it came from; pass looser tolerances then, e.g. --rtol 0.05
--min-argmax 0.99 --tie 0.

Prints one line per output (max abs error; max relative error
|q8-ort| / max(|ort|, floor), floor = RMS of the ORT output unless --floor;
argmax agreement over --argmax-axis) and exits 0 when all outputs are within
tolerance, 1 when one is not, 2 when a run failed or the arguments are wrong.
"""

import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import q8cmp  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 2)[2])
    ap.add_argument("model", help="the .onnx model (what ORT runs; q8run too unless --q8-model)")
    ap.add_argument("--input", action="append", required=True, metavar="[NAME=]FILE",
                    help="passed unchanged to both runners (.npy or .pb)")
    ap.add_argument("--q8-model", help="what q8run runs instead of MODEL (e.g. a .q8)")
    ap.add_argument("--q8run", help="q8run binary (default: $Q8RUN, build/q8run, PATH)")
    ap.add_argument("--node", default="node", help="node binary for run_ort.js")
    ap.add_argument("--rtol", type=float, default=1e-4,
                    help="max allowed |q8-ort| / max(|ort|, floor) (default 1e-4)")
    ap.add_argument("--floor", type=float, default=None,
                    help="absolute floor of the relative error's denominator "
                         "(default: --floor-frac * RMS of the ORT output)")
    ap.add_argument("--floor-frac", type=float, default=1.0,
                    help="default floor as a fraction of the ORT output's RMS (default 1)")
    ap.add_argument("--argmax-axis", type=int, default=-1,
                    help="axis of the argmax check (default -1; 1 for NCHW class maps)")
    ap.add_argument("--min-argmax", type=float, default=1.0,
                    help="fraction of rows whose argmax must agree (default 1.0)")
    ap.add_argument("--tie", type=float, default=None,
                    help="a differing argmax counts as agreeing when ORT's values at the two "
                         "picks are within tie * |max| (default 2*rtol; 0 = raw agreement)")
    ap.add_argument("--threads", type=int, default=None, help="--threads for both runners")
    ap.add_argument("--keep", metavar="DIR",
                    help="write outputs to DIR/q8 and DIR/ort and keep them")
    ap.add_argument("-v", "--verbose", action="store_true", help="print the commands run")
    a = ap.parse_args()

    q8run = q8cmp.find_q8run(a.q8run)
    ort = q8cmp.ort_command(a.node)
    work = a.keep or tempfile.mkdtemp(prefix="q8cmp.")
    q8_dir, ort_dir = os.path.join(work, "q8"), os.path.join(work, "ort")
    ins = []
    for i in a.input:
        ins += ["--input", i]
    thr = ["--threads", str(a.threads)] if a.threads else []
    cmds = [("q8run", [q8run, a.q8_model or a.model] + ins + ["--out", q8_dir] + thr),
            ("ORT", ort + [a.model] + ins + ["--out", ort_dir] + thr)]
    try:
        for label, cmd in cmds:
            if a.verbose:
                print("+", " ".join(cmd), flush=True)
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            if p.returncode != 0:
                err = p.stderr.strip() or p.stdout.strip()
                print(f"compare: {label} failed (exit {p.returncode}): {err}", file=sys.stderr)
                return 2
        names = q8cmp.model_output_names(a.model)
        results = []
        for name in names:
            fn = q8cmp.sanitize(name) + ".npy"
            pq, po = os.path.join(q8_dir, fn), os.path.join(ort_dir, fn)
            if not os.path.exists(po):
                print(f"compare: ORT wrote no {po}", file=sys.stderr)
                return 2
            if not os.path.exists(pq):
                r = q8cmp.Result(name)
                r.fail(f"q8run wrote no {fn}")
            else:
                r = q8cmp.compare(name, q8cmp.load_tensor(pq), q8cmp.load_tensor(po), a.rtol,
                                  floor=a.floor, floor_frac=a.floor_frac,
                                  argmax_axis=a.argmax_axis, min_argmax=a.min_argmax, tie=a.tie)
            results.append(r)
            print(r.line(), flush=True)
        bad = sum(not r.ok for r in results)
        print(f"{len(results) - bad}/{len(results)} outputs within tolerance "
              f"(rtol {a.rtol:g}, q8: {a.q8_model or a.model}, ORT: {a.model})")
        return 1 if bad else 0
    finally:
        if not a.keep:
            import shutil
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
