#!/usr/bin/env python3
"""rdmagen on hostile input (issue 10, defects 9-12; with the argument `22`, issue 22's
items 5, 8 and 11 instead): each input class at the issue's size, run by the release
binary under /usr/bin/time -v, wall time and peak RSS.

Run through bench/hostile, which builds the binary. Writes the section
"Hostile inputs (issue 10)" of bench/RESULTS.md, leaving the rest of the file as
it is. Wall times are medians of 3 runs, RSS the peak over those runs; a run that
passes its time limit is killed and recorded as such.
"""
import datetime
import os
import re
import shutil
import statistics
import subprocess
import sys

from run import machine

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "rdmagen")
WORK = os.path.join(ROOT, "bench", "work", "hostile")
RESULTS = os.path.join(ROOT, "bench", "RESULTS.md")
HEADING = "## Hostile inputs (issue 10)"
REPEATS = 3
LIMIT = 120  # seconds; the "did not finish" bound
# The targets: "under a few seconds and a few hundred MB".
TARGET_SECONDS = 5
TARGET_MB = 300


def timed(cmd, limit):
    """(wall seconds, peak RSS MB, exit code, bytes written to stdout + stderr) of one
    run of `cmd`, killed after `limit` seconds (exit code None)."""
    out_path = os.path.join(WORK, "out.txt")
    time_path = os.path.join(WORK, "time.txt")
    with open(out_path, "wb") as out:
        subprocess.run(
            ["/usr/bin/time", "-v", "-o", time_path, "timeout", "-s", "KILL", "--foreground", str(limit)] + cmd,
            stdout=out, stderr=out, stdin=subprocess.DEVNULL, cwd=WORK,
        )
    report = open(time_path).read()
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", report).group(1)
    seconds = sum(float(part) * 60 ** i for i, part in enumerate(reversed(wall.split(":"))))
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", report).group(1)) / 1024
    cpu = sum(float(re.search(rf"{kind} time \(seconds\): (\S+)", report).group(1)) for kind in ("User", "System"))
    status = re.search(r"Exit status: (\d+)", report)
    killed = "Command terminated by signal 9" in report or (status and int(status.group(1)) == 137)
    code = None if killed else int(status.group(1))
    return seconds, rss, code, os.path.getsize(out_path), cpu


def measure(cmd, repeats=REPEATS, limit=LIMIT):
    runs = [timed(cmd, limit) for _ in range(repeats)]
    return {
        "wall": statistics.median(r[0] for r in runs),
        "rss": max(r[1] for r in runs),
        "code": runs[0][2],
        "output": max(r[3] for r in runs),
        "cpu": statistics.median(r[4] for r in runs),
    }


