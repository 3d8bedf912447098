"""What quantize() is asked to do: the mode and four groups of settings.

    QuantizeOptions(mode, io=IoOptions(...), calibration=CalibrationOptions(...),
                    transforms=TransformOptions(...), precision=PrecisionOptions(...))

The groups follow the questions a user answers: what the model takes and gives (io), where
the activation ranges come from (calibration), what is done to the float model to make it
quantize better (transforms), and which ops get which precision (precision). Every setting
also has a flat keyword, the `convert` flag's name (``calib_method`` for
``--calib-method``): ``QuantizeOptions(mode="int8", calib=data, adaround=True)`` fills the
groups; ``FLAT`` says where each one goes. Code reads the groups
(``options.calibration.method``), never the flat names.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from enum import Enum
from typing import Callable, ContextManager

from edgelite.errors import EdgeliteError
from .calibrate import Preprocess
from .lstm_check import LstmForm
from .memory_samples import once_iterable
from .observers import CalibConfig, CalibMethod
from .params import QType
from .rewrite import IOType
from .selective import Fallback


class QuantMode(Enum):
    INT8 = "int8"
    UINT8 = "uint8"
    INT16X8 = "int16x8"
    DYNAMIC = "dynamic"
    FLOAT16 = "float16"

    @property
    def qtype(self) -> QType | None:
        """The activations' type of a full-integer mode (None for the weights-only ones)."""
        return {"int8": QType.INT8, "uint8": QType.UINT8, "int16x8": QType.INT16}.get(self.value)


FULL_INTEGER = (QuantMode.INT8, QuantMode.UINT8, QuantMode.INT16X8)
# What each full-integer mode's model may take and give (--io-type).
IO_TYPES = {QuantMode.INT8: (IOType.FLOAT, IOType.INT8, IOType.UINT8),
            QuantMode.UINT8: (IOType.FLOAT, IOType.INT8, IOType.UINT8),
            QuantMode.INT16X8: (IOType.FLOAT, IOType.INT16)}


@dataclass
class IoOptions:
    """The model's inputs and outputs: their types, and ranges given instead of measured."""
    io_type: IOType = IOType.FLOAT     # the inputs' type (and the outputs', unless
    output_type: IOType | None = None  # this is given: int8 in, float out)
    input_ranges: dict[str, tuple[float, float]] = field(default_factory=dict)
    mean_std: dict[str, tuple[float, float]] = field(default_factory=dict)  # TOCO's stats
    default_range: tuple[float, float] | None = None  # any activation without a range

    def __post_init__(self) -> None:
        self.io_type = enum_value(IOType, self.io_type, "io_type")
        if self.output_type is not None:
            self.output_type = enum_value(IOType, self.output_type, "output_type")


@dataclass
class CalibrationOptions:
    """Where the activation ranges come from: data run through the float model."""
    # .npy / .npz / folder, or data in memory: arrays, {name: array}, an iterable or a
    # generator function of samples (memory_samples.py)
    data: object | None = None
    samples: int | None = None           # use at most this many
    preprocess: Preprocess = Preprocess()
    method: CalibConfig | CalibMethod | str = CalibMethod.MINMAX  # "percentile:99.9"
    progress: Callable[[int], None] | None = None    # one call per calibration sample
    # calibrate in N processes (default 1) or on Ray ("local" or an address); auto scores
    # its folds in N processes (default: one per core, fold_pool.py)
    workers: int | None = None
    ray: str | None = None

    def __post_init__(self) -> None:
        self.data = once_iterable(self.data) if self.data is not None else None
        self.method = CalibConfig.parse(self.method)


@dataclass
class TransformOptions:
    """Changes to the float model (or its rounding) that make it quantize better; each
    checked on held-out samples unless forced (auto.py)."""
    equalize: bool = False              # cross-layer equalization before calibration
    bias_correction: bool = False       # needs calibration data
    adaround: bool = False              # learned weight rounding, needs calibration data
    auto: bool = False                  # choose method and transforms on held-out data
    force: bool = False                 # keep the transforms even when they make the
                                        # held-out error worse

    NAMES = ("equalize", "bias_correction", "adaround")  # the transforms themselves

    def asked(self) -> frozenset[str]:
        return frozenset(t for t in self.NAMES if getattr(self, t))


@dataclass
class PrecisionOptions:
    """Which ops get which precision."""
    per_channel: bool = True
    keep_float: tuple[str, ...] = ()    # op types / node names left float
    int16_ops: tuple[str, ...] = ()     # ... run 16x8 in an int8 model (int16 activations)
    min_sqnr: float | None = None       # dB over the outputs on the calibration data
    max_accuracy_drop: float | None = None  # fraction (0.01 = one point), needs `labels`
    labels: str | None = None           # class per calibration sample (.npy / .npz)
    fallback: Fallback = Fallback.FLOAT  # where --min-sqnr / --max-accuracy-drop move ops
    # int8 sequence models: each LSTM integer or weights-only (lstm_check.py), the
    # classifier head 16x8 ("int16") or int8 (sequence_head.py)
    lstm: LstmForm = LstmForm.AUTO
    sequence_head: str = "int16"

    def __post_init__(self) -> None:
        self.keep_float = tuple(self.keep_float)
        self.int16_ops = tuple(self.int16_ops)
        self.fallback = Fallback(self.fallback)
        self.lstm = LstmForm(self.lstm)
        if self.sequence_head not in ("int16", "int8"):
            raise EdgeliteError(f"sequence_head is int16 or int8, not {self.sequence_head!r}")


