#!/usr/bin/env python3
"""rdmagen smoke-test: an all-reduce bandwidth sweep with torch.distributed over NCCL.

Started by torchrun, one process per GPU, in pods shaped exactly like a real job on
the pool (`rdmagen smoke-test` renders them). Rank 0 prints one table in the format
of nccl-tests' all_reduce_perf (github.com/NVIDIA/nccl-tests, src/util.cu), so that
`rdmagen nccl-log` and any other reader of nccl-tests output reads it:

- one row per message size, from --min-bytes to --max-bytes (each --step-factor
  times the last): size and count of float32 elements, type, reduction, root (-1),
  then time (us), algbw and busbw (GB/s, 1e9 bytes per second) and #wrong, out of
  place and in place;
- algbw = size / time; busbw = algbw * 2(n-1)/n with n the total number of ranks,
  the traffic each rank puts on its slowest link for an all-reduce (nccl-tests
  doc/PERFORMANCE.md); time is the slowest rank's average over --iters iterations;
- torch.distributed reduces in place only: the out-of-place columns time what its
  out-of-place form does (copy into a fresh buffer, then reduce it in place), so
  they include one device-to-device copy; the in-place columns are NCCL alone;
- #wrong counts elements (summed over ranks) that differ from the exact sum after
  one more all-reduce of rank-dependent values, checked apart from the timing;
- the footer's "# Avg bus bandwidth" is the mean over every row, small sizes
  included: read the large-message rows (the plateau), not the mean.

NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=INIT,NET,ENV (set on the pods) make every rank
log its transport, devices, GID and GPUDirect lines before the table: the evidence
`rdmagen nccl-log` reads. The exit code is 0 when every element was right.
"""

import argparse
import datetime
import os
import socket
import sys

import torch
import torch.distributed as dist

PROGRAM = "all_reduce_perf"


def float_str(value, width):
    """A number in `width` columns with as many decimals as fit (getFloatStr)."""
    if value != value or value in (float("inf"), float("-inf")):
        return "%*s" % (width, value)
    power = 0
    bound = 1
    while value >= bound and power < 64:
        power += 1
        bound *= 10
    if power < width - 2:
        return "%*.2f" % (width, value)
    if power < width - 1:
        return "%*.1f" % (width, value)
    if power < width + 1:
        return "%*.0f" % (width, value)
    if width >= 7:
        return "%*.1e" % (width, value)
    return "%*.0e" % (width, value)


def say(line=""):
    print(line, flush=True)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--min-bytes", type=int, default=8)
    parser.add_argument("--max-bytes", type=int, default=2 << 30)
    parser.add_argument("--step-factor", type=int, default=4)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    args = parser.parse_args()
    if args.min_bytes < 4 or args.max_bytes < args.min_bytes:
        parser.error("need 4 <= --min-bytes <= --max-bytes")
    if args.step_factor < 2 or args.iters < 1 or args.warmup < 0:
        parser.error("need --step-factor >= 2, --iters >= 1, --warmup >= 0")
    return args


def sizes(min_bytes, max_bytes, factor):
    out = []
    size = min_bytes
    while size <= max_bytes:
        out.append(size - size % 4)
        size *= factor
    return out


