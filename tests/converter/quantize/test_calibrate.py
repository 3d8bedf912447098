"""Calibration data loading, NaN handling, and user-given ranges."""

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.converter.quantize import IOType, Preprocess, QuantizeOptions, QuantMode
from edgelite.converter.quantize.calibrate import load_samples
from edgelite.interpreter import Interpreter
from edgelite.errors import EdgeliteError
from tests.conftest import MODELS

X = np.load(MODELS / "digits_calib.npy")


def quantized(**kw):
    return convert_detailed(MODELS / "tf1_cnn.pb",
                            ConvertOptions(quantize=QuantizeOptions(**kw)))


def input_params(result):
    t = next(t for t in result.graph.tensors() if t.name == "input_int8")
    return float(t.quant.scale[0]), int(t.quant.zero_point[0])


def test_npy_npz_and_folder_give_the_same_ranges(tmp_path):
    np.save(tmp_path / "x.npy", X[:20])
    np.savez(tmp_path / "x.npz", input=X[:20])
    folder = tmp_path / "samples"
    folder.mkdir()
    for i in range(20):
        np.save(folder / f"{i:03d}.npy", X[i])
    ranges = [quantized(mode=QuantMode.INT8, calib=str(p)).quantization.calibration.ranges
              for p in (tmp_path / "x.npy", tmp_path / "x.npz", folder)]
    assert ranges[0] == ranges[1] == ranges[2]
    assert ranges[0]["input"] == (float(X[:20].min()), float(X[:20].max()))


def test_npy_is_memory_mapped_a_piece_at_a_time(tmp_path, monkeypatch):
    """A .npy file streams in memory-mapped pieces (never read whole), with the samples and
    their order unchanged; past the first piece, every piece still reaches the observers."""
    from edgelite.converter.shards import source
    monkeypatch.setattr(source, "PIECE_SAMPLES", 7)
    np.save(tmp_path / "x.npy", X[:20])
    got = list(load_samples(tmp_path / "x.npy", ["input"]))
    assert len(got) == 20
    np.testing.assert_array_equal(np.stack([g["input"] for g in got]), X[:20])
    assert isinstance(got[-1]["input"], np.ndarray)
    mapped = [s.data.load() for s in source.shards_of(tmp_path / "x.npy", piece=7)]
    assert [len(m) for m in mapped] == [7, 7, 6]
    assert all(isinstance(m, np.memmap) for m in mapped)
    stats = quantized(mode=QuantMode.INT8, calib=str(tmp_path / "x.npy")).quantization.calibration
    assert stats.used == 20 and stats.ranges["input"] == (float(X[:20].min()),
                                                          float(X[:20].max()))


def test_calib_samples_limit_and_nan_samples_are_skipped(tmp_path):
    data = X[:10].copy()
    data[3, 0, 0, 0] = np.nan
    data[7, 1, 1, 0] = np.inf
    np.save(tmp_path / "x.npy", data)
    stats = quantized(mode=QuantMode.INT8, calib=str(tmp_path / "x.npy")).quantization.calibration
    assert stats.used == 8 and stats.skipped == [3, 7]
    stats = quantized(mode=QuantMode.INT8, calib=str(tmp_path / "x.npy"),
                      calib_samples=2).quantization.calibration
    assert stats.used == 2


def test_all_nan_is_an_error(tmp_path):
    np.save(tmp_path / "x.npy", np.full((3, 8, 8, 1), np.nan, np.float32))
    with pytest.raises(EdgeliteError, match="no usable calibration samples .3 contained NaN"):
        quantized(mode=QuantMode.INT8, calib=str(tmp_path / "x.npy"))


def test_preprocess():
    p = Preprocess.parse("mean=127.5,scale=0.5")
    np.testing.assert_allclose(p(np.array([127.5, 255.0])), [0.0, 63.75])
    with pytest.raises(EdgeliteError, match="mean=M,scale=S"):
        Preprocess.parse("avg=3")
    sample = next(load_samples(MODELS / "digits_calib.npy", ["input"], Preprocess(0.5, 2.0)))
    np.testing.assert_allclose(sample["input"], (X[0] - 0.5) * 2.0)


def test_missing_range_names_the_tensor():
    with pytest.raises(EdgeliteError, match=r"4 tensor\(s\) have no range: 'input', 'conv1/Relu', 'conv2/Relu', 'fc/logits'.*--default-range"):
        quantized(mode=QuantMode.INT8)


def test_user_ranges_and_default_range():
    r = quantized(mode=QuantMode.INT8, input_ranges={"input": (0.0, 1.0)},
                  default_range=(-8.0, 8.0))
    scale, zp = input_params(r)
    assert scale == pytest.approx(1 / 255) and zp == -128
    conv = next(t for t in r.graph.tensors() if t.name == "conv1/Relu")
    assert conv.quant.scale[0] == pytest.approx(16 / 255)


def test_mean_std_is_tocos_input_stats():
    """real = (q - mean) / std: uint8 io with mean 0, std 255 means q / 255."""
    r = quantized(mode=QuantMode.UINT8, io_type=IOType.UINT8, mean_std={"input": (0.0, 255.0)},
                  default_range=(-8.0, 8.0))
    interp = Interpreter(model_content=r.model)
    d = interp.get_input_details()[0]
    assert d["dtype"] == np.uint8
    assert d["quantization"][0] == pytest.approx(1 / 255) and d["quantization"][1] == 0