def golden_tree(name, replace):
    """A rendered output tree of examples/single-node whose golden file is then
    replaced by `replace(path)` (a symlink to /dev/zero, a FIFO)."""
    out = os.path.join(WORK, name)
    shutil.rmtree(out, ignore_errors=True)
    subprocess.run([BIN, "render", os.path.join(ROOT, "examples", "single-node"), "-o", out],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    golden = os.path.join(out, "debug-run", "pytorchjob.yaml")
    os.remove(golden)
    replace(golden)
    return out


def nested_loop_templates():
    """A --templates directory whose pytorchjob template runs three nested loops of
    100 000 (10^15 steps)."""
    path = os.path.join(WORK, "templates-nested-loops")
    os.makedirs(path, exist_ok=True)
    loop = "{% for a in range(100000) %}{% for b in range(100000) %}{% for c in range(100000) %}x{% endfor %}{% endfor %}{% endfor %}\n"
    with open(os.path.join(path, "pytorchjob.yaml.j2"), "w") as f:
        f.write(loop)
    return path


def cases():
    single = os.path.join(ROOT, "examples", "single-node")
    h = lambda name: os.path.join(WORK, name)
    return [
        ("9", "golden file a symlink to /dev/zero (`render --check`)",
         [BIN, "render", single, "-o", golden_tree("golden-dev-zero", lambda p: os.symlink("/dev/zero", p)), "--check"], {}),
        ("9", "golden file a FIFO (`render --check`)",
         [BIN, "render", single, "-o", golden_tree("golden-fifo", os.mkfifo), "--check"], {}),
        ("10", "user template with three nested loops of 100 000 (`render --templates`)",
         [BIN, "render", single, "--templates", nested_loop_templates()], {"repeats": 1, "limit": 30}),
        ("11", "1 GiB input file (`validate`; sparse after a 1 MiB first line)",
         [BIN, "validate", h("one-gigabyte.yaml")], {}),
        ("11", "`/dev/zero` as input (`validate /dev/zero`)", [BIN, "validate", "/dev/zero"], {}),
        ("12", "100 000 keys in one mapping, the last a duplicate (`validate`)",
         [BIN, "validate", h("duplicate-keys.yaml")], {}),
        ("12", "100 000 one-line documents in one file, a finding each (`validate`)",
         [BIN, "validate", h("tiny-documents.yaml")], {}),
        ("12", "`lint` of 4 000 PyTorchJobs in one file (6 findings each)",
         [BIN, "lint", h("lint-jobs.yaml")], {}),
        ("12", "`detect` over 20 000 show_gids rows (5 000 devices)",
         [BIN, "detect", "--show-gids", h("show-gids.txt")], {}),
        ("12", "`diff --semantic` of 4 000 objects (reversed order, each changed)",
         [BIN, "diff", "--semantic", h("semantic-4000/old.yaml"), h("semantic-4000/new.yaml")], {}),
        ("12", "`diff --semantic` of 20 000 objects (reversed order, each changed)",
         [BIN, "diff", "--semantic", h("semantic-20000/old.yaml"), h("semantic-20000/new.yaml")], {}),
    ]


HEADING_22 = "## Hostile inputs (issue 22)"
# Issue 22's targets: a located finding in under 2 s and 200 MB.
TARGET_22_SECONDS = 2
TARGET_22_MB = 200


def cases_22():
    """(item, input, command) of issue 22's floods, each just under the 32 MiB cap."""
    h = lambda name: os.path.join(WORK, name)
    flood = h("flood.yaml")
    return [
        ("5", "3 700 000 documents `a: 1` (33.3 MB), `lint -`", ["sh", "-c", f"exec {BIN} lint - < {flood}"]),
        ("5", "the same, `validate`", [BIN, "validate", flood]),
        ("5", "the same, `render`", [BIN, "render", flood]),
        ("5", "the same against itself with its last line changed, `diff --semantic`",
         [BIN, "diff", "--semantic", flood, h("flood-changed.yaml")]),
        ("5", "8 000 000 empty documents `---` (32 MB), `lint`", [BIN, "lint", h("empty-documents.yaml")]),
        ("5", "8 000 000 items `- a` in one document (32 MB), `lint`",
         [BIN, "lint", h("one-character-items.yaml")]),
        ("8", "Dockerfile of 500 000 `ENV NCCL_IB_HCA<i>=x` lines (10.6 MB), `image-check`",
         [BIN, "image-check", h("env-flood/Dockerfile")]),
    ]


# Issue 22, item 11: the same input class at 1x, 5x (and 25x for detect).
SCALING = [
    ("`detect --show-gids`", "rows", [(20_000, "show-gids.txt"), (100_000, "show-gids-100000.txt"),
                                      (500_000, "show-gids-500000.txt")],
     lambda path: [BIN, "detect", "--show-gids", path, "--max-file-size", str(1 << 30)]),
    ("`lint` of PyTorchJobs in one file", "jobs", [(800, "lint-jobs-800.yaml"), (4_000, "lint-jobs.yaml")],
     lambda path: [BIN, "lint", path]),
    ("`diff --semantic` (reversed order, each changed)", "objects",
     [(4_000, "semantic-4000"), (20_000, "semantic-20000")],
     lambda path: [BIN, "diff", "--semantic", os.path.join(path, "old.yaml"), os.path.join(path, "new.yaml")]),
]


# What the figures of the last run mean (measured beside them; rewrite after a rerun).
NOTE_22 = (
    'Under the load of three other builds on these 2 cores, wall times here are 2-10× the CPU t'
    'imes; CPU time is the figure to compare. `diff --semantic` at 4 000 → 20 000 objects: its '
    'structural part (the difference between `diff --semantic` and plain `diff`, measured alike'
    ') is 0.10 → 0.26 s, linear; the line diff that plain `diff` and `render --check` share (si'
    "milar's Myers, O((N+M)·D), D growing with N when every object moved) is 0.22 → 1.52 s, 6.9"
    '×, and is what keeps the whole at 6.2×. `lint` keeps one parsed document at a time: 51 MB '
    "at 4 000 jobs, where holding them all took 131 MB (issue 10's table). The node flood stops"
    ' at the 3 000 000th node, after building a sequence of that many (370 MB); the Dockerfile '
    'of 500 000 warnings prints 46 KB where it printed 228 MB.'
)


def section_22(results, scaling):
    cpu, commit = machine()
    try:
        load = f"load average {os.getloadavg()[0]:.1f} at the end"
    except OSError:
        load = "load unknown"
    lines = [
        HEADING_22,
        "",
        f"Measured {datetime.date.today().isoformat()} on {os.cpu_count()} cores ({cpu}), rdmagen {commit} "
        f"(release build), {load}. Produced by `bench/hostile 22`; inputs from `bench/hostile_inputs.py`. "
        f"Wall time is the median of {REPEATS} runs and peak RSS the maximum, from `/usr/bin/time -v`. "
        f"Target: a located finding in under {TARGET_22_SECONDS} s and {TARGET_22_MB} MB.",
        "",
        "| item | input | wall | peak RSS | exit | stdout + stderr | target |",
        "|:-:|---|---:|---:|:-:|---:|:-:|",
    ]
    for item, what, r in results:
        finished = r["code"] is not None
        wall = f"{r['wall']:.2f} s" if finished else f"killed at {r['wall']:.0f} s"
        ok = finished and r["wall"] < TARGET_22_SECONDS and r["rss"] < TARGET_22_MB
        lines.append(
            f"| {item} | {what} | {wall} | {r['rss']:.0f} MB | {r['code'] if finished else '—'} | "
            f"{mb(r['output'])} | {'✓' if ok else '✗'} |"
        )
    lines += [
        "",
        "Item 11, growth with the input: user + system CPU time (median of "
        f"{REPEATS}), and its ratio to the first size's, beside the ratio of the sizes.",
        "",
        "| command | size | CPU | wall | peak RSS | CPU ratio | size ratio |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for what, unit, rows in scaling:
        base_n, base = rows[0]
        for n, r in rows:
            lines.append(
                f"| {what} | {n:,} {unit} | {r['cpu']:.2f} s | {r['wall']:.2f} s | {r['rss']:.0f} MB | "
                f"{r['cpu'] / base['cpu']:.1f}× | {n / base_n:.0f}× |"
            )
    lines += [
        "",
        NOTE_22,
        "",
        "Rerun: `bench/hostile 22` (builds the release binary, writes the inputs to `bench/work/hostile/`, "
        "rewrites this section).",
        "",
    ]
    return "\n".join(lines)


def mb(n):
    return f"{n / 2 ** 20:.1f} MB" if n >= 2 ** 20 else f"{n / 1024:.0f} KB" if n >= 1024 else f"{n} B"


def section(results):
    cpu, commit = machine()
    try:
        load = f"load average {os.getloadavg()[0]:.1f} at the end"
    except OSError:
        load = "load unknown"
    lines = [
        HEADING,
        "",
        f"Measured {datetime.date.today().isoformat()} on {os.cpu_count()} cores ({cpu}), rdmagen {commit} "
        f"(release build), {load}. Produced by `bench/hostile`; inputs from `bench/hostile_inputs.py` "
        f"(deterministic). Wall time is the median of {REPEATS} runs and peak RSS the maximum, both from "
        f"`/usr/bin/time -v`; runs are killed after {LIMIT} s (30 s for the template). Target: each under "
        f"{TARGET_SECONDS} s and {TARGET_MB} MB.",
        "",
        "| defect | input | wall | peak RSS | exit | stdout + stderr | target |",
        "|:-:|---|---:|---:|:-:|---:|:-:|",
    ]
    for defect, what, r in results:
        finished = r["code"] is not None
        wall = f"{r['wall']:.2f} s" if finished else f"killed at {r['wall']:.0f} s"
        ok = finished and r["wall"] < TARGET_SECONDS and r["rss"] < TARGET_MB
        lines.append(
            f"| {defect} | {what} | {wall} | {r['rss']:.0f} MB | {r['code'] if finished else '—'} | "
            f"{mb(r['output'])} | {'✓' if ok else '✗'} |"
        )
    template = next(r for d, _, r in results if d == "10")
    if template["code"] is None:
        lines += [
            "",
            "User templates still have no step limit in this build (defect 10's fuel limit is "
            "separate work in issue 10): the nested loops run until killed, and memory grows meanwhile.",
        ]
    lines += [
        "",
        "Where the time of the larger runs goes (perf, at c50d4ef): parsing YAML for `lint` and "
        "`validate`; for `diff` of 20 000 reversed objects, the line diff (similar's Myers, "
        "O((N+M)·D), with D large when every object moved) and one write per output line, while "
        "the structural diff itself is a few per cent.",
        "",
        "Before the fixes of defect 12 (issue 10's figures on the old main; in brackets, measured "
        "here at 5bd2460 under the same load): 100 000 duplicate-checked keys 25 s (> 60 s); "
        "100 000 tiny documents did not finish in 120 s (20 000: 20.5 s, under perf); `lint` of 4 000 jobs "
        "76 s (800: 15.5 s, under perf); `detect` over 20 000 rows 4.2 s (4.3 s); `diff --semantic` of "
        "4 000 objects 11 s (29.5 s), of 20 000 did not finish in 120 s.",
        "",
        "Rerun: `bench/hostile` (builds the release binary, writes the inputs to `bench/work/hostile/`, "
        "rewrites this section). `bench/hostile_inputs.py DIR 0.1` writes the same inputs at a tenth "
        "of the size, for profiling.",
        "",
    ]
    return "\n".join(lines)


def write_section(text, heading=HEADING):
    """Replace this section of RESULTS.md (or append it), keeping everything else."""
    old = open(RESULTS).read() if os.path.exists(RESULTS) else ""
    start = old.find(heading)
    if start < 0:
        new = old.rstrip("\n") + "\n\n" + text
    else:
        end = old.find("\n## ", start + len(heading))
        new = old[:start] + text + (old[end + 1:] if end >= 0 else "")
    with open(RESULTS, "w") as f:
        f.write(new)


def main_22():
    results = []
    for item, what, cmd in cases_22():
        r = measure(cmd)
        results.append((item, what, r))
        print(f"item {item}: {what}: {r['wall']:.2f} s, {r['rss']:.0f} MB, exit {r['code']}", flush=True)
    scaling = []
    for what, unit, sizes, command in SCALING:
        rows = []
        for n, name in sizes:
            r = measure(command(os.path.join(WORK, name)))
            rows.append((n, r))
            print(f"{what} at {n}: {r['cpu']:.2f} s CPU, {r['rss']:.0f} MB", flush=True)
        scaling.append((what, unit, rows))
    text = section_22(results, scaling)
    write_section(text, HEADING_22)
    print(text)


def main():
    os.makedirs(WORK, exist_ok=True)
    subprocess.run([sys.executable, os.path.join(ROOT, "bench", "hostile_inputs.py"), WORK], check=True)
    if sys.argv[1:] == ["22"]:
        return main_22()
    results = []
    for defect, what, cmd, options in cases():
        r = measure(cmd, **options)
        results.append((defect, what, r))
        print(f"defect {defect}: {what}: {r['wall']:.2f} s, {r['rss']:.0f} MB, exit {r['code']}", flush=True)
    text = section(results)
    write_section(text)
    print(text)


if __name__ == "__main__":
    main()