def main():
    args = parse_args()
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    dist.init_process_group(backend="nccl", timeout=datetime.timedelta(minutes=10))
    rank = dist.get_rank()
    world = dist.get_world_size()

    def reduce_scalar(value, dtype, op):
        t = torch.tensor([value], dtype=dtype, device=device)
        dist.all_reduce(t, op=op)
        return t.item()

    def settle():
        reduce_scalar(0, torch.float32, dist.ReduceOp.SUM)
        torch.cuda.synchronize()

    # Two buffers of the largest size, within what every GPU has free.
    free, _ = torch.cuda.mem_get_info()
    fits = int(free * 0.7) // 2
    max_bytes = args.max_bytes
    while max_bytes > args.min_bytes and max_bytes > fits:
        max_bytes //= args.step_factor
    max_bytes = int(reduce_scalar(max_bytes, torch.int64, dist.ReduceOp.MIN))
    steps = sizes(args.min_bytes, max_bytes, args.step_factor)
    largest = steps[-1] // 4
    send = torch.zeros(largest, dtype=torch.float32, device=device)
    recv = torch.zeros(largest, dtype=torch.float32, device=device)

    props = torch.cuda.get_device_properties(local_rank)
    me = "#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s" % (
        rank,
        0,
        os.getpid(),
        socket.gethostname(),
        local_rank,
        getattr(props, "pci_domain_id", 0),
        getattr(props, "pci_bus_id", 0),
        getattr(props, "pci_device_id", 0),
        props.name,
    )
    everyone = [None] * world
    dist.all_gather_object(everyone, me)

    # Connections are made at the first collective: warm up before any row.
    for _ in range(args.warmup):
        dist.all_reduce(recv)
    settle()

    if rank == 0:
        nccl = ".".join(str(v) for v in torch.cuda.nccl.version())
        nodes = len({line.split(" on ")[1].split()[0] for line in everyone})
        say("# rdmagen smoke-test: all-reduce with torch.distributed %s over NCCL %s, %d ranks, %d nodes" % (
            torch.__version__, nccl, world, nodes))
        say("# NCCL_ALGO=%s" % os.environ.get("NCCL_ALGO", "(NCCL's choice)"))
        if max_bytes < args.max_bytes:
            say("# maxBytes lowered from %d to %d: the GPUs have %d bytes free" % (
                args.max_bytes, max_bytes, free))
        say("# Collective test starting: %s" % PROGRAM)
        say("# nThread %d nGpus %d minBytes %d maxBytes %d step: %d(%s) warmup iters: %d iters: %d agg iters: %d validation: %d graph: %d unalign: %d" % (
            1, 1, args.min_bytes, max_bytes, args.step_factor, "factor", args.warmup, args.iters, 1, 1, 0, 0))
        say("#")
        say("# Using devices")
        for line in everyone:
            say(line)
        say("#")
        say("# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          " % ("", "", "", "", ""))
        say("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s" % (
            "size", "count", "type", "redop", "root",
            "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong", 0, ""))
        say("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s" % (
            "(B)", "(elements)", "", "", "",
            "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "", 0, ""))

    factor = 2.0 * (world - 1) / world
    expected = world * (world + 1) / 2.0
    wrong_total = 0
    bus_sum = 0.0
    bus_count = 0
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    for size in steps:
        count = size // 4
        src = send[:count]
        dst = recv[:count]
        cells = []
        for in_place in (False, True):
            if in_place:
                def op():
                    dist.all_reduce(dst)
            else:
                def op():
                    dst.copy_(src)
                    dist.all_reduce(dst)
            op()
            settle()
            start.record()
            for _ in range(args.iters):
                op()
            end.record()
            end.synchronize()
            usec = start.elapsed_time(end) * 1000.0 / args.iters
            usec = reduce_scalar(usec, torch.float64, dist.ReduceOp.MAX)
            # The check, apart from the timing: rank-dependent values, one reduction.
            src.fill_(rank + 1)
            if in_place:
                dst.fill_(rank + 1)
            op()
            wrong = int((dst != expected).sum().item())
            wrong = int(reduce_scalar(wrong, torch.int64, dist.ReduceOp.SUM))
            src.zero_()
            dst.zero_()
            algbw = size / (usec * 1e-6) / 1e9 if usec > 0 else 0.0
            busbw = algbw * factor
            bus_sum += busbw
            bus_count += 1
            wrong_total += wrong
            cells.append("  %7s  %6s  %6s  %6g" % (
                float_str(usec, 7), float_str(algbw, 6), float_str(busbw, 6), wrong))
        if rank == 0:
            say("%12li  %12li  %8s  %6s  %6s" % (size, count, "float", "sum", "%6i" % -1) + "".join(cells))

    if rank == 0:
        say("# %-20s : %d %s" % ("Out of bounds values", wrong_total, "FAILED" if wrong_total else "OK"))
        say("# %-20s : %g %s" % ("Avg bus bandwidth", bus_sum / max(bus_count, 1), ""))
        say("#")
        say("# Collective test concluded: %s" % PROGRAM)
        say()
    dist.destroy_process_group()
    return 1 if wrong_total else 0


if __name__ == "__main__":
    sys.exit(main())
