"""The TFLite Micro arena (interpreter/micro/arena.py; the planner: test_plan.py) on
hand-built graphs, and, with TFLM's runtime as the oracle, on every int8 sample model that
TFLM runs (TensorFlow's files and edgelite's conversions of the sample GraphDefs): the plan's
peak equals TFLM's RecordingMicroAllocator head (and its TfLiteEvalTensor and
NodeAndRegistration figures match ours to the 16-byte rounding), the reported host arena
works in TFLM, and 5 % less does not (so the report is >= the smallest arena TFLM accepts
and within 5 %)."""

import os
import pathlib
import re
import subprocess
import sys
import tempfile

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.converter.quantize import QuantizeOptions, QuantMode
from edgelite.interpreter import ModelFormatError, micro_arena, micro_arena_report
from edgelite.interpreter.micro.plan import peak, plan
from edgelite.interpreter.loader.model import load_model
from edgelite.schema import generated_tflite as tfl
from edgelite.schema import model_io
from tests.conftest import MODELS, micro_module
from tests.interpreter import subgraph_models
from tests.interpreter.tflite_builder import ModelBuilder

TOLERANCE = 0.05
# TF's int8 files TFLM cannot run: a non-constant PAD paddings tensor, RANGE, DENSIFY,
# TILE, POW, SELECT (TFLM has no kernel / rejects them at Prepare).
TFLM_REFUSES = {"shape_audio.tf_int8.tflite", "shape_values.tf_int8.tflite",
                "sparse_cnn.tf_int8.tflite", "op_zoo_array.int8.tflite",
                "op_zoo_math.int8.tflite", "misc_isfinite.tf_int8.tflite"}
# every file, the pending rnn_ / kws_ ones included: TFLM runs them all
TF_FILES = [p for p in sorted(MODELS.glob("*.tf_int8*.tflite")) + sorted(
    (MODELS / "tf_modes").glob("*.int8.tflite")) if p.name not in TFLM_REFUSES]
GRAPHDEFS = {"tf1_cnn": "digits", "keras_cnn": "digits", "qat_cnn": "digits",
             "mobilenet_v2_digits": "digits", "fashion_mobilenet_v2": "fashion"}


def _chain_model() -> bytes:
    """x[1,8,8,4] -> ADD(x, x) -> a[1,8,8,4] -> ADD(a, x) -> b -> ADD(b, a) -> y (int8)."""
    mb = ModelBuilder()
    x, a, b, y = (mb.tensor(n, [1, 8, 8, 4], np.int8, scale=0.05, zero_point=0)
                  for n in "xaby")
    mb.op("ADD", [x, x], [a])
    mb.op("ADD", [a, x], [b])
    mb.op("ADD", [b, a], [y])
    return mb.build(inputs=[x], outputs=[y])


def test_plan_of_a_chain_is_exact():
    # 256-byte tensors; lifetimes x [0,2], a [1,3], b [2,3], y [3,3]; placed by size then
    # higher index first: y at 0, b at 256 (overlaps y), a at 512, x at 0 (y starts after)
    data = _chain_model()
    buffers = plan(load_model(data))
    assert [(b.tensor, b.first, b.last, b.size, b.offset) for b in buffers] == [
        (0, 0, 2, 256, 0), (1, 1, 3, 256, 512), (2, 2, 3, 256, 256), (3, 3, 3, 256, 0)]
    assert peak(buffers) == 768 == _recorded_head(micro_module(), data)


def _with_offline_plan(data: bytes, offsets: list[int]) -> bytes:
    """``data`` with TFLM's OfflineMemoryAllocation metadata: version 1, subgraph 0, the
    tensor count, then one offset per tensor (-1: plan online)."""
    m = tfl.ModelT.InitFromPackedBuf(data, 0)
    buf = tfl.BufferT()
    buf.data = np.array([1, 0, len(offsets), *offsets], "<i4").view(np.uint8)
    m.buffers.append(buf)
    meta = tfl.MetadataT()
    meta.name = "OfflineMemoryAllocation"
    meta.buffer = len(m.buffers) - 1
    m.metadata = [meta]
    return model_io.pack_model(m)


