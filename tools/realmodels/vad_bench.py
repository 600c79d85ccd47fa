#!/usr/bin/env python3
"""Silero VAD models timed side by side: R rounds, each running every model
once (`q8run MODEL --bench N --json`, sr bound to 16000) in a rotating order;
per model the median of its R medians, their range and the smallest run.

    /usr/bin/python3 tools/realmodels/vad_bench.py --build build --calib DIR \\
        [--sample 0016] [--threads 1] [--rounds 9] [--runs 2000] MODEL...

DIR is a calibration folder as vad_check.py --keep writes it (input/ and
state/ subfolders); the chunk timed is --sample of it. Prints the load
average before and after: on a busy machine the differences are noise.
"""
import argparse
import json
import os
import statistics
import subprocess


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--calib", required=True)
    ap.add_argument("--sample", default="0016")
    ap.add_argument("--threads", default="1")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--runs", default="2000")
    ap.add_argument("models", nargs="+")
    a = ap.parse_args()
    q8run = os.path.join(a.build, "q8run")
    res = {m: [] for m in a.models}
    print("load before", open("/proc/loadavg").read().split()[:3])
    sr = os.path.join(a.calib, "sr", f"{a.sample}.npy")
    for r in range(a.rounds):
        k = r % len(a.models)
        for m in a.models[k:] + a.models[:k]:
            cmd = [q8run, m, "--input", f"input={a.calib}/input/{a.sample}.npy",
                   "--input", f"state={a.calib}/state/{a.sample}.npy", "--bind", f"sr={sr}",
                   "--threads", a.threads, "--bench", a.runs, "--json"]
            p = subprocess.run(cmd, capture_output=True, text=True, check=True)
            j = json.loads(p.stdout.strip().splitlines()[-1])
            res[m].append((j["median_ms"], j["min_ms"]))
    print("load after", open("/proc/loadavg").read().split()[:3], "threads", a.threads)
    for m in a.models:
        meds = [x for x, _ in res[m]]
        print(f"  {os.path.basename(m):24s} median {statistics.median(meds):.4f} ms "
              f"({min(meds):.4f}-{max(meds):.4f}), min {min(y for _, y in res[m]):.4f} ms")


if __name__ == "__main__":
    main()
