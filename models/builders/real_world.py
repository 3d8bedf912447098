"""What the "real-world" model builders share (models/build_real_world.py): constants, the
photo-crop and digits inputs, the Built / Spec records, and finish(), which freezes, checks
and writes one model's files (dev-only; needs TensorFlow)."""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

# tf.compat.v1.layers (used by the TF1 graphs) needs Keras 2 (tf_keras) behind tf.keras; this
# only works before TensorFlow is imported, so models/build_real_world.py sets it first too.
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

from .common import (  # noqa: E402  (sets env, seeds, single-threaded TF, op determinism)
    MODELS_DIR,
    atomic_write,
    litert_run,
    load_data,
    np,
    op_types,
    run_frozen,
    tf,
    tf_tflite,
    write_json,
    write_npz,
)

CACHE = MODELS_DIR / "cache"
N_GOLDEN = 8  # held-out inputs per small model
N_GOLDEN_LARGE = 4  # held-out inputs per large model
N_CALIB = 64  # calibration crops for the small image models
N_CALIB_LARGE = 8  # calibration crops for the large models (one batch, one forward pass)
REL_TOL = 1e-4  # LiteRT(TF .tflite) vs golden, relative to max |reference|
MIN_SPREAD = 1e-3  # golden outputs must vary across the batch (relative to max |reference|)
VARIABLE_OPS = ("VariableV2", "VarHandleOp", "ReadVariableOp", "AssignVariableOp")


# --------------------------------------------------------------------------- data


def digits():
    """sklearn digits, [0, 1] float32 NHWC, same split as build_models.py."""
    return load_data()


_PHOTOS: list | None = None


def photos() -> list:
    """The two real 427x640 RGB photos bundled with scikit-learn (china.jpg, flower.jpg).

    Decoded with TensorFlow (PIL is not needed), float32 in [0, 255]."""
    global _PHOTOS
    if _PHOTOS is None:
        import sklearn.datasets

        img_dir = Path(sklearn.datasets.__file__).parent / "images"
        _PHOTOS = []
        for fname in ("china.jpg", "flower.jpg"):
            data = tf.io.read_file(str(img_dir / fname))
            img = tf.io.decode_jpeg(data, channels=3, dct_method="INTEGER_ACCURATE")
            _PHOTOS.append(img.numpy().astype(np.float32))
    return _PHOTOS


def photo_crops(n: int, size: int, split: str, seed: int) -> np.ndarray:
    """n square crops of the two photos resized to size x size, float32 [0, 255] NHWC.

    split="calib" crops lie in columns [0, 384), split="golden" in columns [384, 640): the
    calibration and held-out golden inputs share no pixels."""
    rng = np.random.RandomState(seed)
    out = []
    for k in range(n):
        img = photos()[k % 2]
        h, w, _ = img.shape
        x_lo, x_hi = (0, 384) if split == "calib" else (384, w)
        side = int(rng.randint(128, min(h, x_hi - x_lo) + 1))
        y0 = int(rng.randint(0, h - side + 1))
        x0 = int(rng.randint(x_lo, x_hi - side + 1))
        crop = img[y0 : y0 + side, x0 : x0 + side]
        if rng.rand() < 0.5:
            crop = crop[:, ::-1]
        resized = tf.image.resize(crop[None], (size, size), method="bilinear", antialias=True)
        out.append(np.clip(resized.numpy()[0], 0.0, 255.0))
    return np.stack(out).astype(np.float32)


def small_images(n: int, split: str, seed: int) -> np.ndarray:
    """32x32x3 photo crops scaled to [-1, 1]."""
    return (photo_crops(n, 32, split, seed) / np.float32(127.5) - np.float32(1.0)).astype(
        np.float32
    )


def spread(y: np.ndarray) -> float:
    """max over elements of the std across the batch, relative to max |y|."""
    y = y.astype(np.float64)
    scale = float(np.max(np.abs(y)))
    if scale == 0.0:
        return 0.0
    return float(np.max(np.std(y, axis=0)) / scale)


def _fmt(x: float) -> float:
    return float(f"{x:.3g}")


# --------------------------------------------------------------------------- model spec


@dataclass
class Built:
    """A frozen graph ready for finish()."""

    graph_def: object
    inputs: dict  # node name -> (shape with None batch, numpy dtype str)
    outputs: list  # output node names, converter order
    golden: dict  # node name -> held-out input batch
    expect_ops: tuple = ()  # GraphDef op types that must be present
    notes: dict = field(default_factory=dict)  # extra json fields (built with, preprocessing...)
    extra: dict = field(default_factory=dict)  # extra golden arrays (labels)


@dataclass
class Spec:
    name: str
    build: object  # () -> Built
    large: bool = False


# --------------------------------------------------------------------------- finish