def test_offline_plan_is_followed():
    # b and y offline at 512 and 0 (placed first); then the online ones, a before x
    # (same size, higher index first): a overlaps y and b, fits between them at 256;
    # x ([0, 2]) misses y, fits below a at 0
    data = _with_offline_plan(_chain_model(), [-1, -1, 512, 0])
    buffers = plan(load_model(data))
    assert [(b.tensor, b.offset, b.offline) for b in buffers] == [
        (0, 0, False), (1, 256, False), (2, 512, True), (3, 0, True)]
    assert peak(buffers) == 768 == _recorded_head(micro_module(), data)


def _recorded(runtime, data: bytes) -> dict[str, int]:
    """TFLM's RecordingMicroAllocator figures (printed from C++ to stderr): "head", and the
    bytes used by "TfLiteEvalTensor data" and "NodeAndRegistration struct"."""
    interp = runtime.Interpreter.from_bytes(
        data, arena_size=4_000_000,
        intrepreter_config=runtime.InterpreterConfig.kAllocationRecording)
    saved = os.dup(2)
    with tempfile.TemporaryFile() as f:
        os.dup2(f.fileno(), 2)
        try:
            interp.print_allocations()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        f.seek(0)
        text = f.read().decode(errors="replace")
    figures = {"head": int(re.search(r"head (\d+) bytes", text).group(1))}
    for key in ("TfLiteEvalTensor", "NodeAndRegistration"):
        found = re.search(key + r"[^']*' used (\d+) bytes", text)
        figures[key] = int(found.group(1)) if found else 0
    return figures


def _recorded_head(runtime, data: bytes) -> int:
    return _recorded(runtime, data)["head"]


# A child process runs TFLM on "path arena" lines (stdin) and prints "ok" / "fails" for
# each: TFLM can crash (SIGSEGV) on an arena too small, so a crash counts as "fails" for
# the model it was running and a new child takes the rest.
_PROBE = """
import sys
import numpy as np
from tflite_micro.python.tflite_micro import runtime


def outputs(data, arena):
    try:
        interp = runtime.Interpreter.from_bytes(data, arena_size=arena)
        rng = np.random.default_rng(0)
        i = 0
        while True:
            try:
                d = interp.get_input_details(i)
            except Exception:
                break
            dt = np.dtype(d["dtype"])
            x = (np.zeros(d["shape"], dt) if dt.kind not in "iu" or dt.itemsize > 2
                 else rng.integers(-100, 100, size=d["shape"]).astype(dt))
            interp.set_input(x, i)
            i += 1
        interp.invoke()
    except Exception:
        return None
    out = []
    while True:
        try:
            out.append(np.array(interp.get_output(len(out))).copy())
        except Exception:
            return out


for line in sys.stdin:
    path, arena = line.split()
    data = open(path, "rb").read()
    ref, out = outputs(data, 4_000_000), outputs(data, int(arena))
    same = out is not None and len(out) == len(ref) and all(
        np.array_equal(a, b) for a, b in zip(out, ref))
    print("ok" if same else "fails", flush=True)
"""


def works_in_tflm(jobs: list[tuple[pathlib.Path, int]]) -> list[bool]:
    """For each (model file, arena): whether TFLM runs the model with that arena and gives
    the outputs it gives with a large one."""
    results: list[bool] = []
    while len(results) < len(jobs):
        rest = jobs[len(results):]
        done = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True,
                              input="".join(f"{p} {n}\n" for p, n in rest).encode(),
                              timeout=600)
        answers = done.stdout.decode().split()
        results += [a == "ok" for a in answers]
        if done.returncode != 0 and len(answers) < len(rest):
            assert done.returncode < 0, done.stderr.decode()[-2000:]  # a crash, not a bug
            results.append(False)
    return results


@pytest.fixture(scope="module")
def edgelite_files(tmp_path_factory):
    """edgelite's int8 conversions of the sample GraphDefs, calibrated on their data."""
    folder = tmp_path_factory.mktemp("micro")
    fashion = folder / "fashion_calib.npy"
    np.save(fashion, np.load(MODELS / "fashion_calib.npz")["x"])
    files = {}
    for name, data in GRAPHDEFS.items():
        calib = fashion if data == "fashion" else MODELS / "digits_calib.npy"
        q = QuantizeOptions(mode=QuantMode("int8"), calib=str(calib))
        files[name] = folder / f"{name}.el_int8.tflite"
        files[name].write_bytes(convert_detailed(MODELS / f"{name}.pb",
                                                 ConvertOptions(quantize=q)).model)
    return files


