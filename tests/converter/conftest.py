import pytest


@pytest.fixture(autouse=True)
def check_ir_index(monkeypatch):
    """Converter tests run with the IR index validated after every pass and at every
    Graph.check() (ir.index_checks_enabled)."""
    monkeypatch.setenv("EDGELITE_CHECK_IR", "1")
