"""The `convert` command's quantization flags, and turning them into QuantizeOptions."""

from __future__ import annotations

import contextlib

import click

from edgelite.names import quoted
from .progress import limited, progress_bar, sample_count


def _pairs(values, flag: str) -> dict[str, tuple[float, float]]:
    out = {}
    for v in values:
        name, sep, nums = v.rpartition(":")
        try:
            a, b = (float(x) for x in nums.split(","))
            if not sep or not name:
                raise ValueError
        except ValueError:
            raise click.BadParameter(f"{quoted(v)}: expected NAME:A,B", param_hint=flag) from None
        out[name] = (a, b)
    return out


def _range(value: str | None) -> tuple[float, float] | None:
    if value is None:
        return None
    try:
        lo, hi = (float(x) for x in value.split(","))
    except ValueError:
        raise click.BadParameter(f"{quoted(value)}: expected MIN,MAX",
                                 param_hint="--default-range") from None
    return lo, hi


def _calib_method(text: str):
    from ..converter.quantize import CalibConfig
    from edgelite.errors import EdgeliteError
    if text.strip().lower() == "auto":
        return "auto"
    try:
        return CalibConfig.parse(text)
    except EdgeliteError as e:
        raise click.BadParameter(str(e), param_hint="--calib-method") from None


def quantize_options(fn):
    """Decorator adding the quantization flags to a click command."""
    opts = [
        click.option("--quantize", "quantize", type=click.Choice(
            ["int8", "uint8", "int16x8", "dynamic", "float16"]), help="Quantization mode "
            "(default: none, a float model); int16x8: int16 activations, int8 weights (TFLite's "
            "16x8)."),
        click.option("--per-tensor", is_flag=True,
                     help="int8 weights per tensor instead of per output channel."),
        click.option("--io-type", type=click.Choice(["float", "int8", "uint8", "int16"]),
                     default="float", show_default=True,
                     help="Type of the model's inputs/outputs in full-integer modes."),
        click.option("--output-type", type=click.Choice(["float", "int8", "uint8", "int16"]),
                     help="Type of the model's outputs when not --io-type's (e.g. int8 in, "
                     "float out)."),
        click.option("--calib", type=click.Path(exists=True),
                     help="Representative data: .npy, .npz or a folder of .npy/images."),
        click.option("--calib-samples", type=int, help="Use at most N calibration samples."),
        click.option("--calib-preprocess", metavar="mean=M,scale=S",
                     help="Map raw samples: x = (x - M) * S."),
        click.option("--input-range", multiple=True, metavar="NAME:MIN,MAX",
                     help="Real-value range of an input (repeatable)."),
        click.option("--mean-std", multiple=True, metavar="NAME:MEAN,STD",
                     help="TOCO input stats: real = (q - MEAN) / STD (repeatable)."),
        click.option("--default-range", metavar="MIN,MAX",
                     help="Range for every tensor with no other range."),
        click.option("--calib-method", default="minmax", show_default=True,
                     metavar="minmax|moving-average[:D]|percentile[:P]|mse|entropy|auto",
                     help="How calibration turns each tensor's values into a range: global "
                     "min/max (TFLite), EMA of per-sample min/max (decay D, default 0.99), "
                     "the P-th percentile of each tail (default 99.99), the range with the "
                     "least mean squared error, TensorRT's KL-divergence threshold, or auto: "
                     "methods and transforms tried on held-out calibration samples, the best "
                     "kept (never below min/max there)."),
        click.option("--equalize", is_flag=True,
                     help="Cross-layer equalization of conv/depthwise weight ranges before "
                     "calibration (helps per-tensor weights)."),
        click.option("--bias-correction", is_flag=True,
                     help="Shift each quantized layer's bias by its mean output error "
                     "measured on the calibration data."),
        click.option("--adaround", is_flag=True,
                     help="Learn each weight's up / down rounding, layer by layer, on the "
                     "calibration data (AdaRound)."),
        click.option("--force-transforms", is_flag=True,
                     help="Keep --equalize / --bias-correction / --adaround even when they "
                     "make the output error on held-out calibration samples worse (they are "
                     "reverted, with a warning, otherwise)."),
        click.option("--keep-float", multiple=True, metavar="NAME_OR_OPTYPE",
                     help="Keep ops float: an op type (CONV_2D) or a node name (repeatable)."),
        click.option("--int16-ops", multiple=True, metavar="NAME_OR_OPTYPE",
                     help="Run ops of an int8 model with int16 activations (16x8, same int8 "
                     "weights): an op type or a node name (repeatable)."),
        click.option("--fallback", type=click.Choice(["float", "int16"]), default="float",
                     show_default=True,
                     help="What --min-sqnr / --max-accuracy-drop move sensitive ops of an "
                     "int8 model to: float, or int16 activations (16x8, same int8 weights; "
                     "ops without a 16x8 kernel go float)."),
        click.option("--lstm", type=click.Choice(["auto", "integer", "weights-only"]),
                     default="auto", show_default=True,
                     help="A sequence LSTM of an int8 model: TFLite's integer LSTM where it "
                     "keeps 35 dB on the calibration data, else float with int8 weights "
                     "(auto); integer always (TensorFlow's choice); or weights-only always."),
        click.option("--sequence-head", type=click.Choice(["int16", "int8"]), default="int16",
                     show_default=True,
                     help="An int8 sequence model's output softmax and the op computing its "
                     "logits: 16x8 (int16 activations, int8 weights) or int8."),
        click.option("--min-sqnr", type=float, metavar="DB",
                     help="Keep the most sensitive ops float until the output SQNR on the "
                     "calibration data is at least DB; reports the ops and the size cost."),
        click.option("--max-accuracy-drop", type=float, metavar="D",
                     help="Like --min-sqnr, until the top-1 accuracy on the calibration data "
                     "is at most D below the float model's (0.01 = one point); needs --labels."),
        click.option("--labels", type=click.Path(exists=True, dir_okay=False),
                     help="Class of each calibration sample (.npy, or .npz with 'y'), for "
                     "--max-accuracy-drop."),
    ]
    for opt in reversed(opts):
        fn = opt(fn)
    return fn


