"""Names from the model files reach the accuracy API's reports and errors escaped and cut
(tests/converter/hostile.py): compare tables, edgelite.testing failures, evaluate errors."""

import functools

import numpy as np
import pytest

import edgelite.testing as et
from edgelite.converter import convert
from edgelite.converter.accuracy import compare, evaluate
from edgelite.converter.quantize import QuantizeOptions, QuantMode
from edgelite.errors import EdgeliteError
from tests.converter.hostile import HEAD, HOSTILE, assert_inert
from tests.converter.tfgraph import GraphBuilder

F32 = np.dtype(np.float32)


@functools.lru_cache(maxsize=None)
def models() -> tuple[bytes, bytes]:
    """A float and an int8 model whose every tensor has a hostile name: input -> Relu and
    input -> Tanh, two outputs."""
    g = GraphBuilder()
    g.placeholder(HOSTILE + "in", [1, 4])
    g.node(HOSTILE + "relu", "Relu", [HOSTILE + "in"], T=F32)
    g.node(HOSTILE + "tanh", "Tanh", [HOSTILE + "in"], T=F32)
    int8 = QuantizeOptions(QuantMode.INT8, default_range=(-1.0, 1.0))
    return convert(g.bytes()), convert(g.bytes(), quantize=int8)


def samples(n: int = 4) -> np.ndarray:
    return np.random.default_rng(0).uniform(-1, 1, (n, 1, 4)).astype(np.float32)


def test_compare_table_escapes_and_cuts_names():
    report = compare(*models(), samples())
    lines = assert_inert(report.table())
    outputs = [line for line in lines if line.startswith(f"  {HEAD}")]
    assert len(outputs) == 2 and all(": SQNR " in line for line in outputs)
    rows = lines[lines.index(next(line for line in lines if line.startswith("tensors,"))) + 2:]
    rows = rows[:rows.index("")] if "" in rows else rows   # then "what to do:" (advice)
    assert len(rows) == len(report.tensors) == 3
    assert all("..." in row and "float32" not in row for row in rows)  # int8 tensors
    assert len({row.index(" int8 ") for row in rows}) == 1  # names cut to one column


def test_assert_sqnr_failure_is_inert():
    with pytest.raises(AssertionError) as info:
        et.assert_sqnr(*models(), samples(), min_db=1000.0)
    lines = assert_inert(str(info.value))
    assert lines[0].startswith("output SQNR ") and "is below 1000.00 dB (quantized (" in lines[0]


def test_evaluate_unknown_output_lists_escaped_names():
    with pytest.raises(EdgeliteError) as info:
        evaluate([models()[1]], samples(), np.arange(4) % 4, output=HOSTILE)
    (line,) = assert_inert(str(info.value))
    assert line.startswith(f"<bytes> has no output '{HEAD}")
    assert f"; outputs are ['{HEAD}" in line
