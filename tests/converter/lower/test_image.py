"""converter/lower/image.py: ResizeBilinear, ResizeNearestNeighbor, DepthToSpace,
SpaceToDepth, SpaceToBatchND, BatchToSpaceND.

The resize references transcribe TF's kernels (tensorflow/core/util/image_resizer_state.h:
CalculateResizeScale, HalfPixelScaler, LegacyScaler; kernels/image/resize_bilinear_op.cc;
kernels/image/resize_nearest_neighbor_op.cc):
    scale = (in - 1) / (out - 1) if align_corners and out > 1 else in / out
    bilinear: src = (dst + 0.5) * scale - 0.5 with half_pixel_centers, else dst * scale;
              lower = max(floor(src), 0), upper = min(ceil(src), in - 1), lerp = src - floor(src)
    nearest:  src = (dst + 0.5) * scale with half_pixel_centers, else dst * scale;
              index = min(round(src) if align_corners else floor(src), in - 1), >= 0
              (roundf: halves away from zero)
"""

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, QuantizeOptions, convert_detailed
from edgelite.interpreter import Interpreter
from edgelite.errors import GraphError, ShapeError, UnsupportedOpError

from tests.conftest import litert_module

from .lowering import F32, I32, I64, check, floats, graph, rng, run

COVERED = {"ResizeBilinear", "ResizeNearestNeighbor", "DepthToSpace", "SpaceToDepth",
           "SpaceToBatchND", "BatchToSpaceND"}


def _scale(n_in, n_out, align_corners):
    if align_corners and n_out > 1:
        return np.float32((n_in - 1) / (n_out - 1))
    return np.float32(n_in / n_out)


def _bilinear_axis(n_in, n_out, align_corners, half_pixel):
    scale = _scale(n_in, n_out, align_corners)
    dst = np.arange(n_out, dtype=np.float32)
    src = (dst + np.float32(0.5)) * scale - np.float32(0.5) if half_pixel else dst * scale
    lower = np.maximum(np.floor(src), 0).astype(int)
    upper = np.minimum(np.ceil(src), n_in - 1).astype(int)
    return lower, upper, (src - np.floor(src)).astype(np.float32)


def resize_bilinear_reference(x, size, align_corners, half_pixel):
    (y0, y1, ly), (x0, x1, lx) = (_bilinear_axis(x.shape[a], size[a - 1], align_corners,
                                                 half_pixel) for a in (1, 2))
    lx = lx[None, None, :, None]
    top = x[:, y0][:, :, x0] + (x[:, y0][:, :, x1] - x[:, y0][:, :, x0]) * lx
    bottom = x[:, y1][:, :, x0] + (x[:, y1][:, :, x1] - x[:, y1][:, :, x0]) * lx
    return (top + (bottom - top) * ly[None, :, None, None]).astype(np.float32)


def _nearest_axis(n_in, n_out, align_corners, half_pixel):
    scale = _scale(n_in, n_out, align_corners)
    dst = np.arange(n_out, dtype=np.float32)
    src = (dst + np.float32(0.5)) * scale if half_pixel else dst * scale
    picked = np.sign(src) * np.floor(np.abs(src) + 0.5) if align_corners else np.floor(src)
    return np.maximum(np.minimum(picked.astype(int), n_in - 1), 0)


def resize_nearest_reference(x, size, align_corners, half_pixel):
    rows, cols = (_nearest_axis(x.shape[a], size[a - 1], align_corners, half_pixel)
                  for a in (1, 2))
    return x[:, rows][:, :, cols]


FLAGS = [(False, False), (True, False), (False, True)]
SIZES = [((3, 4), (6, 8)), ((3, 4), (5, 7)), ((6, 8), (4, 3)), ((4, 5), (1, 1)),
         ((5, 5), (5, 5))]


@pytest.mark.parametrize("align_corners, half_pixel", FLAGS, ids=["legacy", "align_corners",
                                                                  "half_pixel"])
@pytest.mark.parametrize("in_hw, out_hw", SIZES, ids=str)
@pytest.mark.parametrize("op, tfl, reference", [
    ("ResizeBilinear", "RESIZE_BILINEAR", resize_bilinear_reference),
    ("ResizeNearestNeighbor", "RESIZE_NEAREST_NEIGHBOR", resize_nearest_reference)])
