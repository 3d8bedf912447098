"""Issue 16's "misc" models (family "misc"): the odd ops, division by constants, a QAT graph.

Run from the repository root (dev only, needs TensorFlow; deterministic: fixed seeds,
single-threaded TF)::

    /work/wt/threads/.venv/bin/python -m models.builders.zoo_misc

Each model goes through builders/beyond.py's finish_beyond (frozen .pb, TF's golden outputs on
N_GOLDEN held-out inputs, TF's float .tflite and op list, calibration inputs, TF's int8
conversion's SQNR per output) and is tested by tests/models/test_real_world.py and
tests/models/test_beyond_cnn.py:

* misc_ops: tf.math.cumsum (exclusive, reverse), tf.math.top_k, tf.one_hot, tf.math.floormod,
  tf.reverse, tf.nn.local_response_normalization, tf.math.is_finite, tf.broadcast_to,
  tf.math.argmin; one float output each (indices go through a one-hot), tf.compat.v1 graph
  mode with constant weights.
* misc_logsumexp: tf.math.reduce_logsumexp (with and without keepdims). Its tf_ops.json
  names no family (see _logsumexp_body): tests/models/test_real_world.py runs its float
  file, tests/models/test_misc_models.py its int8 file.
* misc_div: x / c for c = 2, 3, 0.1, -7, a per-channel vector and a per-channel vector of
  powers of two (TF divides by a constant as x * (1 / c): converter/passes/div_to_mul.py).
* misc_qat: a quantization-aware graph (FakeQuant on the input, on activations -- Vars and
  Args, 8 bits -- and on weights: per channel narrow-range for the conv, per tensor for the
  dense layer), whose float conversion keeps TF's quantize-dequantize
  (converter/lower/fake_quant.py).
"""

from __future__ import annotations

from .real_world import Built, Spec  # first: sets TF_USE_LEGACY_KERAS
from .beyond import finish_beyond
from .common import MODELS_DIR, SEED, SESSION_CONFIG, np, tf, write_json
from .op_zoo import _const, _freeze_session_graph, _Outputs

N_GOLDEN = 16
N_CALIB = 32
NOTES = {"built_with": "tf.compat.v1 graph mode, constant weights "
                       "(models/builders/zoo_misc.py)"}


def _inputs(seed: int, shape, scale=1.5):
    rng = np.random.RandomState(seed)
    golden = rng.normal(0, scale, (N_GOLDEN, *shape)).astype(np.float32)
    calib = rng.normal(0, scale, (N_CALIB, *shape)).astype(np.float32)
    return golden, calib


def _graph_model(name: str, seed: int, shape, body, expect_ops, scale=1.5):
    """A one-input graph: body(x, out, rng) names its outputs with out(tensor, name)."""
    rng = np.random.RandomState(seed)
    graph = tf.Graph()
    out = _Outputs(graph)
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [None, *shape], name="x")
        with tf.compat.v1.name_scope("ops"):
            body(x, out, rng)
        with tf.compat.v1.Session(graph=graph, config=SESSION_CONFIG) as sess:
            gd = _freeze_session_graph(graph, sess, out.names)
    golden, calib = _inputs(seed + 1, shape, scale)
    built = Built(gd, {"x": ([None, *shape], "float32")}, out.names, {"x": golden},
                  expect_ops=expect_ops, notes=NOTES)
    return Spec(name, lambda: built), built, {"x": calib}


def _ops_body(x, out, rng):
    """x [B, 8, 16]; each op reads its own x * w + b (so one op's range never widens
    another's)."""
    def h():
        return x * _const(rng, [16], 1.0) + _const(rng, [16], 0.2)

    out(tf.math.cumsum(h(), axis=1, exclusive=True, reverse=True), "cumsum_excl_rev")
    out(tf.math.cumsum(h(), axis=2), "cumsum")
    values, indices = tf.math.top_k(x, k=4)  # on the input: the same int8 values as TF's
    out(values * _const(rng, [4], 1.0), "top_k")
    out(tf.one_hot(indices[..., 0], 16, on_value=2.0, off_value=-1.0), "one_hot")
    out(tf.math.floormod(h(), 1.5), "floormod")
    out(tf.reverse(h(), axis=[1]) * _const(rng, [16], 1.0), "reverse")
    img = tf.reshape(h(), [-1, 2, 4, 16])
    # AlexNet's alpha: LiteRT's reference LRN kernel sums channels [c - r, c + r) instead of
    # [c - r, c + r] (local_response_norm.cc / reference_ops); with a small alpha that
    # missing term stays below int8's noise in the reference runtime
    out(tf.nn.local_response_normalization(img, depth_radius=2, bias=1.0, alpha=1e-3,
                                           beta=0.75), "lrn")
    v = h()
    logs = tf.math.log(v)  # NaN where v < 0
    out(tf.where(tf.math.is_finite(logs), v, -2.0 * v), "is_finite")
    w = h()
    out(tf.broadcast_to(w[:, :1, :], tf.shape(w)) * _const(rng, [8, 16], 1.0), "broadcast_to")
    am = tf.math.argmin(h(), axis=2, output_type=tf.int32)
    out(tf.one_hot(am, 16) * 3.0, "argmin")


