"""Calibration: run the float model in edgelite's interpreter and record per-tensor ranges
(global min/max, or another method: observers/).

Samples come from .npy (first axis = samples), .npz (one array per input name, or a single
array), or a folder of .npy files / images (images need Pillow). `Preprocess` maps raw pixel
values: x = (x - mean) * scale. Samples containing NaN or inf are reported and skipped.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator

import numpy as np

from edgelite.errors import EdgeliteError
from edgelite.names import quoted, shown
from ..files import quoted_path
from ..sample_data import npy_layout, pick_inputs, read_array, read_arrays
from .observers import CalibConfig, CalibMethod, MinMaxObserver
from ..runner import ModelRunner
from .lstm_replay import float_cells
from .memory_samples import is_path, memory_samples

IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".bmp", ".gif")


@dataclass(frozen=True)
class Preprocess:
    mean: float = 0.0
    scale: float = 1.0

    @classmethod
    def parse(cls, text: str) -> "Preprocess":
        """'mean=127.5,scale=0.0078125' -> Preprocess."""
        fields = {}
        for part in filter(None, (p.strip() for p in text.split(","))):
            key, sep, value = part.partition("=")
            try:
                if not sep or key not in ("mean", "scale"):
                    raise ValueError
                fields[key] = float(value)
            except ValueError:
                raise EdgeliteError(f"--calib-preprocess {quoted(text)}: expected "
                                    "mean=M,scale=S with numbers M and S") from None
        return cls(**fields)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, np.float32)
        return x if (self.mean, self.scale) == (0.0, 1.0) else (x - self.mean) * self.scale


@dataclass
class CalibrationStats:
    ranges: dict[str, tuple[float, float]]
    used: int
    skipped: list[int]
    # the subgraphs' tensors (WHILE / IF), by subgraph index then name: over every run
    subgraph_ranges: dict[int, dict[str, tuple[float, float]]] = field(default_factory=dict)


def signature_aliases(graph) -> dict[str, str]:
    """A SavedModel signature's input names -> the graph's input tensor names."""
    sig = graph.signature
    return {name: t.name for (name, _), t in zip(sig.inputs, graph.inputs)} if sig else {}


def graph_samples(data, graph, preprocess: Preprocess = Preprocess()
                  ) -> Iterator[dict[str, np.ndarray]]:
    """load_samples for `graph`'s inputs, known also by its signature's names; samples in
    memory tagged with a signature key (TF's multi-signature representative datasets)
    are read by the signature of that key only."""
    key = graph.signature.key if graph.signature else None
    return load_samples(data, [t.name for t in graph.inputs], preprocess,
                        signature_aliases(graph), key)


def load_samples(path, input_names: list[str],
                 preprocess: Preprocess = Preprocess(),
                 aliases: dict[str, str] | None = None,
                 signature: str | None = None) -> Iterator[dict[str, np.ndarray]]:
    """Yield one {input name: array (no batch dim)} per sample.

    Files go through the one data reader (sample_data.read_arrays: checked before anything
    is allocated); a .npy file is memory-mapped a piece at a time (shards.shards_of), so a
    file of any size calibrates in bounded memory; a folder holds one sample per .npy file
    or image. `path` may also be data in memory: arrays, or samples from an iterable or
    generator function (memory_samples.py)."""
    if not is_path(path):
        yield from memory_samples(path, input_names, preprocess, aliases, signature)
        return
    path = os.fspath(path)
    if os.path.isdir(path):
        yield from _folder_samples(path, input_names[0], preprocess)
        return
    what = f"calibration data {quoted_path(path)}"
    layout = npy_layout(path, "calibration data") if path.lower().endswith(".npy") else None
    if layout is not None and not layout.fortran_order:
        from ..shards import source
        pieces = (shard.data.load() for shard in source.shards_of(path, None,
                                                                   source.PIECE_SAMPLES))
    else:
        pieces = iter([read_arrays(path, "calibration data")])
    for piece in pieces:
        arrays = pick_inputs(piece, input_names, what, aliases)
        for i in range(len(next(iter(arrays.values())))):
            yield {n: preprocess(a[i]) for n, a in arrays.items()}


def _folder_samples(folder: str, input_name: str,
                    preprocess: Preprocess) -> Iterator[dict[str, np.ndarray]]:
    try:
        files = sorted(f for f in os.listdir(folder)
                       if f.endswith(".npy") or f.lower().endswith(IMAGE_EXTENSIONS))
    except OSError as e:
        raise EdgeliteError(f"cannot list calibration folder {quoted_path(folder)}: "
                            f"{shown(e.strerror or e)}") from None
    if not files:
        raise EdgeliteError(f"calibration folder {quoted_path(folder)} has no .npy or image "
                            "files")
    for f in files:
        full = os.path.join(folder, f)
        x = read_array(full, "calibration sample") if f.endswith(".npy") else _read_image(full)
        yield {input_name: preprocess(x)}


def _read_image(path: str) -> np.ndarray:
    try:
        from PIL import Image
    except ImportError:
        raise EdgeliteError("reading images for calibration needs Pillow (pip install "
                            "pillow), or save the samples as .npy") from None
    try:
        with Image.open(path) as image:
            return np.asarray(image, np.float32)
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError) as e:
        raise EdgeliteError(f"cannot read calibration image {quoted_path(path)}: {shown(e)}; "
                            "remove it or save the samples as .npy") from None


def collect_ranges(model: bytes, samples, limit: int | None,
                   progress: Callable[[int], None] | None = None,
                   method: "CalibConfig | CalibMethod | str | None" = None,
                   only: set[str] | None = None, workers: int | None = None,
                   ray: str | None = None) -> CalibrationStats:
    """The range of every float tensor over the samples (each fed with a batch dim of 1).

    Each tensor has an observer (observers/) fed every sample: `method` (default minmax,
    TFLite's global min/max) for the tensors named in `only` (default: all of them), minmax
    for the rest (constants, whose ranges the rewrite does not use). The histogram methods
    (percentile, mse, entropy) read the samples twice (observers/histogram.py): min / max
    first, then histograms on a grid fixed by it -- `samples` is then read again: give a
    list or a function returning a fresh iterator (a one-shot iterator is kept as a list).

    A float sequence LSTM's cell state is observed at every step of the sequence
    (lstm_replay.py). The tensors of subgraphs a WHILE / IF calls are observed after each of
    their runs -- every iteration of a loop feeds the ranges -- with `method` for all of them.

    `workers` (processes) or `ray` ("local" or an address): the same passes over shards,
    merged exactly (calibrate_shards.py); moving-average (sample order) refuses them."""
    config = CalibConfig.parse(method)
    read = rereadable(samples, config.two_pass)
    runner = ModelRunner(model, keep_all=True, label="the float model")
    if ray is not None or (workers or 1) > 1:
        from .calibrate_shards import check_parallel, parallel_ranges
        check_parallel(runner, config)
        ranges, used, skipped = parallel_ranges(model, read, limit, workers, ray, progress,
                                                config, only)
        check_used(used, skipped)
        return CalibrationStats(ranges, used, skipped, {})
    one_pass = config if not config.two_pass else CalibConfig(CalibMethod.MINMAX)
    first = Observed(runner, lambda name: one_pass.observer() if only is None or name in only
                      else MinMaxObserver(), lambda name, k: one_pass.observer())
    skipped: list[int] = []
    used = first.run(read(), limit, skipped, None if config.two_pass else progress)
    check_used(used, skipped)
    if config.two_pass:   # the histograms, on grids fixed by the first pass's extremes
        second = Observed(runner, lambda name: config.observer(first.extremes(name))
                           if only is None or name in only else None,
                           lambda name, k: config.observer(first.extremes(name, k)))
        second.run(read(), limit, [], progress)
        first.replace(second)
    ranges, inner = first.ranges()
    return CalibrationStats(ranges, used, skipped, inner)


def rereadable(samples, again: bool = True) -> Callable[[], Iterator]:
    """A function giving an iterator over `samples` each call: `samples` itself if it is
    such a function, a list or another re-iterable as it is; a one-shot iterator is read
    into a list when it will be read `again`."""
    if callable(samples):
        return samples
    if again and iter(samples) is samples:
        samples = list(samples)
    return lambda: iter(samples)


def check_used(used: int, skipped: list[int]) -> None:
    if used == 0:
        raise EdgeliteError("no usable calibration samples" +
                            (f" ({len(skipped)} contained NaN or inf)" if skipped else ""))


class Observed:
    """One pass of calibration: an observer per float tensor of the model (`make(name)`;
    None: not observed in this pass) and per float tensor of each subgraph a WHILE / IF
    calls (`make_inner(name, subgraph)`), and the sequence LSTMs' cell states."""

    def __init__(self, runner: ModelRunner, make, make_inner) -> None:
        self.runner, interp = runner, runner.interp
        tensors = [d for d in interp.get_tensor_details() if d["dtype"] == np.float32]
        self.observers = {d["name"]: o for d in tensors if (o := make(d["name"])) is not None}
        self.tensors = [d for d in tensors if d["name"] in self.observers]
        self.inner = {k: [d for d in interp.get_tensor_details(k) if d["dtype"] == np.float32]
                      for k in range(1, interp.num_subgraphs())}
        self.inner_observers = {k: {d["name"]: make_inner(d["name"], k)
                                    for d in ds} for k, ds in self.inner.items()}
        # a float sequence LSTM's cell state: observed at every step (lstm_replay.py), not
        # only as the variable tensor holds it after the last one
        self.cells = [c for c in float_cells(interp.model) if c.cell_state in self.observers]
        self.replayed = {c.cell_state for c in self.cells}

    def _observe_subgraph(self, k: int) -> None:
        interp, observers = self.runner.interp, self.inner_observers[k]
        for d in self.inner[k]:
            observers[d["name"]].observe(interp.get_tensor(d["index"], k))

    def run(self, samples, limit: int | None, skipped: list[int], progress) -> int:
        """Observe every finite sample (at most `limit`); the number used."""
        runner = self.runner
        runner.interp.set_subgraph_observer(self._observe_subgraph if self.inner else None)
        used = 0
        for _, sample in finite_samples(samples, limit, skipped):
            runner.feed(sample)
            runner.interp.invoke()
            for d in self.tensors:
                if d["name"] not in self.replayed:
                    self.observers[d["name"]].observe(runner.stored(d["index"]))
            for cell in self.cells:
                self.observers[cell.cell_state].observe(
                    cell.states(runner.stored(cell.input_index)))
            used += 1
            if progress:
                progress(1)
        runner.interp.set_subgraph_observer(None)
        return used

    def extremes(self, name: str, subgraph: int = 0) -> tuple[float, float]:
        o = self.observers[name] if subgraph == 0 else self.inner_observers[subgraph][name]
        return o.lo, o.hi

    def replace(self, other: "Observed") -> None:
        """Take `other`'s observers (a second pass's) where it has them."""
        self.observers.update(other.observers)
        self.inner_observers = other.inner_observers

    def ranges(self) -> tuple[dict, dict]:
        ranges = {n: r for n, o in self.observers.items() if (r := o.range()) is not None}
        inner = {k: {n: r for n, o in obs.items() if (r := o.range()) is not None}
                 for k, obs in self.inner_observers.items()}
        return ranges, inner


def usable_samples(samples: Iterable[dict[str, np.ndarray]],
                   limit: int | None) -> list[dict[str, np.ndarray]]:
    """The samples calibration uses: finite ones, at most `limit` (for the passes that need
    the calibration data again: bias correction, --min-sqnr)."""
    return [sample for _, sample in usable_indexed(samples, limit)]


def usable_indexed(samples: Iterable[dict[str, np.ndarray]],
                   limit: int | None) -> list[tuple[int, dict[str, np.ndarray]]]:
    """usable_samples with each sample's position in the file (to pick its label)."""
    return list(finite_samples(samples, limit))


def finite_samples(samples: Iterable[dict[str, np.ndarray]], limit: int | None,
                   skipped: list[int] | None = None
                   ) -> Iterator[tuple[int, dict[str, np.ndarray]]]:
    """(position, sample) of the samples free of NaN / inf, at most `limit` of them; the
    positions of the others are appended to `skipped`."""
    used = 0
    for i, sample in enumerate(samples):
        if limit is not None and used >= limit:
            return
        if all(np.isfinite(v).all() for v in sample.values()):
            used += 1
            yield i, sample
        elif skipped is not None:
            skipped.append(i)
