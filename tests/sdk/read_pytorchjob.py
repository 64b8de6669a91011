"""Read PyTorchJob manifests the way the Kubeflow Python SDK's TrainingClient does.

TrainingClient.get_job and list_jobs (kubeflow-training 1.9.4,
api/training_client.py:673-676, 733-736) hand the API server's JSON to
ApiClient.deserialize(..., "KubeflowOrgV1PyTorchJob"). For each file given, prints
`ok PATH` or `fail PATH: ERROR`, one line each. Used by tests/cli/real_clusters.rs.
"""

import json
import sys

import yaml
from kubeflow.training import ApiClient


class Response:
    """What ApiClient.deserialize reads: an object with the body in `data`."""

    def __init__(self, data):
        self.data = data


def main(paths):
    client = ApiClient()
    for path in paths:
        with open(path, encoding="utf-8") as f:
            doc = yaml.safe_load(f)
        try:
            client.deserialize(Response(json.dumps(doc)), "KubeflowOrgV1PyTorchJob")
            print(f"ok {path}")
        except Exception as e:  # the SDK raises ValueError for a missing required field
            print(f"fail {path}: {type(e).__name__}: {e}")


if __name__ == "__main__":
    main(sys.argv[1:])