@pytest.fixture(scope="module")
def built_files(tmp_path_factory):
    """Hand-built models TFLM runs: a WHILE loop over int8 subgraphs, the ADD chain."""
    folder = tmp_path_factory.mktemp("built")
    files = {"int8_while": folder / "int8_while.tflite", "chain": folder / "chain.tflite",
             "batch_matmul": folder / "batch_matmul.tflite"}
    files["int8_while"].write_bytes(subgraph_models.int8_while())
    files["chain"].write_bytes(_chain_model())
    files["batch_matmul"].write_bytes(_batch_matmul_model())
    return files


def _batch_matmul_model() -> bytes:
    """An attention-weighted sum, [1, 4, 32] x [1, 32, 128] int8, both operands computed:
    TFLM keeps a transposed copy of the right one (batch_matmul.cc)."""
    b = ModelBuilder()
    x = b.tensor("x", [1, 4, 32], np.int8, scale=0.1, zero_point=0)
    y = b.tensor("y", [1, 32, 128], np.int8, scale=0.1, zero_point=0)
    o = b.tensor("o", [1, 4, 128], np.int8, scale=0.5, zero_point=0)
    b.op("BATCH_MATMUL", [x, y], [o], adj_x=False, adj_y=False)
    return b.build([x, y], [o])


@pytest.fixture(scope="module")
def tflm_works(edgelite_files, built_files):
    """Whether TFLM runs each model with the reported host arena and with 5 % less:
    {(path, arena): bool}, from one batch of child processes for all models."""
    micro_module()
    jobs = []
    for path in (TF_FILES + [edgelite_files[n] for n in sorted(GRAPHDEFS)]
                 + [built_files[n] for n in sorted(built_files)]):
        arena = micro_arena(path.read_bytes(), "host")
        jobs += [(path, arena), (path, int(arena / (1 + TOLERANCE)))]
    return dict(zip(jobs, works_in_tflm(jobs)))


def _check_against_tflm(path: pathlib.Path, tflm_works: dict, what: str) -> None:
    data = path.read_bytes()
    report = micro_arena_report(data, "host")
    recorded = _recorded(micro_module(), data)
    assert report.head == recorded["head"], what
    for key in ("TfLiteEvalTensor", "NodeAndRegistration"):  # ours: rounded up to 16
        assert 0 <= report.parts[key] - recorded[key] < 16, (what, key)
    assert tflm_works[(path, report.total)], f"{what}: the reported arena is too small"
    below = int(report.total / (1 + TOLERANCE))
    assert not tflm_works[(path, below)], f"{what}: more than 5 % above the smallest arena"
    assert micro_arena(data, "32bit") <= report.total


@pytest.mark.parametrize("path", TF_FILES, ids=lambda p: p.name)
def test_tensorflow_int8_files(path, tflm_works):
    _check_against_tflm(path, tflm_works, path.name)


@pytest.mark.parametrize("name", sorted(GRAPHDEFS))
def test_edgelite_int8_conversions(name, edgelite_files, tflm_works):
    _check_against_tflm(edgelite_files[name], tflm_works, f"edgelite {name}")


@pytest.mark.parametrize("name", ["chain", "int8_while", "batch_matmul"])
def test_built_models(name, built_files, tflm_works):
    _check_against_tflm(built_files[name], tflm_works, name)


def test_a_subgraph_that_runs_itself_is_refused():
    m = tfl.ModelT.InitFromPackedBuf(subgraph_models.int8_while(), 0)
    m.subgraphs[0].operators[0].builtinOptions.bodySubgraphIndex = 0
    with pytest.raises(ModelFormatError, match="runs subgraph 0, which is already running"):
        micro_arena(model_io.pack_model(m))


def test_bad_target():
    with pytest.raises(ValueError, match="32bit, host"):
        micro_arena(_chain_model(), "16bit")
