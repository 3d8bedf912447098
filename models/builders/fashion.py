"""Real models on real data (issue 12): fashion_xception and fashion_mobilenet_v2, trained on
Fashion-MNIST, frozen, with TensorFlow's own float and int8 conversions for comparison
(models/build_fashion.py).

Data: Debian's `dataset-fashion-mnist` package (the idx files of Zalando's Fashion-MNIST, MIT
/ Expat licence) in /usr/share/datasets/fashion-mnist -- a dev-time source only.  The small
subsets that tests and benchmarks use are committed:

  fashion_calib.npz   x uint8 [50, 28, 28, 1], y int64 [50]: the calibration samples, drawn
                      at random (seeded) from the 60000 training images and left out of
                      training
  fashion_test.npz    x uint8 [400, 28, 28, 1], y int64 [400]: the first 400 images of the
                      official 10000-image test set (held out)

The networks take raw pixels as float32 (0..255) and rescale inside the graph, so these uint8
arrays feed the models, the CLI and TF's converter unchanged.
"""

from __future__ import annotations

import gzip
import time
from collections import Counter
from pathlib import Path

from .common import (
    INPUT_NAME,
    MODELS_DIR,
    OUTPUT_NAME,
    SEED,
    atomic_write,
    freeze_keras,
    keras,
    litert_run,
    np,
    op_types,
    run_frozen_probs,
    seed_everything,
    tf,
    tf_tflite,
    write_graph,
    write_json,
    write_npz,
)
from .fashion_nets import INPUT_SHAPE, NETS
from .quantized_refs import litert_outputs, tf_int8

DATA_DIR = Path("/usr/share/datasets/fashion-mnist")  # Debian: dataset-fashion-mnist
DEB_PACKAGE = "dataset-fashion-mnist 0.0~git20200523.55506a9-1"
CLASSES = ("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
           "Sneaker", "Bag", "Ankle boot")
N_CALIB = 50          # "a few dozen" calibration samples, as users calibrate
N_HELD_OUT = 400      # committed held-out test images (the first 400 of the test set)
N_GOLDEN = 32         # golden inputs: the first 32 held-out images
EPOCHS, BATCH, LR = 6, 64, 2e-3
MIN_ACC = 0.85        # TF float accuracy on the 10000 test images; the build stops below
TFLITE_ATOL = 1e-5    # TF's float .tflite in LiteRT vs the frozen graph (probabilities)
INPUT_SPEC = {INPUT_NAME: ([None, *INPUT_SHAPE], "float32")}
TFLITE_INPUT = [1, *INPUT_SHAPE]


# --------------------------------------------------------------------------- data


def _read_idx(name: str, magic: int, shape: tuple) -> np.ndarray:
    """One gzipped idx file (big-endian magic, counts, then uint8 data) of the package."""
    path = DATA_DIR / name
    if not path.exists():
        raise SystemExit(f"{path} not found: install Debian's package with "
                         "`apt-get install dataset-fashion-mnist`")
    with gzip.open(path) as f:
        raw = f.read()
    header = 4 * (1 + len(shape))
    dims = np.frombuffer(raw, ">u4", count=1 + len(shape))
    assert dims[0] == magic and tuple(dims[1:]) == shape, (name, dims)
    return np.frombuffer(raw, np.uint8, offset=header).reshape(shape)


def load_fashion() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The package's train / test split: uint8 NHWC images and int64 labels."""
    x_train = _read_idx("train-images-idx3-ubyte.gz", 2051, (60000, 28, 28))[..., None]
    y_train = _read_idx("train-labels-idx1-ubyte.gz", 2049, (60000,)).astype(np.int64)
    x_test = _read_idx("t10k-images-idx3-ubyte.gz", 2051, (10000, 28, 28))[..., None]
    y_test = _read_idx("t10k-labels-idx1-ubyte.gz", 2049, (10000,)).astype(np.int64)
    return x_train, y_train, x_test, y_test


def split(x_train, y_train):
    """(training images, labels, calibration images, labels): N_CALIB seeded-random training
    images are the calibration set and are left out of training."""
    perm = np.random.default_rng(SEED + 12).permutation(len(x_train))
    calib, train = np.sort(perm[:N_CALIB]), perm[N_CALIB:]
    return x_train[train], y_train[train], x_train[calib], y_train[calib]


