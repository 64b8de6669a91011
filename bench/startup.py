#!/usr/bin/env python3
"""Start-up of issue 23: a one-job `rdmagen render` of a bundled example against
`rdmagen --version`, in the same run, paired and alternating (version, render,
version, render, ...), so that the load of the machine falls on both alike.

Standard library only; run through bench/startup, which builds the release binary.
Prints the medians and rewrites the "Start-up (issue 23)" section of bench/RESULTS.md.
`--label TEXT` names the build in the section (e.g. "before"); `--no-write` only prints.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("RDMAGEN_BIN") or os.path.join(ROOT, "target", "release", "rdmagen")
RESULTS = os.path.join(ROOT, "bench", "RESULTS.md")
HEADING = "## Start-up (issue 23)"
# One PyTorchJob pool and one Trainer pool, one job each.
CASES = [
    ("PyTorchJob", "examples/seed-swin-roce"),
    ("TrainJob (Trainer v2.1)", "examples/trainer-v2.1-ib"),
]
RUNS = 31


def once(cmd):
    """(wall, CPU) seconds of one run of `cmd`, CPU being user + system time of the
    process and its threads; fails loudly."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {code}")
    return wall, usage.ru_utime + usage.ru_stime


def paired(runs, render, version_bin=None):
    """Medians (ms) of wall and CPU time of `--version` and of `render`, alternating,
    after one warm-up each: ((version wall, version CPU), (render wall, render CPU))."""
    version = [version_bin or BIN, "--version"]
    once(version)
    once(render)
    v, r = [], []
    for _ in range(runs):
        v.append(once(version))
        r.append(once(render))
    med = lambda xs, i: statistics.median(x[i] for x in xs) * 1000
    return (med(v, 0), med(v, 1)), (med(r, 0), med(r, 1))


def load():
    try:
        with open("/proc/loadavg") as f:
            return f.read().split()[0]
    except OSError:
        return "unknown"


def section(label, rows, commit, runs=RUNS):
    lines = [
        HEADING,
        "",
        f"A one-job `rdmagen render DIR` (nothing written; stdout to /dev/null) against `rdmagen --version`, "
        f"paired and alternating, median of {runs} pairs each, release build, rdmagen {commit} ({label}), "
        f"{os.cpu_count()} cores, 1-minute load {load()} at the start. Acceptance: render ≤ 2× `--version` and ≤ 6 ms.",
        "",
        "| example | `--version` wall / CPU | `render` wall / CPU | ratio (wall) | ≤ 2× and ≤ 6 ms |",
        "|---|---:|---:|---:|:-:|",
    ]
    for name, path, (v, vc), (r, rc) in rows:
        ok = "✓" if r <= 2 * v and r <= 6 else "✗"
        lines.append(f"| {name}: `{path}` | {v:.1f} / {vc:.1f} ms | {r:.1f} / {rc:.1f} ms | {r / v:.1f}× | {ok} |")
    lines.append("")
    return "\n".join(lines)


def write_section(text):
    """Replace this section of RESULTS.md (or append it), keeping everything else."""
    old = open(RESULTS).read() if os.path.exists(RESULTS) else ""
    start = old.find(HEADING)
    if start < 0:
        new = old.rstrip("\n") + "\n\n" + text
    else:
        end = old.find("\n## ", start + len(HEADING))
        new = old[:start] + text + (old[end + 1:] if end >= 0 else "")
    with open(RESULTS, "w") as f:
        f.write(new)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--label", default="this build")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--runs", type=int, default=RUNS)
    args = parser.parse_args()
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    rows = []
    for name, path in CASES:
        v, r = paired(args.runs, [BIN, "render", os.path.join(ROOT, path)])
        rows.append((name, path, v, r))
        print(f"{name}: --version {v[0]:.2f} ms ({v[1]:.2f} CPU), render {r[0]:.2f} ms ({r[1]:.2f} CPU)", flush=True)
    text = section(args.label, rows, commit, args.runs)
    if not args.no_write:
        write_section(text)
    print(text)


if __name__ == "__main__":
    sys.exit(main())
