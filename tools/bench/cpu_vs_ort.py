#!/usr/bin/python3
"""q8 vs ONNX Runtime on the CPU, side by side; prints a markdown report.

  cpu_vs_ort.py [--threads T] [--runs N] [--rounds R] [--q8run PATH]
                [--input [NAME=]FILE]... [--out FILE] MODEL...

MODEL is an .onnx (both run it, q8 in FP32) or a .q8 (q8run runs it, ORT runs
the .onnx of the same stem beside it, and ORT's own INT8, STEM.qdq, when
it is there: the QDQ model tools/bench/ort_qdq.py writes, as ORT's
quantize_static would). Inputs: --input (with one MODEL), else
every STEM.inputs/NAME.npy beside the model (what tools/zoo/make_zoo.py writes)
is passed as --input NAME=FILE.

For each model and each of R rounds it runs
  q8run MODEL --input ... --threads T --bench N --json
  node tools/ort/run_ort.js ONNX --input ... --threads T --bench N --json
one after the other, alternating which goes first, and reports the median of
the per-round medians (ms), their ratio, q8's weight and arena bytes, and the
peak RSS of both processes, with the machine, the date, the load average and
the exact commands: ready to paste into docs/performance.md.
"""

import argparse
import datetime
import glob
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ort"))
import q8cmp  # noqa: E402


def lscpu():
    info = {}
    try:
        out = subprocess.run(["lscpu"], stdout=subprocess.PIPE, text=True, check=True).stdout
        for line in out.splitlines():
            k, _, v = line.partition(":")
            info[k.strip()] = v.strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    return info


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return float(f.read().split()[0])
    except OSError:
        return float("nan")


