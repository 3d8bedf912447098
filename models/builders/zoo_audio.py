"""Issue 16, audio front ends (family "audio"): tf.signal spectrograms as small frozen graphs
with TensorFlow's own goldens, written by builders/beyond.py's finish_beyond.

Run from the repo root (TensorFlow is only in the threads venv):

    /work/wt/threads/.venv/bin/python -m models.builders.zoo_audio

The waveforms are synthetic and deterministic (no downloads): 88 ms at 8 kHz (704
samples) of linear chirps, sums of tones and white noise at varying loudness -- the
calibration set covers the same kinds, louder and quieter than the golden one.

* aud_logmel: waveform [batch, 704] -> tf.signal.stft(frame 128, step 64, fft 128; Hann
  window) -> |.| -> matmul by tf.signal.linear_to_mel_weight_matrix (20 bins, 60..3800 Hz)
  -> log(x + 1e-6): the log-mel spectrogram [batch, 10, 20] (output "logmel"), and a small
  Dense head on its frame mean (output "logits", tanh), so int8 has a classifier-like
  output too. TF's converter writes RFFT2D / COMPLEX_ABS builtins; its GraphDef holds RFFT,
  ComplexAbs and, inside the constant mel matrix, BroadcastArgs.
* aud_mfcc: the log-mel with 32 bins and log(x + 1) -> tf.signal.mfccs_from_log_mel_spectrograms,
  first 13 coefficients (output "mfcc") and a Dense head on their frame mean ("logits").
  The DCT is Real(StridedSlice(RFFT(x, 64)) * twiddles): TF's converter needs Flex for the
  complex StridedSlice / Mul; edgelite writes builtins (the slices and products on the
  real and imaginary parts: converter/lower/spectral.py).
* aud_mfcc20: the same with 20 mel bins: the DCT's RFFT is 40 long, which TFLite's RFFT2D
  cannot take; edgelite writes it as two constant DFT matrices (FULLY_CONNECTED).

Int8 and the log: LOG's input (mel energies) is quantized on one linear grid, so energies
below a step become 0 and their log -13.8 (log 1e-6): aud_logmel's int8 log-mel has an SQNR
of ~3 dB in TF's int8 file as in edgelite's. aud_mfcc's log(x + 1) keeps small energies
near 0 instead (27 dB; TF cannot write an int8 file for it, so the bar is 25 dB).
"""

from __future__ import annotations

from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

from .beyond import build_all
from .real_world import Built, np, tf

SEED = 1716
RATE = 8000
SAMPLES = 704    # 88 ms: 10 frames; 32 calibration waveforms stay under 100 KB
FRAME, STEP, FFT = 128, 64, 128
MELS = 20
UNITS = 6
MFCC_MELS, COEFFS = 32, 13
N_GOLDEN, N_CALIB = 16, 32


def waveforms(rng: np.random.RandomState, n: int, loud: tuple = (0.05, 0.8),
              samples: int = SAMPLES) -> np.ndarray:
    """[n, samples] float32: by index, a chirp (100 Hz .. 3.6 kHz, up or down), two or three
    tones, or band-limited noise; each with a little white noise, at a random level."""
    t = np.arange(samples) / RATE
    out = np.empty((n, samples))
    for i in range(n):
        kind = i % 3
        if kind == 0:
            f0, f1 = rng.uniform(100, 3600, 2)
            phase = 2 * np.pi * (f0 * t + (f1 - f0) * t * t / (2 * t[-1]))
            x = np.sin(phase)
        elif kind == 1:
            freqs = rng.uniform(150, 3500, rng.randint(2, 4))
            x = sum(np.sin(2 * np.pi * f * t + rng.uniform(0, 6.3)) for f in freqs) / len(freqs)
        else:
            x = np.convolve(rng.randn(samples), np.ones(4) / 4, "same")  # low-passed noise
        x = x + 0.02 * rng.randn(samples)
        out[i] = x * rng.uniform(*loud) / max(np.abs(x).max(), 1e-9)
    return out.astype(np.float32)


def _freeze(fn, specs: list):
    concrete = tf.function(fn, input_signature=specs).get_concrete_function()
    return convert_variables_to_constants_v2(concrete).graph.as_graph_def()


def _log_mel(wave, mels: int = MELS, offset: float = 1e-6):
    spec = tf.abs(tf.signal.stft(wave, FRAME, STEP, FFT))
    mel = tf.signal.linear_to_mel_weight_matrix(mels, FFT // 2 + 1, RATE, 60.0, 3800.0)
    return tf.math.log(tf.matmul(spec, mel) + offset)


def _with_head(rng, features, width: int, name: str, expect: tuple, centre: float = 0.0):
    """features(wave) -> [batch, frames, width] (output `name`) and a Dense + tanh head on
    its frame mean (output "logits"); the golden and calibration waveforms."""
    w = tf.constant((rng.randn(width, UNITS) / np.sqrt(width) / 3).astype(np.float32))
    # the bias centres the head's inputs (log energies around -6: +6 on every mean)
    b = tf.constant((rng.randn(UNITS) * 0.1 + centre * w.numpy().sum(0)).astype(np.float32))
    outs = [name, "logits"]

    def fn(wave):
        f = features(wave)
        pooled = tf.reduce_mean(f, axis=1)
        return [tf.identity(f, name=outs[0]), tf.tanh(tf.matmul(pooled, w) + b, name=outs[1])]

    gd = _freeze(fn, [tf.TensorSpec((None, SAMPLES), tf.float32, name="wave")])
    golden = {"wave": waveforms(rng, N_GOLDEN)}
    calib = {"wave": waveforms(rng, N_CALIB, loud=(0.02, 1.0))}
    return Built(gd, {"wave": ((None, SAMPLES), "float32")}, outs, golden,
                 expect_ops=expect), calib


def logmel(rng):
    return _with_head(rng, _log_mel, MELS, "logmel", ("RFFT", "ComplexAbs", "BroadcastArgs"),
                      centre=6.0)


def mfcc(mels: int):
    """MFCCs of `mels` bins: the DCT's RFFT is 2 * mels long -- 64, a power of two as
    TFLite's RFFT2D needs, or 40, which edgelite computes as DFT matrices."""
    def features(wave):
        lm = _log_mel(wave, mels, offset=1.0)
        return tf.signal.mfccs_from_log_mel_spectrograms(lm)[..., :COEFFS]

    def build(rng):
        return _with_head(rng, features, COEFFS, "mfcc", ("RFFT", "Complex", "Real"))
    return build


MODELS = {
    "aud_logmel": logmel,
    "aud_mfcc": mfcc(MFCC_MELS),
    "aud_mfcc20": mfcc(MELS),
}


def main(names=None) -> int:
    return build_all(MODELS, "audio", SEED, names)


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
