"""Issue 25 (second wave), op counts and ADD / SUB: Keras Conv1D stacks and a DS-CNN keyword
spotter (family "audio"), whose bias, batch norm, activation and Flatten TensorFlow's converter
folds away, and an IsFinite graph (family "misc"), whose int8 SUB TF writes with an output
multiplier above 1. Written by builders/beyond.py's finish_beyond (frozen .pb, TF's goldens,
TF's float .tflite and op list, calibration inputs, TF's int8 op list and SQNR); tested by
tests/models/test_real_world.py, test_beyond_cnn.py and test_conv1d_models.py.

Run from the repository root (dev only, needs TensorFlow; deterministic: fixed seeds,
single-threaded TF)::

    python -m models.builders.zoo_conv1d [names...]

The inputs are builders/zoo_audio.py's synthetic waveforms (chirps, tones, noise at 8 kHz;
no downloads) and their log-mel spectrograms; each network is trained for a few epochs to
tell the three kinds apart, so its activations look like a trained model's.

* aud_conv1d: log-mel [32 frames, 16 bins] -> Conv1D 24 k3 same relu -> Conv1D 24 k3 stride 2
  valid relu6 -> MaxPool1D 2 -> Conv1D 32 k3 dilation 2 same, no bias -> BatchNorm -> ReLU ->
  AveragePooling1D 2 -> Conv1D 32 k1 (linear) -> GlobalAveragePooling1D -> Dense 3.
* aud_conv1d_wave: waveform [704, 1] -> Conv1D 8 k9 stride 4 valid relu -> Conv1D 16 k5
  stride 2 same (bias) -> BatchNorm -> ReLU -> MaxPool1D 2 -> Conv1D 16 k3 dilation 2 relu6 ->
  GlobalAveragePooling1D -> Dense 3.
* aud_conv1d_sep: log-mel [32, 16] -> SeparableConv1D 16 k3 relu -> Conv1D 16 k3 stride 2 relu
  -> Conv1DTranspose 16 k3 stride 2 relu -> Conv1D 16 k1 no bias -> BatchNorm -> relu6 ->
  GlobalAveragePooling1D -> Dense 3.
* aud_dscnn: log-mel [49 frames, 10 bins, 1] -> Conv2D 32 (10, 4) stride 2 -> BN -> ReLU ->
  2 x (DepthwiseConv2D 3x3 -> BN -> ReLU -> Conv2D 32 1x1 -> BN -> ReLU) ->
  AveragePooling2D (25, 5) -> Flatten -> Dense 3 -> softmax (Hello Edge's DS-CNN, smaller).
* misc_isfinite: x [8] -> Dense 6 -> where(is_finite(h), h, 0) -> tanh. TF's int8 file
  (kept: misc_isfinite.tf_int8.tflite) writes IsFinite as SUB(h, h) with output scale
  7.8e-9 -- an output multiplier of ~14 -- and EQUAL.
"""

from __future__ import annotations

from .real_world import Built, Spec  # first: sets TF_USE_LEGACY_KERAS
from .beyond import build_all, finish_beyond
from .common import (MODELS_DIR, atomic_write, calibrate_batchnorm, freeze_keras, keras, np,
                     rename_node, seed_everything, tf, v1_converter)
from .zoo_audio import RATE, waveforms
from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

SEED = 2525
N_TRAIN, N_GOLDEN, N_CALIB = 240, 16, 24
EPOCHS = 12
L = keras.layers


def log_mel(wave: np.ndarray, frames: int, mels: int) -> np.ndarray:
    """[n, frames, mels] log-mel spectrogram (frame 128, step 64 at 8 kHz)."""
    spec = tf.abs(tf.signal.stft(wave, 128, 64, 128))[:, :frames]
    mel = tf.signal.linear_to_mel_weight_matrix(mels, 65, RATE, 60.0, 3800.0)
    return np.log(np.matmul(spec.numpy(), mel.numpy()) + 1e-3).astype(np.float32)


def _data(rng, n: int, features, loud=(0.05, 0.8)):
    """n inputs and their kinds (chirp, tones, noise: waveforms' order)."""
    x = features(waveforms(rng, n, loud, samples=64 * 48 + 128))
    return x, np.arange(n) % 3


def _trained(rng, model, features, logits: bool = True) -> tuple:
    """Train `model` briefly on the three kinds; (frozen Built, calibration inputs)."""
    x, y = _data(rng, N_TRAIN, features)
    model.compile(keras.optimizers.Adam(3e-3),
                  keras.losses.SparseCategoricalCrossentropy(from_logits=logits))
    model.fit(x, y, epochs=EPOCHS, batch_size=16, verbose=0, shuffle=True)
    calibrate_batchnorm(model, x)
    shape = (None,) + tuple(model.input_shape[1:])
    gd = freeze_keras(model, {"x": (shape, tf.float32)}, "y")
    golden, _ = _data(rng, N_GOLDEN, features)
    calib, _ = _data(rng, N_CALIB, features, loud=(0.02, 1.0))
    built = Built(gd, {"x": (shape, "float32")}, ["y"], {"x": golden},
                  notes={"built_with": "tf-keras, trained (models/builders/zoo_conv1d.py)"})
    return built, {"x": calib}


