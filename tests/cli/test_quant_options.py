"""cli/quant_options.py: the convert command's quantization flags become QuantizeOptions;
a malformed value is one usage line naming the flag."""

import re

import click
import pytest
from click.testing import CliRunner

from edgelite.cli.quant_options import quantize_config, quantize_options
from edgelite.converter.quantize import CalibConfig, QuantMode


def _parse(*args):
    """(exit code, output, the QuantizeOptions the flags give)."""
    seen = []

    @click.command()
    @quantize_options
    def command(**q):
        with quantize_config(q) as options:
            seen.append(options)

    result = CliRunner().invoke(command, list(args))
    return result.exit_code, result.output, (seen[0] if seen else None)


def test_no_quantize_flag_is_a_float_model():
    assert _parse() == (0, "", None)


def test_flags_become_options():
    status, output, q = _parse("--quantize", "int8", "--per-tensor", "--input-range", "x:-1,1",
                               "--input-range", "a:b:0,6", "--mean-std", "img:127.5,127.5",
                               "--default-range", "-6,6", "--keep-float", "SOFTMAX",
                               "--calib-method", "percentile:99.9")
    assert status == 0, output
    assert q.mode == QuantMode.INT8 and q.precision.per_channel is False
    assert q.io.input_ranges == {"x": (-1.0, 1.0), "a:b": (0.0, 6.0)}  # the last ':' splits
    assert q.io.mean_std == {"img": (127.5, 127.5)} and q.io.default_range == (-6.0, 6.0)
    assert q.precision.keep_float == ("SOFTMAX",)
    assert q.calibration.method == CalibConfig.parse("percentile:99.9")
    assert q.transforms.auto is False
    assert _parse("--quantize", "uint8", "--calib-method", "AUTO")[2].transforms.auto is True


@pytest.mark.parametrize("args, message", [
    (["--input-range", "x:1"], r"Invalid value for --input-range: 'x:1': expected NAME:A,B"),
    (["--mean-std", "1,2"], r"Invalid value for --mean-std: '1,2': expected NAME:A,B"),
    (["--default-range", "a,b"], r"Invalid value for --default-range: 'a,b': expected MIN,MAX"),
    (["--calib-method", "median"], r"Invalid value for --calib-method: .*median"),
])
def test_malformed_values_are_one_usage_line(args, message):
    status, output, q = _parse("--quantize", "int8", *args)
    assert status == 2 and q is None
    assert len([line for line in output.splitlines() if line.startswith("Error:")]) == 1
    assert re.search(message, output), output
