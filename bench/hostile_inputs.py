#!/usr/bin/env python3
"""Write the hostile inputs of issue 10 (defects 9-12) into OUTDIR.

Deterministic: the same arguments give byte-identical files. Sizes default to the
issue's; a smaller SCALE (e.g. 0.1) gives the same shapes, smaller, for a quick look.
Usage: hostile_inputs.py OUTDIR [SCALE]
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def duplicate_keys(n):
    """One Job whose spec.labels mapping has n keys, the last a duplicate of the first:
    every key is checked against those before it."""
    head = "apiVersion: rdmagen/v1alpha1\nkind: Job\nmetadata: {name: dup}\nspec:\n  labels:\n"
    keys = "".join(f"    k{i}: v\n" for i in range(n - 1))
    return head + keys + "    k0: again\n"


def tiny_documents(n):
    """n one-line documents, each a finding (not a Job or Pool) that quotes its line."""
    return "".join(f"k{i}: {i}\n---\n" for i in range(n))


def lint_jobs(n):
    """n copies of the seed's PyTorchJob (6 findings each) in one file, renamed."""
    with open(os.path.join(ROOT, "tests", "lint", "seed-swin.yaml")) as f:
        text = f.read()
    job = text.split("\n---\n")[0]
    name = 'name: "pytorch-swin-transformer-nccl"'
    assert name in job
    return "\n---\n".join(job.replace(name, f'name: "swin-{i}"') for i in range(n)) + "\n"


def show_gids(rows):
    """show_gids output with `rows` rows: four GIDs (v1/v2 link-local, v1/v2 IPv4) per
    device, as a host prints them, over rows/4 devices."""
    out = ["DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV", "---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---"]
    for d in range(rows // 4):
        hi, lo = 0x0A00 + (d >> 8), d & 0xFF
        link_local = f"fe80:0000:0000:0000:f820:20ff:fe{d >> 16 & 0xff:02x}:{d & 0xffff:04x}"
        mapped = f"0000:0000:0000:0000:0000:ffff:{hi:04x}:{lo:04x}"
        ip = f"10.{hi & 0xff}.{lo >> 8}.{lo & 0xff}"
        for i, (gid, addr, ver) in enumerate(
            [(link_local, "", "v1"), (link_local, "", "v2"), (mapped, ip, "v1"), (mapped, ip, "v2")]
        ):
            out.append(f"mlx5_{d}\t1\t{i}\t{gid}\t{addr}\t{ver}\teth{d}")
    return "\n".join(out) + "\n"


def manifests(n, changed):
    """n Kubernetes objects, each with a named env list; `changed` alters one value in
    each object, renames one env item and lists the objects in reverse order."""
    docs = []
    for i in range(n):
        value = f"{i + 1}" if changed else f"{i}"
        extra = "B" if changed else "A"
        docs.append(
            "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\n"
            f"metadata:\n  name: job-{i}\n  namespace: ns-{i % 7}\n"
            "spec:\n  containers:\n    - name: pytorch\n      env:\n"
            f"        - name: NCCL_IB_GID_INDEX\n          value: \"{value}\"\n"
            f"        - name: EXTRA_{extra}\n          value: \"x\"\n"
        )
    if changed:
        docs.reverse()
    return "---\n".join(docs)


def flood(n, last="1"):
    """n documents of one key each, `a: 1`, 9 bytes a document (issue 22, item 5); the
    last one's value is `last`, so that two floods can differ in one line."""
    return "---\na: 1\n" * (n - 1) + f"---\na: {last}\n"


def env_dockerfile(n):
    """A Dockerfile whose n ENV lines each set an NCCL variable in the image (RDG
    ImageNcclEnv, a warning each: issue 22, item 8)."""
    return "FROM ubuntu:22.04\n" + "".join(f"ENV NCCL_IB_HCA{i}=x\n" for i in range(n))


def main():
    out = sys.argv[1]
    scale = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
    size = lambda n: max(4, int(n * scale))
    write(os.path.join(out, "duplicate-keys.yaml"), duplicate_keys(size(100_000)))
    write(os.path.join(out, "tiny-documents.yaml"), tiny_documents(size(100_000)))
    write(os.path.join(out, "lint-jobs.yaml"), lint_jobs(size(4_000)))
    write(os.path.join(out, "show-gids.txt"), show_gids(size(20_000)))
    for n in (4_000, 20_000):
        write(os.path.join(out, f"semantic-{n}", "old.yaml"), manifests(size(n), False))
        write(os.path.join(out, f"semantic-{n}", "new.yaml"), manifests(size(n), True))
    # Issue 22: floods of tiny documents and nodes just under the 32 MiB default cap,
    # a flood of findings, and detect at 5x and 25x its 20 000 rows.
    write(os.path.join(out, "flood.yaml"), flood(size(3_700_000)))
    write(os.path.join(out, "flood-changed.yaml"), flood(size(3_700_000), last="2"))
    write(os.path.join(out, "empty-documents.yaml"), "---\n" * size(8_000_000))
    write(os.path.join(out, "one-character-items.yaml"), "- a\n" * size(8_000_000))
    write(os.path.join(out, "env-flood", "Dockerfile"), env_dockerfile(size(500_000)))
    write(os.path.join(out, "lint-jobs-800.yaml"), lint_jobs(size(800)))
    for rows in (100_000, 500_000):
        write(os.path.join(out, f"show-gids-{rows}.txt"), show_gids(size(rows)))
    # 1 GB: a real (over-long) first line, then a sparse tail; rdmagen must refuse it
    # by its size, before reading it all.
    big = os.path.join(out, "one-gigabyte.yaml")
    with open(big, "w") as f:
        f.write("apiVersion: rdmagen/v1alpha1\nkind: Job\nmetadata: {name: " + "x" * (1 << 20) + "}\n")
        f.truncate(1 << 30)


if __name__ == "__main__":
    main()
