"""Read Kubeflow Trainer v2 objects the way the Kubeflow Python SDK does.

The `kubeflow` SDK's TrainerClient deserializes what the API server returns into the
models of the `kubeflow-trainer-api` package (TrainerV1alpha1TrainJob,
...TrainingRuntime, ...ClusterTrainingRuntime; pydantic, generated from Trainer's
OpenAPI spec of that release). For each file given, every document is read with
`Model.from_dict` and written back with `to_dict`; a document that fails to read, or
that does not come back as it went in (a field the model does not know is dropped
without a word), is a failure. Prints `ok PATH` or `fail PATH: ERROR`, one line per
file. Used by tests/cli/trainer.rs.
"""

import sys

import yaml
from kubeflow_trainer_api import models

MODELS = {
    "TrainJob": models.TrainerV1alpha1TrainJob,
    "TrainingRuntime": models.TrainerV1alpha1TrainingRuntime,
    "ClusterTrainingRuntime": models.TrainerV1alpha1ClusterTrainingRuntime,
}


def first_difference(a, b, path="$"):
    """Where `b` (what the model wrote back) differs from `a` (what it read)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if key not in b:
                return f"{path}.{key} was dropped"
            if key not in a:
                return f"{path}.{key} was added"
            found = first_difference(a[key], b[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path} has {len(b)} items, not {len(a)}"
        for i, (x, y) in enumerate(zip(a, b)):
            found = first_difference(x, y, f"{path}[{i}]")
            if found:
                return found
        return None
    return None if a == b else f"{path} is {b!r}, not {a!r}"


def main(paths):
    for path in paths:
        with open(path, encoding="utf-8") as f:
            docs = [d for d in yaml.safe_load_all(f) if d is not None]
        try:
            for doc in docs:
                model = MODELS[doc["kind"]]
                back = model.from_dict(doc).to_dict()
                problem = first_difference(doc, back)
                if problem:
                    raise ValueError(f"{doc['kind']} {doc['metadata']['name']}: {problem}")
            print(f"ok {path}")
        except Exception as e:  # pydantic raises ValidationError for a wrong type
            print(f"fail {path}: {type(e).__name__}: {e}")


if __name__ == "__main__":
    main(sys.argv[1:])
