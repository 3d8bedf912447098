"""Shared by every model builder: TensorFlow setup, file writers, freezing, TF's converter and
LiteRT runs (dev-only; needs TensorFlow).

Importing this module sets the deterministic TensorFlow configuration (environment, seeds'
defaults, single-threaded TF, op determinism) that all builds rely on for byte-identical
output; import it before anything else that imports TensorFlow.  Callers that need
``TF_USE_LEGACY_KERAS=1`` (models/build_real_world.py) set it before importing this module.
"""

from __future__ import annotations

import io
import json
import os
import random
import sys
import tempfile
import zipfile
from collections import Counter
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")  # deterministic, plain Eigen kernels
os.environ.setdefault("PYTHONHASHSEED", "0")

import numpy as np  # noqa: E402

try:
    import tensorflow as tf  # noqa: E402
    import tf_keras as keras  # noqa: E402
    from sklearn.datasets import load_digits  # noqa: E402
    from tensorflow.python.framework.convert_to_constants import (  # noqa: E402
        convert_variables_to_constants_v2,
    )
except ImportError as exc:  # pragma: no cover - dev-only scripts
    sys.exit(
        f"the model build scripts in models/ need the dev extras ({exc}).\n"
        'Install them with: pip install -e ".[dev]"'
    )

MODELS_DIR = Path(__file__).resolve().parent.parent  # models/: every output goes here
SEED = 1234
N_TRAIN = 1400  # first 1400 digits train, the remaining 397 are the held-out test set
INPUT_NAME = "input"
OUTPUT_NAME = "probs"

tf.get_logger().setLevel("ERROR")
tf.config.threading.set_intra_op_parallelism_threads(1)
tf.config.threading.set_inter_op_parallelism_threads(1)
tf.config.experimental.enable_op_determinism()

SESSION_CONFIG = tf.compat.v1.ConfigProto(
    intra_op_parallelism_threads=1, inter_op_parallelism_threads=1
)

written: list[Path] = []  # every file written by atomic_write, in order


# --------------------------------------------------------------------------- files


def seed_everything(seed: int = SEED) -> None:
    random.seed(seed)
    np.random.seed(seed)
    tf.random.set_seed(seed)
    keras.utils.set_random_seed(seed)


def atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)  # mkstemp creates 0600 files
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    if path not in written:
        written.append(path)


def npy_bytes(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.ascontiguousarray(arr), allow_pickle=False)
    return buf.getvalue()


def write_npz(path: Path, **arrays: np.ndarray) -> None:
    # np.savez stores zip entries with the current time; write the zip ourselves
    # with a fixed timestamp so rebuilding gives byte-identical files.
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for key, arr in arrays.items():
            info = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, npy_bytes(arr))
    atomic_write(path, buf.getvalue())


def write_graph(graph_def: tf.compat.v1.GraphDef, name: str, as_text: bool) -> None:
    """models/<name>: binary protobuf, or protobuf text format (tf.io.write_graph)."""
    if as_text:
        # tf.io.write_graph(as_text=True) writes protobuf text format; write to a
        # temp dir and move atomically into place.
        with tempfile.TemporaryDirectory(dir=MODELS_DIR) as tmp:
            tf.io.write_graph(graph_def, tmp, name, as_text=True)
            data = Path(tmp, name).read_bytes()
        atomic_write(MODELS_DIR / name, data)
    else:
        atomic_write(MODELS_DIR / name, graph_def.SerializeToString(deterministic=True))


def json_bytes(obj) -> bytes:
    """Indented JSON with lists of scalars (and short flat objects) kept on one line."""

    def scalar(v) -> bool:
        return not isinstance(v, (dict, list))

    def flat(o) -> bool:  # scalars, or (in an object) lists of scalars
        if isinstance(o, list):
            return all(scalar(v) for v in o)
        return all(scalar(v) or (isinstance(v, list) and flat(v)) for v in o.values())

    def enc(o, ind: str) -> str:
        if isinstance(o, (dict, list)) and (
            not o or (flat(o) and (isinstance(o, list) or len(json.dumps(o)) <= 150))
        ):
            return json.dumps(o)
        inner = ind + "  "
        if isinstance(o, dict):
            items = [f"{inner}{json.dumps(k)}: {enc(v, inner)}" for k, v in o.items()]
            return "{\n" + ",\n".join(items) + "\n" + ind + "}"
        if isinstance(o, list):
            return "[\n" + ",\n".join(inner + enc(v, inner) for v in o) + "\n" + ind + "]"
        return json.dumps(o)

    text = enc(obj, "") + "\n"
    assert json.loads(text) == obj
    return text.encode()


