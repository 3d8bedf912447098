#!/usr/bin/env python
"""Converted files, byte for byte, from two versions of edgelite: every sample model in
models/ with several option sets.

    EDGELITE_ROOT=/work/main python bench/convert_identity.py write /tmp/before
    EDGELITE_ROOT=$PWD       python bench/convert_identity.py write /tmp/after
    python bench/convert_identity.py compare /tmp/before /tmp/after

`write` converts models/*.pb, *.pbtxt, models/micro_order/*.pb and the SavedModels under
models/savedmodel (--keras: the Keras files under models/keras too) in --modes (a model's own
`<name>.calib.npz` calibrates it, the digit models use digits_calib.npy, the Fashion-MNIST
ones fashion_calib.npz; a model without data is quantized weights-only only) and writes
one file per conversion: the .tflite bytes, or the one-line error it gave. `compare` lists
every conversion whose file differs and exits 1 if any does. Made to check that a change
meant to be invisible (a faster writer, shape inference without a file) is.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
MODELS = ROOT / "models"
MODES = ("float", "dynamic", "float16", "int8", "int8-io", "uint8", "16x8", "micro")
DATA_MODES = {"int8", "int8-io", "uint8", "16x8", "micro"}


def sources(only: str | None, keras: bool) -> list[pathlib.Path]:
    found = sorted([*MODELS.glob("*.pb"), *MODELS.glob("*.pbtxt"),
                    *(MODELS / "micro_order").glob("*.pb"),
                    *(p for p in (MODELS / "savedmodel").iterdir() if p.is_dir())])
    if keras:
        found += sorted([*(MODELS / "keras").glob("*.keras"), *(MODELS / "keras").glob("*.h5")])
    return [p for p in found if only is None or only in p.name]


def calibration(path: pathlib.Path) -> str | None:
    name = path.name.split(".")[0]
    own = path.parent / f"{name}.calib.npz"
    if own.exists():
        return str(own)
    if name in ("tf1_cnn", "keras_cnn", "qat_cnn", "mobilenet_v2_digits"):
        return str(MODELS / "digits_calib.npy")
    if name.startswith("fashion_"):
        return str(MODELS / "fashion_calib.npz")
    return None


def options(path: pathlib.Path, mode: str):
    from edgelite.converter import ConvertOptions
    from edgelite.converter.quantize import IOType, QuantizeOptions, QuantMode
    kw = {}
    meta = path.parent / f"{path.name.split('.')[0]}.tf_ops.json"
    if meta.exists() and "inputs" in (info := json.loads(meta.read_text())):
        kw = dict(inputs=info["inputs"], outputs=info["outputs"],
                  input_shapes={k: tuple(v) for k, v in info["input_shapes"].items()})
    calib = calibration(path)
    if mode in DATA_MODES and calib is None:
        return None
    if mode == "micro":
        kw.update(target="micro", force=True)
    quant = {"float": None, "dynamic": QuantMode.DYNAMIC, "float16": QuantMode.FLOAT16,
             "int8": QuantMode.INT8, "int8-io": QuantMode.INT8, "uint8": QuantMode.UINT8,
             "16x8": QuantMode.INT16X8, "micro": QuantMode.INT8}[mode]
    if quant is not None:
        extra = {"io_type": IOType.INT8} if mode in ("int8-io", "micro") else {}
        kw["quantize"] = QuantizeOptions(mode=quant, calib=calib if mode in DATA_MODES
                                         else None, **extra)
    return ConvertOptions(**kw)


def write(out: pathlib.Path, modes: list[str], only: str | None, keras: bool) -> None:
    from edgelite.converter import convert_detailed
    from edgelite.errors import EdgeliteError
    out.mkdir(parents=True, exist_ok=True)
    for path in sources(only, keras):
        for mode in modes:
            opts = options(path, mode)
            if opts is None:
                continue
            target = out / f"{path.parent.name}__{path.name}__{mode}"
            t0 = time.process_time()
            try:
                data = convert_detailed(path, opts).model
            except (EdgeliteError, ValueError) as exc:
                data = f"error: {type(exc).__name__}: {exc}".encode()
            target.write_bytes(data)
            print(f"{target.name}: {len(data)} bytes, {time.process_time() - t0:.1f} s CPU",
                  flush=True)


def write_generated(out: pathlib.Path, nodes: int) -> None:
    """The GraphDefs bench/scale_convert.py builds (every shape, with and without forks) at
    `nodes` nodes, float and int8 (a fixed default range: no calibration run)."""
    sys.path.insert(0, str(ROOT / "bench"))
    import scale_convert
    from edgelite.converter import ConvertOptions, convert_detailed
    from edgelite.converter.quantize import QuantizeOptions, QuantMode
    out.mkdir(parents=True, exist_ok=True)
    graphs = {"chain": scale_convert.build(nodes, False),
              "branches": scale_convert.build(nodes, True),
              **{shape: scale_convert.build(nodes, False, shape)
                 for shape in scale_convert.SHAPES}}
    modes = {"float": None,
             "int8": QuantizeOptions(mode=QuantMode.INT8, default_range=(-8.0, 8.0))}
    for name, data in graphs.items():
        for mode, quant in modes.items():
            model = convert_detailed(data, ConvertOptions(quantize=quant)).model
            (out / f"generated__{name}_{nodes}__{mode}").write_bytes(model)
            print(f"generated {name} {mode}: {len(model)} bytes", flush=True)


def compare(a: pathlib.Path, b: pathlib.Path) -> int:
    names = sorted({p.name for p in a.iterdir()} | {p.name for p in b.iterdir()})
    differ = [n for n in names if not ((a / n).exists() and (b / n).exists()
                                       and (a / n).read_bytes() == (b / n).read_bytes())]
    for n in differ:
        print(f"differs: {n}")
    errors = sum((a / n).read_bytes().startswith(b"error:") for n in names if (a / n).exists())
    print(f"{len(names)} conversions ({errors} of them errors, compared as text), "
          f"{len(differ)} differ")
    return 1 if differ else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write")
    w.add_argument("out", type=pathlib.Path)
    w.add_argument("--modes", default=",".join(MODES))
    w.add_argument("--only", help="only sources whose file name contains this")
    w.add_argument("--keras", action="store_true", help="also the Keras files (slow)")
    w.add_argument("--generated", type=int, default=0, metavar="NODES",
                   help="also bench/scale_convert.py's graphs of NODES nodes, every shape")
    c = sub.add_parser("compare")
    c.add_argument("a", type=pathlib.Path)
    c.add_argument("b", type=pathlib.Path)
    args = ap.parse_args(argv)
    if args.cmd == "compare":
        return compare(args.a, args.b)
    write(args.out, args.modes.split(","), args.only, args.keras)
    if args.generated:
        write_generated(args.out, args.generated)
    return 0


if __name__ == "__main__":
    sys.exit(main())
