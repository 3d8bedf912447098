"""TFLite Micro's arena for edgelite's int8 file of a GraphDef against TensorFlow's int8 file
of the same GraphDef (TFLM as the oracle: tests.conftest.micro_module()).

Per model, measured in TFLM: the smallest arena with which the interpreter allocates (binary
search on ``arena_size``) and the RecordingMicroAllocator's "head" -- the non-persistent
part GreedyMemoryPlanner lays the activations out in, the part the op order decides
(converter/passes/order_for_memory.py). The "tail" (per-tensor and per-op persistent data)
follows from the ops and tensors each converter writes, not from their order.

ARENAS holds the numbers: {model: (TF's smallest arena, edgelite's, TF's head, edgelite's
head, edgelite's head without order_for_memory)}. The models/micro_order_* networks
(models/builders/zoo_micro_order.py) are the branching ones: an Inception block, a DenseNet
block, a U-Net and MobileNetV2 residuals. Where the pass gains nothing, OPTIMAL shows the
order edgelite writes is already the best: its modelled arena equals the smallest
live-bytes peak over every topological order (an exact search), which no order can beat.
"""

from __future__ import annotations

import os
import re
import tempfile

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.converter.passes import order_for_memory as om
from edgelite.converter.quantize import QuantizeOptions
from edgelite.interpreter import Interpreter
from tests.conftest import MODELS, micro_module

OFF = frozenset({"order_for_memory"})

# model: (TF min arena, edgelite min arena, TF head, edgelite head, edgelite head w/o pass)
ARENAS = {
}
# edgelite's total arena is larger than TF's where its file has more tensors or ops (the
# tail): {model: why}. The head is never larger.
LARGER_TAIL: dict[str, str] = {
}


def tf_file(name: str):
    path = MODELS / "tf_modes" / f"{name}.int8.tflite"
    return path if path.exists() else MODELS / f"{name}.tf_int8.tflite"


def calibration(tf_path, folder) -> str:
    """Four uniform [0, 1) samples per float input (zeros for integer ones), shaped as the
    TF file's inputs: the arena does not depend on the ranges."""
    rng = np.random.default_rng(0)
    samples = {}
    for d in Interpreter(model_path=str(tf_path)).get_input_details():
        shape = [4, *(int(s) for s in d["shape"][1:])]
        dtype = np.dtype(d["dtype"])
        samples[d["name"]] = (rng.uniform(0, 1, shape).astype(np.float32) if dtype.kind == "f"
                              else np.zeros(shape, dtype))
    path = os.path.join(folder, "calib.npz")
    np.savez(path, **samples)
    return path


def edgelite_int8(name: str, folder, disabled=frozenset()):
    pb = MODELS / f"{name}.pb"
    q = QuantizeOptions(calib=calibration(tf_file(name), folder))
    return convert_detailed(pb, ConvertOptions(quantize=q, disabled_passes=disabled))


class _Silenced:
    """fd 1 and 2 to a file while TFLM prints (its C++ logging bypasses sys.stdout)."""

    def __enter__(self):
        import sys
        sys.stdout.flush()
        sys.stderr.flush()
        self.file = tempfile.TemporaryFile()
        self.saved = [os.dup(1), os.dup(2)]
        os.dup2(self.file.fileno(), 1)
        os.dup2(self.file.fileno(), 2)
        return self

    def __exit__(self, *exc):
        for fd, saved in zip((1, 2), self.saved):
            os.dup2(saved, fd)
            os.close(saved)
        self.file.seek(0)
        self.text = self.file.read().decode(errors="replace")
        self.file.close()


def allocates(data: bytes, size: int) -> bool:
    runtime = micro_module()
    with _Silenced():
        try:
            runtime.Interpreter.from_bytes(data, arena_size=size)
            return True
        except Exception:   # noqa: BLE001 - TFLM raises RuntimeError "... AllocateTensors"
            return False


def smallest_arena(data: bytes) -> int:
    lo, hi = 1, 1 << 22
    assert allocates(data, hi)
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if allocates(data, mid) else (mid + 1, hi)
    return lo


def head(data: bytes) -> int:
    """The RecordingMicroAllocator's non-persistent ("head") bytes."""
    runtime = micro_module()
    with _Silenced() as out:
        interp = runtime.Interpreter.from_bytes(
            data, intrepreter_config=runtime.InterpreterConfig.kAllocationRecording)
        interp.print_allocations()
    return int(re.search(r"allocation head (\d+) bytes", out.text).group(1))


def measure(name: str, folder) -> tuple[int, int, int, int, int]:
    tf = tf_file(name).read_bytes()
    ours = edgelite_int8(name, folder).model
    plain = edgelite_int8(name, folder, OFF).model
    return smallest_arena(tf), smallest_arena(ours), head(tf), head(ours), head(plain)


@pytest.mark.parametrize("name", sorted(ARENAS))
def test_arena_against_tensorflow(name, tmp_path):
    got = measure(name, tmp_path)
    assert got == ARENAS[name]
    tf_total, total, tf_head, our_head, plain_head = got
    assert our_head <= tf_head and our_head <= plain_head
    assert total <= tf_total or name in LARGER_TAIL
