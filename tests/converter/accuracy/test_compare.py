"""`compare`: per-tensor metrics of a quantized model against its float reference, and the
culprit test -- a deliberately ruined layer comes out first."""

import json
import math
import pickle
import tracemalloc
from fractions import Fraction

import numpy as np
import pytest

from edgelite import EdgeliteError, Interpreter, ShapeError
from edgelite.converter.accuracy import base_name, compare, cosine, sqnr
from edgelite.converter.accuracy.compare_job import CompareJob
from edgelite.converter.accuracy.compare import Setup
from edgelite.converter.accuracy.report import compare_csv, compare_json
from edgelite.converter.accuracy.sources import load_model
from tests.conftest import MODELS

from ..accuracy_models import PB, digits, float_model, int8_model

N = 100  # samples per comparison
STREAM_N = 24  # samples of the per-sample reference


@pytest.fixture(scope="module")
def clean():
    return compare(PB, int8_model(), digits()[0], samples=N)


@pytest.mark.parametrize("culprit", ["keras_cnn/conv1_relu6/Relu6", "keras_cnn/dw2_relu/Relu",
                                     "keras_cnn/gap/Mean", "keras_cnn/logits/BiasAdd"])
def test_ruined_range_is_named_first(culprit):
    """Stretch one tensor's calibrated range 30x: compare names that tensor first, well
    ahead of the rest, although layers downstream of it have an even lower cumulative SQNR."""
    report = compare(PB, int8_model(culprit, 30.0), digits()[0], samples=N)
    worst = report.worst()
    assert worst[0].name == culprit, report.table()
    assert worst[0].op_sqnr_db < worst[1].op_sqnr_db - 5.0, report.table()
    clean = compare(PB, int8_model(), digits()[0], samples=N)
    assert report.output_sqnr_db < clean.output_sqnr_db - 5.0
    assert report.culprit() is worst[0]


def test_cumulative_sqnr_alone_points_downstream():
    """Why op SQNR ranks: with conv1's range ruined, a later layer's cumulative SQNR is lower
    than conv1's own, so sorting by SQNR would blame the wrong layer."""
    report = compare(PB, int8_model("keras_cnn/conv1_relu6/Relu6", 30.0), digits()[0],
                     samples=N)
    by_sqnr = report.worst(by="sqnr")
    assert by_sqnr[0].name != "keras_cnn/conv1_relu6/Relu6"
    assert by_sqnr[0].order > report.worst()[0].order


def test_clean_model_matches_every_tensor(clean):
    assert clean.samples == N and clean.unmatched == []
    rows = {t.name: t for t in clean.tensors}
    assert [t.name for t in sorted(clean.tensors, key=lambda t: t.order)] == [
        "input", "keras_cnn/conv1_relu6/Relu6", "keras_cnn/dw2_relu/Relu",
        "keras_cnn/pw2_relu/Relu", "keras_cnn/avgpool/AvgPool", "keras_cnn/gap/Mean",
        "keras_cnn/logits/BiasAdd", "probs"]
    # Boundary tensors: the int8 copies are preferred (they have a scale).
    assert (rows["input"].quant_name, rows["input"].op) == ("input_int8", "QUANTIZE")
    assert (rows["probs"].quant_name, rows["probs"].op) == ("probs_int8", "SOFTMAX")
    assert rows["keras_cnn/dw2_relu/Relu"].op == "DEPTHWISE_CONV_2D"
    assert all(t.dtype == "int8" and t.scale > 0 for t in clean.tensors)
    # The input only suffers rounding: at most half a step (the digits lie in the range).
    assert rows["input"].max_error_lsb <= 0.5 + 1e-6
    assert rows["input"].op_sqnr_db == rows["input"].sqnr_db
    assert clean.output_sqnr_db > 25.0 and clean.top1_agreement >= 0.95
    assert clean.outputs[0].name == "probs"
    for t in clean.tensors:
        assert 15.0 < t.sqnr_db < 70.0 and 0.99 < t.cosine <= 1.0


