"""Quantization: choose ranges, then rewrite the float graph.

Modes (QuantMode): INT8 / UINT8 full-integer (ranges from FakeQuant nodes, the user, and/or
calibration), DYNAMIC (int8 weights, float activations), FLOAT16 (float16 weights).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Callable, Iterable

import numpy as np

from ...interpreter.errors import EdgeliteError
from ..evaluate import infer_shapes
from ..export import export_tflite
from ..ir import Graph
from .calibrate import CalibrationStats, Preprocess, collect_ranges, load_samples
from .params import Affine, QType
from .rewrite import IOType, RewriteConfig, quantize_graph
from .weights_only import dynamic_range, float16


class QuantMode(Enum):
    INT8 = "int8"
    UINT8 = "uint8"
    DYNAMIC = "dynamic"
    FLOAT16 = "float16"


@dataclass
class QuantizeOptions:
    mode: QuantMode = QuantMode.INT8
    per_channel: bool = True
    io_type: IOType = IOType.FLOAT
    calib: str | None = None                    # .npy / .npz / folder
    calib_samples: int | None = None
    calib_preprocess: Preprocess = Preprocess()
    input_ranges: dict[str, tuple[float, float]] = field(default_factory=dict)
    mean_std: dict[str, tuple[float, float]] = field(default_factory=dict)
    default_range: tuple[float, float] | None = None
    progress: Callable[[int], None] | None = None


@dataclass
class QuantizeReport:
    mode: QuantMode
    calibration: CalibrationStats | None = None
    ranges: dict[str, tuple[float, float]] = field(default_factory=dict)


def quantize(graph: Graph, options: QuantizeOptions) -> QuantizeReport:
    """Quantize `graph` in place (shapes must be inferred)."""
    report = QuantizeReport(options.mode)
    if options.mode is QuantMode.DYNAMIC:
        dynamic_range(graph, options.per_channel)
        return report
    if options.mode is QuantMode.FLOAT16:
        float16(graph)
        return report
    qtype = QType(options.mode.value)
    ranges: dict[str, tuple[float, float]] = {}
    if options.calib is not None:
        infer_shapes(graph)
        samples = load_samples(options.calib, [t.name for t in graph.inputs],
                               options.calib_preprocess)
        report.calibration = collect_ranges(export_tflite(graph), samples,
                                            options.calib_samples, options.progress)
        ranges.update(report.calibration.ranges)
    names = {t.name for t in graph.inputs}
    for name in [*options.input_ranges, *options.mean_std]:
        if name not in names:
            raise EdgeliteError(f"{name!r} is not a model input; inputs are {sorted(names)}")
    ranges.update(options.input_ranges)
    input_params = {}
    for name, (mean, std) in options.mean_std.items():
        # TOCO's quantized_input_stats: real = (q - mean) / std, q in the io type's range.
        io = QType.UINT8 if options.io_type is IOType.UINT8 else qtype
        zp = mean - (128 if io is QType.UINT8 and qtype is QType.INT8 else 0)
        input_params[name] = Affine(np.array([1.0 / std], np.float32),
                                    np.array([int(round(zp))], np.int64))
    if options.default_range is not None:
        for t in graph.tensors():
            if not t.is_const and t.dtype == np.float32:
                ranges.setdefault(t.name, options.default_range)
    report.ranges = ranges
    _check_ranges(graph, ranges, set(input_params))
    quantize_graph(graph, ranges, RewriteConfig(qtype, options.per_channel, options.io_type),
                   input_params)
    return report


def _check_ranges(graph: Graph, ranges, given: set[str]) -> None:
    """One error naming every tensor that needs a range and has none."""
    from .rules import FIXED_OUTPUT, INTEGER_OPS, SAME_AS_INPUT
    need = [t for t in graph.inputs if t.dtype == np.float32 and t.name not in given]
    for op in graph.ops:
        if op.type in INTEGER_OPS and op.type not in set(FIXED_OUTPUT) | SAME_AS_INPUT:
            need += [t for t in op.outputs if t.dtype == np.float32]
    missing = [t.name for t in need if t.range is None and t.name not in ranges]
    if missing:
        shown = ", ".join(repr(n) for n in missing[:5])
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        raise EdgeliteError(
            f"{len(missing)} tensor(s) have no range: {shown}{more}. Calibrate with --calib "
            "DATA, or give ranges with --input-range / --mean-std (inputs) or "
            "--default-range MIN,MAX")


__all__ = ["QuantMode", "QuantizeOptions", "QuantizeReport", "IOType", "Preprocess",
           "quantize"]