GROUPS = {"io": IoOptions, "calibration": CalibrationOptions,
          "transforms": TransformOptions, "precision": PrecisionOptions}
# flat keyword (the convert flag's name) -> (group, field)
FLAT = {
    **{f.name: ("io", f.name) for f in fields(IoOptions)},
    "calib": ("calibration", "data"), "calib_samples": ("calibration", "samples"),
    "calib_preprocess": ("calibration", "preprocess"),
    "calib_method": ("calibration", "method"), "progress": ("calibration", "progress"),
    "workers": ("calibration", "workers"), "ray": ("calibration", "ray"),
    **{f.name: ("transforms", f.name) for f in fields(TransformOptions) if f.name != "force"},
    "force_transforms": ("transforms", "force"),
    **{f.name: ("precision", f.name) for f in fields(PrecisionOptions)},
}

KEYWORDS = frozenset({"mode", *GROUPS, *FLAT, "log", "progress_bar"})  # QuantizeOptions(...)


@dataclass(init=False)
class QuantizeOptions:
    mode: QuantMode
    io: IoOptions
    calibration: CalibrationOptions
    transforms: TransformOptions
    precision: PrecisionOptions
    log: Callable[[str], None] | None       # one line per finished step
    # the longer steps (AdaRound's layers, auto's candidates): progress_bar(label, total)
    # is a context manager giving an update(n) callback (cli/progress.py draws one)
    progress_bar: Callable[[str, int | None], ContextManager[Callable[[int], None]]] | None

    def __init__(self, mode: QuantMode | str = QuantMode.INT8, *,
                 io: IoOptions | None = None, calibration: CalibrationOptions | None = None,
                 transforms: TransformOptions | None = None,
                 precision: PrecisionOptions | None = None,
                 log: Callable[[str], None] | None = None, progress_bar=None, **flat) -> None:
        self.mode = enum_value(QuantMode, mode, "quantize")
        self.log, self.progress_bar = log, progress_bar
        groups = {"io": io, "calibration": calibration, "transforms": transforms,
                  "precision": precision}
        changes: dict[str, dict] = {name: {} for name in GROUPS}
        for key, value in flat.items():
            if key not in FLAT:
                raise TypeError(f"QuantizeOptions got an unexpected keyword {key!r}")
            group, name = FLAT[key]
            changes[group][name] = value
        method = changes["calibration"].get("method")
        if isinstance(method, str) and method.strip().lower() == "auto":
            changes["calibration"]["method"] = CalibMethod.MINMAX
            changes["transforms"]["auto"] = True
        for name, kind in GROUPS.items():
            given = groups[name] if groups[name] is not None else kind()
            setattr(self, name, replace(given, **changes[name]) if changes[name] else given)

    def check(self) -> None:
        """The mode's I/O types; what int16x8 does not combine with yet."""
        if self.mode not in FULL_INTEGER:
            return
        for flag, io in (("--io-type", self.io.io_type), ("--output-type", self.io.output_type)):
            if io is not None and io not in IO_TYPES[self.mode]:
                allowed = " or ".join(t.value for t in IO_TYPES[self.mode])
                raise EdgeliteError(f"--quantize {self.mode.value} takes {flag} {allowed}, "
                                    f"not {io.value}")
        if (self.precision.fallback is Fallback.INT16 or self.precision.int16_ops) and \
                self.mode is not QuantMode.INT8:
            raise EdgeliteError("--fallback int16 / --int16-ops run ops of an int8 model 16x8: "
                                f"they need --quantize int8, not {self.mode.value}")
        if self.mode is QuantMode.INT16X8:
            tools = {"--calib-method auto": self.transforms.auto, "--bias-correction":
                     self.transforms.bias_correction, "--adaround": self.transforms.adaround,
                     "--min-sqnr": self.precision.min_sqnr is not None,
                     "--max-accuracy-drop": self.precision.max_accuracy_drop is not None}
            used = [name for name, on in tools.items() if on]
            if used:
                raise EdgeliteError(f"{', '.join(used)}: not available with --quantize int16x8 "
                                    "yet; use --quantize int8 for them, or int16x8 with a "
                                    "calibration method alone (--calib-method ...)")
            if any(mean != 0 for mean, _ in self.io.mean_std.values()):
                raise EdgeliteError("int16x8 inputs are symmetric (zero point 0): --mean-std "
                                    "needs mean 0 with --quantize int16x8")

    def say(self, line: str) -> None:
        """One line for the user (``log``), if anyone listens."""
        if self.log is not None:
            self.log(line)


def enum_value(kind, value, what: str):
    """An enum member from itself or its value ("int8"), else one clear error."""
    if isinstance(value, kind):
        return value
    try:
        return kind(value.strip().lower() if isinstance(value, str) else value)
    except ValueError:
        allowed = ", ".join(m.value for m in kind)
        raise EdgeliteError(f"{what} is one of {allowed}, not {value!r}") from None
