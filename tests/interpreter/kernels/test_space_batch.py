"""interpreter/kernels/space_batch.py: SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND against
TensorFlow's definition (loops below) and bit for bit against both LiteRT kernel sets, for
every element type LiteRT takes, 3-D and 4-D, quantized int8 / uint8 included."""

import numpy as np
import pytest

from edgelite.interpreter import EdgeliteError, Interpreter, batch_split
from edgelite.interpreter.kernels import OPS
from edgelite.interpreter.kernels.versions import T, TensorSig
from tests.support import run_edgelite, run_litert

from ..op_models import const, op_model, run_op
from ..tflite_builder import ModelBuilder

S2B, B2S = "SPACE_TO_BATCH_ND", "BATCH_TO_SPACE_ND"
DTYPES = [np.float32, np.int8, np.uint8, np.int16, np.int32, np.int64]
KERNEL_SETS = ("reference", "default")


def space_to_batch_reference(x, block, paddings, pad_value=0):
    """tf.space_to_batch_nd, element by element: output batch (i * bw + j) * N + n holds
    padded[n, h * bh + i, w * bw + j]; a 3-D input has one spatial dimension."""
    x4 = x if x.ndim == 4 else x[:, :, None, :]
    bh, bw = (list(block) + [1])[:2]
    (top, bottom), (left, right) = (list(map(tuple, paddings)) + [(0, 0)])[:2]
    n, h, w, c = x4.shape
    padded = np.full((n, h + top + bottom, w + left + right, c), pad_value, x.dtype)
    padded[:, top:top + h, left:left + w] = x4
    ho, wo = padded.shape[1] // bh, padded.shape[2] // bw
    out = np.zeros((n * bh * bw, ho, wo, c), x.dtype)
    for i in range(bh):
        for j in range(bw):
            for b in range(n):
                out[(i * bw + j) * n + b] = padded[b, i::bh, j::bw]
    return out if x.ndim == 4 else out[:, :, 0, :]


def batch_to_space_reference(x, block, crops):
    """tf.batch_to_space_nd: the inverse interleave, then the crops removed."""
    x4 = x if x.ndim == 4 else x[:, :, None, :]
    bh, bw = (list(block) + [1])[:2]
    (top, bottom), (left, right) = (list(map(tuple, crops)) + [(0, 0)])[:2]
    nb, h, w, c = x4.shape
    n = nb // (bh * bw)
    full = np.zeros((n, h * bh, w * bw, c), x.dtype)
    for i in range(bh):
        for j in range(bw):
            for b in range(n):
                full[b, i::bh, j::bw] = x4[(i * bw + j) * n + b]
    out = full[:, top:h * bh - bottom, left:w * bw - right]
    return out if x.ndim == 4 else out[:, :, 0, :]


def values(rng, shape, dtype):
    if np.dtype(dtype).kind == "f":
        return rng.uniform(-5, 5, shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -1000), min(info.max, 1000), shape).astype(dtype)


def assert_both_kernel_sets(model, feeds, want):
    for kernels in KERNEL_SETS:
        (ours,) = run_edgelite(model, feeds, kernels)
        (theirs,) = run_litert(model, feeds, kernels)
        assert ours.dtype == want.dtype and ours.shape == want.shape, kernels
        np.testing.assert_array_equal(ours, theirs, err_msg=kernels)
        np.testing.assert_array_equal(ours, want, err_msg=kernels)


# (input shape, block, paddings / crops): 2-D blocks, a block of 1 on one axis, uneven
# amounts, and 3-D inputs (one spatial dimension, as tf.nn.convolution's Conv1D uses).
CASES = [((2, 4, 6, 3), (2, 2), ((0, 0), (0, 0))),
         ((1, 5, 4, 2), (2, 3), ((1, 0), (0, 2))),
         ((2, 3, 5, 1), (3, 1), ((2, 1), (0, 0))),
         ((1, 4, 4, 2), (1, 2), ((0, 0), (1, 1))),
         ((2, 7, 3), (2,), ((1, 2),)),
         ((3, 6, 2), (3,), ((0, 0),))]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape, block, paddings", CASES, ids=str)
