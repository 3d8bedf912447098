"""Files that did not load or run (issue 25, group 4), built by TensorFlow's converter.

Run from the repository root (dev only, needs TensorFlow; deterministic: fixed seeds,
single-threaded TF)::

    /work/venv/bin/python models/builders/zoo_loadrun.py

Writes into models/:

* ``dyn_audio.tf.tflite``: an audio classifier on a waveform [batch, time] (input
  signature [None, None]): tf.signal.stft (frame 128, step 64, fft 128, Hann, pad_end) ->
  |.| -> 16 mel bins -> log -> a 3x3 conv, mean and dense head (output ``logits``), and
  the mean square of the spectrum's real part (output ``real_energy``: a CAST from
  complex64). TF
  writes the framing as SHAPE -> SPLIT_V -> CONCATENATION / RANGE / PADV2 /
  STRIDED_SLICE / RESHAPE chains, one SPLIT_V piece with zero elements and an empty
  buffer of its own.
* ``dyn_chains.tf.tflite``: x [batch, time, 4] (signature [None, None, 4]) through
  shapes computed by REDUCE_PROD, CAST and MUL, GATHER, PACK, FILL, CONCATENATION and
  RANGE of tf.shape, feeding RESHAPE / STRIDED_SLICE / GATHER / FILL (outputs ``flat``,
  ``swapped``, ``head``, ``even``, ``padded``).
* ``dyn_*.golden.npz``: TF's own outputs for the input shapes the tests use (keys
  ``<shape>/<input or output name>``, shape as ``2x300``).
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
SEED = 2504
RATE, FRAME, STEP, MELS = 8000, 128, 64, 16

tf.get_logger().setLevel("ERROR")
tf.config.threading.set_intra_op_parallelism_threads(1)
tf.config.threading.set_inter_op_parallelism_threads(1)
tf.config.experimental.enable_op_determinism()

AUDIO_SHAPES = ((1, 1000), (2, 300), (3, 64), (1, 129))
CHAIN_SHAPES = ((1, 6), (2, 9), (3, 2))


def _audio_function():
    rng = np.random.default_rng(SEED)
    mel = tf.signal.linear_to_mel_weight_matrix(MELS, FRAME // 2 + 1, RATE, 60.0, 3800.0)
    conv_w = tf.constant(rng.normal(0, 0.3, (3, 3, 1, 4)).astype(np.float32))
    dense_w = tf.constant(rng.normal(0, 0.4, (4, 3)).astype(np.float32))
    dense_b = tf.constant(rng.normal(0, 0.1, (3,)).astype(np.float32))

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.float32, name="wave")])
    def audio(wave):
        spectrum = tf.signal.stft(wave, FRAME, STEP, FRAME, pad_end=True)
        logmel = tf.math.log(tf.matmul(tf.abs(spectrum), mel) + 1e-6)
        h = tf.nn.relu(tf.nn.conv2d(tf.expand_dims(logmel, -1), conv_w, 1, "SAME"))
        logits = tf.matmul(tf.reduce_mean(h, axis=[1, 2]), dense_w) + dense_b
        real = tf.cast(spectrum, tf.float32)  # complex64 -> float32: the real part
        return {"logits": logits, "real_energy": tf.reduce_mean(real * real, axis=[1, 2])}

    return audio


def _chains_function():
    @tf.function(input_signature=[tf.TensorSpec([None, None, 4], tf.float32, name="x")])
    def chains(x):
        shape = tf.shape(x)
        batch, time = shape[0], shape[1]
        count = tf.reduce_prod(shape)  # REDUCE_PROD
        half = tf.cast(tf.cast(time, tf.float32) * 0.5, tf.int32)  # CAST, MUL, CAST
        swapped = tf.reshape(tf.transpose(x, [1, 0, 2]), tf.gather(shape, [1, 0, 2]))
        ones = tf.fill(tf.stack([batch, half + 1, 4]), 0.5)  # FILL of a PACK
        return {
            "flat": tf.reshape(x, tf.expand_dims(count, 0)) * 2.0,
            "swapped": swapped + 1.0,
            "head": x[:, :half] - 1.0,  # STRIDED_SLICE to a computed end
            "even": tf.gather(x, tf.range(0, time, 2), axis=1),  # RANGE
            "padded": tf.reshape(tf.concat([ones, x], axis=1),
                                 tf.concat([[batch], [-1]], axis=0)),
        }

    return chains


def _convert(fn) -> bytes:
    module = tf.Module()
    module.serve = fn  # a trackable object: the file gets a "serving_default" signature
    conv = tf.lite.TFLiteConverter.from_concrete_functions([fn.get_concrete_function()],
                                                           module)
    return conv.convert()


def _write(name: str, data: bytes) -> None:
    (MODELS / name).write_bytes(data)
    print(f"wrote models/{name} ({len(data)} bytes)")


def _goldens(name: str, fn, shapes, make) -> None:
    rng = np.random.default_rng(SEED + 1)
    golden = {}
    for shape in shapes:
        key = "x".join(map(str, shape))
        value = make(rng, shape)
        input_name = fn.input_signature[0].name
        golden[f"{key}/{input_name}"] = value
        for out, result in fn(tf.constant(value)).items():
            golden[f"{key}/{out}"] = result.numpy()
    np.savez_compressed(MODELS / name, **golden)
    print(f"wrote models/{name}")


def _waves(rng, shape) -> np.ndarray:
    t = np.arange(shape[1]) / RATE
    tones = np.sin(2 * np.pi * rng.uniform(200, 3000, (shape[0], 1)) * t)
    return (0.5 * tones + 0.05 * rng.normal(0, 1, shape)).astype(np.float32)


def main() -> None:
    audio, chains = _audio_function(), _chains_function()
    _write("dyn_audio.tf.tflite", _convert(audio))
    _goldens("dyn_audio.golden.npz", audio, AUDIO_SHAPES, _waves)
    _write("dyn_chains.tf.tflite", _convert(chains))
    _goldens("dyn_chains.golden.npz", chains, CHAIN_SHAPES,
             lambda rng, s: rng.normal(0, 1, (*s, 4)).astype(np.float32))


if __name__ == "__main__":
    main()
