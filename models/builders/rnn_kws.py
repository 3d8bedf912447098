"""kws_stream: a streaming keyword spotter in the style of microWakeWord (models/build_rnn.py;
dev-only, needs TensorFlow).

One call takes ONE new feature frame x [1, 1, 10] (e.g. 10 mel energies) and returns class
probabilities [1, 4].  Each of the two temporal conv layers keeps the last KERNEL inputs it
saw in a resource variable (a ring buffer, shifted by one frame per call): the call
concatenates the buffer's newest KERNEL - 1 frames with the new one, assigns that back, and
convolves the KERNEL frames to one output frame.  Dense + softmax at the end.  Weights are
seeded random constants; only the buffers are variables, zero-initialised.

TF's converter (from_saved_model, experimental_enable_resource_variables) writes the
buffers as VAR_HANDLE / READ_VARIABLE / ASSIGN_VARIABLE with a CALL_ONCE'd init subgraph
that assigns their zeros; the int8 file (_experimental_variable_quantization, as
microWakeWord converts) also has int8 input and output.
"""

from __future__ import annotations

import tempfile

from .common import MODELS_DIR, interpreter, np, tf, write_npz
from .rnn import seeded_rng
from .rnn_tflite import convert_in_subprocess, keep, rel_err, sqnr_db

NAME = "kws_stream"
FEATURES, KERNEL, CH1, CH2, CLASSES = 10, 3, 12, 12, 4
N_FRAMES = 16  # golden invokes (>= 12); the first 3 frames are the same frame
N_CALIB = 48  # representative frames, fed in order (the calibrator keeps the state too)


class StreamingKws(tf.Module):
    def __init__(self):
        super().__init__(name="kws_stream")
        rng = seeded_rng(f"{NAME}/weights")
        # conv kernels as [KERNEL, 1, in, out] (Conv2D over time with width 1)
        self.k1 = tf.constant(rng.normal(0, 0.5, (KERNEL, 1, FEATURES, CH1)).astype(np.float32))
        self.b1 = tf.constant(rng.normal(0, 0.2, (CH1,)).astype(np.float32))
        self.k2 = tf.constant(rng.normal(0, 0.4, (KERNEL, 1, CH1, CH2)).astype(np.float32))
        self.b2 = tf.constant(rng.normal(0, 0.2, (CH2,)).astype(np.float32))
        self.wd = tf.constant(rng.normal(0, 0.5, (CH2, CLASSES)).astype(np.float32))
        self.bd = tf.constant(rng.normal(0, 0.2, (CLASSES,)).astype(np.float32))
        self.buf1 = tf.Variable(tf.zeros([1, KERNEL, 1, FEATURES]), trainable=False,
                                name="stream1_buffer")
        self.buf2 = tf.Variable(tf.zeros([1, KERNEL, 1, CH1]), trainable=False,
                                name="stream2_buffer")

    @staticmethod
    def _stream_conv(buf, frame, kernel, bias):
        """Ring buffer: keep the newest KERNEL frames, convolve them to one frame."""
        window = tf.concat([buf[:, 1:], frame], axis=1)
        buf.assign(window)
        y = tf.nn.conv2d(window, kernel, strides=1, padding="VALID") + bias
        return tf.nn.relu(y)

    @tf.function(input_signature=[tf.TensorSpec([1, 1, FEATURES], tf.float32, name="frame")])
    def __call__(self, frame):
        h = self._stream_conv(self.buf1, frame[:, :, None, :], self.k1, self.b1)
        h = self._stream_conv(self.buf2, h, self.k2, self.b2)
        logits = tf.matmul(tf.reshape(h, [1, CH2]), self.wd) + self.bd
        return tf.nn.softmax(logits)


def frames(n: int, offset: int) -> np.ndarray:
    """n feature frames [n, 1, 1, 10]; frames 0-2 of the golden sequence are one frame."""
    x = seeded_rng(f"{NAME}/frames/{offset}").uniform(-1.0, 1.0, (n, 1, 1, FEATURES))
    if offset == 0:
        x[1:3] = x[0]
    return x.astype(np.float32)


def kws_converter(mode: str, saved_dir: str | None = None):
    module = StreamingKws()
    saved_dir = saved_dir or tempfile.mkdtemp(prefix="kws_stream_")
    tf.saved_model.save(module, saved_dir,
                        signatures=module.__call__.get_concrete_function())
    conv = tf.lite.TFLiteConverter.from_saved_model(saved_dir)
    conv.experimental_enable_resource_variables = True
    if mode != "float":
        calib = frames(N_CALIB, 1)
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.representative_dataset = lambda: ([calib[i]] for i in range(N_CALIB))
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        conv._experimental_variable_quantization = True  # int8 buffers (microWakeWord)
        conv.inference_input_type = tf.int8
        conv.inference_output_type = tf.int8
    return conv