def git_rev():
    try:
        rev = subprocess.run(["git", "-C", q8cmp.REPO, "rev-parse", "--short", "HEAD"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                             check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", q8cmp.REPO, "status", "--porcelain", "-uno"],
                               stdout=subprocess.PIPE, text=True).stdout.strip()
        return rev + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def mib(b):
    if b is None:
        return "—"
    if b < 1024:
        return f"{b} B"
    if b < 1048576:
        return f"{b / 1024:.1f} KiB"
    return f"{b / 1048576:.1f} MiB"


def fms(v):
    """Milliseconds with 3-4 significant digits."""
    if v >= 100:
        return f"{v:.0f}"
    if v >= 10:
        return f"{v:.1f}"
    if v >= 1:
        return f"{v:.2f}"
    return f"{v:.3g}"


def model_inputs(model, explicit):
    if explicit:
        return explicit
    stem = model.rsplit(".", 1)[0]
    # NAME may hold a '/' (a subfolder): TensorFlow's input names do
    files = sorted(glob.glob(stem + ".inputs/**/*.npy", recursive=True))
    if not files:
        raise SystemExit(f"no inputs for {model}: pass --input or put NAME.npy files in "
                         f"{stem}.inputs/")
    return [f"{os.path.relpath(f, stem + '.inputs')[:-4]}={f}" for f in files]


def bench_model(model, a, q8run, ort):
    stem, ext = os.path.splitext(model)
    onnx_path = model if ext == ".onnx" else stem + ".onnx"
    if not os.path.exists(onnx_path):
        raise SystemExit(f"{model}: ONNX Runtime needs {onnx_path}")
    ins = []
    for i in model_inputs(model, a.input):
        ins += ["--input", i]
    common = ["--threads", str(a.threads), "--bench", str(a.runs), "--json"]
    cmds = {"q8": [q8run, model] + ins + common, "ort": ort + [onnx_path] + ins + common}
    qdq = stem + ".qdq"
    if ext == ".q8" and os.path.exists(qdq):
        cmds["ort8"] = ort + [qdq] + ins + common
    for who in cmds:
        if who != "q8" and a.no_spin:
            cmds[who].append("--no-spin")
    res = {who: [] for who in cmds}
    err = {}
    for r in range(a.rounds):
        order = list(cmds) if r % 2 == 0 else list(reversed(cmds))
        for who in order:
            if who in err:
                continue
            try:
                j, _ = q8cmp.run_json(cmds[who])
                res[who].append(j)
            except RuntimeError as e:
                msg = str(e).splitlines()
                err[who] = msg[1] if len(msg) > 1 else msg[0]
            got = f"{res[who][-1]['median_ms']} ms" if who not in err else f"error: {err[who]}"
            print(f"  {os.path.basename(model)} round {r + 1}/{a.rounds} {who}: {got}",
                  file=sys.stderr, flush=True)
    return {"model": model, "cmds": cmds, "res": res, "err": err}


def summary(rs):
    if not rs:
        return None
    return {
        "median": statistics.median(j["median_ms"] for j in rs),
        "min": min(j["min_ms"] for j in rs),
        "spread": (min(j["median_ms"] for j in rs), max(j["median_ms"] for j in rs)),
        "rss": max(j.get("peak_rss_bytes", 0) for j in rs),
        "weights": rs[0].get("weights_bytes"),
        "arena": rs[0].get("arena_bytes"),
        "base": rs[0].get("rss_before_session_bytes"),
        "ort_version": rs[0].get("ort_version"),
    }


def handoff_probe(q8run):
    """build/handoff_probe's JSON (beside q8run), or None."""
    exe = os.path.join(os.path.dirname(os.path.abspath(q8run)), "handoff_probe")
    try:
        out = subprocess.run([exe], stdout=subprocess.PIPE, text=True, check=True).stdout
        return json.loads(out.strip().splitlines()[-1])
    except (OSError, subprocess.CalledProcessError, ValueError, IndexError):
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("models", nargs="+", metavar="MODEL")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                    help="--threads for both (default: all CPUs, %(default)s here)")
    ap.add_argument("--runs", type=int, default=20, help="timed runs per process (default 20)")
    ap.add_argument("--rounds", type=int, default=3,
                    help="interleaved q8/ORT process pairs per model (default 3)")
    ap.add_argument("--q8run")
    ap.add_argument("--node", default="node")
    ap.add_argument("--input", action="append", metavar="[NAME=]FILE",
                    help="inputs (only with a single MODEL)")
    ap.add_argument("--no-spin", action="store_true",
                    help="ORT threads sleep instead of spinning (default: ORT's default, spin)")
    ap.add_argument("--out", help="also write the markdown to this file")
    a = ap.parse_args()
    if a.input and len(a.models) > 1:
        ap.error("--input goes with a single MODEL; use STEM.inputs/ folders for several")
    q8run = q8cmp.find_q8run(a.q8run)
    ort = q8cmp.ort_command(a.node)
    cpu = lscpu()
    date = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    load0 = loadavg()
    probe0 = handoff_probe(q8run)
    results = [bench_model(m, a, q8run, ort) for m in a.models]
    probe1 = handoff_probe(q8run)
    load1 = loadavg()

    node_v = subprocess.run([a.node, "--version"], stdout=subprocess.PIPE, text=True).stdout.strip()
    ortv = next((s["ort_version"] for s in (summary(r["res"]["ort"]) for r in results) if s), "?")
    L = []
    L.append(f"### q8 vs ONNX Runtime, CPU, {a.threads} thread{'s' if a.threads != 1 else ''}")
    L.append("")
    L.append(f"- date: {date}; q8 commit {git_rev()}")
    L.append(f"- machine: {cpu.get('Model name', platform.processor() or '?')}, "
             f"{cpu.get('CPU(s)', '?')} CPUs ({cpu.get('Core(s) per socket', '?')} cores/socket, "
             f"{cpu.get('Thread(s) per core', '?')} threads/core, "
             f"{cpu.get('Socket(s)', '?')} socket(s)), {platform.system()} {platform.release()}")
    L.append(f"- ONNX Runtime {ortv} (npm onnxruntime-node, CPU EP, intra-op threads {a.threads}, "
             f"inter-op 1, sequential, all graph optimizations"
             f"{', no spinning' if a.no_spin else ''}), Node.js {node_v}")
    L.append(f"- each figure: median over {a.rounds} process runs (q8 and ORT alternating) of "
             f"the median of {a.runs} timed runs after warm-up; [range of the {a.rounds} medians]")
    L.append(f"- load average (1 min): {load0:.2f} before, {load1:.2f} after")
    if probe0 and probe1:
        L.append(f"- 2-thread speedup of a {probe0['job_1t_us']:.1f} us job (build/handoff_probe): "
                 f"{probe0['speedup']:.2f} before, {probe1['speedup']:.2f} after (on a VM it "
                 "moves with where the host puts the vCPUs; small models' 2-thread times move "
                 "with it)")
    busy = max(load0, load1) > max(0.5, (os.cpu_count() or 1) - a.threads + 0.5)
    if busy:
        L.append("- **warning: the machine was busy (load average above the idle level for "
                 f"{a.threads} threads): other processes competed for the CPU, so these timings "
                 "are not reliable**")
    L.append("")
    int8 = any("ort8" in r["cmds"] for r in results)
    if int8:
        L.append("| model | q8 ms | ORT ms | q8/ORT | ORT INT8 ms | q8/ORT INT8 | q8 weights "
                 "| q8 arena | q8 peak RSS | ORT peak RSS |")
        L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    else:
        L.append("| model | q8 ms | ORT ms | q8/ORT | q8 weights | q8 arena | q8 peak RSS "
                 "| ORT peak RSS |")
        L.append("|---|---:|---:|---:|---:|---:|---:|---:|")
    bases = []
    for r in results:
        q, o = summary(r["res"]["q8"]), summary(r["res"]["ort"])
        name = os.path.basename(r["model"])
        if o and o["base"]:
            bases.append(o["base"])

        def ms(s):
            if not s:
                return "error"
            return f"{fms(s['median'])} [{fms(s['spread'][0])}–{fms(s['spread'][1])}]"

        def ratio(o):
            return f"{q['median'] / o['median']:.3g}" if q and o and o["median"] > 0 else "—"
        o8 = summary(r["res"].get("ort8", []))
        mid = (f" {ms(o8) if 'ort8' in r['cmds'] else '—'} | "
               f"{ratio(o8) if 'ort8' in r['cmds'] else '—'} |" if int8 else "")
        L.append(f"| {name} | {ms(q)} | {ms(o)} | {ratio(o)} |{mid} {mib(q and q['weights'])} "
                 f"| {mib(q and q['arena'])} | {mib(q and q['rss'])} | {mib(o and o['rss'])} |")
    L.append("")
    if bases:
        L.append(f"ORT peak RSS includes the Node.js runtime and the inputs: "
                 f"{mib(statistics.median(bases))} before the session was created (median over "
                 "models). q8/ORT > 1 means q8 is slower."
                 + (" ORT INT8: ORT running STEM.qdq, the QDQ model of "
                    "tools/bench/ort_qdq.py." if int8 else ""))
        L.append("")
    errs = [(os.path.basename(r["model"]), w, e) for r in results for w, e in r["err"].items()]
    if errs:
        L.append("Failures:")
        L.append("")
        for name, who, e in errs:
            L.append(f"- {name}, {dict(q8='q8run', ort='ORT', ort8='ORT INT8')[who]}: {e}")
        L.append("")
    L.append("Commands (run from the repository root):")
    L.append("")
    L.append("```")
    L.append(shlex.join([sys.executable, os.path.relpath(os.path.abspath(sys.argv[0]), q8cmp.REPO)]
                        + sys.argv[1:]))
    for r in results:
        for who in r["cmds"]:
            L.append(shlex.join(os.path.relpath(c, q8cmp.REPO) if os.path.isabs(c) and
                                c.startswith(q8cmp.REPO) else c for c in r["cmds"][who]))
    L.append("```")
    text = "\n".join(L) + "\n"
    sys.stdout.write(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
