#!/usr/bin/env python3
"""rdmagen's benchmark, in one run: N synthetic jobs (10, 1 000, 10 000, 50 000)
rendered into a fresh directory (paired with `cp -r` of the same tree, the floor),
checked and validated by the release binary, with CPU time and peak RSS; one file of
20 000 jobs (how many cores it keeps busy); one job cold, paired with `rdmagen
--version`; and the same work in Python (bench/baseline.py).

Run through bench/run, which builds the binary and installs PyYAML and jsonschema.
Writes the top of bench/RESULTS.md (bench/hostile's sections are kept).
"""
import datetime
import glob
import os
import platform
import shutil
import subprocess
import sys

from measure import load, paired, repeated

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# RDMAGEN_BIN: measure another build (an A/B of one change) without rebuilding.
BIN = os.environ.get("RDMAGEN_BIN") or os.path.join(ROOT, "target", "release", "rdmagen")
WORK = os.path.join(ROOT, "bench", "work")
SIZES = [10, 1000, 10000, 50000]
# Where the targets are judged: CPU per job and render -o against cp -r at COMPUTE_N,
# peak RSS at MEMORY_N, cores busy on one file of ONE_FILE jobs.
COMPUTE_N = 10000
MEMORY_N = 50000
ONE_FILE = 20000
# The sizes the Python way runs at (pure-Python PyYAML takes about 25 ms a job).
PY_SIZES = [10, 1000]
RESULTS = os.path.join(ROOT, "bench", "RESULTS.md")
SEED = 42
PYTHON = sys.executable
# The one-job examples of the start-up target: one PyTorchJob pool, one Trainer pool.
COLD = [
    ("PyTorchJob", "examples/seed-swin-roce"),
    ("TrainJob (Trainer v2.1)", "examples/trainer-v2.1-ib"),
]


def rm(path):
    shutil.rmtree(path, ignore_errors=True)


def generate(n, data):
    rm(data)
    subprocess.run([PYTHON, os.path.join(ROOT, "bench", "generate.py"), str(n), str(SEED), data], check=True)
    return os.path.join(data, "jobs"), os.path.join(data, "pools.yaml")


def one_file(n):
    """The jobs of `generate(n)` as the documents of one file (plus the pools file)."""
    data = os.path.join(WORK, f"one-file-{n}")
    jobs, pools = generate(n, data)
    path = os.path.join(data, "jobs.yaml")
    with open(path, "w") as out:
        for name in sorted(glob.glob(os.path.join(jobs, "*.yaml"))):
            out.write("---\n")
            out.write(open(name).read())
    rm(jobs)
    return path, pools


def main():
    schema = os.path.join(ROOT, "tests", "upstream", "pytorchjob-v1.9.0.schema.json")
    schema_note = "upstream CRD schema (training-operator v1.9.0)"
    if not os.path.exists(schema):
        schema = os.path.join(ROOT, "schemas", "pytorchjob.schema.json")
        schema_note = "rdmagen's schemas/pytorchjob.schema.json (upstream CRD not found)"
    started_load = load()
    version = repeated([BIN, "--version"], 21)
    print(f"--version: {version.wall * 1000:.1f} ms, {version.cpu * 1000:.1f} ms CPU", flush=True)

    results = {}
    for n in SIZES:
        data = os.path.join(WORK, str(n))
        jobs, pools = generate(n, data)
        out, copy = os.path.join(data, "out"), os.path.join(data, "copy")
        repeats = 3 if n >= 50000 else 5
        render = [BIN, "render", jobs, "--pools", pools, "-o", out]
        r, c, ratio = paired(render, ["cp", "-r", out, copy], repeats,
                             before_a=lambda: rm(out), before_b=lambda: rm(copy))
        check = repeated(render + ["--check"], repeats)
        v = repeated([BIN, "validate", jobs, "--pools", pools], repeats)
        results[n] = {"render": r, "copy": c, "ratio": ratio, "check": check, "validate": v}
        print(f"N={n}: render {r.wall:.3f}s/{r.rss:.0f}MB (cp -r {c.wall:.3f}s, {ratio:.2f}x) "
              f"check {check.wall:.3f}s validate {v.wall:.3f}s/{v.cpu:.3f}s CPU/{v.rss:.0f}MB", flush=True)
        rm(out)
        rm(copy)

    path, pools = one_file(ONE_FILE)
    single = repeated([BIN, "validate", path, "--pools", pools], 3)
    print(f"one file of {ONE_FILE}: {single.wall:.3f}s wall, {single.cpu:.3f}s CPU", flush=True)

    cold = []
    for name, example in COLD:
        rs, vs, ratio = paired([BIN, "render", os.path.join(ROOT, example)], [BIN, "--version"], 31)
        cold.append((name, example, vs, rs, ratio))
        print(f"cold {name}: --version {vs.wall * 1000:.1f} ms, render {rs.wall * 1000:.1f} ms ({ratio:.1f}x)", flush=True)

    py = {}
    for n in PY_SIZES:
        data = os.path.join(WORK, str(n))
        for mode, extra in [("pure", []), ("libyaml", ["--libyaml"])]:
            out = os.path.join(data, f"py-{mode}")
            cmd = [PYTHON, os.path.join(ROOT, "bench", "baseline.py"), os.path.join(data, "jobs"),
                   os.path.join(data, "pools.yaml"), out, schema] + extra
            py[(n, mode)] = repeated(cmd, 3 if n >= 1000 else 5, before=lambda out=out: rm(out))
            print(f"python {mode} N={n}: {py[(n, mode)].wall:.3f}s", flush=True)

    write_results(version, results, single, cold, py, schema_note, started_load)


