"""`edgelite convert` takes the common `tflite_convert` flags as aliases of its own, so a
script written for TensorFlow's command runs unchanged:

  --output_file F                 -o F
  --saved_model_dir D / --graph_def_file F    the MODEL argument
  --input_arrays A,B / --output_arrays C      --inputs A,B / --outputs C
  --input_shapes 1,8,8,1:1,10     --input-shape A:1,8,8,1 --input-shape B:1,10
  --inference_type INT8 | QUANTIZED_UINT8 | FLOAT      --quantize int8 | uint8 | (none)
  --inference_input_type T / --inference_output_type T   --io-type T / --output-type T
  --mean_values M1,M2 --std_dev_values S1,S2           --mean-std A:M1,S1 --mean-std B:M2,S2
  --allow_custom_ops              --allow-custom-ops
"""

from __future__ import annotations

import click

TYPES = {"float": "float", "float32": "float", "int8": "int8", "uint8": "uint8",
         "quantized_uint8": "uint8", "int16": "int16"}
MODES = {"float": None, "float32": None, "int8": "int8", "quantized_uint8": "uint8",
         "uint8": "uint8", "int16": "int16x8"}


def tflite_convert_flags(fn):
    """Decorator: the tflite_convert spellings, hidden from --help's main list."""
    opts = [
        click.option("--output_file", type=click.Path(), hidden=True),
        click.option("--saved_model_dir", type=click.Path(exists=True, file_okay=False),
                     hidden=True),
        click.option("--graph_def_file", type=click.Path(exists=True, dir_okay=False),
                     hidden=True),
        click.option("--input_arrays", hidden=True),
        click.option("--output_arrays", hidden=True),
        click.option("--input_shapes", hidden=True),
        click.option("--inference_type", type=click.Choice(sorted(MODES), case_sensitive=False),
                     hidden=True),
        click.option("--inference_input_type", hidden=True,
                     type=click.Choice(sorted(TYPES), case_sensitive=False)),
        click.option("--inference_output_type", hidden=True,
                     type=click.Choice(sorted(TYPES), case_sensitive=False)),
        click.option("--mean_values", hidden=True),
        click.option("--std_dev_values", hidden=True),
    ]
    for opt in reversed(opts):
        fn = opt(fn)
    return fn


def _one(kw: dict, ours: str, theirs: str, shown: str, value=None):
    """Move alias `theirs` into `ours` (refusing both at once)."""
    alias = kw.pop(theirs)
    if alias is None:
        return
    if kw.get(ours) not in (None, (), False):
        raise click.UsageError(f"--{theirs} and {shown} name the same thing: give one")
    kw[ours] = alias if value is None else value(alias)


def apply_aliases(kw: dict) -> None:
    """Fold the tflite_convert flags in `kw` (the convert command's parameters) into
    edgelite's own, in place."""
    for alias in ("saved_model_dir", "graph_def_file"):
        _one(kw, "graphdef", alias, "MODEL")
    if kw["graphdef"] is None:
        raise click.UsageError("Missing argument 'MODEL' (or --saved_model_dir / "
                               "--graph_def_file)")
    _one(kw, "output", "output_file", "-o")
    if kw["output"] is None:
        raise click.UsageError("Missing option '-o' / '--output' (or --output_file)")
    _one(kw, "inputs", "input_arrays", "--inputs")
    _one(kw, "outputs", "output_arrays", "--outputs")
    names = [n.strip() for n in (kw["inputs"] or "").split(",") if n.strip()]
    _one(kw, "input_shape", "input_shapes", "--input-shape",
         lambda text: _per_input(names, text.split(":"), "--input_shapes"))
    _one(kw, "quantize", "inference_type", "--quantize", lambda t: MODES[t.lower()])
    io = kw.pop("inference_input_type")
    if io is not None:
        kw["io_type"] = TYPES[io.lower()]
    _one(kw, "output_type", "inference_output_type", "--output-type",
         lambda t: TYPES[t.lower()])
    means, stds = kw.pop("mean_values"), kw.pop("std_dev_values")
    if (means is None) != (stds is None):
        raise click.UsageError("--mean_values and --std_dev_values go together")
    if means is not None:
        means, stds = means.split(","), stds.split(",")
        if len(means) != len(stds):
            raise click.UsageError("--mean_values and --std_dev_values need one value per "
                                   "input each")
        pairs = [f"{m},{s}" for m, s in zip(means, stds)]
        kw["mean_std"] = tuple(kw["mean_std"]) + _per_input(names, pairs, "--mean_values")


def _per_input(names: list[str], values: list[str], flag: str) -> tuple[str, ...]:
    """NAME:VALUE strings pairing --input_arrays with a tflite_convert per-input list."""
    if len(names) != len(values):
        raise click.UsageError(f"{flag} has {len(values)} entr{'y' if len(values) == 1 else 'ies'}"
                               f"; --input_arrays names {len(names)} input(s)")
    return tuple(f"{n}:{v}" for n, v in zip(names, values))
