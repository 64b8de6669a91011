#!/usr/bin/env python3
"""Time and peak RSS of `rdmagen nccl-log` on synthetic logs of growing size.

    bench/nccl_log.py [BINARY] [MB ...]      (default: target/release/rdmagen 25 50 100 200)

Each log is a deterministic mix of what a long multi-node run prints with
NCCL_DEBUG=INFO: per-rank init lines of 64 hosts (bootstrap, devices, GIDs, channels
over NET/IB with GPUDirect), training output, nccl-tests rows, a warning now and then,
and a 100 KB line every 10 MB. Writes the logs to bench/work/nccl-log/ and prints a
Markdown table for bench/RESULTS.md. Linear time and flat memory are the targets.
"""

import os
import random
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
WORK = os.path.join(HERE, "work", "nccl-log")


def block(rng, i):
    host = f"train-worker-{i % 64}"
    pid = 1000 + i % 8
    p = f"{host}:{pid}:{pid + 7} [{i % 8}] NCCL INFO "
    lines = [
        p + f"Bootstrap: Using eth0:10.0.{i % 64}.{i % 8}<0>",
        p + "NCCL version 2.23.4+cuda12.6",
        p + "NET/IB : Using [0]mlx5_1:1/RoCE [1]mlx5_2:1/RoCE [2]mlx5_3:1/RoCE [3]mlx5_4:1/RoCE [RO]; OOB eth0:10.0.0.1<0>",
        p + "Using network IB",
        p + f"comm 0x{i:x} rank {i % 512} nRanks 512 nNodes 64 localRanks 8 localRank {i % 8} MNNVL 0",
        p + f"NET/IB: NCCL Dev 0 IbDev 0 Port 1 qpn {i % 65536} mtu 5 query_ece={{supported=1, vendor_id=0x15b3, options=0x0, comp_mask=0x0}} GID 3 (0/B880A00AFFFF0000) fifoRkey=0x1 fifoLkey=0x1",
    ]
    for c in range(16):
        lines.append(p + f"Channel {c:02d}/0 : {i % 512}[{i % 8}] -> {(i + 8) % 512}[{i % 8}] [send] via NET/IB/{c % 4}/GDRDMA")
    for s in range(8):
        lines.append(f"step {i * 8 + s} loss {rng.random() * 3:.4f} lr 1e-4 throughput {rng.randint(900, 1100)} samples/s")
    size = 1 << (3 + i % 31)
    lines.append(f"{size:12d}  {size // 4:12d}     float     sum      -1   {rng.random() * 9000:7.1f}  {rng.random() * 99:6.2f}  {rng.random() * 190:6.2f}    N/A   {rng.random() * 9000:7.1f}  {rng.random() * 99:6.2f}  {rng.random() * 190:6.2f}    N/A")
    if i % 1000 == 0:
        lines.append(f"{host}:{pid}:{pid + 9} [0] transport/net_ib.cc:1000 NCCL WARN NET/IB : mlx5_{i % 4}:1 Got non-fatal async event: port active(9)")
    return "\n".join(lines) + "\n"


def write(path, megabytes):
    rng = random.Random(42)
    target = megabytes << 20
    written = 0
    i = 0
    with open(path, "w") as f:
        f.write("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n")
        next_long = 10 << 20
        while written < target:
            text = block(rng, i)
            if written >= next_long:
                text += "x" * 100_000 + " NCCL INFO " + "y" * 1000 + "\n"
                next_long += 10 << 20
            f.write(text)
            written += len(text)
            i += 1
    return written


def measure(binary, path):
    best = None
    for _ in range(3):
        out = subprocess.run(
            ["/usr/bin/time", "-v", binary, "nccl-log", path, "--max-file-size", str(1 << 40), "--format", "json"],
            capture_output=True,
            text=True,
        )
        wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", out.stderr).group(1)
        minutes, seconds = wall.split(":")[-2:]
        wall = int(minutes) * 60 + float(seconds)
        rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", out.stderr).group(1)) / 1024
        run = (wall, rss, out.returncode)
        best = run if best is None or run[0] < best[0] else best
    return best


def main():
    args = sys.argv[1:]
    binary = args.pop(0) if args and not args[0].isdigit() else os.path.join(HERE, "..", "target", "release", "rdmagen")
    sizes = [int(a) for a in args] or [25, 50, 100, 200]
    os.makedirs(WORK, exist_ok=True)
    print("| log | lines | wall (best of 3) | MB/s | peak RSS | exit |")
    print("|---:|---:|---:|---:|---:|:-:|")
    for mb in sizes:
        path = os.path.join(WORK, f"run-{mb}mb.log")
        if not os.path.exists(path):
            write(path, mb)
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            lines = sum(1 for _ in f)
        wall, rss, code = measure(binary, path)
        print(f"| {size / (1 << 20):.0f} MiB | {lines:,} | {wall:.2f} s | {size / (1 << 20) / wall:.0f} | {rss:.0f} MB | {code} |")


if __name__ == "__main__":
    main()