def _run_all(model: bytes, x: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray]:
    """(every sample's value of tensor `name`, dequantized; its scale)."""
    it = Interpreter(model_content=model, preserve_all_tensors=True)
    it.allocate_tensors()
    inp = it.get_input_details()[0]
    index = {d["name"]: d for d in it.get_tensor_details()}[name]
    out = []
    for sample in x:
        it.set_tensor(inp["index"], sample.reshape(inp["shape"]).astype(np.float32))
        it.invoke()
        out.append(it.get_dequantized_tensor(index["index"]))
    return np.stack(out), index["quantization"][0]


def test_metrics_pool_all_samples(clean):
    """SQNR, cosine, mean and max error equal the same metrics over the stacked samples."""
    x = digits()[0][:N]
    name = "keras_cnn/pw2_relu/Relu"
    ref, _ = _run_all(float_model(), x, name)
    deq, scale = _run_all(int8_model(), x, name)
    t = next(t for t in clean.tensors if t.name == name)
    assert t.sqnr_db == pytest.approx(sqnr(ref, deq), abs=1e-9)
    assert t.cosine == pytest.approx(cosine(ref, deq), abs=1e-12)
    err = deq.astype(np.float64) - ref
    assert t.mean_error == pytest.approx(err.mean(), abs=1e-12)
    assert t.max_abs_error == pytest.approx(np.abs(err).max())
    assert t.max_error_lsb == pytest.approx(np.abs(err).max() / scale)
    assert t.scale == pytest.approx(scale)


def test_float_tflite_reference_equals_graphdef_reference(clean):
    report = compare(float_model(), int8_model(), digits()[0], samples=N)
    assert [(t.name, t.sqnr_db, t.op_sqnr_db) for t in report.tensors] == [
        (t.name, t.sqnr_db, t.op_sqnr_db) for t in clean.tensors]


def test_model_against_itself_is_exact():
    report = compare(float_model(), float_model(), digits()[0], samples=5)
    assert report.output_sqnr_db == math.inf and report.top1_agreement == 1.0
    for t in report.tensors:
        assert t.sqnr_db == math.inf and t.cosine == pytest.approx(1.0)
        assert t.max_abs_error == 0.0 and t.max_error_lsb is None and t.mean_error == 0.0
        assert t.op_sqnr_db == math.inf and t.dtype == "float32"


def test_tflite_converter_names_are_matched():
    """TensorFlow's own float and int8 files: fused names "a;b;c" match on their first part."""
    report = compare(MODELS / "keras_cnn.tf.tflite", MODELS / "keras_cnn.tf_int8.tflite",
                     digits()[0], samples=20)
    ops = sorted(t.op for t in report.tensors if t.op)
    assert ops == sorted(["CONV_2D", "DEPTHWISE_CONV_2D", "CONV_2D", "AVERAGE_POOL_2D",
                          "MEAN", "FULLY_CONNECTED", "DEQUANTIZE"])
    assert report.output_sqnr_db > 25.0


def test_integer_io_model_gets_quantized_inputs():
    report = compare(MODELS / "tf1_cnn.pb", MODELS / "tf1_cnn.tf_int8_io.tflite",
                     digits()[0], samples=20)
    rows = {t.name: t for t in report.tensors}
    assert rows["input"].op == "" and rows["input"].dtype == "int8"
    assert rows["input"].max_error_lsb <= 0.5 + 1e-6
    assert report.output_sqnr_db > 30.0


def test_base_name():
    assert base_name("input_int8") == "input"
    assert base_name("probs_uint8") == base_name("probs_float") == "probs"
    assert base_name("a/Relu;a/bn;a/Conv2D1") == "a/Relu"
    assert base_name("my_int8_layer") == "my_int8_layer"