def test_resize(op, tfl, reference, in_hw, out_hw, align_corners, half_pixel):
    x = floats(rng(), 1, *in_hw, 2)
    g = graph(x=x.shape)
    g.const("size", np.array(out_hw, np.int32))
    g.node("y", op, ["x", "size"], T=F32, align_corners=align_corners,
           half_pixel_centers=half_pixel)
    check(g, {"x": x}, reference(x, out_hw, align_corners, half_pixel), [tfl], rtol=1e-5,
          atol=1e-6)


@pytest.mark.parametrize("dtype", [np.dtype(np.uint8), I32])
def test_resize_bilinear_of_integer_images_is_float(dtype):
    """ResizeBilinear takes integer images and always outputs float32 (image_ops.cc:
    "resized_images: float"), interpolating the values as floats."""
    x = (rng().permutation(24).reshape(1, 4, 3, 2) * 10).astype(dtype)
    g = graph(x=(x.shape, dtype))
    g.const("size", np.array([6, 5], np.int32))
    g.node("y", "ResizeBilinear", ["x", "size"], T=dtype, half_pixel_centers=True)
    want = resize_bilinear_reference(x.astype(np.float32), (6, 5), False, True)
    check(g, {"x": x}, want, ["CAST", "RESIZE_BILINEAR"], rtol=1e-6, atol=1e-4)


@pytest.mark.parametrize("op", ["ResizeBilinear", "ResizeNearestNeighbor"])
def test_resize_with_both_align_corners_and_half_pixel_centers_is_refused(op):
    """TF refuses the combination ("If half_pixel_centers is True, align_corners must be
    False", image_resizer_state.h); so does TFLite's kernel, at prepare time."""
    g = graph(x=(1, 3, 3, 1))
    g.const("size", np.array([6, 6], np.int32))
    g.node("y", op, ["x", "size"], T=F32, align_corners=True, half_pixel_centers=True)
    with pytest.raises(GraphError, match=rf"^node 'y' \({op}\): align_corners and "
                       "half_pixel_centers are both true"):
        run(g, {"x": np.zeros((1, 3, 3, 1), np.float32)}, ["y"])


def depth_to_space_reference(x, bs):
    """tf.nn.depth_to_space (NHWC): output[b, h*bs + i, w*bs + j, c] =
    input[b, h, w, (i*bs + j) * C_out + c], C_out = C / bs^2."""
    n, h, w, c = x.shape
    c_out = c // (bs * bs)
    return x.reshape(n, h, w, bs, bs, c_out).transpose(0, 1, 3, 2, 4, 5).reshape(
        n, h * bs, w * bs, c_out)


