"""add_paths.py: quantized ADD / SUB where LiteRT's code paths leave the reference formula --
SUB with an output multiplier above 1, ADD in the default kernels where XNNPACK declines the
scales -- bit-exact with LiteRT's two kernel sets, and the refusals where LiteRT or TFLite
Micro abort (measured in a subprocess: the abort kills the process)."""

import subprocess
import sys

import numpy as np
import pytest

from edgelite.interpreter import ModelFormatError
from edgelite.interpreter.kernels.common.add_paths import (ELEMENTWISE, SCALAR, SCALAR_BROADCAST,
                                                           Loops, five_fold, path_map)

from tests.interpreter.tflite_builder import QuantModel
from tests.support import assert_bit_exact, litert_delegates, run_edgelite

# Flat shapes with and without a tail past the vector blocks (4, 8 or 16 lanes), row
# broadcasts (five-fold, rows of y4), broadcasts of one value per row (y4 = 1), a shape
# the five-fold loop cannot take (generic), and a scalar.
SHAPES = [((7,), (7,)), ((2, 33), (2, 33)), ((1, 6), (6,)), ((64,), (64,)),
          ((4, 37), (37,)), ((37,), (4, 37)), ((3, 2, 20), (3, 1, 20)),
          ((4, 19), (4, 1)), ((4, 1), (4, 19)), ((5, 3), (1,)), ((1,), (23,)),
          ((2, 3, 1, 5), (1, 3, 4, 1))]
LEFT_SHIFT = {np.int8: 20, np.uint8: 20, np.int16: 15}


def _model(op, dtype, shapes, scales, zero_points, act="NONE") -> bytes:
    m = QuantModel()
    a = m.input("a", shapes[0], dtype, scales[0], zero_points[0])
    b = m.input("b", shapes[1], dtype, scales[1], zero_points[1])
    y = m.output("y", np.broadcast_shapes(*shapes), dtype, scales[2], zero_points[2])
    m.op(op, [a, b], [y], version=2, fused_activation_function=act)
    return m.build()


def _zero_points(rng, dtype):
    if dtype == np.int16:
        return 0, 0, 0
    info = np.iinfo(dtype)
    return tuple(int(rng.integers(info.min + 40, info.max - 40)) for _ in range(3))


def _feeds(rng, dtype, shapes, equal=False):
    info = np.iinfo(dtype)
    x1 = rng.integers(info.min, info.max + 1, size=shapes[0]).astype(dtype)
    x2 = rng.integers(info.min, info.max + 1, size=shapes[1]).astype(dtype)
    if equal and shapes[0] == shapes[1]:
        x2[::2] = x1[::2]  # x - x: the IsFinite pattern
    return [x1, x2]


def _output_scale_for(multiplier: float, s1: float, s2: float, dtype) -> float:
    return float(np.float32(2 * max(s1, s2) / ((1 << LEFT_SHIFT[dtype]) * multiplier)))


# --------------------------------------------------------------------------- which path


@pytest.mark.parametrize("shape1,shape2,expected", [
    ((2, 3), (2, 3), ("flat", None)),
    ((1, 6), (6,), ("flat", None)),
    ((4, 37), (37,), ("fold", (1, 1, 1, 4, 37))),
    ((4, 1), (4, 19), ("fold", (1, 1, 4, 19, 1))),
    ((3, 2, 20), (3, 1, 20), ("fold", (1, 1, 3, 2, 20))),
    ((2, 3, 1, 5), (1, 3, 4, 1), ("generic", None)),
    ((3, 4), (2, 1, 4), ("fold", (1, 2, 1, 3, 4))),
])
def test_five_fold_is_process_broadcast_shapes(shape1, shape2, expected):
    assert five_fold(shape1, shape2) == expected


def test_path_map_blocks_and_tails():
    assert path_map((7,), (7,), 7, Loops(4)).tolist() == [ELEMENTWISE] * 4 + [SCALAR] * 3
    assert path_map((3,), (3,), 3, Loops(4)) is None  # no full block
    # rows of y4 = 5 elements, 4 lanes: the last of each row is scalar
    rows = path_map((2, 5), (5,), 10, Loops(4, five_fold=True)).tolist()
    assert rows == ([ELEMENTWISE] * 4 + [SCALAR]) * 2
    assert path_map((2, 5), (5,), 10, Loops(4)) is None  # broadcasts stay scalar
    # one value against rows of y3 = 10: scalar-broadcast blocks of 8
    one = path_map((2, 1), (2, 10), 20, Loops(16, 8, five_fold=True)).tolist()
    assert one == ([SCALAR_BROADCAST] * 8 + [SCALAR] * 2) * 2
    assert path_map((2, 3, 1, 5), (1, 3, 4, 1), 120, Loops(16, 8, five_fold=True)) is None


# --------------------------------------------------------------------------- SUB > 1


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16])
@pytest.mark.parametrize("shapes", SHAPES)
def test_sub_output_multiplier_above_one(rng, dtype, shapes):
    # output shifts k from 1 to 40: multipliers in [2^(k-1), 2^k)
    for k in (1, 2, int(rng.integers(3, 20)), int(rng.integers(20, 33)), 33, 40):
        s1 = float(np.float32(rng.uniform(0.01, 0.1)))
        s2 = float(np.float32(s1 * 2.0 ** rng.uniform(-6, 6)))
        so = _output_scale_for(2.0 ** (k - 1) * rng.uniform(1.001, 1.999), s1, s2, dtype)
        act = "RELU" if k == 2 and dtype != np.int16 else "NONE"
        model = _model("SUB", dtype, shapes, (s1, s2, so), _zero_points(rng, dtype), act)
        assert_bit_exact(model, _feeds(rng, dtype, shapes, equal=k % 2 == 0))