def test_space_to_batch(rng, dtype, shape, block, paddings):
    x = values(rng, shape, dtype)
    want = space_to_batch_reference(x, block, paddings)
    model, feeds = op_model(S2B, [x, const(block, np.int32), const(paddings, np.int32)],
                            [(want.shape, dtype)])
    assert_both_kernel_sets(model, feeds, want)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape, block, crops", CASES, ids=str)
def test_batch_to_space(rng, dtype, shape, block, crops):
    # The input: what SPACE_TO_BATCH_ND makes of `shape` with the same amounts as paddings.
    batched = space_to_batch_reference(values(rng, shape, dtype), block, crops).shape
    x = values(rng, batched, dtype)
    want = batch_to_space_reference(x, block, crops)
    model, feeds = op_model(B2S, [x, const(block, np.int32), const(crops, np.int32)],
                            [(want.shape, dtype)])
    assert_both_kernel_sets(model, feeds, want)


def test_int64_operands_and_the_round_trip(rng):
    """block_shape / paddings may be int64; BATCH_TO_SPACE_ND with crops = paddings undoes
    SPACE_TO_BATCH_ND."""
    x = values(rng, (2, 5, 7, 3), np.float32)
    block, pads = np.array([2, 3], np.int64), np.array([[1, 0], [0, 2]], np.int64)
    b = ModelBuilder()
    t_in = b.tensor("x", x.shape)
    mid = b.tensor("mid", (12, 3, 3, 3))
    out = b.tensor("y", x.shape)
    b.op(S2B, [t_in, b.const("block", block), b.const("pads", pads)], [mid])
    b.op(B2S, [mid, b.const("block2", block), b.const("crops", pads)], [out])
    (y,) = run_edgelite(b.build([t_in], [out]), [x], "default")
    np.testing.assert_array_equal(y, x)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_quantized_pads_with_the_zero_point(rng, dtype):
    """The pad cells hold the output's zero point, which reads as 0.0 (LiteRT's 8-bit
    path); BATCH_TO_SPACE_ND only moves the values."""
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max + 1, (1, 3, 3, 2)).astype(dtype)
    zp = 7 if dtype == np.int8 else 131
    block, pads = np.array([2, 2], np.int32), np.array([[1, 0], [0, 1]], np.int32)
    want = space_to_batch_reference(x, block, pads, pad_value=zp)
    b = ModelBuilder()
    t_in = b.tensor("x", x.shape, dtype, scale=0.05, zero_point=zp)
    mid = b.tensor("mid", want.shape, dtype, scale=0.05, zero_point=zp)
    out = b.tensor("y", x.shape, dtype, scale=0.05, zero_point=zp)
    b.op(S2B, [t_in, b.const("block", block), b.const("pads", pads)], [mid])
    b.op(B2S, [mid, b.const("block2", block), b.const("crops", pads)], [out])
    s2b_model = b.build([t_in], [mid])
    assert_both_kernel_sets(s2b_model, [x], want)
    assert_both_kernel_sets(b.build([t_in], [out]), [x], x)
    assert (want == zp).sum() >= 7  # the 7 pad cells, at least


def test_records_say_samples_move_across_the_batch():
    for name in (S2B, B2S):
        op = OPS[name]
        assert not op.per_sample and op.exact and op.integer is not None, name


