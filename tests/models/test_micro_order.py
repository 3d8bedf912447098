"""TFLite Micro's arena for edgelite's int8 file of a GraphDef against TensorFlow's int8 file
of the same GraphDef (TFLM as the oracle: tests.conftest.micro_module()).

Per model, measured in TFLM: the smallest arena with which the interpreter allocates (binary
search on ``arena_size``) and the RecordingMicroAllocator's "head" -- the non-persistent
part GreedyMemoryPlanner lays the activations out in, the part the op order decides
(converter/passes/order_for_memory.py). The "tail" (per-tensor and per-op persistent data)
follows from the ops and tensors each converter writes, not from their order.

ARENAS holds the numbers: {model: (TF's smallest arena, edgelite's, TF's head, edgelite's
head)}, WITHOUT_PASS edgelite's head with --disable-pass order_for_memory where it differs.
The models/micro_order/ networks (models/builders/zoo_micro_order.py) are the branching
ones: an Inception block, a DenseNet block, a U-Net and MobileNetV2 residuals. Where the
pass gains nothing, OPTIMAL shows the order edgelite writes is already the best: every
topological order of its final graph, scored with the pass's model of TFLM's planner
(which gives TFLM's head exactly on these models), needs at least as much. The tail is
TF's or smaller on every model, so the total is too: trim_constants writes one tensor for
equal constants and no zero FULLY_CONNECTED bias, the quantizer gives a CONCATENATION's
operands its parameters (no QUANTIZE requantizes them: the U-Net, the static RNN) and keeps
QAT weights with one FakeQuant range per tensor (qat_cnn), as TF does.

Not compared: op_zoo_math and op_zoo_array (TFLM has kernels for neither file's ops),
rnn_tf1_cond (the random calibration data never take the branch one MatMul is in: edgelite
asks for its range), and the While-loop models (rnn_lstm, rnn_bilstm, rnn_cond, ...: TFLM's
allocation succeeds in any arena, down to 4 KB, as the loop bodies are planned only when
they run, so the smallest arena that allocates says nothing).
"""

from __future__ import annotations

import functools
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

# model: (TF min arena, edgelite min arena, TF head, edgelite head)
ARENAS = {
    "micro_order/inception": (18896, 18384, 14848, 14336),
    "micro_order/densenet": (20776, 17824, 15360, 12288),
    "micro_order/unet": (53280, 53280, 49152, 49152),
    "micro_order/mbv2": (14240, 14240, 7168, 7168),
    "keras_cnn": (6088, 6088, 3072, 3072),
    "efficientnet_like": (60920, 60920, 53248, 53248),
    "fashion_mobilenet_v2": (45864, 45864, 28224, 28224),
    "fashion_xception": (48008, 44872, 31360, 28224),
    "op_zoo_image": (41664, 39976, 35712, 34048),
    "qat_cnn": (3192, 3192, 640, 640),
    "tf1_mobilenet_unfolded_bn": (19472, 19472, 15360, 15360),
    "tf1_dilated_conv1d": (4080, 3872, 1568, 1504),
    "text_classifier": (2960, 2960, 368, 368),
    "rnn_grouped_conv": (1944, 1944, 720, 720),
    "rnn_lstm_unrolled": (32288, 32160, 1104, 496),
    "tf1_cond_is_training": (3872, 3872, 1280, 1280),
    "tf1_cond_placeholder_default": (3872, 3872, 1280, 1280),
    "tf1_cnn": (3896, 3896, 1280, 1280),
    "rnn_tf1_static_rnn": (27480, 26464, 960, 960),
    "keras_dynamic_shape": (4000, 4000, 2048, 2048),
}
WITHOUT_PASS = {
    "micro_order/densenet": 16384,
    "fashion_xception": 31360,
    "rnn_lstm_unrolled": 928,
}
# The order edgelite writes is the best one, found by scoring every topological order of
# its final graph with the planner model: {model: (orders, modelled arena = TFLM's head)}.
# Where edgelite's head equals TF's, TF's order is optimal too; a single order (residual
# blocks, a U-Net's skips) leaves no choice to any converter.
OPTIMAL = {
    "micro_order/inception": (630, 14336),
    "micro_order/densenet": (5, 12288),
    "micro_order/unet": (1, 49152),
    "micro_order/mbv2": (1, 7168),
    "efficientnet_like": (1, 53248),
    "fashion_mobilenet_v2": (1, 28224),
    "fashion_xception": (42, 28224),
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


@functools.lru_cache(maxsize=None)
def converted(name: str):
    with tempfile.TemporaryDirectory() as folder:
        return edgelite_int8(name, folder)


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
    lo, hi = 1, 1 << 16
    while not allocates(data, hi):
        lo, hi = hi + 1, hi * 2
        assert hi <= 1 << 24
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


def measure(name: str) -> tuple[int, int, int, int]:
    tf = tf_file(name).read_bytes()
    ours = converted(name).model
    return smallest_arena(tf), smallest_arena(ours), head(tf), head(ours)


@pytest.mark.parametrize("name", sorted(ARENAS))
def test_arena_against_tensorflow(name):
    got = measure(name)
    assert got == ARENAS[name]
    tf_total, total, tf_head, our_head = got
    assert our_head <= tf_head
    assert total <= tf_total


@pytest.mark.parametrize("name", sorted(WITHOUT_PASS))
def test_the_pass_lowers_the_head(name, tmp_path):
    plain = head(edgelite_int8(name, tmp_path, OFF).model)
    assert plain == WITHOUT_PASS[name] > ARENAS[name][3]


@pytest.mark.parametrize("name", sorted(OPTIMAL))
def test_the_order_written_is_optimal(name):
    graph = converted(name).graph
    dag = om.build_dag(graph, float_as_int8=False)
    orders = om.all_orders(dag, om.EXACT_ORDERS)
    written = om.arena(dag, list(range(dag.n)))
    assert (len(orders), written) == OPTIMAL[name]
    assert written == min(om.arena(dag, order) for order in orders)
    assert written == ARENAS[name][3]   # the planner model is TFLM's head
