"""A stand-in for torch.distributed, rank 0 of 2: see tests/smoke/README.md."""

WORLD = 2


class ReduceOp:
    SUM = "sum"
    MIN = "min"
    MAX = "max"


def init_process_group(backend, timeout=None):
    assert backend == "nccl"


def get_rank():
    return 0


def get_world_size():
    return WORLD


def all_reduce(tensor, op=ReduceOp.SUM):
    # Rank r holds rank 0's value plus r where rank 0's is not zero.
    if op == ReduceOp.SUM:
        extra = WORLD * (WORLD - 1) / 2
        tensor.set([v * WORLD + (extra if v else 0) for v in tensor.get()])


def all_gather_object(out, obj):
    for rank in range(len(out)):
        out[rank] = obj.replace("Rank  0", "Rank %2d" % rank).replace(" on ", " on node-%d:" % rank, 1)


def destroy_process_group():
    pass
