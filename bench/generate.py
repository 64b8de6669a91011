#!/usr/bin/env python3
"""Write N synthetic but realistic rdmagen jobs over a handful of pools.

Deterministic: the same N and seed give byte-identical files.
Usage: generate.py N SEED OUTDIR   (writes OUTDIR/pools.yaml and OUTDIR/jobs/*.yaml)
"""
import os
import random
import sys

POOLS = """\
apiVersion: rdmagen/v1alpha1
kind: Pool
metadata: {name: a100-roce}
spec:
  platform: generic
  gpu: {perNode: 8, model: A100-SXM-80G}
  network:
    fabric: roce
    hcas: [mlx5_1, mlx5_2, mlx5_3, mlx5_4, mlx5_5, mlx5_6, mlx5_7, mlx5_8]
    socketIfname: eth0
    gidIndex: 3
    ibTimeout: 22
    qpsPerConnection: 8
  scheduler: {name: volcano, queue: default}
---
apiVersion: rdmagen/v1alpha1
kind: Pool
metadata: {name: h800-ib}
spec:
  platform: aistudio
  gpu: {perNode: 8, model: H800}
  network:
    fabric: ib
    hcas: [mlx5_1, mlx5_2, mlx5_3, mlx5_4]
    socketIfname: eth0
  scheduler: {name: volcano, queue: training}
---
apiVersion: rdmagen/v1alpha1
kind: Pool
metadata: {name: a800-roce-ai}
spec:
  platform: aistudio
  gpu: {perNode: 8, model: A800}
  network:
    fabric: roce
    hcas: [mlx5_1, mlx5_2, mlx5_3, mlx5_4, mlx5_5, mlx5_6, mlx5_7, mlx5_8]
    socketIfname: eth0
    gidIndex: auto
---
apiVersion: rdmagen/v1alpha1
kind: Pool
metadata: {name: cce-a100}
spec:
  platform: cce
  gpu: {resource: baidu.com/a100_80g_cgpu, perNode: 8}
  network:
    fabric: roce
    hcas: [mlx5_1, mlx5_2, mlx5_3, mlx5_4, mlx5_5, mlx5_6, mlx5_7, mlx5_8]
    socketIfname: eth0
  scheduler: {name: volcano, queue: default}
---
apiVersion: rdmagen/v1alpha1
kind: Pool
metadata: {name: t4-tcp}
spec:
  gpu: {perNode: 4, model: T4}
  network: {fabric: tcp, socketIfname: eth0}
"""

POOL_GPUS = {"a100-roce": 8, "h800-ib": 8, "a800-roce-ai": 8, "cce-a100": 8, "t4-tcp": 4}
MODELS = ["llama", "swin", "bert", "resnet", "gpt", "vit", "t5", "whisper"]


def job(i, rng):
    pool = rng.choice(sorted(POOL_GPUS))
    per_node = POOL_GPUS[pool]
    gpus = per_node if rng.random() < 0.8 else per_node // 2
    nodes = rng.choice([1, 2, 2, 4, 4, 8, 16])
    model = rng.choice(MODELS)
    lines = [
        "apiVersion: rdmagen/v1alpha1",
        "kind: Job",
        f"metadata: {{name: {model}-{i:05d}, namespace: team-{i % 7}, labels: {{team: team-{i % 7}, model: {model}}}}}",
        "spec:",
        f"  pool: {pool}",
        f"  image: registry.example.com/{model}/train:{rng.randint(1, 40)}.{rng.randint(0, 9)}",
        f"  nodes: {nodes}",
        f"  gpusPerNode: {gpus}",
        f"  script: train_{model}.py",
        f"  args: [--config, configs/{model}-{rng.choice(['base', 'large', 'xl'])}.yaml, --batch-size, \"{rng.choice([32, 64, 128, 256])}\", --lr, \"{rng.choice(['1e-4', '3e-4', '6e-4'])}\"]",
        f"  env: {{NCCL_DEBUG: {rng.choice(['WARN', 'INFO'])}, WANDB_PROJECT: {model}-runs}}",
        f"  shm: {rng.choice([16, 32, 64, 128])}Gi",
        f"  resources: {{cpu: \"{gpus * 12}\", memory: {gpus * 96}Gi}}",
        "  volumes:",
        f"    - {{name: data, claim: {model}-data, mountPath: /data, readOnly: true}}",
        f"    - {{name: ckpt, nfs: {{server: nfs-{i % 3}.example.internal, path: /exports/{model}}}, mountPath: /ckpt}}",
        "  runPolicy: {cleanPodPolicy: Running, backoffLimit: 3}",
    ]
    return "\n".join(lines) + "\n"


def main():
    n, seed, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    rng = random.Random(seed)
    os.makedirs(os.path.join(out, "jobs"), exist_ok=True)
    with open(os.path.join(out, "pools.yaml"), "w") as f:
        f.write(POOLS)
    for i in range(n):
        with open(os.path.join(out, "jobs", f"job-{i:05d}.yaml"), "w") as f:
            f.write(job(i, rng))


if __name__ == "__main__":
    main()
