"""Hostile sizes: tiny files that declare huge tensors are refused, in one line, before
anything big is allocated (memory.py, allocation.py); element counts never wrap."""

import tracemalloc

import numpy as np
import pytest

from edgelite.interpreter import Interpreter, ModelFormatError, ShapeError, load_model
from edgelite.interpreter.allocation import FOLD_ALWAYS_BYTES
from edgelite.interpreter.memory import DEFAULT_MEMORY_LIMIT, default_memory_limit
from edgelite.interpreter.loader.model import MAX_RANK

from .tflite_builder import ModelBuilder

MIB = 2**20


def _fill_model(count: int, dims, dims_dtype=np.int32, declared=None) -> bytes:
    """``count`` FILL ops of shape ``dims`` (a constant), each a graph output."""
    b = ModelBuilder()
    x = b.tensor("x", (1,))
    shape = b.const("dims", np.array(dims, dims_dtype))
    value = b.const("value", np.array(1.5, np.float32))
    outs = []
    for i in range(count):
        outs.append(b.tensor(f"big{i}", declared if declared is not None else dims))
        b.op("FILL", [shape, value], [outs[-1]])
    y = b.tensor("y", (1,))
    b.op("RELU", [x], [y])
    return b.build([x], [y] + outs)


def _peak_while(fn) -> int:
    """Peak bytes traced (numpy's buffers included) while ``fn`` runs."""
    tracemalloc.start()
    try:
        fn()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


def _one_line(exc_info) -> str:
    text = str(exc_info.value)
    assert "\n" not in text
    return text


def test_four_fills_of_2gib_are_refused_before_allocating():
    data = _fill_model(4, [2**29])
    assert len(data) < 1500  # a tiny file declaring 4 x 2 GiB
    interp = Interpreter(model_content=data)

    def allocate():
        with pytest.raises(ShapeError) as info:
            interp.allocate_tensors()
        text = _one_line(info)
        # Not folded (2 GiB from 12 bytes of constants): the four outputs are arena
        # tensors, and the plan is refused with the biggest three named.
        # x (4 bytes, offset 0), big0..3 from 64 on, y after them: 4 * 2**31 + 68 bytes.
        assert f"needs {4 * 2**31 + 68} bytes (a {4 * 2**31 + 68}-byte arena, 0 bytes " \
            "of folded constants, 0 bytes of work buffers)" in text
        assert f"over the {default_memory_limit()}-byte memory limit" in text
        assert "the biggest tensors (bytes): 'big0' 2147483648, 'big1' 2147483648, " \
            "'big2' 2147483648" in text
        assert "Interpreter(memory_limit=...)" in text

    assert _peak_while(allocate) < 4 * MIB


def test_small_fills_are_still_folded():
    interp = Interpreter(model_content=_fill_model(2, [3, 4]))
    interp.allocate_tensors()
    assert len(interp._steps) == 1  # only the RELU; both FILLs became constants
    np.testing.assert_array_equal(interp.get_tensor(2), np.full((3, 4), 1.5, np.float32))


