"""The tests' one API for "run a .tflite in edgelite and in an oracle, compare".

runtimes.py  run_edgelite / run_litert(kernels) / run_micro, run_sequence (state across
             invokes), the interpreters behind them, micro_refusal, litert_delegates
compare.py   assert_close, assert_all_close, assert_matches_litert (float),
             assert_bit_exact (integer, both kernel sets), assert_sequence_matches_litert,
             assert_micro_exact
values.py    rand, full_range, random_qparams (input data)
litert_loads.py  every .tflite the converter writes in a test must load in LiteRT (conftest)
cli.py       run the `edgelite` command in process, its one error line

Model builders stay beside the tests that use them: tests/interpreter/tflite_builder.py
(.tflite by hand), tests/interpreter/op_models.py (one-op models), tests/converter/tfgraph.py
(GraphDefs), tests/converter/irgraph.py (IR graphs).
"""

from .compare import (assert_all_close, assert_bit_exact, assert_close,
                      assert_equal_outputs, assert_float_native_steps, assert_folded_alike,
                      assert_matches_litert, assert_micro_exact,
                      assert_micro_exact_samples, assert_native_fits_where_numpy_does_not,
                      assert_native_steps,
                      assert_sequence_matches_litert)
from .runtimes import (KERNEL_SETS, edgelite_interpreter, invoke, litert_delegates,
                       litert_interpreter, micro_refusal, run_edgelite, run_edgelite_samples,
                       run_litert, run_micro, run_micro_samples, run_sequence)
from .values import full_range, rand, random_qparams