def tf_reference(x: np.ndarray) -> np.ndarray:
    module = StreamingKws()
    return np.stack([module(tf.constant(f)).numpy()[0] for f in x])


def litert_stream(model: bytes, x: np.ndarray) -> dict:
    """LiteRT over the sequence; again after reset_all_variables(); again in a new interpreter.

    LiteRT's reset_all_variables() zeroes variable *tensors* (is_variable) only: the resource
    variables keep their values and CALL_ONCE does not run its init subgraph again, so the
    pass after the reset continues from the state the first pass left (recorded as is: it is
    what "as in tf.lite.Interpreter" means).  A new interpreter starts from zeros."""
    def passes(interp, n):
        (inp,), (out,) = interp.get_input_details(), interp.get_output_details()
        fed = _quantize(x, inp)
        res = []
        for _ in range(n):
            ys = []
            for f in fed:
                interp.set_tensor(inp["index"], f)
                interp.invoke()
                ys.append(interp.get_tensor(out["index"])[0].copy())
            res.append(np.stack(ys))
            interp.reset_all_variables()
        return fed, res, inp, out

    fed, (y, after_reset), inp, out = passes(interpreter(model, "builtin"), 2)
    _, (fresh,), _, _ = passes(interpreter(model, "builtin"), 1)
    assert np.array_equal(y, fresh), "LiteRT: a new interpreter does not repeat the outputs"
    assert not np.array_equal(y[0], y[1]) and not np.array_equal(y[1], y[2]), \
        "the state does not persist: the same frame gave the same output"
    deq = y.astype(np.float32)
    if out["dtype"] != np.float32:
        scale, zp = out["quantization"]
        deq = ((y.astype(np.float64) - zp) * scale).astype(np.float32)
    return {"fed": fed, "raw": y, "after_reset": after_reset, "float": deq,
            "reset_restarts": bool(np.array_equal(after_reset, y)),
            "io": {"input": _io(inp), "output": _io(out)}}


def _quantize(x: np.ndarray, detail: dict) -> np.ndarray:
    if detail["dtype"] == np.float32:
        return x
    scale, zp = detail["quantization"]
    return np.clip(np.round(x / scale) + zp, -128, 127).astype(detail["dtype"])


def _io(d: dict) -> dict:
    return {"name": d["name"], "dtype": d["dtype"].__name__,
            "quantization": [float(v) for v in d["quantization"]]}


def build_kws() -> dict:
    print(f"{NAME}: streaming keyword spotter, one [1, 1, 10] frame per invoke")
    x = frames(N_FRAMES, 0)
    ref = tf_reference(x)
    arrays = {"frame": x, "output": ref}
    entry = {"description": __doc__.split("\n\n")[1].replace("\n", " "),
             "inputs": [{"name": "frame", "shape": [1, 1, FEATURES], "dtype": "float32"}],
             "outputs": ["output"], "golden": f"{NAME}.golden.npz",
             "golden_invokes": N_FRAMES, "tflite": {}, "tf_failures": {}}
    with tempfile.TemporaryDirectory() as tmp:
        float_bytes = kws_converter("float", tmp).convert()
    results = {"tf_float": (float_bytes, ""), "tf_int8": convert_in_subprocess(NAME, "int8")}
    for suffix, (data, why) in results.items():
        fname = f"{NAME}.{suffix}.tflite"
        if not keep(entry, fname, data, why):
            continue
        run = litert_stream(data, x)
        arrays[f"litert_{suffix}"] = run["raw"]
        arrays[f"litert_{suffix}_after_reset"] = run["after_reset"]
        info = {"source": "tf.lite.TFLiteConverter.from_saved_model, resource variables, "
                + ("float" if suffix == "tf_float" else "int8 (variables too), int8 I/O"),
                "io": run["io"], "litert_reset_all_variables_restarts": run["reset_restarts"]}
        if suffix == "tf_float":
            err = rel_err(run["float"], ref)
            assert err <= 1e-4, f"{fname}: LiteRT vs TF {err:.2e}"
            info["litert_rel_err"] = float(np.float32(err))
        else:
            arrays[f"litert_{suffix}_x"] = run["fed"]
            info["sqnr_db"] = round(sqnr_db(run["float"], ref), 2)
        entry["tflite"][fname] = info
        print(f"  {fname}: {len(data)} bytes, {info.get('litert_rel_err', info.get('sqnr_db'))}")
    write_npz(MODELS_DIR / f"{NAME}.golden.npz", **arrays)
    return entry


__all__ = ["build_kws", "kws_converter"]
