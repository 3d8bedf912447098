"""Issue 16's transformer models (family "transformer"): Keras MultiHeadAttention encoder
blocks and a tf.einsum zoo, random weights, frozen with their TF goldens, calibration inputs
and TF's float / int8 conversions (builders/beyond.py).

Run from the repository root (dev only, needs TensorFlow; deterministic: fixed seeds,
single-threaded TF)::

    /work/wt/threads/.venv/bin/python -m models.builders.zoo_transformer [name ...]

Writes models/<name>.pb, .golden.npz, .calib.npz, .tf.tflite, .tf_ops.json for

* ``tfm_encoder``: x [B, 8, 16] and a padding mask [B, 8, 8] (1 = attend) -> Keras
  MultiHeadAttention (2 heads, key_dim 8; its projections are Einsum nodes, the mask is added
  as (1 - mask) * -1e9 before the softmax) + residual + LayerNormalization, then
  Dense(32, exact GELU: 0.5 x erfc(-x / sqrt 2)) -> Dense(16) + residual + LayerNormalization.
* ``tfm_encoder_tanh``: the same block over x alone with a causal mask (a lower-triangular
  constant) and the tanh approximation of GELU.
* ``tfm_encoder_keras3``: the padding-mask block built with Keras 3 (``keras``): its mask is
  a SelectV2, its layer norms Mean / SquaredDifference / Rsqrt, exact GELU.
* ``tfm_einsum``: tf.einsum equations over four inputs: batch matmul ``bij,bjk->bik``,
  attention scores ``bhqd,bhkd->bhqk``, a transposed output ``bij,bjk->bki``, ellipsis
  ``...qd,...kd->...kq``, dense layers with constant weights ``bhqd,dn->bhqn`` and
  ``bqhd,hdn->bqn``, a one-operand transpose ``bij->bji``, plus a layer norm written with
  tf.nn.moments and the erf form of GELU 0.5 x (1 + erf(x / sqrt 2)).
* ``tfm_einsum_reduce``: equations TF's converter needs FlexEinsum for: an index summed away
  before the product ``bij,bjk->bk`` and a one-operand sum ``bij->bj``.
"""

from __future__ import annotations

import sys

from .beyond import finish_beyond  # first: sets TF_USE_LEGACY_KERAS
from .common import (SEED, convert_variables_to_constants_v2, freeze_keras, keras, np,
                     print_written, rename_node, seed_everything, tf)
from .real_world import Built, Spec

SEQ, DIM, HEADS, FFN = 8, 16, 2, 32
N_GOLDEN, N_CALIB = 16, 32


def _tokens(rng, n: int) -> np.ndarray:
    return rng.normal(0.0, 1.0, (n, SEQ, DIM)).astype(np.float32)


def _padding_masks(rng, n: int) -> np.ndarray:
    """[n, SEQ, SEQ] 0/1: each sample attends to its first `length` keys (length >= 2)."""
    lengths = rng.randint(2, SEQ + 1, n)
    keys = (np.arange(SEQ)[None, :] < lengths[:, None]).astype(np.float32)
    return np.repeat(keys[:, None, :], SEQ, axis=1)