def test_sub_above_one_is_not_a_rescaling(rng):
    """What LiteRT computes there: x - x (IsFinite) gives +1, not 0, and the vectorised
    elements give +-1 whatever the difference."""
    model = _model("SUB", np.int8, ((8,), (8,)), (0.05, 0.05, 7.843137e-09), (0, 0, 0))
    x = np.arange(-4, 4, dtype=np.int8)
    assert run_edgelite(model, [x, x], "reference")[0].tolist() == [1] * 8
    y = np.arange(8, dtype=np.int8) * 15 - 60
    assert set(run_edgelite(model, [y, np.zeros(8, np.int8)], "default")[0].tolist()) == {-1, 1}


# --------------------------------------------------------------------------- ADD without XNNPACK


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("shapes", SHAPES)
def test_add_default_kernels_beyond_xnnpack(rng, dtype, shapes):
    """Input / output scale ratios in [2^8, 2^19): TFLite's NEON blocks wrap the int16
    narrowing where the reference formula saturates."""
    for act in ("NONE", "RELU", "RELU6"):
        s1 = float(np.float32(rng.uniform(0.01, 0.1)))
        s2 = float(np.float32(s1 * 2.0 ** rng.uniform(-10, 10)))
        so = float(np.float32(max(s1, s2) / 2.0 ** rng.uniform(8, 18.9)))
        model = _model("ADD", dtype, shapes, (s1, s2, so), _zero_points(rng, dtype), act)
        assert not litert_delegates(model)
        assert_bit_exact(model, _feeds(rng, dtype, shapes))


# --------------------------------------------------------------------------- refusals

ABORTS = {
    # name: (op, dtype, output multiplier, kernel set whose runtime aborts)
    "add_int8": ("ADD", np.int8, 3.0, "reference"),
    "add_uint8_default": ("ADD", np.uint8, 1.5, "default"),
    "add_int16": ("ADD", np.int16, 3.0, "reference"),
    "sub_exactly_one": ("SUB", np.int8, 1.0, "reference"),
    "sub_above_one_micro": ("SUB", np.int8, 3.0, "micro"),
}

_RUN = """
import sys
import numpy as np
model = open(sys.argv[1], "rb").read()
if sys.argv[2] == "micro":
    from tflite_micro.python.tflite_micro import runtime
    interp = runtime.Interpreter.from_bytes(model)
    interp.set_input(np.zeros((2, 8), np.dtype(sys.argv[3])), 0)
    interp.set_input(np.zeros((2, 8), np.dtype(sys.argv[3])), 1)
    interp.invoke()
else:
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    kind = OpResolverType.BUILTIN_REF if sys.argv[2] == "reference" else OpResolverType.AUTO
    Interpreter(model_content=model, experimental_op_resolver_type=kind).allocate_tensors()
print("ran")
"""


@pytest.mark.parametrize("case", sorted(ABORTS))
def test_refused_where_the_runtime_aborts(case, tmp_path, litert):
    op, dtype, multiplier, kernels = ABORTS[case]
    # scales that are not powers of two (int16 ADD / SUB would take the POT kernel)
    s1, s2 = 0.0371, 0.0517
    so = _output_scale_for(multiplier, s1, s2, dtype)
    model = _model(op, dtype, ((2, 8), (2, 8)), (s1, s2, so), (0, 0, 0))
    path = tmp_path / "model.tflite"
    path.write_bytes(model)
    done = subprocess.run([sys.executable, "-c", _RUN, str(path), kernels, np.dtype(dtype).name],
                          capture_output=True, timeout=300)
    assert done.returncode < 0 and b"ran" not in done.stdout, done.stderr.decode()[-800:]
    with pytest.raises(ModelFormatError, match=rf"\({op}, output 'y'\): the output scale is too "
                                                r"small.*aborts") as info:
        run_edgelite(model, [np.zeros((2, 8), dtype)] * 2, kernels)
    assert "\n" not in str(info.value)


def test_sub_above_one_runs_outside_micro(rng):
    model = _model("SUB", np.int8, ((2, 8), (2, 8)), (0.0371, 0.0517, 3e-9), (0, 0, 0))
    assert_bit_exact(model, _feeds(rng, np.int8, ((2, 8), (2, 8))))


def test_activation_bound_beyond_int32_refused_as_litert_does(litert):
    model = _model("SUB", np.int8, ((2, 8), (2, 8)), (0.05, 0.05, 1e-12), (0, 0, 0), "RELU6")
    interp = litert.Interpreter(model_content=model,
                                experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF)
    with pytest.raises(RuntimeError, match="no_integer_overflow_from_quantization"):
        interp.allocate_tensors()
    with pytest.raises(ModelFormatError, match=r"bound 6 is 6e\+12 steps.*beyond int32"):
        run_edgelite(model, [np.zeros((2, 8), np.int8)] * 2, "reference")
