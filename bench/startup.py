#!/usr/bin/env python3
"""A quick look at start-up alone: a one-job `rdmagen render` of each bundled example
of bench/run's start-up target against `rdmagen --version`, paired and alternating.
Prints; bench/run measures the same (with everything else) for RESULTS.md.

Standard library only; run through bench/startup, which builds the release binary.
"""
import argparse
import os
import sys

from measure import load, paired
from run import BIN, COLD, ROOT


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=31)
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores, 1-minute load {load()}, {args.runs} pairs, medians")
    for name, example in COLD:
        r, v, ratio = paired([BIN, "render", os.path.join(ROOT, example)], [BIN, "--version"], args.runs)
        ok = r.wall <= 2 * v.wall and r.wall <= 0.006
        print(f"{name}: --version {v.wall * 1000:.2f} ms ({v.cpu * 1000:.2f} CPU), "
              f"render {r.wall * 1000:.2f} ms ({r.cpu * 1000:.2f} CPU), {ratio:.1f}x; "
              f"target (<= 2x and <= 6 ms) {'met' if ok else 'not met'}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
