"""Small float IR graphs with the structures bias correction must not hurt (TF-free), and
their calibration data: a branch point read by a shortcut conv and a separable conv pair
(Xception / ResNet blocks), folded batch norm, an ADD, pooling, per-channel weight scales
far apart, fused RELU / RELU6 clamps, fully connected heads."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from edgelite.converter.ir import Activation, Graph, Padding, Tensor
from edgelite.converter.shape_inference import infer_shapes

NONE, RELU, RELU6 = Activation.NONE, Activation.RELU, Activation.RELU6
WINDOW = dict(stride_h=1, stride_w=1, dilation_h_factor=1, dilation_w_factor=1)


class Builder:
    """A float Graph built layer by layer, random weights from one seed."""

    def __init__(self, shape: tuple[int, ...], seed: int) -> None:
        self.g = Graph()
        self.rng = np.random.default_rng(seed)
        self.x = self.g.tensor("x", np.float32, shape)
        self.g.inputs = [self.x]

    def weights(self, *shape, scale=1.0) -> np.ndarray:
        return (self.rng.standard_normal(shape) * scale).astype(np.float32)

    def _op(self, type_, name, inputs, **options) -> Tensor:
        y = self.g.tensor(name, np.float32)
        self.g.add_op(type_, inputs, [y], options, name=name)
        return y

    def conv(self, x, name, out, k=1, act=NONE, stride=1, w=None, b=None) -> Tensor:
        cin = x.shape[-1] if x.shape else None
        w = self.weights(out, k, k, cin, scale=1 / np.sqrt(k * k * cin)) if w is None else w
        b = self.weights(out, scale=0.1) if b is None else b
        y = self._op("CONV_2D", name, [x, self.g.const(f"{name}/w", w),
                                       self.g.const(f"{name}/b", b)],
                     **dict(WINDOW, stride_h=stride, stride_w=stride), padding=Padding.SAME,
                     fused_activation_function=act)
        return self._shaped(y)

    def folded_bn_conv(self, x, name, out, act=NONE, stride=1) -> Tensor:
        """conv 1x1 without bias + batch norm, folded: w * gamma / sigma, beta - mu * that."""
        cin = x.shape[-1]
        gamma = self.rng.uniform(0.5, 3.0, out)
        sigma = self.rng.uniform(0.2, 1.0, out)
        mu = self.rng.normal(0, 1, out)
        beta = self.rng.normal(0, 0.5, out)
        w = self.weights(out, 1, 1, cin, scale=1 / np.sqrt(cin)) * (gamma / sigma)[:, None,
                                                                                  None, None]
        b = beta - mu * gamma / sigma
        return self.conv(x, name, out, 1, act, stride, w.astype(np.float32),
                         b.astype(np.float32))

    def depthwise(self, x, name, multiplier=1, act=NONE, channel_scales=None) -> Tensor:
        c = x.shape[-1] * multiplier
        w = self.weights(1, 3, 3, c, scale=1 / 3)
        if channel_scales is not None:
            w = (w * channel_scales).astype(np.float32)
        y = self._op("DEPTHWISE_CONV_2D", name, [x, self.g.const(f"{name}/w", w),
                                                 self.g.const(f"{name}/b", self.weights(
                                                     c, scale=0.05))],
                     **WINDOW, padding=Padding.SAME, depth_multiplier=multiplier,
                     fused_activation_function=act)
        return self._shaped(y)

    def fc(self, x, name, out, act=NONE, w=None, b=None) -> Tensor:
        cin = int(np.prod(x.shape[1:]))
        w = self.weights(out, cin, scale=1 / np.sqrt(cin)) if w is None else w
        b = self.weights(out, scale=0.1) if b is None else b
        y = self._op("FULLY_CONNECTED", name, [x, self.g.const(f"{name}/w", w),
                                               self.g.const(f"{name}/b", b)],
                     fused_activation_function=act, weights_format=0, keep_num_dims=False,
                     asymmetric_quantize_inputs=False)
        return self._shaped(y)

    def add(self, a, b, name, act=NONE) -> Tensor:
        return self._shaped(self._op("ADD", name, [a, b], fused_activation_function=act))

    def max_pool(self, x, name) -> Tensor:
        return self._shaped(self._op("MAX_POOL_2D", name, [x], padding=Padding.SAME,
                                     stride_h=2, stride_w=2, filter_height=3, filter_width=3,
                                     fused_activation_function=NONE))

    def mean(self, x, name) -> Tensor:
        return self._shaped(self._op("MEAN", name, [x, self.g.const(
            f"{name}/axes", np.array([1, 2], np.int32))], keep_dims=False))

    def _shaped(self, y: Tensor) -> Tensor:
        self.g.outputs = [y]
        infer_shapes(self.g)
        return y

    def done(self, *outputs: Tensor) -> Graph:
        self.g.outputs = list(outputs)
        infer_shapes(self.g)
        return self.g


@dataclass
class Model:
    name: str
    graph: Graph
    calib: np.ndarray                 # samples, first axis
    per_channel: bool = True


def images(n: int, shape, seed: int, offset: float = 0.0) -> np.ndarray:
    """Smooth random images (neighbouring pixels correlated, like photos), in [-1, 1]."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, *shape))
    x = (x + np.roll(x, 1, 1) + np.roll(x, 1, 2) + np.roll(x, (1, 1), (1, 2))) / 4
    return np.clip(x + offset, -1, 1).astype(np.float32)


