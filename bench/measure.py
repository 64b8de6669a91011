"""How bench/ measures a command, once for every script: wall time, CPU time (user +
system of the process and its threads, from wait4) and peak RSS of one run, and
medians of runs paired with another command, alternating, so that the load of a
shared machine falls on both alike.

Standard library only.
"""
import os
import statistics
import subprocess
import tempfile
import time


class Run:
    """One finished run: `wall` and `cpu` in seconds, `rss` in MB."""

    def __init__(self, wall, cpu, rss):
        self.wall, self.cpu, self.rss = wall, cpu, rss


def once(cmd, stdout=subprocess.DEVNULL, before=None):
    """Run `cmd` once (after `before()`, untimed) and return its Run; a non-zero exit
    fails loudly, with what it wrote to stderr."""
    if before:
        before()
    # stderr goes to a file, not a pipe: read only after wait4, a pipe fills up (64 KiB)
    # and blocks the run for good (render's infos at 10 000 jobs are ~150 KB).
    with tempfile.TemporaryFile() as errfile:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=stdout, stderr=errfile, stdin=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        errfile.seek(0)
        err = errfile.read().decode(errors="replace")
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {code}:\n{err[-4000:]}")
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


class Summary:
    """Medians of wall and CPU time over repeated runs, and the peak RSS of them all."""

    def __init__(self, runs):
        self.runs = runs
        self.wall = statistics.median(r.wall for r in runs)
        self.cpu = statistics.median(r.cpu for r in runs)
        self.rss = max(r.rss for r in runs)


def repeated(cmd, repeats, before=None):
    """`cmd` run `repeats` times, after one untimed warm-up."""
    once(cmd, before=before)
    return Summary([once(cmd, before=before) for _ in range(repeats)])


def paired(a, b, repeats, before_a=None, before_b=None):
    """`a` and `b` alternating (a, b, a, b, ...), after one warm-up each: their
    Summaries, and the median of the per-pair ratios a/b of wall time (how many times
    b's time a takes)."""
    once(a, before=before_a)
    once(b, before=before_b)
    runs_a, runs_b = [], []
    for _ in range(repeats):
        runs_a.append(once(a, before=before_a))
        runs_b.append(once(b, before=before_b))
    ratio = statistics.median(ra.wall / rb.wall for ra, rb in zip(runs_a, runs_b))
    return Summary(runs_a), Summary(runs_b), ratio


def load():
    """The 1-minute load average, as /proc/loadavg writes it."""
    try:
        with open("/proc/loadavg") as f:
            return f.read().split()[0]
    except OSError:
        return "unknown"