def test_json_is_strict_and_ranked(clean):
    def no_constants(name):
        raise AssertionError(f"non-standard JSON constant {name}")
    data = json.loads(compare_json(clean, top=3), parse_constant=no_constants)
    assert data["samples"] == N and data["sorted_by"] == "op"
    assert [t["rank"] for t in data["tensors"]] == [1, 2, 3]
    assert data["tensors"][0]["name"] == clean.worst()[0].name
    exact = json.loads(compare_json(compare(float_model(), float_model(), digits()[0],
                                            samples=2)))
    assert exact["output_sqnr_db"] == "inf"


def test_csv_has_one_row_per_tensor(clean):
    lines = compare_csv(clean, by="graph").splitlines()
    assert lines[0].startswith("rank,order,name,quant_name,op,op_index,dtype,scale,op_sqnr_db")
    assert len(lines) == 1 + len(clean.tensors)
    assert lines[1].split(",")[2] == "input"


def test_table_lists_worst_first(clean):
    text = clean.table(top=2)
    assert "output SQNR" in text and "top-1 agreement" in text
    assert "(worst 2 of 8)" in text and clean.worst()[0].name in text


def test_errors_name_the_problem(tmp_path):
    with pytest.raises(EdgeliteError, match="cannot read model .*missing.tflite.: no such file"):
        compare(tmp_path / "missing.tflite", int8_model(), digits()[0])
    with pytest.raises(ShapeError, match="input 'input'.*\\[1, 8, 8, 1\\]"):
        compare(PB, int8_model(), np.zeros((3, 5, 5), np.float32))
    other = MODELS / "op_zoo_math.tf.tflite"
    with pytest.raises(EdgeliteError, match="different inputs"):
        compare(other, int8_model(), digits()[0])
    bad = tmp_path / "data.npz"
    np.savez(bad, a=np.zeros((2, 8, 8, 1)), b=np.zeros((2, 8, 8, 1)))
    with pytest.raises(EdgeliteError, match="name them after the model inputs"):
        compare(PB, int8_model(), bad)
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"not a model at all")
    with pytest.raises(EdgeliteError, match="neither a .tflite"):
        compare(junk, int8_model(), digits()[0])


def test_reference_must_be_float_and_data_finite():
    with pytest.raises(EdgeliteError, match="reference .* is an int8 model; give the float"):
        compare(int8_model(), int8_model(), digits()[0])
    x = digits()[0][:6].copy()
    x[4, 0, 0, 0] = np.nan
    with pytest.raises(EdgeliteError, match="1 sample\\(s\\) for input 'input' hold NaN or "
                                            "inf \\(indices \\[4\\]\\)"):
        compare(PB, int8_model(), x)


# -- streaming: each sample's tensors read once and folded into running sums ------------

# The table of the code before the streaming rewrite (base 675b4f7, keras_cnn, 100
# samples): printed numbers must not move.
BEFORE_COMPARE = """\
tensors, worst first by op SQNR (the error each op adds by itself) (8):
  #  tensor                       op                     dtype  op SQNR  SQNR dB   cosine  max err (LSB)   mean err
  1  keras_cnn/logits/BiasAdd     FULLY_CONNECTED (6)    int8     35.22    31.23  0.99963           18.4    +0.0321
  2  keras_cnn/avgpool/AvgPool    AVERAGE_POOL_2D (4)    int8     37.41    32.02  0.99969            9.5    -0.0111
  3  keras_cnn/pw2_relu/Relu      CONV_2D (3)            int8     37.73    31.35  0.99963           38.7   -0.00102
  4  keras_cnn/dw2_relu/Relu      DEPTHWISE_CONV_2D (2)  int8     41.11    34.95  0.99984           18.5  +3.41e-05
  5  keras_cnn/conv1_relu6/Relu6  CONV_2D (1)            int8     41.99    41.78  0.99997            1.4  +0.000188
  6  keras_cnn/gap/Mean           MEAN (5)               int8     49.68    36.03  0.99990           15.3    -0.0113
  7  probs                        SOFTMAX (7)            int8     50.56    34.49  0.99983           17.0  -0.000297
  8  input                        QUANTIZE (0)           int8     55.83    55.83  1.00000            0.5  -8.56e-05"""


