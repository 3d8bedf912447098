"""Models whose shapes are computed at run time (issue 14), built by TensorFlow's converter.

Run from the repository root (dev only, needs TensorFlow; deterministic: fixed seeds,
single-threaded TF)::

    /work/wt/threads/.venv/bin/python models/builders/zoo_shapes.py

Writes into models/:

* ``shape_audio.tf.tflite`` / ``shape_audio.tf_int8.tflite``: a waveform [batch, time]
  (input signature [None, None], so shape_signature is [-1, -1]) padded with zeros to
  whole frames of 16 samples (a PAD whose paddings come from ``tf.shape``) and cut into
  frames by reshapes whose shapes come from ``tf.shape`` (SHAPE -> STRIDED_SLICE ->
  PACK -> RESHAPE chains), a conv1d and a dense layer over the frames, reshaped back to
  [batch, -1]. The int8 file is full-integer (int8 input / output), calibrated at
  shape [1, 160].
* ``shape_values.tf.tflite`` / ``shape_values.tf_int8.tflite``: outputs whose shapes
  depend on the *values* of an int32 input ``n`` (RESHAPE, FILL, RANGE, TILE, BROADCAST_TO, SLICE, PAD, STRIDED_SLICE);
  the int8 file (int8 x and outputs, calibrated with n = 3; no TILE, which LiteRT has
  no int8 kernel for, and no float RANGE) keeps n int32.
* ``shape_*.golden.npz``: TF's own outputs for the inputs the tests use (keys
  ``<case>/<input or output name>``).
"""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
os.environ.setdefault("PYTHONHASHSEED", "0")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

MODELS = Path(__file__).resolve().parent.parent
SEED = 1414
FRAME = 16

tf.get_logger().setLevel("ERROR")
tf.config.threading.set_intra_op_parallelism_threads(1)
tf.config.threading.set_inter_op_parallelism_threads(1)
tf.config.experimental.enable_op_determinism()

# (batch, time) of the waveforms the goldens hold
AUDIO_SHAPES = ((1, 160), (2, 50), (3, 321))
# values of n for shape_values
VALUE_CASES = (1, 3, 4)


def _audio_function():
    rng = np.random.default_rng(SEED)
    conv_w = tf.constant(rng.normal(0, 0.3, (3, FRAME, 8)).astype(np.float32))
    conv_b = tf.constant(rng.normal(0, 0.1, (8,)).astype(np.float32))
    dense_w = tf.constant(rng.normal(0, 0.4, (8, 4)).astype(np.float32))
    dense_b = tf.constant(rng.normal(0, 0.1, (4,)).astype(np.float32))

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.float32, name="wave")])
    def audio(wave):
        batch, time = tf.shape(wave)[0], tf.shape(wave)[1]
        pad = (-time) % FRAME  # zeros up to whole frames (the file's [1, 1] allocates too)
        wave = tf.pad(wave, tf.stack([tf.stack([0, 0]), tf.stack([0, pad])]))
        frames = tf.reshape(wave, tf.stack([batch, (time + pad) // FRAME, FRAME]))
        h = tf.nn.relu(tf.nn.conv1d(frames, conv_w, 1, "SAME") + conv_b)
        n = tf.shape(h)[1]
        flat = tf.reshape(h, tf.stack([batch * n, 8]))
        d = tf.tanh(tf.matmul(flat, dense_w) + dense_b)
        d = tf.reshape(d, tf.stack([batch, n, 4]))
        return {"features": tf.reshape(d, tf.stack([batch, -1]))}

    return audio


def _values_function(tile: bool = True):
    @tf.function(input_signature=[tf.TensorSpec([12], tf.float32, name="x"),
                                  tf.TensorSpec([], tf.int32, name="n")])
    def values(x, n):
        row = tf.reshape(x, [1, 12])
        outputs = {
            "reshaped": tf.reshape(x, tf.stack([n, -1])),
            "filled": tf.fill(tf.stack([n, 3]), 2.5),
            "ranged": tf.range(n),
            "franged": tf.range(tf.cast(n, tf.float32) * 0.5, 4.0, 0.5),
            "tiled": tf.tile(row, tf.stack([n, 1])),
            "broadcast": tf.broadcast_to(row, tf.stack([n, 12])),
            "sliced": tf.slice(x, [1], tf.reshape(n, [1])),
            "padded": tf.pad(row, tf.reshape(tf.stack([0, 0, n, 1]), [2, 2])),
            "strided": x[n:],
        }
        if not tile:  # LiteRT has no int8 TILE (version 3); the float RANGE quantizes a
            del outputs["tiled"], outputs["franged"]  # scalar, which stays float here
        return outputs

    return values


def _convert(fn, int8_calib=None):
    module = tf.Module()
    module.serve = fn  # a trackable object: the file gets a "serving_default" signature
    conv = tf.lite.TFLiteConverter.from_concrete_functions([fn.get_concrete_function()],
                                                           module)
    if int8_calib is not None:
        calib = int8_calib(np.random.default_rng(SEED + 1))
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.representative_dataset = lambda: iter(calib)
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        conv.inference_input_type = tf.int8
        conv.inference_output_type = tf.int8
    return conv.convert()


def _write(name: str, data: bytes) -> None:
    (MODELS / name).write_bytes(data)
    print(f"wrote models/{name} ({len(data)} bytes)")


def main() -> None:
    rng = np.random.default_rng(SEED + 2)
    audio = _audio_function()
    _write("shape_audio.tf.tflite", _convert(audio))
    _write("shape_audio.tf_int8.tflite", _convert(audio, lambda rng: [
        [rng.normal(0, 1, (1, 160)).astype(np.float32)] for _ in range(16)]))
    golden = {}
    for b, t in AUDIO_SHAPES:
        wave = rng.normal(0, 1, (b, t)).astype(np.float32)
        golden[f"{b}x{t}/wave"] = wave
        golden[f"{b}x{t}/features"] = audio(tf.constant(wave))["features"].numpy()
    np.savez_compressed(MODELS / "shape_audio.golden.npz", **golden)

    values = _values_function()
    _write("shape_values.tf.tflite", _convert(values))
    _write("shape_values.tf_int8.tflite", _convert(_values_function(tile=False), lambda rng: [
        [rng.normal(0, 1, (12,)).astype(np.float32), np.array(3, np.int32)]
        for _ in range(16)]))
    golden = {}
    x = rng.normal(0, 1, (12,)).astype(np.float32)
    for n in VALUE_CASES:
        golden[f"{n}/x"] = x
        golden[f"{n}/n"] = np.array(n, np.int32)
        for key, value in values(tf.constant(x), tf.constant(n, tf.int32)).items():
            golden[f"{n}/{key}"] = value.numpy()
    np.savez_compressed(MODELS / "shape_values.golden.npz", **golden)


if __name__ == "__main__":
    main()
