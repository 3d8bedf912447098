"""Regenerating the schema bindings must reproduce the committed files byte for byte."""

from edgelite.schema import regenerate
from tests.conftest import INSTALL, missing, regenerate_problems


def _pinned_generators_or_skip():
    # Byte-equality only holds for the pinned generator versions; under CI they must be there.
    problems = regenerate_problems()
    if problems:
        missing(f"{'; '.join(problems)}: {INSTALL}")


def test_regenerated_files_match_committed(tmp_path):
    _pinned_generators_or_skip()
    written = regenerate.regenerate(tmp_path)
    assert sorted(p.name for p in written) == sorted(regenerate.OUTPUTS)
    for name in regenerate.OUTPUTS:
        fresh = (tmp_path / name).read_bytes()
        committed = (regenerate.SCHEMA_DIR / name).read_bytes()
        assert fresh == committed, (
            f"{name} is stale: run `python -m edgelite.schema.regenerate` "
            f"(with flatc {regenerate.FLATC_VERSION} and grpcio-tools "
            f"{regenerate.GRPCIO_TOOLS_VERSION})")


def test_check_mode_reports_up_to_date(capsys):
    _pinned_generators_or_skip()
    assert regenerate.main(["--check"]) == 0
    assert "up to date" in capsys.readouterr().out


def test_committed_bindings_load_on_any_protobuf_runtime():
    # protoc's runtime version check would refuse protobuf 4.21..(protoc's version - 1);
    # regenerate.py leaves it out (pyproject: protobuf>=4.21)
    code = (regenerate.SCHEMA_DIR / regenerate.PROTO_OUTPUT).read_text()
    assert "runtime_version" not in code
    assert "_builder.BuildMessageAndEnumDescriptors(DESCRIPTOR, _globals)" in code


def test_runtime_check_removal_keeps_everything_else():
    gencode = ("from google.protobuf import descriptor as _descriptor\n"
               + regenerate.RUNTIME_IMPORT
               + "_runtime_version.ValidateProtobufRuntimeVersion(\n"
                 "    _runtime_version.Domain.PUBLIC,\n    7,\n    35,\n    1,\n    '',\n"
                 "    'edgelite/schema/graph.proto'\n)\n"
                 "DESCRIPTOR = 1\n")
    assert regenerate.any_protobuf_runtime(gencode) == (
        "from google.protobuf import descriptor as _descriptor\nDESCRIPTOR = 1\n")
    older = "from google.protobuf import descriptor as _descriptor\nDESCRIPTOR = 1\n"
    assert regenerate.any_protobuf_runtime(older) == older