def target(ok):
    return "✓" if ok else "✗"


def machine():
    """(CPU model, short commit of the checkout), for the header of a results section."""
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    return cpu, commit


def write_results(version, results, single, cold, py, schema_note, started_load):
    cpu, commit = machine()
    r10k = results[COMPUTE_N]
    per_job = (r10k["validate"].cpu - version.cpu) / COMPUTE_N * 1e6
    rss50k = results[MEMORY_N]
    cores = single.cpu / single.wall
    py_per_job = {k: v.wall / k[0] for k, v in py.items()}
    ratio_py = py[(PY_SIZES[-1], "pure")].wall / results[PY_SIZES[-1]]["render"].wall
    ratio_py_c = py[(PY_SIZES[-1], "libyaml")].wall / results[PY_SIZES[-1]]["render"].wall
    lines = [
        "# rdmagen benchmark results",
        "",
        f"Measured {datetime.date.today().isoformat()} on {os.cpu_count()} cores ({cpu}), {platform.system()} "
        f"{platform.release()}, rdmagen {commit} (release build), 1-minute load {started_load} at the start. "
        "Produced by `bench/run`, which runs everything below in one go: rdmagen, `rdmagen --version` and the "
        "Python way on the same inputs. Wall and CPU times are medians (CPU: user + system of the process and "
        "its threads); RSS is the peak over the runs; `render -o` and `cp -r`, and `--version` and a one-job "
        "render, are paired and alternating, and their ratio is the median of the per-pair ratios. Jobs come "
        f"from `bench/generate.py N {SEED}` (5 pools, realistic jobs of 1-16 nodes).",
        "",
        "| N jobs | `render -o DIR` (fresh dir) | `cp -r` of that tree | ratio | `render --check` (identical tree) | `validate` wall / CPU | CPU per job (`validate`, less `--version`) | peak RSS render / check / validate |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n in SIZES:
        r = results[n]
        job_cpu = (r["validate"].cpu - version.cpu) / n * 1e6
        lines.append(
            f"| {n:,} | {r['render'].wall:.3f} s | {r['copy'].wall:.3f} s | {r['ratio']:.2f}× | {r['check'].wall:.3f} s | "
            f"{r['validate'].wall:.3f} / {r['validate'].cpu:.3f} s | {job_cpu:.0f} µs | "
            f"{r['render'].rss:.0f} / {r['check'].rss:.0f} / {r['validate'].rss:.0f} MB |"
        )
    lines += [
        "",
        f"`rdmagen --version`: {version.wall * 1000:.1f} ms wall, {version.cpu * 1000:.1f} ms CPU (median of 21). "
        f"One file holding {ONE_FILE:,} jobs (`validate`, median of 3): {single.wall:.3f} s wall, {single.cpu:.3f} s CPU, "
        f"{cores:.2f} cores busy on average, peak RSS {single.rss:.0f} MB.",
        "",
        "One job, cold (whole process, nothing written, stdout to /dev/null), paired with `--version`, 31 pairs:",
        "",
        "| example | `--version` wall / CPU | `render` wall / CPU | ratio (wall) |",
        "|---|---:|---:|---:|",
    ]
    for name, example, vs, rs, ratio in cold:
        lines.append(f"| {name}: `{example}` | {vs.wall * 1000:.1f} / {vs.cpu * 1000:.1f} ms | "
                     f"{rs.wall * 1000:.1f} / {rs.cpu * 1000:.1f} ms | {ratio:.1f}× |")
    lines += [
        "",
        "Python way (`bench/baseline.py`: PyYAML load, dict built by hand, PyYAML dump, read back, "
        f"`jsonschema` Draft 7 against the {schema_note}, validator built once), same inputs:",
        "",
        "| N jobs | Python, pure-Python PyYAML (`safe_load`/`safe_dump`) | Python, PyYAML with libyaml (`CSafeLoader`/`CSafeDumper`) | rdmagen `render -o` |",
        "|---:|---:|---:|---:|",
    ]
    for n in PY_SIZES:
        lines.append(f"| {n:,} | {py[(n, 'pure')].wall:.3f} s ({py_per_job[(n, 'pure')] * 1e3:.2f} ms a job) | "
                     f"{py[(n, 'libyaml')].wall:.3f} s ({py_per_job[(n, 'libyaml')] * 1e3:.2f} ms a job) | "
                     f"{results[n]['render'].wall:.3f} s |")
    worst_cold = max(cold, key=lambda c: c[3].wall)
    cold_ok = all(rs.wall <= 2 * vs.wall and rs.wall <= 0.006 for _, _, vs, rs, _ in cold)
    cold_text = "; ".join(f"{name}: {rs.wall * 1000:.1f} ms, {ratio:.1f}× `--version`" for name, _, vs, rs, ratio in cold)
    lines += [
        "",
        "## Targets (issue 23)",
        "",
        "| target | measured | met |",
        "|---|---|:-:|",
        f"| compute ≤ 100 µs of CPU per job at 10 000 jobs | {per_job:.0f} µs at {COMPUTE_N:,} (`validate`, CPU less `--version`'s, / N) | {target(per_job <= 100)} |",
        f"| a one-job render ≤ 2× `--version` and ≤ 6 ms | {cold_text} | {target(cold_ok)} |",
        f"| peak RSS ≤ 60 MB at 50 000 jobs | at {MEMORY_N:,}: render {rss50k['render'].rss:.0f} MB, check {rss50k['check'].rss:.0f} MB, validate {rss50k['validate'].rss:.0f} MB | {target(max(rss50k['render'].rss, rss50k['check'].rss, rss50k['validate'].rss) <= 60)} |",
        f"| `render -o` into a fresh directory ≤ 2× `cp -r` of the same tree | {r10k['ratio']:.2f}× at {COMPUTE_N:,} jobs ({r10k['render'].wall:.3f} s vs {r10k['copy'].wall:.3f} s); {rss50k['ratio']:.2f}× at {MEMORY_N:,} | {target(r10k['ratio'] <= 2)} |",
        f"| a single file of {ONE_FILE:,} jobs uses both cores | {cores:.2f} cores busy on average (CPU / wall) | {target(cores >= 1.6)} |",
        f"| ≥ 50× faster than Python at N = 1 000 | {ratio_py:.0f}× (pure-Python PyYAML), {ratio_py_c:.0f}× (libyaml) | {target(ratio_py >= 50)} |",
        "",
        f"The slowest one-job case is {worst_cold[0]}. Wall times on this virtual machine vary by ±30 % from run "
        "to run, which is why the comparisons are paired; file creation is slow here, so `render -o` is judged "
        "against `cp -r` of the same tree, run in turn with it.",
        "",
        "Rerun: `bench/run` (builds the release binary, installs PyYAML and jsonschema into "
        "`bench/.venv` from PyPI, writes this file). Profiles: `cargo build --profile profiling`, then "
        "`perf record` or `valgrind --tool=callgrind` on `target/profiling/rdmagen`.",
        "",
    ]
    path = RESULTS
    # bench/hostile writes its own sections; keep them. The start-up section of issue 23
    # is part of this one now.
    kept = ""
    if os.path.exists(path):
        old = open(path).read()
        start = old.find("## Hostile inputs (issue 10)")
        if start >= 0:
            kept = old[start:]
            startup = kept.find("## Start-up (issue 23)")
            if startup >= 0:
                end = kept.find("\n## ", startup + 1)
                kept = kept[:startup] + (kept[end + 1:] if end >= 0 else "")
            kept = "\n" + kept.rstrip("\n") + "\n"
    with open(path, "w") as f:
        f.write("\n".join(lines) + kept)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
