"""Every Python package folder is listed in pyproject.toml, so a non-editable install works."""

import re

from tests.conftest import ROOT

PARTS = {"api": "edgelite", "converter": "edgelite.converter",
         "interpreter": "edgelite.interpreter", "schema": "edgelite.schema",
         "cli": "edgelite.cli"}


def test_every_package_is_listed():
    listed = set(re.findall(r'"(edgelite[\w.]*)"', (ROOT / "pyproject.toml").read_text()))
    found = set()
    for folder, name in PARTS.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join((name, *rel)))
    assert found - listed == set(), "add these to [tool.setuptools] packages"


def test_interpreter_imports_no_converter_or_cli():
    for path in (ROOT / "interpreter").rglob("*.py"):
        text = path.read_text()
        assert not re.search(r"^\s*(from|import) (\.\.converter|\.\.cli|edgelite\.converter|"
                             r"edgelite\.cli|tensorflow|ai_edge_litert)", text, re.M), path