def residual_block(seed: int = 1) -> Graph:
    """Xception / ResNet block: stem conv (RELU) -> t; shortcut = folded-BN 1x1 conv, stride
    2, no activation; main = separable conv (depthwise 3x3 + folded-BN pointwise, RELU)
    -> max pool; ADD -> separable conv -> global mean -> FC logits. `t` is read by two
    layers (shortcut and depthwise)."""
    b = Builder((1, 8, 8, 3), seed)
    t = b.conv(b.x, "stem", 8, 3, RELU)
    shortcut = b.folded_bn_conv(t, "shortcut", 16, stride=2)
    main = b.depthwise(t, "sep1/dw")
    main = b.folded_bn_conv(main, "sep1/pw", 16, RELU)
    main = b.max_pool(main, "pool")
    y = b.add(main, shortcut, "add")
    y = b.depthwise(y, "sep2/dw", multiplier=2)
    y = b.folded_bn_conv(y, "sep2/pw", 24, RELU6)
    return b.done(b.fc(b.mean(y, "gap"), "logits", 10))


def channel_scales(seed: int = 2) -> Graph:
    """Per-channel weights whose scales are 1000x apart; RELU6 ranges; depthwise with a
    channel multiplier of 2; a FULLY_CONNECTED head on the flattened features."""
    b = Builder((1, 6, 6, 4), seed)
    scales = np.geomspace(1e-3, 1.0, 8).astype(np.float32)
    w = b.weights(8, 3, 3, 4, scale=1 / 6) * scales[:, None, None, None]
    h = b.conv(b.x, "conv", 8, 3, RELU6, w=w.astype(np.float32), b=b.weights(8, scale=0.01))
    h = b.depthwise(h, "dw", multiplier=2, act=RELU6,
                    channel_scales=np.repeat(1 / np.sqrt(scales), 2).astype(np.float32))
    h = b.conv(h, "pw", 12, 1, RELU)
    return b.done(b.fc(b.mean(h, "gap"), "logits", 5))


def clipped_branch_point(seed: int = 3) -> Graph:
    """stem conv whose quantized output clips (its range is set to [-0.5, 0.5], the data
    reaches ~2): a mean error that is the stem's, not the layers after it; then a
    folded-BN 1x1 conv (no activation) and a 3x3 conv, both reading the clipped tensor,
    feeding an ADD."""
    b = Builder((1, 6, 6, 3), seed)
    t = b.conv(b.x, "stem", 8, 3, w=np.abs(b.weights(8, 3, 3, 3, scale=0.3)),
               b=np.full(8, 0.2, np.float32))
    t.range = (-0.5, 0.5)
    shortcut = b.folded_bn_conv(t, "shortcut", 8)
    main = b.conv(t, "main", 8, 3)
    return b.done(b.add(shortcut, main, "add"))


def gated_relu() -> Graph:
    """FULLY_CONNECTED 2 -> 1 with RELU: y = relu(x0 - 0.5 - 0.05866 x1). The weight 0.05866
    is 7.45 steps of the per-tensor scale 1/127 and rounds to 7 steps: the quantized layer
    reads 0.00354 * x1 high before the RELU."""
    b = Builder((1, 2), 0)
    w = np.array([[1.0, -7.45 / 127]], np.float32)
    return b.done(b.fc(b.x, "fc", 1, RELU, w=w, b=np.array([-0.5], np.float32)))


def gated_relu_data(n: int = 64) -> np.ndarray:
    """Half the samples active (x0 in [0.6, 1], x1 = 1: the error is 0.0035), half clamped
    at 0 (x0 in [0, 0.45], x1 = 10: the error, 0.035, never shows). The mean error over all
    samples before the RELU is 0.019, five times the error of the outputs it can move."""
    rng = np.random.default_rng(5)
    x0 = np.concatenate([rng.uniform(0.6, 1.0, n // 2), rng.uniform(0.0, 0.45, n // 2)])
    x1 = np.concatenate([np.ones(n // 2), np.full(n // 2, 10.0)])
    return np.stack([x0, x1], axis=1)[:, None, :].astype(np.float32)


def shared_bias(seed: int = 4) -> Graph:
    """Two FULLY_CONNECTED layers reading one input and one float bias constant, added."""
    b = Builder((1, 12), seed)
    bias = b.g.const("shared/b", b.weights(6, scale=0.3))
    ys = []
    for name in ("fc1", "fc2"):
        y = b.g.tensor(name, np.float32)
        b.g.add_op("FULLY_CONNECTED", [b.x, b.g.const(f"{name}/w", b.weights(6, 12, scale=0.3)),
                                       bias], [y],
                   dict(fused_activation_function=NONE, weights_format=0,
                        keep_num_dims=False, asymmetric_quantize_inputs=False), name=name)
        ys.append(y)
    return b.done(b.add(*ys, "add"))


MODELS: dict[str, tuple[Callable[[], Graph], Callable[[], np.ndarray], bool]] = {
    "residual_block": (residual_block, lambda: images(16, (8, 8, 3), 11), True),
    "residual_block_per_tensor": (residual_block, lambda: images(16, (8, 8, 3), 12), False),
    "channel_scales": (channel_scales, lambda: images(16, (6, 6, 4), 13, 0.3), True),
    "channel_scales_per_tensor": (channel_scales, lambda: images(16, (6, 6, 4), 14, 0.3),
                                  False),
    "clipped_branch_point": (clipped_branch_point, lambda: images(16, (6, 6, 3), 15, 0.2),
                             True),
    "gated_relu": (gated_relu, gated_relu_data, False),
    "shared_bias": (shared_bias, lambda: np.random.default_rng(16).uniform(
        0, 1, (16, 1, 12)).astype(np.float32), False),
}


def model(name: str) -> Model:
    build, data, per_channel = MODELS[name]
    return Model(name, build(), data(), per_channel)