def finish(spec: Spec, built: Built) -> dict:
    name = spec.name
    gd = built.graph_def
    out_dir = CACHE if spec.large else MODELS_DIR
    ops = op_types(gd)
    print(f"  frozen GraphDef: {len(gd.node)} nodes, op types: {ops}")
    missing = [o for o in built.expect_ops if o not in ops]
    assert not missing, f"{name}: expected op types missing from the frozen graph: {missing}"
    leftovers = [o for o in VARIABLE_OPS if o in ops]
    assert not leftovers, f"{name}: variable ops left in the frozen graph: {leftovers}"

    pb_path = out_dir / f"{name}.pb"
    atomic_write(pb_path, gd.SerializeToString(deterministic=True))

    # Golden: TensorFlow running the frozen graph on the whole held-out batch.
    feeds = {k: np.ascontiguousarray(v.astype(built.inputs[k][1])) for k, v in built.golden.items()}
    assert list(feeds) == list(built.inputs)
    ref = run_frozen(gd, feeds, built.outputs)
    spreads = {}
    for o, r in ref.items():
        if np.issubdtype(r.dtype, np.floating):
            assert np.all(np.isfinite(r)), f"{name}: non-finite golden output {o}"
            spreads[o] = spread(r)
            assert (
                spreads[o] > MIN_SPREAD
            ), f"{name}: output {o} is degenerate (spread {spreads[o]:.3g})"
        else:
            spreads[o] = spread(r.astype(np.float64))
            assert (
                len(np.unique(r.reshape(len(r), -1), axis=0)) > 1
            ), f"{name}: output {o} is constant"
    arrays = {}
    if len(feeds) == 1:
        arrays["input"] = next(iter(feeds.values()))
    else:
        arrays.update({f"inputs/{k}": v for k, v in feeds.items()})
    if len(ref) == 1:
        arrays["output"] = next(iter(ref.values()))
    else:
        arrays.update({f"outputs/{k}": v for k, v in ref.items()})
    arrays["input_names"] = np.array(list(feeds))
    arrays["output_names"] = np.array(list(built.outputs))
    arrays.update(built.extra)
    write_npz(out_dir / f"{name}.golden.npz", **arrays)

    info = {
        "model": name,
        "converter": f"tensorflow {tf.__version__} "
        "tf.compat.v1.lite.TFLiteConverter.from_frozen_graph",
        "input_shapes": {k: [1] + list(v[0][1:]) for k, v in built.inputs.items()},
        "inputs": list(built.inputs),
        "outputs": list(built.outputs),
        "input_dtypes": {k: v[1] for k, v in built.inputs.items()},
    }
    result = {"name": name, "graphdef_ops": ops, "nodes": len(gd.node)}
    try:
        tfl = tf_tflite(pb_path, built.inputs, built.outputs)
    except Exception as exc:  # record, do not drop the model
        msg = f"{type(exc).__name__}: {exc}".strip()
        print(f"  TF converter FAILED: {msg[:2000]}")
        info.update(
            {"ops": None, "op_counts": None, "n_ops": None, "tf_converter_error": msg[:4000]}
        )
        result["tf_error"] = msg
    else:
        atomic_write(out_dir / f"{name}.tf.tflite", tfl)
        lite, lite_ops, io = litert_run(tfl, feeds, built.outputs)
        errs = {}
        for o in built.outputs:
            r = ref[o]
            d = float(np.max(np.abs(lite[o].astype(np.float64) - r.astype(np.float64))))
            scale = float(np.max(np.abs(r)))
            errs[o] = {
                "max_abs_diff": _fmt(d),
                "max_abs_ref": _fmt(scale),
                "rel": _fmt(d / max(scale, 1e-30)),
            }
            assert d <= REL_TOL * max(
                scale, 1e-30
            ), f"{name}: TF .tflite output {o} differs: {errs[o]}"
        worst = max(e["rel"] for e in errs.values())
        counts = dict(sorted(Counter(lite_ops).items()))
        print(f"  TF .tflite ({len(tfl)} bytes): {len(lite_ops)} ops {counts}")
        print(f"  LiteRT(TF .tflite) vs golden: worst max|diff|/max|ref| {worst:.3g}")
        info.update({"ops": lite_ops, "op_counts": counts, "n_ops": len(lite_ops), "io": io})
        info["tflite_vs_golden"] = errs if len(errs) > 1 else next(iter(errs.values()))
        result.update(
            {
                "lite_ops": counts,
                "n_lite_ops": len(lite_ops),
                "rel_err": worst,
                "tflite_size": len(tfl),
            }
        )
    info["graphdef_op_counts"] = ops
    info["graphdef_nodes"] = len(gd.node)
    info["golden_batch"] = len(next(iter(feeds.values())))
    info["golden_output_spread"] = {o: _fmt(s) for o, s in spreads.items()}
    info.update(built.notes)
    if spec.large:
        info["cache_files"] = [
            f"models/cache/{name}{ext}" for ext in (".pb", ".golden.npz", ".tf.tflite")
        ]
    write_json(MODELS_DIR / f"{name}.tf_ops.json", info)
    result["spread"] = min(spreads.values())
    result["pb_size"] = pb_path.stat().st_size
    return result