def write_json(path: Path, obj, compact: bool = False) -> None:
    """json.dumps(indent=2), or json_bytes' layout (scalar lists on one line) if compact."""
    data = json_bytes(obj) if compact else (json.dumps(obj, indent=2) + "\n").encode()
    atomic_write(path, data)


def print_written(total: bool = True) -> None:
    """List the files written so far (paths relative to the repository root) and sizes."""
    print("\nwrote:")
    n_bytes = 0
    for p in written:
        size = p.stat().st_size
        n_bytes += size
        print(f"  {p.relative_to(MODELS_DIR.parent)}  {size} bytes")
    if total:
        print(f"  total {n_bytes} bytes")


def as_float32(x) -> float:
    """A float32 as the exact Python float (JSON round-trips it to the same float32)."""
    return float(np.float32(x))


def op_types(graph_def: tf.compat.v1.GraphDef) -> dict[str, int]:
    return dict(sorted(Counter(n.op for n in graph_def.node).items()))


# --------------------------------------------------------------------------- data


def load_data() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """sklearn digits, [0, 1] float32 NHWC: x_train, y_train, x_test, y_test."""
    digits = load_digits()
    x = (digits.images.astype(np.float32) / np.float32(16.0)).reshape(-1, 8, 8, 1)
    y = digits.target.astype(np.int64)
    return x[:N_TRAIN], y[:N_TRAIN], x[N_TRAIN:], y[N_TRAIN:]


# --------------------------------------------------------------------------- freezing


def freeze_keras(model, input_specs: dict, output_name: str = OUTPUT_NAME):
    """Freeze a tf-keras model with convert_variables_to_constants_v2 (inference mode).

    The function's single output Identity (named "Identity") is renamed to output_name, and
    the process-global uids in IdentityN's `_gradient_op_type` attrs ("CustomGradient-<uid>",
    left by custom-gradient functions such as swish) are renumbered 1, 2, ... in node order,
    so a model's files do not depend on what else ran in the process. Nothing else is edited."""
    specs = [tf.TensorSpec(shape, dtype, name=name) for name, (shape, dtype) in input_specs.items()]

    @tf.function(input_signature=specs)
    def serve(*args):
        return model(args[0] if len(args) == 1 else list(args), training=False)

    frozen = convert_variables_to_constants_v2(serve.get_concrete_function())
    gd = frozen.graph.as_graph_def()
    (out_tensor,) = frozen.outputs
    rename_node(gd, out_tensor.op.name, output_name)
    renumber: dict = {}
    for node in gd.node:
        if "_gradient_op_type" in node.attr:
            old = node.attr["_gradient_op_type"].s.decode()
            prefix = old.rsplit("-", 1)[0]
            new = renumber.setdefault(old, f"{prefix}-{len(renumber) + 1}")
            node.attr["_gradient_op_type"].s = new.encode()
    return gd


def rename_node(gd, old: str, new: str) -> None:
    """Rename node `old` to `new`, including every (data or control) input that names it."""
    for node in gd.node:
        if node.name == old:
            node.name = new
        for i, inp in enumerate(node.input):
            ctrl = inp.startswith("^")
            base = inp.lstrip("^").split(":")[0]
            if base == old:
                node.input[i] = ("^" if ctrl else "") + new + inp.lstrip("^")[len(old) :]


def calibrate_batchnorm(model, x: np.ndarray) -> int:
    """Data-dependent BN statistics: momentum 0, ONE training-mode forward pass on x.

    Every BatchNormalization layer's moving mean / variance becomes the statistics of x at
    that layer (fused BN with exponential_avg_factor = 1 - momentum = 1; Bessel's correction
    removed).  Dropout rates are set to 0 for the pass so they do not disturb the statistics.
    Returns the number of BN layers updated."""
    bns, drops = [], []
    for layer in _all_layers(model):
        if isinstance(layer, keras.layers.BatchNormalization):
            bns.append((layer, layer.momentum))
            layer.momentum = 0.0
        elif isinstance(layer, keras.layers.Dropout):
            drops.append((layer, layer.rate))
            layer.rate = 0.0
    before = [layer.moving_variance.numpy().copy() for layer, _ in bns]
    model(tf.constant(x), training=True)
    for layer, momentum in bns:
        layer.momentum = momentum
    for layer, rate in drops:
        layer.rate = rate
    changed = sum(
        not np.allclose(b, layer.moving_variance.numpy()) for b, (layer, _) in zip(before, bns)
    )
    assert changed == len(bns), f"only {changed}/{len(bns)} BN layers got batch statistics"
    return len(bns)