def as_input(x_uint8: np.ndarray) -> np.ndarray:
    """The models' input: raw pixel values as float32 (the graph divides by 255)."""
    return x_uint8.astype(np.float32)


# --------------------------------------------------------------------------- training


def train(name: str, x, y) -> tuple[object, dict]:
    """Adam with cosine decay, EPOCHS epochs, no augmentation; returns (model, facts)."""
    seed_everything(SEED)
    model = NETS[name]()
    steps = EPOCHS * int(np.ceil(len(x) / BATCH))
    model.compile(
        optimizer=keras.optimizers.Adam(learning_rate=keras.optimizers.schedules.CosineDecay(
            LR, steps)),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    t0 = time.time()
    model.fit(as_input(x), y, batch_size=BATCH, epochs=EPOCHS, shuffle=True, verbose=2)
    seconds = time.time() - t0
    print(f"  trained {EPOCHS} epochs on {len(x)} images in {seconds:.0f} s "
          f"({model.count_params()} parameters)")
    facts = {"parameters": int(model.count_params()), "train_images": int(len(x)),
             "epochs": EPOCHS, "batch": BATCH,
             "optimizer": f"Adam, lr {LR} cosine decay to 0, no augmentation",
             "train_seconds": round(seconds), "train_threads": 1}
    return model, facts


# --------------------------------------------------------------------------- TF's files


def _accuracy(probs: np.ndarray, y: np.ndarray) -> float:
    return round(float(np.mean(np.argmax(probs, axis=1) == y)), 6)


def _sqnr(ref: np.ndarray, test: np.ndarray) -> float:
    ref, test = ref.astype(np.float64), test.astype(np.float64)
    return round(float(10 * np.log10(np.sum(ref ** 2) / np.sum((ref - test) ** 2))), 3)


def finish(name: str, graph_def, data: dict, facts: dict) -> dict:
    """Write <name>.pb, .golden.npz, .tf_int8.tflite and .tf_ops.json; check TF's float
    .tflite against the goldens (it is not kept: the .pb is the float model)."""
    ops = op_types(graph_def)
    print(f"  frozen GraphDef: {len(graph_def.node)} nodes, op types {ops}")
    assert not {"VariableV2", "VarHandleOp", "ReadVariableOp"} & set(ops), ops
    pb_path = MODELS_DIR / f"{name}.pb"
    write_graph(graph_def, pb_path.name, as_text=False)

    x_full, y_full = as_input(data["x_test"]), data["y_test"]
    probs_full = run_frozen_probs(graph_def, x_full)
    full_acc = _accuracy(probs_full, y_full)
    x_held, y_held = x_full[:N_HELD_OUT], y_full[:N_HELD_OUT]
    probs = probs_full[:N_HELD_OUT]
    print(f"  TF float accuracy: {full_acc:.4f} (10000 test images), "
          f"{_accuracy(probs, y_held):.4f} (the {N_HELD_OUT} held out)")
    assert full_acc > MIN_ACC, f"{name}: test accuracy {full_acc} <= {MIN_ACC}"
    write_npz(MODELS_DIR / f"{name}.golden.npz", input=x_held[:N_GOLDEN],
              output=probs[:N_GOLDEN], labels=y_held[:N_GOLDEN])

    tfl = tf_tflite(pb_path, INPUT_SPEC, [OUTPUT_NAME])
    lite, lite_ops, io = litert_run(tfl, {INPUT_NAME: x_held}, [OUTPUT_NAME])
    lite = lite[OUTPUT_NAME]
    err = float(np.max(np.abs(lite[:N_GOLDEN] - probs[:N_GOLDEN])))
    print(f"  TF float .tflite ({len(tfl)} bytes, not kept): ops {dict(Counter(lite_ops))}, "
          f"LiteRT vs golden max abs diff {err:.3g}")
    assert err <= TFLITE_ATOL, f"{name}: TF .tflite differs from golden by {err}"

    calib = as_input(data["x_calib"])
    int8 = tf_int8(pb_path, calib, tf.float32, input_shape=TFLITE_INPUT)
    atomic_write(MODELS_DIR / f"{name}.tf_int8.tflite", int8)
    q_held = litert_outputs(int8, x_held, "ref")
    q_full = litert_outputs(int8, x_full, "ref")
    tf_int8_facts = {
        "file": f"{name}.tf_int8.tflite", "size": len(int8),
        "calibration": f"fashion_calib.npz: {N_CALIB} samples in order at batch 1 as "
                       "representative_dataset, float input / output",
        "held_out_accuracy": _accuracy(q_held, y_held),
        "test_accuracy_10000": _accuracy(q_full, y_full),
        "held_out_sqnr_db": _sqnr(lite, q_held),
        "accuracy_kernels": "LiteRT BUILTIN_REF",
    }
    print(f"  TF int8 .tflite: {len(int8)} bytes, accuracy {tf_int8_facts['held_out_accuracy']:.4f}"
          f" held out / {tf_int8_facts['test_accuracy_10000']:.4f} (10000), SQNR vs TF float "
          f"{tf_int8_facts['held_out_sqnr_db']} dB")
    info = {
        "model": name,
        "converter": f"tensorflow {tf.__version__} "
        "tf.compat.v1.lite.TFLiteConverter.from_frozen_graph",
        "input_shapes": {INPUT_NAME: TFLITE_INPUT},
        "ops": lite_ops,
        "op_counts": dict(sorted(Counter(lite_ops).items())),
        "n_ops": len(lite_ops),
        "io": io,
        "graphdef_op_counts": ops,
        "graphdef_nodes": len(graph_def.node),
        "tf_float_test_accuracy_10000": full_acc,
        "tf_float_held_out_accuracy": _accuracy(probs, y_held),
        "tflite_float_held_out_accuracy": _accuracy(lite, y_held),
        "tflite_float_size": len(tfl),
        "tflite_vs_golden_max_abs_diff": float(f"{err:.3g}"),
        "tf_int8": tf_int8_facts,
        "n_held_out": N_HELD_OUT,
        "training": facts,
        "data": f"Fashion-MNIST from Debian's {DEB_PACKAGE}",
    }
    write_json(MODELS_DIR / f"{name}.tf_ops.json", info, compact=True)
    return info


def write_data(data: dict) -> None:
    write_npz(MODELS_DIR / "fashion_calib.npz", x=data["x_calib"], y=data["y_calib"])
    write_npz(MODELS_DIR / "fashion_test.npz", x=data["x_test"][:N_HELD_OUT],
              y=data["y_test"][:N_HELD_OUT])


def load_data() -> dict:
    x_train, y_train, x_test, y_test = load_fashion()
    x_tr, y_tr, x_calib, y_calib = split(x_train, y_train)
    return {"x_train": x_tr, "y_train": y_tr, "x_calib": x_calib, "y_calib": y_calib,
            "x_test": x_test, "y_test": y_test}


def build(name: str, data: dict) -> dict:
    print(f"\n[{name}] training on Fashion-MNIST")
    model, facts = train(name, data["x_train"], data["y_train"])
    graph_def = freeze_keras(model, INPUT_SPEC, OUTPUT_NAME)
    return finish(name, graph_def, data, facts)


def main(argv=None) -> int:
    import argparse

    from .common import print_written

    ap = argparse.ArgumentParser(description="Train the Fashion-MNIST models (dev-only).")
    ap.add_argument("--only", action="append", choices=sorted(NETS),
                    help="build only this model (repeatable); the data files are always written")
    args = ap.parse_args(argv)
    data = load_data()
    print(f"Fashion-MNIST ({DEB_PACKAGE}): {len(data['x_train'])} training images, "
          f"{N_CALIB} calibration, {N_HELD_OUT} of {len(data['x_test'])} test images held out")
    write_data(data)
    results = {name: build(name, data) for name in (args.only or NETS)}
    print("\nsummary: TF float / TF .tflite float / TF int8 accuracy on the "
          f"{N_HELD_OUT} held-out images (10000 test images)")
    for name, r in results.items():
        q = r["tf_int8"]
        print(f"  {name:22s} {r['tf_float_held_out_accuracy']:.4f} / "
              f"{r['tflite_float_held_out_accuracy']:.4f} / {q['held_out_accuracy']:.4f}  "
              f"({r['tf_float_test_accuracy_10000']:.4f} / {q['test_accuracy_10000']:.4f}); "
              f"{r['training']['parameters']} parameters, trained in "
              f"{r['training']['train_seconds']} s")
    print_written()
    return 0
