#!/usr/bin/env python3
"""The way teams do it today, for comparison: read each job with PyYAML, build the
PyTorchJob dict by hand, dump it with PyYAML, read it back, and validate it with
`jsonschema` against the upstream PyTorchJob CRD schema (validator built once).

Usage: baseline.py JOBS_DIR POOLS_FILE OUT_DIR SCHEMA [--libyaml]
  --libyaml uses PyYAML's C loader/dumper (CSafeLoader/CSafeDumper) instead of the
  pure-Python safe_load/safe_dump most scripts call.
"""
import json
import os
import sys

import jsonschema
import yaml


def main():
    jobs_dir, pools_file, out_dir, schema_file = sys.argv[1:5]
    fast = "--libyaml" in sys.argv
    loader = yaml.CSafeLoader if fast else yaml.SafeLoader
    dumper = yaml.CSafeDumper if fast else yaml.SafeDumper
    with open(schema_file) as f:
        validator = jsonschema.Draft7Validator(json.load(f))
    with open(pools_file) as f:
        pools = {p["metadata"]["name"]: p["spec"] for p in yaml.load_all(f, Loader=loader)}
    for name in sorted(os.listdir(jobs_dir)):
        with open(os.path.join(jobs_dir, name)) as f:
            job = yaml.load(f, Loader=loader)
        manifest = build(job, pools[job["spec"]["pool"]])
        target = os.path.join(out_dir, job["metadata"]["name"])
        os.makedirs(target, exist_ok=True)
        text = yaml.dump(manifest, Dumper=dumper, sort_keys=False)
        with open(os.path.join(target, "pytorchjob.yaml"), "w") as f:
            f.write(text)
        errors = list(validator.iter_errors(yaml.load(text, Loader=loader)))
        if errors:
            raise SystemExit(f"{name}: {errors[0].message}")


def build(job, pool):
    spec = job["spec"]
    net = pool["network"]
    gpus, per_node = spec["gpusPerNode"], pool["gpu"]["perNode"]
    rdma = net["fabric"] != "tcp" and gpus == per_node
    env = {"NCCL_IB_DISABLE": "0" if rdma else "1"}
    if net.get("socketIfname"):
        env["NCCL_SOCKET_IFNAME"] = net["socketIfname"]
    if rdma and net.get("hcas"):
        hcas = net["hcas"][: -(-gpus * len(net["hcas"]) // per_node)]
        env["NCCL_IB_HCA"] = ",".join(hcas)
    if rdma and net["fabric"] == "roce" and isinstance(net.get("gidIndex"), int):
        env["NCCL_IB_GID_INDEX"] = str(net["gidIndex"])
    env.update({k: str(v) for k, v in spec.get("env", {}).items()})
    resources = {pool["gpu"].get("resource", "nvidia.com/gpu"): str(gpus)}
    resources.update({k: str(v) for k, v in spec.get("resources", {}).items()})
    if rdma:
        resources["rdma/hca" if net["fabric"] == "ib" else "rdma/shared"] = "1"
    container = {
        "name": "pytorch",
        "image": spec["image"],
        "command": ["torchrun", spec["script"]] + [str(a) for a in spec.get("args", [])],
        "env": [{"name": k, "value": v} for k, v in sorted(env.items())],
        "resources": {"requests": resources, "limits": resources},
        "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}]
        + [{"name": v["name"], "mountPath": v["mountPath"]} for v in spec.get("volumes", [])],
    }
    if rdma:
        container["securityContext"] = {"capabilities": {"add": ["IPC_LOCK"]}}
    volumes = [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": spec.get("shm", "")}}]
    for v in spec.get("volumes", []):
        if "claim" in v:
            volumes.append({"name": v["name"], "persistentVolumeClaim": {"claimName": v["claim"]}})
        elif "nfs" in v:
            volumes.append({"name": v["name"], "nfs": dict(v["nfs"])})
    pod = {
        "metadata": {"labels": spec.get("labels", {}), "annotations": {"sidecar.istio.io/inject": "false"}},
        "spec": {"containers": [container], "volumes": volumes},
    }
    if pool.get("scheduler"):
        pod["spec"]["schedulerName"] = pool["scheduler"]["name"]
    # A fresh copy per replica: a shared dict would make PyYAML write anchors.
    copy = lambda: json.loads(json.dumps(pod))
    replicas = {"Master": {"replicas": 1, "restartPolicy": "OnFailure", "template": copy()}}
    if spec["nodes"] > 1:
        replicas["Worker"] = {"replicas": spec["nodes"] - 1, "restartPolicy": "OnFailure", "template": copy()}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": job["metadata"]["name"], "namespace": job["metadata"].get("namespace", "default")},
        "spec": {"nprocPerNode": str(gpus), "runPolicy": spec.get("runPolicy", {}), "pytorchReplicaSpecs": replicas},
    }


if __name__ == "__main__":
    main()
