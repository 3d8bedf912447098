"""interpreter/kernels/base.py: what prepare() sees (OpContext: operands, options, errors
naming the operator), axis normalization, and the work buffers -- size-checked scratch and
the shared, aligned Workspace of temporaries."""

import numpy as np
import pytest

from edgelite.errors import ShapeError, UnsupportedOpError
from edgelite.interpreter.kernels.base import (MAX_SCRATCH_BYTES, OpContext, TensorInfo,
                                               Workspace, normalize_axis, scratch, temporary)


def _info(i, name, shape, data=None):
    return TensorInfo(i, name, shape, np.dtype(np.float32), data)


def _ctx(inputs=2, workspace=None, subgraph=0, **options):
    ins = (_info(0, "x", (2, 3)), _info(1, "w", (3,), np.ones(3, np.float32)))[:inputs]
    return OpContext(index=4, op_name="MUL", options=options, inputs=ins,
                     outputs=(_info(2, "y", (2, 3)),), workspace=workspace, subgraph=subgraph)


def test_errors_name_the_operator_and_its_output():
    assert _ctx().describe() == "operator 4 (MUL, output 'y')"
    assert _ctx(subgraph=2).describe() == "subgraph 2 operator 4 (MUL, output 'y')"
    assert isinstance(_ctx().unsupported("no"), UnsupportedOpError)
    with pytest.raises(ShapeError, match=r"^operator 4 \(MUL, output 'y'\): expects 2 inputs, "
                                         r"the file gives 1$"):
        _ctx(inputs=1).check_arity(2, 2)
    with pytest.raises(ShapeError, match=r"expects 2 output\(s\), the file gives 1$"):
        _ctx().check_arity(1, 2, num_outputs=2)


def test_operands_and_options():
    ctx = _ctx(pot_scale_int16=False)
    assert ctx.input(0).rank == 2 and not ctx.input(0).is_constant and ctx.input(1).is_constant
    assert ctx.option("pot_scale_int16", True) is False and ctx.option("absent", 7) == 7
    assert ctx.output_dtype() == np.float32


def test_normalize_axis():
    assert [normalize_axis(_ctx(), a, 3) for a in (-3, -1, 0, 2)] == [0, 2, 0, 2]
    with pytest.raises(ShapeError, match=r"axis -4 is out of range for a rank-3 tensor$"):
        normalize_axis(_ctx(), -4, 3)


def test_scratch_is_filled_and_size_checked():
    assert scratch(_ctx(), (2, 2), np.int32, fill=0).tolist() == [[0, 0], [0, 0]]
    assert (scratch(_ctx(), (3,), np.float32, fill=-np.inf) == -np.inf).all()
    with pytest.raises(ShapeError, match=rf"needs a {MAX_SCRATCH_BYTES * 2}-byte work buffer "
                                         r"of shape \[\d+\], over the"):
        scratch(_ctx(), (MAX_SCRATCH_BYTES // 2,), np.float32)


def test_temporaries_share_an_aligned_block_per_op():
    ws = Workspace()
    ctx = _ctx(workspace=ws)
    a = temporary(ctx, (3, 5), np.float64)
    b = temporary(ctx, (7,), np.int8)
    for t in (a, b):
        assert t.ctypes.data % Workspace.ALIGNMENT == 0
    assert not np.shares_memory(a, b)             # the same op: side by side
    assert a.base is b.base
    ws.begin_op()                                 # the next op reuses the block
    c = temporary(ctx, (3, 5), np.float64)
    assert np.shares_memory(a, c)
    big = temporary(ctx, (1000,), np.float64)     # more than the block: a new one
    assert big.shape == (1000,) and not np.shares_memory(big, a)