def test_folded_constants_count_against_the_limit():
    # Eight 1 MiB FILLs fold (each at most FOLD_ALWAYS_BYTES); a 3.5 MiB limit lets the
    # first three through and refuses the fourth before computing it.
    assert FOLD_ALWAYS_BYTES == MIB
    data = _fill_model(8, [MIB // 4])
    interp = Interpreter(model_content=data, memory_limit=7 * MIB // 2)
    with pytest.raises(ShapeError) as info:
        interp.allocate_tensors()
    assert _one_line(info) == (
        "operator 3 FILL (output 'big3'): folding its 1048576-byte output into a constant "
        f"would take {4 * MIB} bytes with what is allocated so far, over the {7 * MIB // 2}"
        "-byte memory limit; check the input shapes, or pass Interpreter(memory_limit=...) "
        "to allow more")
    Interpreter(model_content=data, memory_limit=9 * MIB).allocate_tensors()


def test_work_buffers_count_against_the_limit():
    # LEAKY_RELU keeps an output-sized mask (scratch); 1 MiB elements -> 1 MiB of mask.
    b = ModelBuilder()
    x = b.tensor("x", (MIB,))
    y = b.tensor("y", (MIB,))
    b.op("LEAKY_RELU", [x], [y], alpha=0.1)
    data = b.build([x], [y])
    with pytest.raises(ShapeError) as info:
        Interpreter(model_content=data, memory_limit=MIB // 2).allocate_tensors()
    assert _one_line(info).startswith(
        "operator 0 (LEAKY_RELU, output 'y'): a 1048576-byte work buffer would take 1048576 "
        f"bytes with what is allocated so far, over the {MIB // 2}-byte memory limit")
    # 1 MiB of mask + 8 MiB of arena (x and y, float32) fit in 10 MiB, not in 8 MiB.
    Interpreter(model_content=data, memory_limit=10 * MIB).allocate_tensors()
    with pytest.raises(ShapeError, match=r"needs 9437184 bytes \(a 8388608-byte arena, 0 "
                       r"bytes of folded constants, 1048576 bytes of work buffers\)"):
        Interpreter(model_content=data, memory_limit=8 * MIB).allocate_tensors()


def test_memory_limit_argument():
    data = _fill_model(1, [2])
    for bad in (0, -5, 1.5, "1GB", True):
        with pytest.raises(ValueError, match="memory_limit should be a positive number"):
            Interpreter(model_content=data, memory_limit=bad)
    assert default_memory_limit() <= DEFAULT_MEMORY_LIMIT == 4 * 2**30


def test_huge_range_is_not_materialized_at_prepare():
    # RANGE(0, 2**28, 1) int32 is 1 GiB from 12 bytes: computed per invoke, in the arena.
    b = ModelBuilder()
    x = b.tensor("x", (1,))
    start, limit, delta = (b.const(n, np.array(v, np.int32))
                           for n, v in (("start", 0), ("limit", 2**28), ("delta", 1)))
    r = b.tensor("r", (2**28,), np.int32)
    b.op("RANGE", [start, limit, delta], [r])
    y = b.tensor("y", (1,))
    b.op("RELU", [x], [y])
    interp = Interpreter(model_content=b.build([x], [y, r]), memory_limit=64 * MIB)

    def allocate():
        with pytest.raises(ShapeError, match=r"'r' 1073741824"):
            interp.allocate_tensors()

    assert _peak_while(allocate) < 4 * MIB

    b.tensors[r].shape = [1000]  # a small RANGE is folded into a constant
    b.buffers[b.tensors[limit].buffer].data = np.array([1000], np.int32).view(np.uint8)
    interp = Interpreter(model_content=b.build([x], [y, r]))
    interp.allocate_tensors()
    assert len(interp._steps) == 1
    np.testing.assert_array_equal(interp.get_tensor(r), np.arange(1000))


def test_int64_dims_do_not_wrap():
    # numpy's int64 product of [2**62 + 1, 4] wraps to 4 elements; Python ints do not.
    data = _fill_model(1, [2**62 + 1, 4], np.int64, declared=[1, 4])
    with pytest.raises(ShapeError) as info:
        Interpreter(model_content=data).allocate_tensors()
    assert _one_line(info) == (
        f"operator 0 (FILL, output 'big0'): output shape [{2**62 + 1}, 4] needs "
        f"{(2**62 + 1) * 4 * 4} bytes, over the 2147483648-byte limit per tensor")


def test_more_dimensions_than_numpy_holds():
    data = _fill_model(1, [1] * (MAX_RANK + 1), declared=[1])
    with pytest.raises(ShapeError) as info:
        Interpreter(model_content=data).allocate_tensors()
    assert _one_line(info) == (f"operator 0 (FILL, output 'big0'): output 'big0' would have "
                               f"{MAX_RANK + 1} dimensions, more than the {MAX_RANK} numpy "
                               "supports")
    # Declared in the file: refused at load, naming the tensor.
    data = _fill_model(1, [2], declared=[1] * (MAX_RANK + 1))
    with pytest.raises(ModelFormatError) as info:
        load_model(data)
    assert _one_line(info) == (f"subgraph 0: tensor 3 'big0' has {MAX_RANK + 1} dimensions, "
                               f"more than the {MAX_RANK} numpy supports")
    # A resized input.
    interp = Interpreter(model_content=_fill_model(1, [2]))
    interp.resize_tensor_input(0, [1] * (MAX_RANK + 1))
    with pytest.raises(ShapeError, match=f"input tensor 'x' \\(index 0\\) has {MAX_RANK + 1} "
                       f"dimensions, more than the {MAX_RANK} numpy supports"):
        interp.allocate_tensors()


def test_resize_tables_are_charged_before_they_are_built():
    # RESIZE_BILINEAR of a 1x1 image to 2^29 x 1: a 2 GiB output, and per-row tables
    # (positions, indices, weights) of ~16 GiB that prepare() would build first.
    b = ModelBuilder()
    x = b.tensor("x", (1, 1, 1, 1))
    size = b.const("size", np.array([2**29, 1], np.int32))
    y = b.tensor("y", (1, 2**29, 1, 1))
    b.op("RESIZE_BILINEAR", [x, size], [y])
    interp = Interpreter(model_content=b.build([x], [y]))

    def allocate():
        with pytest.raises(ShapeError) as info:
            interp.allocate_tensors()
        assert "RESIZE_BILINEAR" in _one_line(info) and "work buffer" in str(info.value)

    assert _peak_while(allocate) < 4 * MIB


def test_empty_batch_runs_nothing():
    # A batch of 0 gives empty outputs: the ops have nothing to compute (no kernel runs,
    # so none trips over a zero-sized reshape) and the outputs are empty arrays.
    b = ModelBuilder()
    x = b.tensor("x", (1, 4, 4, 1))
    w = b.const("w", np.ones((2, 3, 3, 1), np.float32))
    y = b.tensor("y", (1, 4, 4, 2))
    b.op("CONV_2D", [x, w, -1], [y], stride_w=1, stride_h=1, padding="SAME")
    interp = Interpreter(model_content=b.build([x], [y]))
    interp.resize_tensor_input(0, [0, 4, 4, 1])
    interp.allocate_tensors()
    assert interp._steps == ()
    interp.set_tensor(0, np.zeros((0, 4, 4, 1), np.float32))
    interp.invoke()
    assert interp.get_tensor(interp.get_output_details()[0]["index"]).shape == (0, 4, 4, 2)


_OUT_OF_MEMORY = """
import resource, sys
import numpy as np
sys.path.insert(0, {tests!r})
from tflite_builder import ModelBuilder
from edgelite.interpreter import Interpreter, EdgeliteError

b = ModelBuilder()
x = b.tensor("x", (2**28,))
y = b.tensor("y", (2**28,))
z = b.tensor("z", (2**28,))
b.op("ADD", [x, y], [z])
interp = Interpreter(model_content=b.build([x, y], [z]), memory_limit=2**34)
resource.setrlimit(resource.RLIMIT_AS, (2**31, 2**31))  # a 3 GiB arena cannot be had
try:
    interp.allocate_tensors()
except EdgeliteError as e:
    print(type(e).__name__, e)
"""


def test_out_of_memory_is_one_line(tmp_path):
    # The budget allows it (memory_limit=16 GiB), the machine does not: numpy's
    # MemoryError becomes one MemoryLimitError line, not a traceback.
    import os
    import subprocess
    import sys

    script = _OUT_OF_MEMORY.format(tests=os.path.dirname(__file__))
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("MemoryLimitError allocate_tensors(): the system ran out "
                                 "of memory"), run.stdout
    assert run.stdout.count("\n") == 1 and "Traceback" not in run.stderr


def test_numpys_memory_error_at_invoke_names_the_op():
    from edgelite.interpreter import Kernel, MemoryLimitError, OutputSpec

    def prepare(ctx):
        return (OutputSpec(ctx.input(0).shape, ctx.input(0).dtype),), None

    def eval(record, inputs, outputs):
        np.empty(2**62, np.uint8)  # numpy's own MemoryError: "Unable to allocate 4.00 EiB"

    b = ModelBuilder()
    x, h, y = b.tensor("x", (2,)), b.tensor("h", (2,)), b.tensor("y", (2,))
    b.op("RELU", [x], [h])
    b.op("CUSTOM", [h], [y], custom_code="Hungry")
    interp = Interpreter(model_content=b.build([x], [y]),
                         custom_kernels={"Hungry": Kernel(prepare, eval)})
    interp.allocate_tensors()
    with pytest.raises(MemoryLimitError) as info:
        interp.invoke()
    assert str(info.value) == (
        "invoke(): the system ran out of memory in operator 1 CUSTOM 'Hungry' (output 'y'); "
        "free memory, use smaller inputs, or pass Interpreter(memory_limit=...) below what "
        "the machine can give")


# --------------------------------------------------------------------------- prepared records


def _owned_arrays(interp: Interpreter) -> list[np.ndarray]:
    """Every distinct array that the prepared steps' records own: reachable from a record
    (through dataclass fields, tuples, lists, dicts, Chosen), not a view of the arena or
    of the model file's bytes -- the memory allocate_tensors() added per op."""
    import dataclasses

    alloc = interp._alloc
    owned: dict[int, np.ndarray] = {}

    def base(a: np.ndarray):
        while isinstance(a.base, np.ndarray):
            a = a.base
        return a

    def walk(obj, depth: int) -> None:
        if depth > 10:
            return
        if isinstance(obj, np.ndarray):
            root = base(obj)
            if root is not alloc.arena and root.base is None:  # file bytes: base is bytes
                owned[id(root)] = root
        elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            for f in dataclasses.fields(obj):
                walk(getattr(obj, f.name), depth + 1)
        elif isinstance(obj, (tuple, list)):
            for item in obj:
                walk(item, depth + 1)
        elif isinstance(obj, dict):
            for item in obj.values():
                walk(item, depth + 1)

    for step in alloc.steps:
        walk(getattr(step[1], "keep", step[1]), 0)  # a native step: what it points into
    return list(owned.values())


def _int8_weight_models(rng):
    """(name, model, int8 weight count) of one-op int8 models whose weights dominate."""
    from .kernels.test_conv import quant_conv_model
    from .kernels.test_fully_connected import quant_fc_model

    yield "FULLY_CONNECTED", quant_fc_model(rng, np.int8, (2, 768), 640,
                                            per_channel=True)[0], 768 * 640
    yield "CONV_2D 3x3", quant_conv_model(rng, np.int8, (1, 6, 6, 96), (320, 3, 3, 96),
                                          stride=(2, 2))[0], 320 * 9 * 96
    yield "CONV_2D 1x1", quant_conv_model(rng, np.int8, (1, 4, 4, 320), (512, 1, 1, 320),
                                          padding="VALID")[0], 512 * 320


@pytest.mark.parametrize("threads", [1, 2])
def test_native_records_hold_no_float_copy_of_int8_weights(threads):
    """With the native backend, an int8 CONV_2D / FULLY_CONNECTED keeps its weights once,
    packed as int16 (native_gemm.pack_panels: 2 bytes a weight, panels of 16 channels),
    next to the file's own int8 bytes -- no float32 / float64 copy for a numpy kernel that
    does not run (4-8 bytes a weight). The bound: 2 bytes a weight, plus 12.5 % for the
    padding of the panels (the block buffers, work memory sized by K, are not counted:
    they are the workspace's uint8 blocks)."""
    from edgelite.interpreter import native

    if not native.built():
        pytest.skip("native kernels not built")
    rng = np.random.default_rng(26)
    for name, model, weights in _int8_weight_models(rng):
        interp = Interpreter(model_content=model, native=True, num_threads=threads)
        interp.allocate_tensors()
        arrays = _owned_arrays(interp)
        floats = sum(a.nbytes for a in arrays if a.dtype.kind == "f")
        packed = sum(a.nbytes for a in arrays if a.dtype == np.int16)
        assert floats < weights // 8, (name, floats)
        assert 2 * weights <= packed <= 2.25 * weights, (name, packed, weights)
        assert sum(a.nbytes for a in arrays if a.dtype.kind in "iu" and a.dtype != np.uint8
                   and a.dtype != np.int16) < weights // 8, name  # init, multipliers
        # and the numpy kernel, which does run on BLAS, holds a float copy: the walk sees it
        interp = Interpreter(model_content=model, native=False, num_threads=threads)
        interp.allocate_tensors()
        assert sum(a.nbytes for a in _owned_arrays(interp) if a.dtype.kind == "f") >= \
            4 * weights, name
