"""Regenerating the schema bindings must reproduce the committed files byte for byte."""

import pytest

pytest.importorskip("grpc_tools", reason="grpcio-tools not installed")

from edgelite.schema import regenerate  # noqa: E402


def _flatc_or_skip():
    try:
        flatc = regenerate.find_flatc()
        version = regenerate.flatc_version(flatc)
    except (regenerate.RegenerateError, OSError):
        pytest.skip("flatc not installed")
    # Byte-equality only holds for the pinned generator versions.
    if version != regenerate.FLATC_VERSION:
        pytest.skip(f"flatc {version} installed; committed files use {regenerate.FLATC_VERSION}")
    tools = regenerate.grpcio_tools_version()
    if tools != regenerate.GRPCIO_TOOLS_VERSION:
        pytest.skip(f"grpcio-tools {tools} installed; committed files use "
                    f"{regenerate.GRPCIO_TOOLS_VERSION}")
    return flatc


def test_regenerated_files_match_committed(tmp_path):
    _flatc_or_skip()
    written = regenerate.regenerate(tmp_path)
    assert sorted(p.name for p in written) == sorted(regenerate.OUTPUTS)
    for name in regenerate.OUTPUTS:
        fresh = (tmp_path / name).read_bytes()
        committed = (regenerate.SCHEMA_DIR / name).read_bytes()
        assert fresh == committed, (
            f"{name} is stale: run `python -m edgelite.schema.regenerate` "
            "(with flatc 25.12.19 and grpcio-tools 1.85.1)")


def test_check_mode_reports_up_to_date(capsys):
    _flatc_or_skip()
    assert regenerate.main(["--check"]) == 0
    assert "up to date" in capsys.readouterr().out