def test_a_batch_is_not_split_across_threads(rng, monkeypatch):
    """The batch split would run sample chunks apart; these ops mix them, so a model with
    them runs whole (and equals LiteRT) even where it would otherwise be split."""
    monkeypatch.setattr(batch_split, "CHUNK_BYTES", 1)
    x = values(rng, (4, 4, 4, 2), np.float32)
    want = space_to_batch_reference(x, (2, 2), ((0, 0), (0, 0)))
    model, feeds = op_model(S2B, [x, const([2, 2], np.int32), const([[0, 0], [0, 0]],
                                                                      np.int32)],
                            [(want.shape, np.float32)])
    interp = Interpreter(model_content=model, num_threads=2)
    interp.allocate_tensors()
    assert interp._split is None
    interp.set_tensor(interp.get_input_details()[0]["index"], x)
    interp.invoke()
    np.testing.assert_array_equal(interp.get_tensor(interp.get_output_details()[0]["index"]),
                                  want)


@pytest.mark.parametrize("op, shape, block, amounts, message", [
    (S2B, (2, 4), [2], [[0, 0]], r"must be 3-D \[N, H, C\] or 4-D \[N, H, W, C\], has shape "
     r"\[2, 4\]"),
    (S2B, (1, 4, 4, 1), [2], [[0, 0]], r"block_shape 'const1' has shape \[1\]; an input of "
     r"rank 4 needs \[2\]"),
    (S2B, (1, 4, 4, 1), [2, 2], [0, 0], r"paddings 'const2' has shape \[2\]; an input of rank "
     r"4 needs \[2, 2\]"),
    (S2B, (1, 4, 4, 1), [2, 0], [[0, 0], [0, 0]], r"block_shape \[2, 0\] must hold values >= 1"),
    (S2B, (1, 4, 4, 1), [2, 2], [[0, -1], [0, 0]], r"paddings \[\[0, -1\], \[0, 0\]\] must "
     "hold values >= 0"),
    (S2B, (1, 5, 4, 1), [2, 2], [[0, 0], [0, 0]], "the padded height and width 5x4 must be "
     "multiples of the block 2x2"),
    (B2S, (6, 2, 2, 1), [2, 2], [[0, 0], [0, 0]], r"the input batch 6 must be a multiple of "
     r"the block's 2x2 = 4 cells"),
    (B2S, (4, 2, 2, 1), [2, 2], [[3, 2], [0, 0]], r"crops \[\[3, 2\], \[0, 0\]\] remove more "
     "than the assembled 4x4"),
])
def test_refused(op, shape, block, amounts, message):
    x = np.zeros(shape, np.float32)
    with pytest.raises(EdgeliteError, match=message):
        run_op(op, [x, const(block, np.int32), const(amounts, np.int32)], [(shape, np.float32)])


def test_computed_block_shape_runs_at_invoke():
    # a computed block_shape: the output is dynamic, prepared at invoke (dynamic.py)
    x = np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1)
    pads = const([[0, 0], [0, 0]], np.int32)
    (out,) = run_op(S2B, [x, np.array([2, 2], np.int32), pads], [((4, 2, 2, 1), np.float32)])
    (want,) = run_op(S2B, [x, const([2, 2], np.int32), pads], [((4, 2, 2, 1), np.float32)])
    np.testing.assert_array_equal(out, want)


def test_float16_is_refused():
    x = np.zeros((1, 4, 4, 1), np.float16)
    with pytest.raises(EdgeliteError, match="has type float16; this kernel supports float32"):
        run_op(S2B, [x, const([2, 2], np.int32), const([[0, 0], [0, 0]], np.int32)],
               [((4, 2, 2, 1), np.float16)])


# Version cases (tests/interpreter/kernels/test_versions.py collects them): op_version.cc.
def _sig(t, rank):
    return TensorSig(t, shape=(2,) * rank)


VERSION_CASES = [(op, [_sig(t, rank)], want) for op in ("SPACE_TO_BATCH_ND", "BATCH_TO_SPACE_ND")
                 for t, rank, want in ((T.INT16, 4, 4), (T.INT16, 3, 4), (T.FLOAT32, 3, 3),
                                       (T.INT8, 3, 3), (T.INT8, 4, 2), (T.FLOAT32, 4, 1),
                                       (T.UINT8, 4, 1))]