def test_unknown_input_name_in_ranges():
    with pytest.raises(EdgeliteError, match="'inp' is not a model input"):
        quantized(mode=QuantMode.INT8, input_ranges={"inp": (0.0, 1.0)})


def _in_edgelite_and_litert(model: bytes, x: np.ndarray, litert) -> list[np.ndarray]:
    """The one-input model's output on x, in edgelite and in LiteRT."""
    outs = []
    for interp in (Interpreter(model_content=model), litert.Interpreter(model_content=model)):
        interp.allocate_tensors()
        interp.set_tensor(interp.get_input_details()[0]["index"], x)
        interp.invoke()
        outs.append(interp.get_tensor(interp.get_output_details()[0]["index"]))
    return outs


def _where_log_is_finite():
    """y = where(is_finite(log(x)), x, -2 x): log is NaN for x < 0 (TF's spelling of
    a test for non-finite values)."""
    from tests.converter.lower.lowering import F32, graph

    g = graph(x=(2, 6))
    g.node("l", "Log", ["x"], T=F32)
    g.node("f", "IsFinite", ["l"], T=F32)
    g.const("k", np.float32(-2.0))
    g.node("m", "Mul", ["x", "k"], T=F32)
    g.node("y", "SelectV2", ["f", "x", "m"], T=F32)
    return g


def test_ops_about_nan_and_inf_stay_float(tmp_path, litert):
    """Calibration sees NaN in log(x) on every sample (no range): the LOG, and IsFinite's SUB
    and EQUAL, stay float; the rest is int8 and computes the float model's values."""
    rng = np.random.default_rng(5)
    np.save(tmp_path / "calib.npy", rng.normal(0, 2, (16, 2, 6)).astype(np.float32))
    result = convert_detailed(_where_log_is_finite().bytes(), ConvertOptions(
        quantize=QuantizeOptions(mode=QuantMode.INT8, calib=str(tmp_path / "calib.npy"))))
    kinds = {(op.type, op.outputs[0].dtype.name) for op in result.graph.ops}
    assert {("LOG", "float32"), ("SUB", "float32"), ("EQUAL", "bool"),
            ("MUL", "int8"), ("SELECT_V2", "int8")} <= kinds
    x = rng.normal(0, 2, (2, 6)).astype(np.float32)
    want = np.where(x > 0, x, -2 * x)
    for got in _in_edgelite_and_litert(result.model, x, litert):
        assert np.abs(got - want).max() < 0.05 * np.abs(want).max()


def test_ops_their_integer_kernels_cannot_take_stay_float(tmp_path, litert):
    """A DIV by |x| (calibrated down to ~0: a divisor quantized to its zero point, which
    div.cc refuses at invoke) and a comparison of 1000 x (scale >= 1: undefined in
    comparisons.cc) stay float; the file runs in LiteRT and edgelite."""
    from tests.converter.lower.lowering import F32, graph

    g = graph(x=(2, 6))
    g.node("a", "Abs", ["x"], T=F32)
    g.const("eps", np.float32(0.25))
    g.node("d", "AddV2", ["a", "eps"], T=F32)       # |x| + 0.25: a safe divisor, stays int8
    g.node("q", "RealDiv", ["x", "d"], T=F32)
    g.node("r", "RealDiv", ["x", "a"], T=F32)       # x / |x|: stays float
    g.const("k", np.float32(1000.0))
    g.node("big", "Mul", ["x", "k"], T=F32)
    g.const("zero", np.float32(0.0))
    g.node("c", "Greater", ["big", "zero"], T=F32)  # stays float
    g.node("y", "SelectV2", ["c", "q", "r"], T=F32)
    rng = np.random.default_rng(6)
    np.save(tmp_path / "calib.npy", rng.normal(0, 2, (16, 2, 6)).astype(np.float32))
    result = convert_detailed(g.bytes(), ConvertOptions(quantize=QuantizeOptions(
        mode=QuantMode.INT8, calib=str(tmp_path / "calib.npy"))))
    kinds = [(op.type, op.outputs[0].dtype.name, op.inputs[0].dtype.name)
             for op in result.graph.ops if op.type in ("DIV", "GREATER")]
    assert sorted(kinds) == [("DIV", "float32", "float32"), ("DIV", "int8", "int8"),
                             ("GREATER", "bool", "float32")]
    x = np.array([[-3, -1, -0.5, 0.5, 1, 3], [2, -2, 0.1, -0.1, 4, -4]], np.float32)
    want = np.where(x > 0, x / (np.abs(x) + 0.25), np.sign(x))
    for got in _in_edgelite_and_litert(result.model, x, litert):
        assert np.abs(got - want).max() < 0.05


def test_is_finite_stays_float_with_given_ranges():
    """IsFinite's x - x is the single value 0: no quantized comparison takes it (scale 1.0),
    so its SUB and EQUAL run in float even without calibration."""
    result = convert_detailed(_where_log_is_finite().bytes(), ConvertOptions(
        quantize=QuantizeOptions(mode=QuantMode.INT8, input_ranges={"x": (-4.0, 4.0)},
                                 default_range=(-8.0, 8.0))))
    kinds = {(op.type, op.outputs[0].dtype.name) for op in result.graph.ops}
    assert {("SUB", "float32"), ("EQUAL", "bool"), ("LOG", "int8")} <= kinds
