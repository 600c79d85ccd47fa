#!/usr/bin/python3
"""The memory a .q8 takes when it runs: file, resident weights, arena, peak
RSS, and the PSS of each of two processes running it at once (their shared
file pages counted half each), against ONNX Runtime's peak RSS on the .onnx.

  memory_table.py [--q8run PATH] [--threads T] [--no-ort] [--out FILE] MODEL.q8...

Like cpu_vs_ort.py, the .onnx of the same stem beside each .q8 is ORT's
model, and every STEM.inputs/NAME.npy beside it is an input. For each model:
  q8run MODEL.q8 --input ... --threads T --bench 20 --json
      (weights_bytes, arena_bytes, peak_rss_bytes: from a small parent shell)
  two of `q8run MODEL.q8 --input ... --threads T --bench N` at once, N sized
      for about 3 s of runs; /proc/PID/smaps_rollup of each sampled every
      0.1 s while both run: the largest Pss and Rss of each (kB)
  node tools/ort/run_ort.js MODEL.onnx --input ... --bench 20 --json (peak RSS)
Prints a markdown table.
"""
import argparse
import datetime
import glob
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ort"))
import q8cmp  # noqa: E402


def inputs_for(q8):
    stem = q8[:-3]
    # NAME may hold a '/' (a subfolder): TensorFlow's input names do
    return [f"{os.path.relpath(p, stem + '.inputs')[:-4]}={p}"
            for p in sorted(glob.glob(f"{stem}.inputs/**/*.npy", recursive=True))]


def rollup(pid):
    """Pss and Rss of pid in bytes, or None once it is gone."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            v = {}
            for line in f:
                k, _, rest = line.partition(":")
                if k in ("Pss", "Rss"):
                    v[k] = int(rest.split()[0]) * 1024
            return v
    except OSError:
        return None


def running(pid, exe):
    try:
        return os.path.realpath(f"/proc/{pid}/exe") == exe
    except OSError:
        return False


def two_processes(cmd):
    """Runs cmd twice at once; (Pss, Rss) of each at the last sample taken
    while both run their benchmark loops (after exec: a sample of the forked
    Python before it would count Python's pages)."""
    exe = os.path.realpath(cmd[0])
    ps = [subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for _ in range(2)]
    best = [{"Pss": 0, "Rss": 0}, {"Pss": 0, "Rss": 0}]
    time.sleep(0.5)
    while all(p.poll() is None for p in ps):
        rs = [rollup(p.pid) for p in ps]
        if all(rs) and all(running(p.pid, exe) for p in ps):
            best = rs
        time.sleep(0.1)
    for p in ps:
        _, err = p.communicate()
        if p.returncode != 0:
            raise RuntimeError(f"exit {p.returncode}: {' '.join(cmd)}\n{err.decode().strip()}")
    return best


def mib(b):
    return "—" if b is None else f"{b / 2**20:.2f} MiB"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--q8run")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--no-ort", action="store_true")
    ap.add_argument("--out")
    ap.add_argument("models", nargs="+")
    a = ap.parse_args()
    q8run = q8cmp.find_q8run(a.q8run)
    ort = None if a.no_ort else q8cmp.ort_command()
    L = [f"Measured {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
         f"{os.cpu_count()} CPUs, --threads {a.threads}.", "",
         "| model | .q8 file | resident weights | weights / file | arena | peak RSS | "
         "PSS, 2 processes (each) | RSS, 2 processes (each) | ORT peak RSS |",
         "|---|---|---|---|---|---|---|---|---|"]
    for q8 in a.models:
        name = os.path.basename(q8)
        ins = [x for i in inputs_for(q8) for x in ("--input", i)]
        base = [q8run, q8, *ins, "--threads", str(a.threads)]
        try:
            j, _ = q8cmp.run_json(base + ["--bench", "20", "--json"])
            n = max(20, int(3000 / max(j["median_ms"], 0.01)))
            two = two_processes(base + ["--bench", str(n)])
            o = None
            onnx = q8[:-3] + ".onnx"
            if ort and os.path.exists(onnx):
                oj, _ = q8cmp.run_json(ort + [onnx, *ins, "--threads", str(a.threads), "--bench",
                                              "20", "--json"])
                o = oj.get("peak_rss_bytes")
        except RuntimeError as e:
            print(f"{name}: {e}", file=sys.stderr)
            L.append(f"| {name} | failed: {str(e).splitlines()[-1][:80]} |||||||")
            continue
        size = os.path.getsize(q8)
        w = j["weights_bytes"]
        L.append(f"| {name} | {mib(size)} | {mib(w)} | {w / size:.3f} | {mib(j['arena_bytes'])} | "
                 f"{mib(j.get('peak_rss_bytes'))} | {mib(two[0]['Pss'])}, {mib(two[1]['Pss'])} | "
                 f"{mib(two[0]['Rss'])}, {mib(two[1]['Rss'])} | {mib(o)} |")
        print(L[-1], file=sys.stderr)
    text = "\n".join(L) + "\n"
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