def _all_layers(model):
    for layer in model.layers:
        if isinstance(layer, keras.Model):
            yield from _all_layers(layer)
        else:
            yield layer


# --------------------------------------------------------------------------- TF


def run_frozen(gd, feeds: dict, outputs: list) -> dict:
    """Run a frozen GraphDef in TensorFlow (fresh graph, one session): {output node: array}."""
    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.import_graph_def(gd, name="")
    with tf.compat.v1.Session(graph=graph, config=SESSION_CONFIG) as sess:
        res = sess.run(
            [f"{o}:0" for o in outputs], feed_dict={f"{k}:0": v for k, v in feeds.items()}
        )
    return {o: np.asarray(r) for o, r in zip(outputs, res)}


def run_frozen_probs(graph_def, x: np.ndarray) -> np.ndarray:
    """The digit CNNs: run a frozen GraphDef on input:0, float32 probs:0."""
    out = run_frozen(graph_def, {INPUT_NAME: x}, [OUTPUT_NAME])[OUTPUT_NAME]
    return np.asarray(out, dtype=np.float32)


def v1_converter(pb_path: Path, input_shapes: dict, outputs: list):
    """tf.compat.v1.lite.TFLiteConverter.from_frozen_graph with fixed input shapes."""
    return tf.compat.v1.lite.TFLiteConverter.from_frozen_graph(
        str(pb_path),
        input_arrays=list(input_shapes),
        output_arrays=list(outputs),
        input_shapes=input_shapes,
    )


def tf_tflite(pb_path: Path, inputs: dict, outputs: list) -> bytes:
    """TF's own float .tflite; inputs: node -> (shape with None batch, dtype), batch 1."""
    shapes = {k: [1] + list(v[0][1:]) for k, v in inputs.items()}
    return v1_converter(pb_path, shapes, outputs).convert()


# --------------------------------------------------------------------------- LiteRT


RESOLVERS = {
    # Interpreter() as constructed by default: builtin kernels + XNNPACK delegate
    "default": "AUTO",
    # optimized builtin kernels without the default delegate
    "builtin": "BUILTIN_WITHOUT_DEFAULT_DELEGATES",
    # reference kernels
    "ref": "BUILTIN_REF",
}


def interpreter(model: bytes, resolver: str = "builtin"):
    """A LiteRT Interpreter (one thread, tensors allocated) with one of RESOLVERS' kernel sets.

    "builtin" (no default XNNPACK delegate) keeps the op list the model's own operators; with
    the delegate LiteRT reports one DELEGATE node."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    interp = Interpreter(
        model_content=model,
        num_threads=1,
        experimental_op_resolver_type=getattr(OpResolverType, RESOLVERS[resolver]),
    )
    interp.allocate_tensors()
    return interp


def litert_run(model_bytes: bytes, feeds: dict, outputs: list, resolver: str = "builtin"):
    """Run a .tflite in LiteRT one sample at a time (batch 1), with one of RESOLVERS' kernel
    sets (default: builtin kernels, no delegate).

    Returns ({output: stacked results}, op names in execution order, io description)."""
    interp = interpreter(model_bytes, resolver)
    ins = {d["name"]: d for d in interp.get_input_details()}
    outs = {d["name"]: d for d in interp.get_output_details()}
    assert set(ins) == set(feeds), f"LiteRT inputs {sorted(ins)} != {sorted(feeds)}"
    assert set(outs) == set(outputs), f"LiteRT outputs {sorted(outs)} != {sorted(outputs)}"
    n = len(next(iter(feeds.values())))
    res = {o: [] for o in outputs}
    for i in range(n):
        for name, arr in feeds.items():
            interp.set_tensor(ins[name]["index"], arr[i : i + 1])
        interp.invoke()
        for o in outputs:
            res[o].append(interp.get_tensor(outs[o]["index"])[0].copy())
    res = {o: np.stack(v) for o, v in res.items()}
    ops = [d["op_name"] for d in interp._get_ops_details()]

    def desc(d):
        return {"name": d["name"], "shape": d["shape"].tolist(), "dtype": d["dtype"].__name__}

    io_desc = {
        "inputs": [desc(ins[k]) for k in feeds],
        "outputs": [desc(outs[o]) for o in outputs],
    }
    if len(feeds) == 1:
        io_desc["input"] = io_desc["inputs"][0]
    if len(outputs) == 1:
        io_desc["output"] = io_desc["outputs"][0]
    return res, ops, io_desc