def conv1d_mel(rng):
    seed_everything(SEED)
    x = keras.Input((32, 16))
    h = L.Conv1D(24, 3, padding="same", activation="relu")(x)
    h = L.Conv1D(24, 3, strides=2, padding="valid", activation="relu6")(h)
    h = L.MaxPool1D(2)(h)
    h = L.Conv1D(32, 3, dilation_rate=2, padding="same", use_bias=False)(h)
    h = L.ReLU()(L.BatchNormalization()(h))
    h = L.AveragePooling1D(2, padding="same")(h)
    h = L.Conv1D(32, 1)(h)
    y = L.Dense(3)(L.GlobalAveragePooling1D()(h))
    return _trained(rng, keras.Model(x, y), lambda w: log_mel(w, 32, 16))


def conv1d_wave(rng):
    seed_everything(SEED + 1)
    x = keras.Input((704, 1))
    h = L.Conv1D(8, 9, strides=4, padding="valid", activation="relu")(x)
    h = L.Conv1D(16, 5, strides=2, padding="same")(h)
    h = L.ReLU()(L.BatchNormalization()(h))
    h = L.MaxPool1D(2)(h)
    h = L.Conv1D(16, 3, dilation_rate=2, padding="same", activation="relu6")(h)
    y = L.Dense(3)(L.GlobalAveragePooling1D()(h))
    return _trained(rng, keras.Model(x, y), lambda w: w[:, :704, None] * np.float32(4.0))


def conv1d_sep(rng):
    seed_everything(SEED + 3)
    x = keras.Input((32, 16))
    h = L.SeparableConv1D(16, 3, padding="same", activation="relu")(x)
    h = L.Conv1D(16, 3, strides=2, padding="same", activation="relu")(h)
    h = L.Conv1DTranspose(16, 3, strides=2, padding="same", activation="relu")(h)
    h = L.Conv1D(16, 1, use_bias=False)(h)
    h = L.Activation("relu6")(L.BatchNormalization()(h))
    y = L.Dense(3)(L.GlobalAveragePooling1D()(h))
    return _trained(rng, keras.Model(x, y), lambda w: log_mel(w, 32, 16))


def dscnn(rng):
    seed_everything(SEED + 2)
    x = keras.Input((49, 10, 1))
    h = L.Conv2D(32, (10, 4), strides=2, padding="same", use_bias=False)(x)
    h = L.ReLU()(L.BatchNormalization()(h))
    for _ in range(2):
        h = L.DepthwiseConv2D(3, padding="same", use_bias=False)(h)
        h = L.ReLU()(L.BatchNormalization()(h))
        h = L.Conv2D(32, 1, use_bias=False)(h)
        h = L.ReLU()(L.BatchNormalization()(h))
    h = L.Flatten()(L.AveragePooling2D((25, 5))(h))
    y = L.Softmax()(L.Dense(3)(h))
    return _trained(rng, keras.Model(x, y), lambda w: log_mel(w, 49, 10)[..., None],
                    logits=False)


def isfinite(rng):
    w = tf.constant(rng.randn(8, 6).astype(np.float32))
    b = tf.constant(rng.randn(6).astype(np.float32) * 0.1)

    def fn(x):
        h = tf.matmul(x, w) + b
        return tf.tanh(tf.where(tf.math.is_finite(h), h, tf.zeros_like(h)), name="act")

    spec = [tf.TensorSpec((None, 8), tf.float32, name="x")]
    concrete = tf.function(fn, input_signature=spec).get_concrete_function()
    gd = convert_variables_to_constants_v2(concrete).graph.as_graph_def()
    rename_node(gd, "Identity", "y")  # the function's output
    built = Built(gd, {"x": ((None, 8), "float32")}, ["y"],
                  {"x": rng.randn(N_GOLDEN, 8).astype(np.float32)}, expect_ops=("IsFinite",),
                  notes={"built_with": "tf.function, constant weights "
                                       "(models/builders/zoo_conv1d.py)"})
    return built, {"x": rng.randn(N_CALIB, 8).astype(np.float32)}


def write_tf_int8(name: str, built: Built, calib: dict) -> None:
    """TF's int8 file itself (float input / output), for tests that run TF's arithmetic."""
    conv = v1_converter(MODELS_DIR / f"{name}.pb", {"x": [1, *built.inputs["x"][0][1:]]},
                        built.outputs)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.representative_dataset = lambda: ([calib["x"][i:i + 1]] for i in range(N_CALIB))
    atomic_write(MODELS_DIR / f"{name}.tf_int8.tflite", conv.convert())


AUDIO = {"aud_conv1d": conv1d_mel, "aud_conv1d_wave": conv1d_wave, "aud_dscnn": dscnn,
         "aud_conv1d_sep": conv1d_sep}


def main(names=None) -> int:
    build_all(AUDIO, "audio", SEED, names)
    if not names or "misc_isfinite" in names:
        built, calib = isfinite(np.random.RandomState(SEED + 10))
        finish_beyond(Spec("misc_isfinite", None), built, "misc", calib)
        write_tf_int8("misc_isfinite", built, calib)
    return 0


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