def _logsumexp_body(x, out, rng):
    """x [B, 8, 16]: log(sum(exp(x - max))) + max, TF's spelling (with IsFinite on the max).
    Not in the "misc" family: LiteRT's reference SUM kernel reads int8 data as uint8
    (interpreter/kernels/reduce.py), so no int8 file -- TF's included -- computes it in
    LiteRT's reference runtime; tests/models/test_misc_models.py runs its int8 file."""
    h = x * _const(rng, [16], 1.0) + _const(rng, [16], 0.2)
    out(tf.math.reduce_logsumexp(h, axis=2), "logsumexp")
    out(tf.math.reduce_logsumexp(h * 0.5, axis=1, keepdims=True), "logsumexp_keepdims")


def _div_body(x, out, rng):
    """x [B, 4, 16]."""
    out(tf.math.truediv(x, 2.0), "div_2")
    out(tf.math.truediv(x, 3.0), "div_3")
    out(tf.math.truediv(x, 0.1), "div_0_1")
    out(tf.math.truediv(x, -7.0), "div_neg7")
    out(tf.math.truediv(x, tf.constant(rng.uniform(0.5, 3.0, 16).astype(np.float32))),
        "div_channels")
    pow2 = (2.0 ** rng.randint(-3, 4, 16)).astype(np.float32)
    out(tf.math.truediv(x, tf.constant(pow2)), "div_channels_pow2")


def _fq(t, lo, hi, name):
    return tf.quantization.fake_quant_with_min_max_vars(
        t, tf.constant(lo, tf.float32), tf.constant(hi, tf.float32), name=name)


def _qat_body(x, out, rng):
    """x [B, 6, 6, 3]: FakeQuant'd input, conv (per-channel narrow weights) + relu6, dense."""
    xq = tf.quantization.fake_quant_with_min_max_args(x, -3.0, 3.0, name="input_quant")
    w = rng.normal(0, 0.4, (3, 3, 3, 8)).astype(np.float32)
    wmax = np.abs(w).max(axis=(0, 1, 2))
    wq = tf.quantization.fake_quant_with_min_max_vars_per_channel(
        tf.constant(w), tf.constant(-wmax), tf.constant(wmax), narrow_range=True,
        name="conv_wq")
    conv = tf.nn.conv2d(xq, wq, 1, "SAME") + _const(rng, [8], 0.2)
    act = _fq(tf.nn.relu6(conv), 0.0, 6.0, "conv_aq")
    pooled = tf.nn.avg_pool2d(act, 2, 2, "VALID")
    flat = tf.reshape(pooled, [-1, 3 * 3 * 8])
    d = rng.normal(0, 0.3, (72, 10)).astype(np.float32)
    dq = tf.quantization.fake_quant_with_min_max_vars(
        tf.constant(d), tf.constant(float(d.min())), tf.constant(float(d.max())),
        narrow_range=True, name="dense_wq")
    logits = tf.matmul(flat, dq) + _const(rng, [10], 0.1)
    out(_fq(logits, -8.0, 8.0, "logits_q"), "logits")
    side = tf.quantization.fake_quant_with_min_max_args(conv * 0.5 - 0.25, -4.0, 2.0,
                                                        name="side_q")
    out(tf.reduce_mean(side, axis=[1, 2]), "side")


def main() -> None:
    tf.compat.v1.set_random_seed(SEED)
    models = [
        _graph_model("misc_ops", SEED + 1600, (8, 16), _ops_body, (
            "Cumsum", "TopKV2", "OneHot", "FloorMod", "ReverseV2", "LRN", "IsFinite",
            "BroadcastTo", "ArgMin", "Log")),
        _graph_model("misc_div", SEED + 1610, (4, 16), _div_body, ("RealDiv",)),
        _graph_model("misc_qat", SEED + 1620, (6, 6, 3), _qat_body, (
            "FakeQuantWithMinMaxArgs", "FakeQuantWithMinMaxVars",
            "FakeQuantWithMinMaxVarsPerChannel")),
    ]
    for spec, built, calib in models:
        print(spec.name)
        finish_beyond(spec, built, "misc", calib)
    spec, built, calib = _graph_model("misc_logsumexp", SEED + 1630, (8, 16), _logsumexp_body,
                                      ("Max", "Exp", "Sum", "Log", "IsFinite"))
    print(spec.name)
    finish_beyond(spec, built, "misc", calib)
    _drop_family(spec.name, "LiteRT's reference SUM kernel reads int8 data as uint8")


def _drop_family(name: str, why: str) -> None:
    """Keep the model out of tests/models/test_beyond_cnn.py (its int8 file cannot meet the
    bar in LiteRT's reference runtime for a reason outside the converter)."""
    import json

    path = MODELS_DIR / f"{name}.tf_ops.json"
    info = json.loads(path.read_text())
    info["family_excluded"] = {"family": info.pop("family"), "why": why}
    write_json(path, info)


if __name__ == "__main__":
    main()
