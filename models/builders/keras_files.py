"""Keras model files for converter/keras/ (issue 31): small models covering the layers
edgelite reads from `.keras` (Keras 3) and legacy `.h5` (tf-keras) files, with seeded random
weights (non-trivial BatchNormalization statistics), and Keras' own outputs.

    python -m models.builders.keras_files            # Keras 3 .keras files
    python -m models.builders.keras_files --legacy   # tf-keras .h5 files (own process)
    python -m models.builders.keras_files extras     # only the models named

Writes models/keras/<name>.keras|.h5, <name>.golden.npz (in_0.., out_0.., each two samples
run at batch 1 by the tests) and records in models/keras/keras_files.json the op count of
TensorFlow's own float conversion (TFLiteConverter.from_keras_model), all subgraphs.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
LEGACY = "--legacy" in sys.argv
if LEGACY:
    os.environ["TF_USE_LEGACY_KERAS"] = "1"

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

if LEGACY:
    import tf_keras as keras  # noqa: E402
else:
    import keras  # noqa: E402

L = keras.layers
ONLY = [a for a in sys.argv[1:] if not a.startswith("-")]   # names to rebuild (default all)
OUT = Path(__file__).resolve().parents[1] / "keras"
SEED = 31


def cnn():
    x = inp = keras.Input((16, 16, 3), name="image")
    x = L.Conv2D(8, 3, strides=2, padding="same", activation="relu")(x)
    x = L.BatchNormalization()(x)
    x = L.ReLU(6.0)(x)
    x = L.DepthwiseConv2D(3, padding="same", use_bias=False)(x)
    x = L.BatchNormalization()(x)
    x = L.Activation("relu6")(x)
    x = L.SeparableConv2D(12, 3, padding="valid", depth_multiplier=2)(x)
    x = L.ZeroPadding2D(((1, 0), (0, 1)))(x)
    x = L.MaxPooling2D(2, padding="same")(x)
    x = L.Conv2D(8, 1, dilation_rate=1, use_bias=False)(x)
    x = L.Cropping2D(((0, 1), (1, 0)))(x)
    x = L.AveragePooling2D(2, strides=1)(x)
    x = L.Dropout(0.5)(x)
    x = L.GlobalAveragePooling2D()(x)
    x = L.Dense(5, activation="softmax")(x)
    return keras.Model(inp, x, name="cnn")


def conv1d():
    x = inp = keras.Input((24, 4), name="signal")
    x = L.Conv1D(6, 3, padding="causal", dilation_rate=2, activation="relu")(x)
    x = L.SeparableConv1D(8, 3, padding="same")(x)
    x = L.BatchNormalization()(x)
    x = L.MaxPooling1D(2)(x)
    x = L.Conv1D(8, 3, strides=2, padding="valid")(x)
    x = L.AveragePooling1D(2, padding="same")(x)
    x = L.UpSampling1D(2)(x)
    a = L.GlobalMaxPooling1D()(x)
    b = L.GlobalAveragePooling1D()(x)
    x = L.Concatenate()([a, b])
    x = L.Dense(3)(x)
    return keras.Model(inp, x, name="conv1d")


ACTIVATIONS = ["relu", "relu6", "sigmoid", "tanh", "elu", "selu", "softplus", "softsign",
               "swish", "gelu", "hard_sigmoid", "exponential", "linear"]
ACTIVATIONS_K3 = ["hard_swish", "mish", "leaky_relu", "log_softmax", "silu"]


def activations():
    inp = keras.Input((6,), name="x")
    outs = []
    names = ACTIVATIONS + ([] if LEGACY else ACTIVATIONS_K3)
    for name in names:
        outs.append(L.Dense(4, activation=name, name=f"dense_{name}")(inp))
    h = L.Dense(6)(inp)
    outs += [L.LeakyReLU()(h), L.PReLU()(h), L.ELU(0.5)(h),
             L.ReLU(max_value=2.0, negative_slope=0.1, threshold=0.3)(h), L.ReLU(4.0)(h),
             L.Softmax()(h)]
    return keras.Model(inp, L.Concatenate(name="all")(outs), name="activations")


def merge_multi_io():
    a = keras.Input((4, 4, 3), name="a")
    b = keras.Input((4, 4, 3), name="b")
    shared = L.Conv2D(3, 1, name="shared")
    sa, sb = shared(a), shared(b)
    m = [L.Add()([sa, sb]), L.Subtract()([sa, sb]), L.Multiply()([sa, sb]),
         L.Average()([sa, sb, a]), L.Maximum()([sa, sb]), L.Minimum()([sa, sb])]
    x = L.Concatenate(axis=-1)(m)
    y1 = L.Flatten()(x)
    y1 = L.Dense(4, name="head1")(y1)
    y2 = L.GlobalMaxPooling2D(name="head2")(L.Concatenate(axis=1)([sa, sb]))
    return keras.Model([a, b], [y1, y2], name="merge_multi_io")


def nested():
    inner_in = keras.Input((8,))
    h = L.Dense(6, activation="tanh", name="inner_dense")(inner_in)
    inner = keras.Model(inner_in, L.BatchNormalization(name="inner_bn")(h), name="inner")
    seq = keras.Sequential([keras.Input((6,)), L.Dense(5, activation="relu"),
                            L.Dense(3)], name="seq")
    x = inp = keras.Input((8,), name="features")
    x = inner(x)
    y = seq(x)
    z = seq(L.Dense(6, name="side")(inp))   # the nested Sequential called twice
    return keras.Model(inp, [y, L.Add(name="sum")([y, z])], name="nested")


def shapes():
    x = inp = keras.Input((4, 6, 3), name="grid")
    x = L.UpSampling2D(2)(x)
    x = L.Conv2DTranspose(4, 3, strides=2, padding="same")(x)
    x = L.Conv2DTranspose(4, 2, strides=1, padding="valid", activation="relu")(x)
    y = L.UpSampling2D((1, 2), interpolation="bilinear")(inp)
    if not LEGACY:
        y = L.CenterCrop(4, 10)(L.Resizing(6, 14)(y))
        y = L.Resizing(4, 12, interpolation="nearest")(y)
    y = L.Permute((2, 1, 3))(y)
    y = L.Reshape((12, -1))(y)
    y = L.Dense(5)(y)                  # Dense on a rank-3 input
    y = L.Flatten()(y)
    y = L.RepeatVector(3)(L.Dense(4)(y))
    y = L.Reshape((12,))(y)
    x = L.GlobalAveragePooling2D()(x)
    return keras.Model(inp, L.Concatenate()([x, y]), name="shapes")


def norms():
    x = inp = keras.Input((5, 6), name="seq_in")
    x = L.Rescaling(1 / 4.0, offset=-0.5)(x)
    norm = L.Normalization()
    norm.adapt(np.random.RandomState(1).rand(20, 5, 6).astype("float32") * 3)
    x = norm(x)
    x = L.LayerNormalization()(x)
    x = L.Dense(8)(x)
    x = L.LayerNormalization(axis=[1, 2], epsilon=1e-5)(x)
    x = L.GroupNormalization(groups=2)(x)
    x = L.BatchNormalization()(x)
    x = L.GaussianNoise(0.3)(x)
    y = L.EinsumDense("abc,cd->abd", output_shape=(5, 4), bias_axes="d",
                      activation="relu")(x)
    y = L.EinsumDense("abc,cde->abde", output_shape=(5, 2, 3))(y)
    y = L.UnitNormalization(axis=[2, 3])(y)
    return keras.Model(inp, [x, L.Reshape((5, 6))(y)], name="norms")


def embedding():
    x = inp = keras.Input((10,), dtype="int32", name="tokens")
    x = L.Embedding(20, 6, mask_zero=True)(x)
    x = L.Dense(6, activation="relu")(x)
    x = L.GlobalAveragePooling1D()(x)
    return keras.Model(inp, L.Dense(3)(x), name="embedding")


def sequential():
    return keras.Sequential([keras.Input((12, 12, 1)), L.Conv2D(4, 3, activation="relu"),
                             L.MaxPooling2D(), L.Flatten(), L.Dropout(0.2),
                             L.Dense(10, activation="softmax")], name="sequential")


def extras():
    """The remaining layers: 1-D transposed / depthwise convs, 1-D padding / cropping,
    Masking, the inference-time identities, keras.ops arithmetic on symbolic tensors."""
    x = inp = keras.Input((12, 4), name="steps")
    x = L.Masking(mask_value=0.0)(x)
    m = L.GlobalAveragePooling1D(name="masked_mean")(x)
    y = L.ZeroPadding1D((2, 1))(inp)
    y = L.Cropping1D((1, 2))(y)
    y = L.SpatialDropout1D(0.3)(y)
    y = L.GaussianDropout(0.2)(y)
    y = L.AlphaDropout(0.1)(y)
    y = L.ActivityRegularization(l1=0.01)(y)
    y = L.Identity()(y)
    y = L.DepthwiseConv1D(3, depth_multiplier=2, padding="same")(y)
    y = L.Conv1DTranspose(3, 3, strides=2, padding="same")(y)
    y = L.Flatten()(y)
    z = y * 2.0 + keras.ops.maximum(y, 0.5) - 1.0
    o = keras.ops
    z = z + o.sum(y, axis=-1, keepdims=True) / 3.0 + o.max(y, -1, keepdims=True) - \
        o.minimum(o.min(y, -1, keepdims=True), 0.2) + o.mean(y, -1, keepdims=True)
    x2 = keras.Input((6, 6, 2), name="image")
    w = L.SpatialDropout2D(0.5)(x2)
    w = L.Conv2D(4, 3, padding="same")(w)
    w = L.Conv2D(8, 3, padding="same", groups=4)(w)   # one group per channel: depthwise
    from keras.src.applications.convnext import LayerScale
    w = LayerScale(0.5, 8)(w)
    w = L.Conv2D(3, 3, padding="same", activation="hard_swish")(w)
    w = L.GlobalMaxPooling2D(keepdims=True)(w)
    w = L.Flatten()(w)
    s1 = L.Dense(5)(inp)
    d3 = L.Dot(axes=(1, 1))([s1, inp])                       # [B, 5, 4]: over the steps
    d2 = L.Dot(axes=-1, normalize=True)([L.Flatten()(d3), L.Flatten()(d3)])
    return keras.Model([inp, x2], [m, z, w, L.Flatten()(d3), d2], name="extras")


def rnn_lstm():
    x = inp = keras.Input((8, 5), name="seq")
    x = L.LSTM(6, return_sequences=True)(x)
    x = L.LSTM(4)(x)
    return keras.Model(inp, L.Dense(3)(x), name="rnn_lstm")


def rnn_gru():
    x = inp = keras.Input((7, 4), name="seq")
    x = L.GRU(5, return_sequences=True)(x)                      # reset_after (default)
    x = L.GRU(4, reset_after=False, go_backwards=True, return_sequences=True)(x)
    y, h = L.SimpleRNN(3, return_state=True, activation="relu")(x)
    return keras.Model(inp, [L.Dense(2)(y), h], name="rnn_gru")


def rnn_masked():
    x = inp = keras.Input((10,), dtype="int32", name="tokens")
    x = L.Embedding(20, 6, mask_zero=True)(x)
    x = L.Bidirectional(L.LSTM(5, return_sequences=True))(x)
    x = L.Bidirectional(L.GRU(3), merge_mode="sum")(x)
    return keras.Model(inp, L.Dense(3)(x), name="rnn_masked")


def rnn_wrappers():
    x = inp = keras.Input((6, 3), name="seq")
    x = L.TimeDistributed(L.Dense(4, activation="relu"))(x)
    out, h, c = L.LSTM(5, return_state=True, return_sequences=True,
                       recurrent_activation="hard_sigmoid")(x)
    y = L.Bidirectional(L.SimpleRNN(3, return_sequences=True), merge_mode="ave")(out)
    return keras.Model(inp, [L.Flatten()(y), h, c], name="rnn_wrappers")


def conv_lstm():
    x = inp = keras.Input((4, 6, 6, 2), name="frames")
    x = L.ConvLSTM2D(3, 3, padding="same", return_sequences=True)(x)
    x = L.ConvLSTM2D(2, 3, strides=2, padding="valid")(x)
    return keras.Model(inp, L.Dense(3)(L.Flatten()(x)), name="conv_lstm")


def tf_ops():
    """tf.* calls on symbolic tensors: tf.keras stores them as TFOpLambda layers."""
    inp = keras.Input((4,), name="x")
    y = L.Dense(3)(inp)
    z = L.ReLU(6.0)(y + 3.0) * (1.0 / 6.0)
    w = tf.nn.relu6(z) - y
    v = tf.math.maximum(w, 0.1) / 2.0
    return keras.Model(inp, [z, tf.math.tanh(v) + tf.math.minimum(z, y)], name="tf_ops")


def attention():
    x = inp = keras.Input((6, 8), name="seq")
    h = L.MultiHeadAttention(2, 4, name="self_attention")(x, x)
    x = L.LayerNormalization()(L.Add()([x, h]))
    c = L.MultiHeadAttention(3, 2, value_dim=5, use_bias=False, name="causal")(
        x, x, use_causal_mask=True)
    q = L.Dense(8)(x)
    a = L.Attention(use_scale=True)([q, x])
    y = L.Concatenate()([c, a])
    return keras.Model(inp, L.GlobalAveragePooling1D()(y), name="attention")


def attention_masked():
    x = inp = keras.Input((8,), dtype="int32", name="tokens")
    x = L.Embedding(20, 8, mask_zero=True)(x)
    h = L.MultiHeadAttention(2, 4)(x, x)
    a = L.Attention()([x, h])
    return keras.Model(inp, L.GlobalAveragePooling1D()(L.Add()([h, a])),
                       name="attention_masked")


def text_encoder():
    """A BERT-like encoder as users write it in Keras 3: a positional table and a scale added
    as constant arrays (stored inline as `__tensor__` / `__numpy__`), the padding mask as
    keras.ops calls (`cast(mask[:, None, :], "bool")`: GetItem, Cast) fed to attention,
    and the [CLS] vector `x[:, 0]` plus slices with a step and an Ellipsis."""
    o = keras.ops
    tokens = keras.Input((8,), dtype="int32", name="tokens")
    mask = o.cast(o.not_equal(tokens, 0), "int32")
    x = L.Embedding(20, 8)(tokens)
    x = x + o.convert_to_tensor(np.linspace(-0.5, 0.5, 64, dtype="float32").reshape(1, 8, 8))
    x = x * np.linspace(0.5, 1.5, 8, dtype="float32")
    h = L.MultiHeadAttention(2, 4)(x, x, attention_mask=o.cast(mask[:, None, :], "bool"))
    x = L.LayerNormalization()(x + h)
    cls = x[:, 0]
    pairs = x[:, ::2, 1:7:3]
    tail = x[..., -4:]
    return keras.Model(tokens, [L.Dense(3)(cls), L.Flatten()(pairs),
                                L.GlobalAveragePooling1D()(tail)], name="text_encoder")


def keras_ops():
    """keras.ops functions users call on symbolic tensors in Keras 3 (each stored as a
    keras.src.ops layer): elementwise math and activations, comparisons, where, clip,
    transpose / reshape / expand_dims / squeeze / concatenate / matmul."""
    o = keras.ops
    x = inp = keras.Input((4, 6), name="seq")
    pos = o.abs(x) + 0.5
    acts = [o.sigmoid(x), o.relu(x), o.relu6(x * 4.0), o.silu(x), o.softplus(x),
            o.softsign(x), o.elu(x), o.selu(x), o.gelu(x),
            o.leaky_relu(x, 0.1), o.hard_sigmoid(x), o.hard_silu(x), o.tanh(x),
            o.exp(o.negative(pos)), o.sqrt(pos), o.square(x), o.log(pos), o.rsqrt(pos),
            o.floor(x * 3.0), o.ceil(x * 3.0), o.sin(x), o.cos(x), o.sign(x),
            o.reciprocal(pos), o.power(pos, 1.5), o.clip(x, -0.5, 0.25),
            o.softmax(x, axis=-1)]
    h = o.concatenate(acts, axis=-1)                        # [B, 4, 6 * 27]
    masks = o.logical_and(o.greater(x, -0.5), o.less_equal(x, 0.5))
    masks = o.logical_or(masks, o.equal(x, 0.0))
    masks = o.logical_and(o.logical_not(o.greater_equal(x, 1.0)), masks)
    picked = o.where(masks, x, -1.0) + o.where(o.less(x, 0.0), 0.5, x)
    scores = o.matmul(picked, o.transpose(picked, (0, 2, 1)))  # [B, 4, 4]
    flat = o.reshape(o.expand_dims(scores, 1), (-1, 16))
    col = o.squeeze(o.expand_dims(flat, -1), -1)
    h = L.Dense(5)(o.reshape(h, (-1, 4 * 6 * len(acts))))
    return keras.Model(inp, [h, col], name="keras_ops")


MODELS = {"cnn": cnn, "conv1d": conv1d, "activations": activations,
          "merge_multi_io": merge_multi_io, "nested": nested, "shapes": shapes, "norms": norms,
          "embedding": embedding, "sequential": sequential, "extras": extras,
          "rnn_lstm": rnn_lstm, "rnn_gru": rnn_gru, "rnn_masked": rnn_masked,
          "rnn_wrappers": rnn_wrappers, "attention": attention,
          "attention_masked": attention_masked, "text_encoder": text_encoder,
          "keras_ops": keras_ops,
          "conv_lstm": conv_lstm, "tf_ops": tf_ops}
LEGACY_ONLY = ("tf_ops",)   # Keras 3 writes keras.ops layers instead (extras)
K3_H5 = ("nested", "activations")   # also saved by Keras 3 as .h5 (model_config + model_weights)
LEGACY_MODELS = ("cnn", "activations", "nested", "merge_multi_io", "embedding", "sequential",
                 "rnn_gru", "rnn_masked", "rnn_wrappers", "attention", "attention_masked",
                 "conv_lstm", "tf_ops")


def randomize(model, rng):
    """Seeded weights with spread: variances in [0.5, 1.5], everything else N(0, 0.4)."""
    adapted = {id(w) for layer in model.layers if isinstance(layer, L.Normalization)
               for w in layer.weights}   # the adapted statistics stay as adapt() set them
    for w in model.weights:
        name = getattr(w, "path", w.name)
        if id(w) in adapted:
            continue
        shape = tuple(w.shape)
        if "variance" in name:
            value = rng.uniform(0.5, 1.5, shape)
        else:
            value = rng.normal(0, 0.4, shape)
        w.assign(value.astype("float32"))


def sample_inputs(model, rng):
    feeds = []
    for t in model.inputs:
        shape = (2,) + tuple(t.shape[1:])
        if "int" in str(t.dtype):
            x = rng.randint(0, 20, shape).astype("int32")
            x[:, -3:] = 0  # padding the mask hides
        elif t.name.startswith("steps"):   # Masking: zero steps
            x = rng.normal(0, 1, shape).astype("float32")
            x[:, -4:] = 0
        else:
            x = rng.normal(0, 1, shape).astype("float32")
        feeds.append(x)
    return feeds


def tf_op_count(model) -> int:
    """Operators in TF's float conversion of `model`, all subgraphs. RNNs with an unknown
    batch do not convert (TensorListReserve needs a static element shape): those are
    converted at batch 1, as edgelite converts them."""
    from ai_edge_litert.interpreter import Interpreter
    try:
        flat = tf.lite.TFLiteConverter.from_keras_model(model).convert()
    except Exception:  # noqa: BLE001 -- TF's ConverterError; retry at batch 1
        specs = [tf.TensorSpec((1,) + tuple(t.shape[1:]), t.dtype) for t in model.inputs]
        fn = tf.function(lambda *xs: model(list(xs) if len(xs) > 1 else xs[0],
                                           training=False))
        flat = tf.lite.TFLiteConverter.from_concrete_functions(
            [fn.get_concrete_function(*specs)], model).convert()
    Interpreter(model_content=flat).allocate_tensors()   # LiteRT loads what TF wrote
    return all_ops(flat)


def all_ops(flat: bytes) -> int:
    """Operators in every subgraph (WHILE bodies and conds included)."""
    from edgelite.interpreter.loader.model import load_model
    return sum(len(sg.operators) for sg in load_model(flat).subgraphs)


def main() -> None:
    OUT.mkdir(exist_ok=True)
    meta_path = OUT / "keras_files.json"
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    for k, (name, make) in enumerate(MODELS.items()):
        if LEGACY and name not in LEGACY_MODELS or (ONLY and name not in ONLY) or \
                (not LEGACY and name in LEGACY_ONLY):
            continue
        rng = np.random.RandomState(SEED + k)
        keras.utils.set_random_seed(SEED + k)
        model = make()
        randomize(model, rng)
        feeds = sample_inputs(model, rng)
        outs = []
        for i in range(2):
            y = model([f[i:i + 1] for f in feeds] if len(feeds) > 1 else feeds[0][i:i + 1],
                      training=False)
            outs.append([np.asarray(t) for t in (y if isinstance(y, (list, tuple)) else [y])])
        file = f"{name}_legacy.h5" if LEGACY else f"{name}.keras"
        model.save(OUT / file)
        golden = {f"in_{i}": f for i, f in enumerate(feeds)}
        golden.update({f"out_{j}": np.concatenate([o[j] for o in outs])
                       for j in range(len(outs[0]))})
        np.savez(OUT / f"{Path(file).stem}.golden.npz", **golden)
        meta[Path(file).stem] = {"file": file, "tf_ops": tf_op_count(model),
                                 "keras": keras.__version__}
        print(file, meta[Path(file).stem])
        if not LEGACY and name in K3_H5:   # Keras 3's legacy-format .h5 of the same model
            model.save(OUT / f"{name}_k3.h5")
            np.savez(OUT / f"{name}_k3.golden.npz", **golden)
            meta[f"{name}_k3"] = dict(meta[Path(file).stem], file=f"{name}_k3.h5")
    meta_path.write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
