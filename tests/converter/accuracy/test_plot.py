"""converter/accuracy/plot.py: the SQNR plot's labels (names from files as plain text) and
the one-line refusal without matplotlib (the figure itself: tests/cli/test_compare_cmd.py,
when matplotlib is installed)."""

import sys

import pytest

from edgelite.converter.accuracy import plot
from edgelite.converter.accuracy.compare import CompareReport
from edgelite.errors import EdgeliteError


def test_labels_are_plain_text():
    assert plot._label("model/block_3/conv/Relu6;fused") == "conv/Relu6"
    assert plot._text("cost $x$") == r"cost \$x\$"  # no matplotlib math mode
    assert plot._text("a\x1b[31mb") == "a\\x1b[31mb"
    assert len(plot._text("n" * 100)) == plot.LABEL_CHARS


def test_without_matplotlib_one_line_and_no_file(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    with pytest.raises(EdgeliteError, match=r"^no plot written: --plot needs matplotlib"):
        plot.plot_sqnr(CompareReport.__new__(CompareReport), tmp_path / "p.png")
    assert not (tmp_path / "p.png").exists()
