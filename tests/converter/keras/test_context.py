"""converter/keras/context.py: what a layer rule works with -- its config, its input
tensors, constants written once per layer, ops named after the call -- and the one-line
refusals naming the layer."""

import numpy as np
import pytest

from edgelite.converter.keras.context import KTensor, LayerCtx, channels_last, static
from edgelite.converter.keras.graph import GraphWriter
from edgelite.errors import ShapeError, UnsupportedOpError

X = KTensor("x", (None, 4, 4, 3))


def _ctx(args=(X,), **config):
    return LayerCtx(g=GraphWriter(), class_name="Conv2D", name="conv", prefix="conv_call",
                    config=config, args=list(args), kwargs={})


def test_config_and_inputs():
    ctx = _ctx(args=([X, KTensor("y", (None, 2))],), strides=None, units=3)
    assert ctx.cfg("units") == 3 and ctx.cfg("strides", (1, 1)) == (1, 1)  # None: default
    assert [t.ref for t in ctx.inputs()] == ["x", "y"] and ctx.input() is X
    assert X.rank == 4
    with pytest.raises(ShapeError, match=r"^layer 'conv' \(Conv2D\): called without an "
                                         r"input tensor$"):
        _ctx(args=()).input()


def test_constants_once_per_layer_and_ops_named_after_the_call():
    ctx = _ctx()
    first, again = ctx.const("kernel", np.ones(3)), ctx.const("kernel", np.zeros(3))
    assert first == again == "conv/kernel"
    assert ctx.op("BiasAdd", "BiasAdd", ["x", first]) == "conv_call/BiasAdd"
    flat = ctx.reshape(X, (None, 48))
    assert flat.shape == (None, 48) and flat.ref == "conv_call/Reshape"
    shape_node = next(n for n in ctx.g.graph_def.node if n.name == "conv_call/Reshape/shape")
    assert np.frombuffer(shape_node.attr["value"].tensor.tensor_content, "<i4").tolist() == [
        -1, 48]
    assert ctx.int_const("axes", [1, 2]) == "conv_call/axes"


def test_static_dims_and_channels_last():
    ctx = _ctx()
    assert static(ctx, X) == (4, 4, 3) and static(ctx, X, axes=[3]) == (3,)
    with pytest.raises(ShapeError, match=r"input shape \[\?, \?, 4\] has unknown dimensions"):
        static(ctx, KTensor("z", (None, None, 4)))
    channels_last(ctx, X, 2)
    with pytest.raises(UnsupportedOpError, match=r"data_format channels_first: edgelite "
                                                 r"reads channels_last models$"):
        channels_last(_ctx(data_format="channels_first"), X, 2)
    with pytest.raises(UnsupportedOpError, match=r"expects a rank-3 input, got shape "
                                                 r"\[None, 4, 4, 3\]$"):
        channels_last(ctx, X, 1)
