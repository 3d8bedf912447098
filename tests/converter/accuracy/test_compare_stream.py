"""compare and eval stream: each sample's tensors are read once and folded into running sums,
so the reports equal a plain per-sample computation, do not depend on how the data is split,
and a long run keeps nothing per sample."""

import math
import pickle
import tracemalloc
from fractions import Fraction

import numpy as np
import pytest

from edgelite import Interpreter
from edgelite.converter.accuracy import compare, evaluate
from edgelite.converter.accuracy.compare import Setup
from edgelite.converter.accuracy.compare_job import CompareJob
from edgelite.converter.accuracy.sources import load_model

from ..accuracy_models import PB, TEST, digits, float_model, int8_model

N = 24

# The tables of the code before the streaming rewrite (base 675b4f7, keras_cnn, 100 samples;
# eval 150 samples, top-2): printed numbers must not move.
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

BEFORE_EVAL = """\
150 samples, 10 classes

model    precision  accuracy    top-2  vs first
<bytes>  float        97.33%  100.00%
<bytes>  int8         97.33%  100.00%     +0.00

per-class accuracy:
  class   n      [1]      [2]
      0  15  100.00%  100.00%
      1  14   78.57%   78.57%
      2  17  100.00%  100.00%
      3  14  100.00%  100.00%
      4  16  100.00%  100.00%
      5  15  100.00%  100.00%
      6  13  100.00%  100.00%
      7  14  100.00%  100.00%
      8  17   94.12%   94.12%
      9  15  100.00%  100.00%
  [1] <bytes>, [2] <bytes>"""


def test_printed_reports_are_those_of_the_code_before():
    report = compare(PB, int8_model(), digits()[0], samples=100)
    table = report.table()
    start = table.index("tensors, worst first")
    assert table[start:start + len(BEFORE_COMPARE)] == BEFORE_COMPARE
    assert "output SQNR 34.49 dB, top-1 agreement 100.00%" in table
    ev = evaluate([float_model(), int8_model()], TEST, TEST, top_k=2, samples=150)
    assert ev.table() == BEFORE_EVAL


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
    x = digits()[0][:N]
    report = compare(PB, int8_model(), x)
    expected = _per_sample_reference(x, [(t.name, t.quant_name) for t in report.tensors])
    for t in report.tensors:
        got = dict(sqnr_db=t.sqnr_db, cosine=t.cosine, mean_error=t.mean_error,
                   max_abs_error=t.max_abs_error)
        assert got == expected[t.name], t.name
        assert t.max_error_lsb == t.max_abs_error / t.scale


def test_reports_do_not_depend_on_sharding():
    x = digits()[0][:N]
    whole = compare(PB, int8_model(), x).to_dict()
    assert compare(PB, int8_model(), x, shard_samples=5).to_dict() == whole
    assert compare(PB, int8_model(), x, shard_samples=1).to_dict() == whole
    ev = [evaluate([float_model(), int8_model()], TEST, TEST, samples=40, shard_samples=k)
          .to_dict() for k in (40, 7, 16)]
    assert ev[0] == ev[1] == ev[2]


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
