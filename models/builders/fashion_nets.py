"""The two Fashion-MNIST networks of models/build_fashion.py (tf-keras functional models).

Both take raw pixel values (float32 0..255, [None, 28, 28, 1]) and divide by 255 inside the
graph (`Rescaling`), as Keras' image tutorials do, so the committed uint8 data feeds every
tool unchanged (a uint8 array cast to float32 is exact).

  fashion_xception      Xception's entry flow, scaled down (Chollet 2017, fig. 5): a stride-2
                        conv and a conv, then two blocks of [ReLU] SeparableConv2D -> BN ->
                        ReLU -> SeparableConv2D -> BN -> MaxPool 3x3/2, each added to a
                        strided 1x1 Conv2D + BN shortcut; one middle-flow block (three ReLU ->
                        SeparableConv2D -> BN, identity shortcut); ReLU, global average pooling,
                        Dense + softmax.  The structure of the model that issue 12 reports.
  fashion_mobilenet_v2  MobileNetV2's inverted residuals (Sandler et al. 2018): stride-2 conv,
                        then bottleneck blocks [1x1 expand -> BN -> ReLU6 ->] depthwise 3x3 ->
                        BN -> ReLU6 -> linear 1x1 project -> BN (+ identity add when the shape
                        allows), a 1x1 conv to 128 + ReLU6, global average pooling, Dense +
                        softmax.  The block table of MobileNetV2 with fewer, narrower stages
                        (a 28x28 input needs three resolutions: 14, 7, 4).
"""

from __future__ import annotations

from .common import INPUT_NAME, keras

layers = keras.layers
INPUT_SHAPE = (28, 28, 1)
N_CLASSES = 10


def _stem(x, filters: int, act, name: str):
    """Conv2D 3x3 (no bias) -> BatchNormalization -> activation."""
    x = layers.Conv2D(filters, 3, strides=2, padding="same", use_bias=False, name=name)(x)
    x = layers.BatchNormalization(name=f"{name}_bn")(x)
    return act(f"{name}_act")(x)


def _head(x):
    """Global average pooling, Dense + softmax."""
    x = layers.GlobalAveragePooling2D(name="gap")(x)
    return layers.Dense(N_CLASSES, activation="softmax", name="predictions")(x)


def _input():
    inp = keras.Input(shape=INPUT_SHAPE, name=INPUT_NAME)
    return inp, layers.Rescaling(1.0 / 255.0, name="rescale")(inp)


# --------------------------------------------------------------------------- Xception


def _sep_bn(x, filters: int, name: str):
    x = layers.SeparableConv2D(filters, 3, padding="same", use_bias=False, name=name)(x)
    return layers.BatchNormalization(name=f"{name}_bn")(x)


def _entry_block(x, filters: int, name: str, relu_first: bool):
    """Xception entry-flow block: two separable convs and a max pool, plus a 1x1 shortcut."""
    shortcut = layers.Conv2D(filters, 1, strides=2, padding="same", use_bias=False,
                             name=f"{name}_shortcut")(x)
    shortcut = layers.BatchNormalization(name=f"{name}_shortcut_bn")(shortcut)
    if relu_first:
        x = layers.ReLU(name=f"{name}_sepconv1_act")(x)
    x = _sep_bn(x, filters, f"{name}_sepconv1")
    x = layers.ReLU(name=f"{name}_sepconv2_act")(x)
    x = _sep_bn(x, filters, f"{name}_sepconv2")
    x = layers.MaxPooling2D(3, strides=2, padding="same", name=f"{name}_pool")(x)
    return layers.Add(name=f"{name}_add")([x, shortcut])


def _middle_block(x, filters: int, name: str):
    """Xception middle-flow block: three ReLU -> separable conv -> BN, identity shortcut."""
    shortcut = x
    for i in (1, 2, 3):
        x = layers.ReLU(name=f"{name}_sepconv{i}_act")(x)
        x = _sep_bn(x, filters, f"{name}_sepconv{i}")
    return layers.Add(name=f"{name}_add")([x, shortcut])


def xception(name: str = "fashion_xception"):
    inp, x = _input()
    x = _stem(x, 16, lambda n: layers.ReLU(name=n), "block1_conv1")            # 14x14x16
    x = layers.Conv2D(32, 3, padding="same", use_bias=False, name="block1_conv2")(x)
    x = layers.BatchNormalization(name="block1_conv2_bn")(x)
    x = layers.ReLU(name="block1_conv2_act")(x)
    x = _entry_block(x, 64, "block2", relu_first=False)                        # 7x7x64
    x = _entry_block(x, 80, "block3", relu_first=True)                         # 4x4x80
    x = _middle_block(x, 80, "block4")
    x = layers.ReLU(name="exit_act")(x)
    return keras.Model(inp, _head(x), name=name)


# --------------------------------------------------------------------------- MobileNetV2

# MobileNetV2's block table (expansion t, output channels c, repeats n, first stride s),
# narrowed for a 28x28 input: the stem takes 28 -> 14, the two stride-2 stages 14 -> 7 -> 4.
MOBILENET_V2_BLOCKS = ((1, 8, 1, 1), (4, 16, 2, 1), (4, 24, 2, 2), (4, 32, 2, 2))


def _relu6(name: str):
    return layers.ReLU(6.0, name=name)


def _inverted_residual(x, t: int, filters: int, stride: int, name: str):
    cin = x.shape[-1]
    h = x
    if t != 1:
        h = layers.Conv2D(cin * t, 1, use_bias=False, name=f"{name}_expand")(h)
        h = layers.BatchNormalization(name=f"{name}_expand_bn")(h)
        h = _relu6(f"{name}_expand_relu")(h)
    h = layers.DepthwiseConv2D(3, strides=stride, padding="same", use_bias=False,
                               name=f"{name}_depthwise")(h)
    h = layers.BatchNormalization(name=f"{name}_depthwise_bn")(h)
    h = _relu6(f"{name}_depthwise_relu")(h)
    h = layers.Conv2D(filters, 1, use_bias=False, name=f"{name}_project")(h)
    h = layers.BatchNormalization(name=f"{name}_project_bn")(h)
    if stride == 1 and cin == filters:
        return layers.Add(name=f"{name}_add")([x, h])
    return h


def mobilenet_v2(name: str = "fashion_mobilenet_v2"):
    inp, x = _input()
    x = _stem(x, 16, _relu6, "conv1")                                          # 14x14x16
    k = 0
    for t, c, n, s in MOBILENET_V2_BLOCKS:
        for i in range(n):
            x = _inverted_residual(x, t, c, s if i == 0 else 1, f"block{k}")
            k += 1
    x = layers.Conv2D(128, 1, use_bias=False, name="conv_last")(x)
    x = layers.BatchNormalization(name="conv_last_bn")(x)
    x = _relu6("conv_last_relu")(x)
    return keras.Model(inp, _head(x), name=name)


NETS = {"fashion_xception": xception, "fashion_mobilenet_v2": mobilenet_v2}