def test_printed_report_is_that_of_the_code_before(clean):
    table = clean.table()
    start = table.index("tensors, worst first")
    assert table[start:start + len(BEFORE_COMPARE)] == BEFORE_COMPARE
    assert "output SQNR 34.49 dB, top-1 agreement 100.00%" in table


def _per_sample_reference(x: np.ndarray, pairs) -> dict:
    """Per tensor pair: every sample run alone in a fresh Interpreter of each model, the
    dequantized value read, each sample's sums taken left to right one Python float at a
    time and added exactly (Fractions)."""
    runs = []
    for content in (float_model(), int8_model()):
        it = Interpreter(model_content=content, preserve_all_tensors=True)
        it.allocate_tensors()
        runs.append((it, it.get_input_details()[0],
                     {d["name"]: d["index"] for d in it.get_tensor_details()}))
    out = {}
    for name, quant_name in pairs:
        sums, count, max_abs = [Fraction(0)] * 5, 0, 0.0
        for sample in x:
            values = []
            for (it, inp, index), tensor in zip(runs, (name, quant_name)):
                it.set_tensor(inp["index"], sample.reshape(inp["shape"]).astype(np.float32))
                it.invoke()
                values.append(it.get_dequantized_tensor(index[tensor]).ravel().tolist())
            part = [0.0] * 5
            for r, t in zip(*values):
                e = t - r
                part = [part[0] + r * r, part[1] + t * t, part[2] + r * t, part[3] + e * e,
                        part[4] + e]
                max_abs = max(max_abs, abs(e))
            sums = [s + Fraction(p) for s, p in zip(sums, part)]
            count += len(values[0])
        rr, tt, rt, ee, es = (float(s) for s in sums)
        out[name] = dict(sqnr_db=math.inf if ee == 0 else 10 * math.log10(rr / ee),
                         cosine=rt / math.sqrt(rr * tt), mean_error=es / count,
                         max_abs_error=max_abs)
    return out


def test_every_tensor_equals_a_per_sample_reference_bit_for_bit():
    x = digits()[0][:STREAM_N]
    report = compare(PB, int8_model(), x)
    expected = _per_sample_reference(x, [(t.name, t.quant_name) for t in report.tensors])
    for t in report.tensors:
        got = dict(sqnr_db=t.sqnr_db, cosine=t.cosine, mean_error=t.mean_error,
                   max_abs_error=t.max_abs_error)
        assert got == expected[t.name], t.name
        assert t.max_error_lsb == t.max_abs_error / t.scale


def test_reports_do_not_depend_on_sharding():
    x = digits()[0][:STREAM_N]
    whole = compare(PB, int8_model(), x).to_dict()
    assert compare(PB, int8_model(), x, shard_samples=5).to_dict() == whole
    assert compare(PB, int8_model(), x, shard_samples=1).to_dict() == whole


def _setup() -> Setup:
    ref, quant = load_model(float_model()), load_model(int8_model())
    return CompareJob(ref, quant).setup()


def test_a_long_compare_keeps_nothing_per_sample():
    """The statistics of 8 and of 96 samples have the same size, and measuring 96 samples
    peaks within a few samples' tensors of measuring 8."""
    setup = _setup()
    x = digits()[0]
    one_sample = sum(4 * int(np.prod(setup.ref.details[t.name]["shape"]))
                     for t in (p.report for p in setup.pairs))
    sizes, peaks = [], []
    for n in (8, 96):
        arrays = {setup.ref.input_names[0]: x[:n]}
        tracemalloc.start()
        tally = setup.measure(arrays, ("ref", "quant"))
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        assert tally.samples == n
        sizes.append(len(pickle.dumps(tally)))
    assert abs(sizes[1] - sizes[0]) < 0.1 * sizes[0]       # a few more digits in the sums
    # keeping the 88 extra samples' tensors would add 88 x one_sample
    assert peaks[1] - peaks[0] < 8 * one_sample, (peaks, one_sample)