@contextlib.contextmanager
def quantize_config(q: dict, log_to_stderr: bool = False):
    """QuantizeOptions (or None) from the parsed flags, with a progress bar for calibration;
    the steps' log lines go to stdout, or to stderr when stdout carries JSON."""
    from ..converter.quantize import IOType, Preprocess, QuantizeOptions, QuantMode
    if not q["quantize"]:
        yield None
        return
    method = _calib_method(q["calib_method"])
    with contextlib.ExitStack() as stack:
        progress = None
        if q["calib"]:
            # the one calibration on all the samples (the held-out checks of auto and of
            # the transforms have bars of their own)
            total = limited(sample_count(q["calib"]), q["calib_samples"])
            progress = stack.enter_context(progress_bar("calibrating", total))
        yield QuantizeOptions(
            mode=QuantMode(q["quantize"]), per_channel=not q["per_tensor"],
            io_type=IOType(q["io_type"]), output_type=q["output_type"], calib=q["calib"],
            calib_samples=q["calib_samples"],
            calib_preprocess=Preprocess.parse(q["calib_preprocess"] or ""),
            input_ranges=_pairs(q["input_range"], "--input-range"),
            mean_std=_pairs(q["mean_std"], "--mean-std"),
            default_range=_range(q["default_range"]), progress=progress,
            progress_bar=progress_bar,
            calib_method=method, equalize=q["equalize"],
            bias_correction=q["bias_correction"], adaround=q["adaround"],
            force_transforms=q["force_transforms"],
            keep_float=tuple(q["keep_float"]), int16_ops=tuple(q["int16_ops"]),
            min_sqnr=q["min_sqnr"], max_accuracy_drop=q["max_accuracy_drop"],
            fallback=q["fallback"], lstm=q["lstm"], sequence_head=q["sequence_head"],
            labels=q["labels"], workers=q.get("workers"), ray=q.get("ray"),
            log=(lambda line: click.echo(line, err=True)) if log_to_stderr else click.echo)