def space_to_depth_reference(x, bs):
    """tf.nn.space_to_depth (NHWC), the inverse: output[b, h, w, (i*bs + j) * C + c] =
    input[b, h*bs + i, w*bs + j, c]."""
    n, h, w, c = x.shape
    return x.reshape(n, h // bs, bs, w // bs, bs, c).transpose(0, 1, 3, 2, 4, 5).reshape(
        n, h // bs, w // bs, bs * bs * c)


@pytest.mark.parametrize("bs", [2, 3])
def test_depth_to_space(bs):
    x = floats(rng(), 1, 2, 3, bs * bs * 2)
    g = graph(x=x.shape)
    g.node("y", "DepthToSpace", ["x"], T=F32, block_size=bs, data_format="NHWC")
    check(g, {"x": x}, depth_to_space_reference(x, bs), ["DEPTH_TO_SPACE"])


@pytest.mark.parametrize("bs", [2, 3])
def test_space_to_depth(bs):
    x = floats(rng(), 2, 2 * bs, 3 * bs, 2)
    g = graph(x=x.shape)
    g.node("y", "SpaceToDepth", ["x"], T=F32, block_size=bs, data_format="NHWC")
    check(g, {"x": x}, space_to_depth_reference(x, bs), ["SPACE_TO_DEPTH"])


@pytest.mark.parametrize("op", ["DepthToSpace", "SpaceToDepth"])
def test_space_ops_refuse_nchw(op):
    g = graph(x=(1, 8, 4, 4))
    g.node("y", op, ["x"], T=F32, block_size=2, data_format="NCHW")
    with pytest.raises(UnsupportedOpError, match=rf"^node 'y' \({op}\): uses data_format "
                       "'NCHW'"):
        run(g, {"x": np.zeros((1, 8, 4, 4), np.float32)}, ["y"])


def space_to_batch_nd_reference(x, block, paddings):
    """tf.space_to_batch_nd as its documentation states it: zero-pad dimensions 1..M, reshape
    to [batch, d1 / b1, b1, ..., dM / bM, bM, rest...], move the block axes to the front,
    fold them into the batch."""
    m = len(block)
    padded = np.pad(x, [(0, 0), *paddings] + [(0, 0)] * (x.ndim - 1 - m))
    split = [padded.shape[0]]
    for d, b in zip(padded.shape[1:m + 1], block):
        split += [d // b, b]
    r = padded.reshape(split + list(padded.shape[m + 1:]))
    order = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)]
    r = r.transpose(order + list(range(1 + 2 * m, r.ndim)))
    return r.reshape([-1] + [d // b for d, b in zip(padded.shape[1:m + 1], block)] +
                     list(padded.shape[m + 1:]))


def batch_to_space_nd_reference(x, block, crops):
    """tf.batch_to_space_nd's documented steps: reshape to [b1, ..., bM, batch / prod(b),
    d1, ..., rest], interleave each block axis after its dimension, merge, crop."""
    m, n = len(block), x.shape[0] // int(np.prod(block))
    r = x.reshape(list(block) + [n] + list(x.shape[1:]))
    order = [m] + [i for k in range(m) for i in (m + 1 + k, k)]
    r = r.transpose(order + list(range(2 * m + 1, r.ndim)))
    r = r.reshape([n] + [d * b for d, b in zip(x.shape[1:m + 1], block)] +
                  list(x.shape[m + 1:]))
    return r[(slice(None), *(slice(a, r.shape[1 + i] - b) for i, (a, b) in enumerate(crops)))]


# (input shape, block, paddings or crops, index dtype): Conv1D's 3-D case, the 2-D case, and a
# 4-D input with a block over H only (written with a block of 1 over W).
SPACE_BATCH = [((2, 7, 3), [2], [[1, 2]], I32), ((1, 5, 4, 2), [2, 3], [[1, 0], [0, 2]], I64),
               ((2, 5, 3, 2), [3], [[0, 1]], I32)]


@pytest.mark.parametrize("shape, block, paddings, index", SPACE_BATCH, ids=str)
def test_space_to_batch_nd(shape, block, paddings, index):
    x = floats(rng(), *shape)
    g = graph(x=x.shape)
    g.const("block", np.array(block, index))
    g.const("paddings", np.array(paddings, index))
    g.node("y", "SpaceToBatchND", ["x", "block", "paddings"], T=F32, Tblock_shape=index,
           Tpaddings=index)
    r = check(g, {"x": x}, space_to_batch_nd_reference(x, block, paddings),
              ["SPACE_TO_BATCH_ND"])
    op = r.graph.ops[0]
    assert op.inputs[1].data.dtype == np.int32 and op.inputs[1].data.size == len(shape) - 2


@pytest.mark.parametrize("shape, block, crops, index", SPACE_BATCH, ids=str)
def test_batch_to_space_nd(shape, block, crops, index):
    batched = space_to_batch_nd_reference(np.zeros(shape, np.int32), block, crops).shape
    x = (np.arange(np.prod(batched)) - 50).astype(np.int32).reshape(batched)
    g = graph(x=(x.shape, I32))
    g.const("block", np.array(block, index))
    g.const("crops", np.array(crops, index))
    g.node("y", "BatchToSpaceND", ["x", "block", "crops"], T=I32, Tblock_shape=index,
           Tcrops=index)
    check(g, {"x": x}, batch_to_space_nd_reference(x, block, crops), ["BATCH_TO_SPACE_ND"])


@pytest.mark.parametrize("op, amounts", [("SpaceToBatchND", "paddings"),
                                         ("BatchToSpaceND", "crops")])
@pytest.mark.parametrize("shape, block, values, error, message", [
    ((1, 4, 4, 1), [2, 0], [[0, 0], [0, 0]], ShapeError, r"the block shape \[2, 0\] must hold "
     "values >= 1"),
    ((1, 4, 4, 1), [2, 2], [[0, 0], [-1, 0]], ShapeError, r"the {amounts} \[\[0, 0\], \[-1, 0\]\] "
     "must hold values >= 0"),
    ((1, 4, 4, 1), [2, 2], [[0, 0], [0, 0], [0, 0]], ShapeError, r"the {amounts} have shape "
     r"\[3, 2\]; a block of 2 entries needs \[2, 2\]"),
    ((1, 4, 4, 4, 1), [2, 2, 2], [[0, 0]] * 3, UnsupportedOpError, "has a rank-5 input and a "
     "block of 3 entries; TFLite's kernels take 3-D"),
])
def test_space_batch_refusals(op, amounts, shape, block, values, error, message):
    g = graph(x=shape)
    g.const("block", np.array(block, np.int32))
    g.const("amounts", np.array(values, np.int32))
    g.node("y", op, ["x", "block", "amounts"], T=F32)
    with pytest.raises(error, match=rf"^node 'y' \({op}\): " + message.format(amounts=amounts)):
        run(g, {"x": np.zeros(shape, np.float32)}, ["y"])


def test_space_batch_quantized_int8(tmp_path):
    """SpaceToBatchND -> Conv2D -> BatchToSpaceND (the dilation pass off) quantizes to int8
    end to end -- the two ops take the input's parameters -- and runs bit for bit as in
    LiteRT's reference kernels."""
    r = rng()
    g = graph(x=(1, 9, 10, 3))
    g.const("block", np.array([2, 2], np.int32))
    g.const("paddings", np.array([[2, 3], [2, 2]], np.int32))
    g.node("s2b", "SpaceToBatchND", ["x", "block", "paddings"], T=F32)
    g.const("w", floats(r, 3, 3, 3, 4))
    g.node("conv", "Conv2D", ["s2b", "w"], T=F32, strides=[1, 1, 1, 1], padding="VALID",
           data_format="NHWC")
    g.const("crops", np.array([[0, 1], [0, 0]], np.int32))
    g.node("y", "BatchToSpaceND", ["conv", "block", "crops"], T=F32)
    calib = floats(r, 16, 9, 10, 3)
    np.save(tmp_path / "calib.npy", calib)
    result = convert_detailed(g.bytes(), ConvertOptions(
        inputs=["x"], outputs=["y"], disabled_passes=frozenset({"identify_dilated_conv"}),
        quantize=QuantizeOptions(calib=str(tmp_path / "calib.npy"))))
    ops = {op.type: op for op in result.graph.ops}
    assert sorted(ops) == ["BATCH_TO_SPACE_ND", "CONV_2D", "DEQUANTIZE", "QUANTIZE",
                           "SPACE_TO_BATCH_ND"]
    for name in ("SPACE_TO_BATCH_ND", "BATCH_TO_SPACE_ND"):
        op = ops[name]
        assert op.inputs[0].dtype == op.outputs[0].dtype == np.int8
        assert op.inputs[0].quant.scale == op.outputs[0].quant.scale
    x = calib[:2]
    ours = Interpreter(model_content=result.model, kernels="reference")
    litert = litert_module()
    theirs = litert.Interpreter(model_content=result.model,
                                experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF)
    outs = []
    for interp in (ours, theirs):
        d = interp.get_input_details()[0]
        interp.resize_tensor_input(d["index"], list(x.shape))
        interp.allocate_tensors()
        interp.set_tensor(d["index"], x)
        interp.invoke()
        outs.append(interp.get_tensor(interp.get_output_details()[0]["index"]))
    np.testing.assert_array_equal(outs[0], outs[1])
    assert outs[0].shape == (2, 9, 10, 4)  # 14x14 padded, 5x5 per phase, 10x10 less a row
