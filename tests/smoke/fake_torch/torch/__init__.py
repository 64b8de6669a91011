"""A stand-in for torch: see tests/smoke/README.md."""

import time
import types

__version__ = "0.0-fake"
float32 = "float32"
float64 = "float64"
int64 = "int64"


class device:
    def __init__(self, kind, index):
        self.kind = kind
        self.index = index


class Tensor:
    """A flat list of numbers, or a slice view [start, stop) of another Tensor."""

    def __init__(self, values=None, base=None, start=0, stop=0):
        self.values = values
        self.base = base
        self.start = start
        self.stop = stop if base is not None else len(values)

    def _store(self):
        if self.base is None:
            return self.values, 0
        store, offset = self.base._store()
        return store, offset + self.start

    def __len__(self):
        return self.stop - self.start if self.base is not None else len(self.values)

    def __getitem__(self, part):
        return Tensor(base=self, start=part.start or 0, stop=part.stop)

    def get(self):
        store, offset = self._store()
        return store[offset:offset + len(self)]

    def set(self, values):
        store, offset = self._store()
        store[offset:offset + len(values)] = values

    def copy_(self, other):
        self.set(list(other.get()))
        return self

    def fill_(self, value):
        self.set([float(value)] * len(self))
        return self

    def zero_(self):
        return self.fill_(0)

    def __ne__(self, value):
        return Tensor([1 if v != value else 0 for v in self.get()])

    def sum(self):
        return Tensor([sum(self.get())])

    def item(self):
        return self.get()[0]


def zeros(count, dtype=None, device=None):
    return Tensor([0.0] * count)


def tensor(values, dtype=None, device=None):
    return Tensor(list(values))


class _Properties:
    name = "Fake GPU"
    pci_domain_id = 0
    pci_bus_id = 0x1B
    pci_device_id = 0


class _Event:
    def __init__(self, enable_timing=False):
        self.at = 0.0

    def record(self):
        self.at = time.perf_counter()

    def synchronize(self):
        pass

    def elapsed_time(self, end):
        return (end.at - self.at) * 1000.0


cuda = types.SimpleNamespace(
    set_device=lambda index: None,
    mem_get_info=lambda: (80 << 30, 80 << 30),
    get_device_properties=lambda index: _Properties(),
    synchronize=lambda: None,
    Event=_Event,
    nccl=types.SimpleNamespace(version=lambda: (2, 21, 5)),
)