class _Encoder(keras.Model):
    """Post-norm encoder block: LN(x + MHA(x)), LN(h + FFN(h))."""

    def __init__(self, approximate: bool, causal: bool):
        super().__init__()
        self.causal = causal
        self.mha = keras.layers.MultiHeadAttention(HEADS, DIM // HEADS, name="mha")
        self.ln1 = keras.layers.LayerNormalization(epsilon=1e-3, name="ln1")
        self.ln2 = keras.layers.LayerNormalization(epsilon=1e-3, name="ln2")
        self.ff1 = keras.layers.Dense(
            FFN, activation=lambda t: tf.nn.gelu(t, approximate=approximate), name="ff1")
        self.ff2 = keras.layers.Dense(DIM, name="ff2")

    def call(self, inputs, training=False):
        if self.causal:
            x = inputs
            mask = tf.constant(np.tril(np.ones((1, SEQ, SEQ), np.float32)))
        else:
            x, mask = inputs
        h = self.ln1(x + self.mha(x, x, attention_mask=mask, training=training))
        return self.ln2(h + self.ff2(self.ff1(h)))


def _randomize(model) -> None:
    """Larger random gammas / betas than Keras' ones / zeros, so LN's affine part matters;
    query and key kernels x 3, so the attention logits spread over several units (Glorot
    weights give near-uniform attention, which a broken softmax or mask would not show)."""
    rng = np.random.RandomState(SEED + 16)
    for proj in (model.mha._query_dense, model.mha._key_dense):
        kernel, bias = proj.get_weights()
        proj.set_weights([kernel * np.float32(3.0), bias])
    for layer in (model.ln1, model.ln2):
        gamma, beta = layer.get_weights()
        layer.set_weights([rng.uniform(0.5, 1.5, gamma.shape).astype(np.float32),
                           rng.normal(0.0, 0.2, beta.shape).astype(np.float32)])


def build_encoder(approximate: bool, causal: bool, seed: int) -> tuple[Built, dict]:
    seed_everything(seed)
    rng = np.random.RandomState(seed)
    model = _Encoder(approximate, causal)
    specs = {"x": ((None, SEQ, DIM), tf.float32)}
    if not causal:
        specs["mask"] = ((None, SEQ, SEQ), tf.float32)
    dummy = [np.zeros((1,) + s[0][1:], np.float32) for s in specs.values()]
    model(dummy[0] if causal else dummy)
    _randomize(model)
    gd = freeze_keras(model, specs, "output")
    golden = {"x": _tokens(rng, N_GOLDEN)}
    calib = {"x": _tokens(rng, N_CALIB)}
    if not causal:
        golden["mask"] = _padding_masks(rng, N_GOLDEN)
        calib["mask"] = _padding_masks(rng, N_CALIB)
    built = Built(gd, {k: (v[0], "float32") for k, v in specs.items()}, ["output"], golden,
                  expect_ops=("Einsum", "Erfc" if not approximate else "Tanh", "Softmax"))
    return built, calib


def build_encoder_keras3() -> tuple[Built, dict]:
    """The padding-mask block in Keras 3 (the `keras` package): its MultiHeadAttention masks
    with where(mask, scores, -large) (SelectV2), its LayerNormalization is Mean /
    SquaredDifference / Rsqrt, its projections partly BatchMatMulV2 instead of Einsum."""
    import keras as keras3  # Keras 3 (tf.keras is tf_keras here: TF_USE_LEGACY_KERAS)

    seed = SEED + 1630
    seed_everything(seed)
    keras3.utils.set_random_seed(seed)
    rng = np.random.RandomState(seed)
    x = keras3.Input((SEQ, DIM), name="x")
    mask = keras3.Input((SEQ, SEQ), name="mask")
    mha = keras3.layers.MultiHeadAttention(HEADS, DIM // HEADS, name="mha")
    h = keras3.layers.LayerNormalization(epsilon=1e-3, name="ln1")(
        x + mha(x, x, attention_mask=mask))
    f = keras3.layers.Dense(DIM, name="ff2")(keras3.layers.Dense(FFN, activation="gelu",
                                                                 name="ff1")(h))
    model = keras3.Model([x, mask], keras3.layers.LayerNormalization(epsilon=1e-3,
                                                                     name="ln2")(h + f))
    for proj in (mha._query_dense, mha._key_dense):  # spread attention logits (_randomize)
        kernel, bias = proj.get_weights()
        proj.set_weights([kernel * np.float32(3.0), bias])
    specs = [tf.TensorSpec((None, SEQ, DIM), tf.float32, name="x"),
             tf.TensorSpec((None, SEQ, SEQ), tf.float32, name="mask")]

    @tf.function(input_signature=specs)
    def serve(x, mask):
        return model([x, mask], training=False)

    frozen = convert_variables_to_constants_v2(serve.get_concrete_function())
    gd = frozen.graph.as_graph_def()
    rename_node(gd, frozen.outputs[0].op.name, "output")
    golden = {"x": _tokens(rng, N_GOLDEN), "mask": _padding_masks(rng, N_GOLDEN)}
    calib = {"x": _tokens(rng, N_CALIB), "mask": _padding_masks(rng, N_CALIB)}
    built = Built(gd, {"x": ((None, SEQ, DIM), "float32"), "mask": ((None, SEQ, SEQ),
                                                                     "float32")},
                  ["output"], golden, expect_ops=("Einsum", "Erfc", "SelectV2", "Mean"))
    return built, calib


# --------------------------------------------------------------------------- tf.einsum zoo
EINSUM_INPUTS = {"a": (None, 4, 6), "b": (None, 6, 5), "q": (None, 2, 4, 8),
                 "k": (None, 2, 5, 8)}
EINSUM_OUTPUTS = ("batch_matmul", "scores", "transposed", "ellipsis", "dense", "dense2",
                  "transpose", "layer_norm", "gelu_erf")
# TF's converter lowers none of these: an index summed away before the product, and the
# one-operand sum (it needs FlexEinsum).
REDUCE_OUTPUTS = ("summed", "row_sums")


def build_einsum_reduce() -> tuple[Built, dict]:
    graph = tf.Graph()
    with graph.as_default():
        a = tf.compat.v1.placeholder(tf.float32, EINSUM_INPUTS["a"], name="a")
        b = tf.compat.v1.placeholder(tf.float32, EINSUM_INPUTS["b"], name="b")
        tf.identity(tf.einsum("bij,bjk->bk", a, b), name="summed")
        tf.identity(tf.einsum("bij->bj", a), name="row_sums")
    data = np.random.RandomState(SEED + 1602)

    def batch(n, std):
        return {k: data.normal(0, std, (n,) + EINSUM_INPUTS[k][1:]).astype(np.float32)
                for k in ("a", "b")}

    built = Built(graph.as_graph_def(), {k: (EINSUM_INPUTS[k], "float32") for k in "ab"},
                  list(REDUCE_OUTPUTS), batch(N_GOLDEN, 1.0), expect_ops=("Einsum",))
    # calibration a little wider than the golden inputs: 32 samples of a sum of 4 normals
    # reach about 2.3 sigma, the golden 16 beyond that (int8 would clip them)
    return built, batch(N_CALIB, 1.3)


def build_einsum() -> tuple[Built, dict]:
    rng = np.random.RandomState(SEED + 1600)
    graph = tf.Graph()
    with graph.as_default():
        ph = {k: tf.compat.v1.placeholder(tf.float32, s, name=k)
              for k, s in EINSUM_INPUTS.items()}
        a, b, q, k = ph["a"], ph["b"], ph["q"], ph["k"]
        w = tf.constant(rng.normal(0, 0.3, (8, 6)).astype(np.float32))
        w2 = tf.constant(rng.normal(0, 0.3, (2, 8, 5)).astype(np.float32))
        outs = {
            "batch_matmul": tf.einsum("bij,bjk->bik", a, b),
            "scores": tf.einsum("bhqd,bhkd->bhqk", q, k),
            "transposed": tf.einsum("bij,bjk->bki", a, b),
            "ellipsis": tf.einsum("...qd,...kd->...kq", q, k),
            "dense": tf.einsum("bhqd,dn->bhqn", q, w),
            "dense2": tf.einsum("bqhd,hdn->bqn", tf.transpose(q, [0, 2, 1, 3]), w2),
            "transpose": tf.einsum("bij->bji", a),
        }
        mean, var = tf.nn.moments(q, axes=[-1], keepdims=True)
        gamma = tf.constant(rng.uniform(0.5, 1.5, (8,)).astype(np.float32))
        beta = tf.constant(rng.normal(0, 0.2, (8,)).astype(np.float32))
        outs["layer_norm"] = tf.nn.batch_normalization(q, mean, var, beta, gamma, 1e-3)
        outs["gelu_erf"] = 0.5 * k * (1.0 + tf.math.erf(k / np.float32(np.sqrt(2.0))))
        for name in EINSUM_OUTPUTS:
            tf.identity(outs[name], name=name)
    gd = graph.as_graph_def()
    data = np.random.RandomState(SEED + 1601)

    def batch(n, std):
        return {k: data.normal(0, std, (n,) + s[1:]).astype(np.float32)
                for k, s in EINSUM_INPUTS.items()}

    # calibration a little wider than the golden inputs (as in build_einsum_reduce)
    golden, calib = batch(N_GOLDEN, 1.0), batch(N_CALIB, 1.3)
    built = Built(gd, {k: (s, "float32") for k, s in EINSUM_INPUTS.items()},
                  list(EINSUM_OUTPUTS), golden, expect_ops=("Einsum", "Erf"))
    return built, calib


MODELS = {
    "tfm_encoder": lambda: build_encoder(approximate=False, causal=False, seed=SEED + 1610),
    "tfm_encoder_tanh": lambda: build_encoder(approximate=True, causal=True, seed=SEED + 1620),
    "tfm_encoder_keras3": build_encoder_keras3,
    "tfm_einsum": build_einsum,
    "tfm_einsum_reduce": build_einsum_reduce,
}


def main(names=None) -> None:
    for name in names or MODELS:
        print(name)
        holder = {}

        def build(name=name):
            holder["built"], holder["calib"] = MODELS[name]()
            return holder["built"]

        built = build()
        finish_beyond(Spec(name, lambda: built), built, "transformer", holder["calib"])
    print_written()


if __name__ == "__main__":
    main(sys.argv[1:])
