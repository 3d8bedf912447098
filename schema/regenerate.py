"""Regenerate edgelite's committed schema bindings.

Usage (from the repository root)::

    python -m edgelite.schema.regenerate            # rewrite schema/*_generated.py, *_pb2.py
    python schema/regenerate.py                      # same, without installing the package
    python -m edgelite.schema.regenerate --out DIR   # write into DIR instead (used by tests)
    python -m edgelite.schema.regenerate --check     # exit 1 if committed files are stale

It produces two files next to their sources:

* ``generated_tflite.py`` from ``tflite.fbs`` with
  ``flatc --python --gen-object-api --gen-onefile`` (flatc 25.12.19).
* ``graph_pb2.py`` from ``graph.proto`` with ``python -m grpc_tools.protoc``
  (grpcio-tools 1.85.1, which bundles protoc for protobuf 7.x gencode).  The
  .proto is compiled under the virtual path ``edgelite/schema/graph.proto``
  (its installed location), so its name in protobuf's global descriptor pool
  cannot clash with another library's ``graph.proto``. protoc's runtime version
  check is left out (``any_protobuf_runtime``): the bindings load on protobuf
  4.21 and later.

Output is deterministic: the same tool versions give byte-identical files, and
``tests/schema/test_regenerate.py`` checks that the committed files match.
The flatc binary is looked up as ``$FLATC``, then ``flatc`` next to the running
Python interpreter, then ``flatc`` on ``PATH``.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SCHEMA_DIR = Path(__file__).resolve().parent
FBS = SCHEMA_DIR / "tflite.fbs"
PROTO = SCHEMA_DIR / "graph.proto"
FLATC_PRODUCES = "tflite_generated.py"   # flatc names its output after tflite.fbs
FLATC_OUTPUT = "generated_tflite.py"     # committed under this name
PROTO_OUTPUT = "graph_pb2.py"
PROTO_VIRTUAL_DIR = ("edgelite", "schema")   # pool name edgelite/schema/graph.proto
OUTPUTS = (FLATC_OUTPUT, PROTO_OUTPUT)
# The tool versions the committed files were generated with.
FLATC_VERSION = "25.12.19"
GRPCIO_TOOLS_VERSION = "1.85.1"


class RegenerateError(RuntimeError):
    """A code generator is missing or failed."""


def find_flatc() -> str:
    """Return the path of the flatc binary to use, or raise RegenerateError."""
    env = os.environ.get("FLATC")
    if env:
        return env
    beside = Path(sys.executable).parent / "flatc"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("flatc")
    if found:
        return found
    raise RegenerateError("flatc not found: install flatc 25.12.19 or set $FLATC")


def flatc_version(flatc: str | None = None) -> str:
    """The version string flatc reports (e.g. "25.12.19")."""
    flatc = flatc or find_flatc()
    proc = subprocess.run([flatc, "--version"], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RegenerateError(f"cannot run {flatc} --version: {proc.stderr.strip()}")
    return proc.stdout.strip().split()[-1]


def grpcio_tools_version() -> str | None:
    """The installed grpcio-tools version, or None."""
    from importlib import metadata
    try:
        return metadata.version("grpcio-tools")
    except metadata.PackageNotFoundError:
        return None


def _run(cmd: list[str], cwd: Path) -> None:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RegenerateError(
            f"command failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stdout}{proc.stderr}")


def generate_flatbuffers(out_dir: Path, flatc: str | None = None) -> Path:
    """Run flatc on tflite.fbs; write out_dir/generated_tflite.py."""
    flatc = flatc or find_flatc()
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        shutil.copyfile(FBS, tmp_path / FBS.name)
        gen = tmp_path / "gen"
        gen.mkdir()
        _run([flatc, "--python", "--gen-object-api", "--gen-onefile",
              "-o", "gen", FBS.name], cwd=tmp_path)
        produced = gen / FLATC_PRODUCES
        if not produced.is_file():
            raise RegenerateError(
                f"flatc did not write {FLATC_PRODUCES}; got {sorted(p.name for p in gen.iterdir())}")
        target = out_dir / FLATC_OUTPUT
        shutil.copyfile(produced, target)
    return target


def generate_protobuf(out_dir: Path) -> Path:
    """Run grpc_tools.protoc on graph.proto; write out_dir/graph_pb2.py."""
    try:
        import grpc_tools  # noqa: F401
    except ImportError as exc:  # pragma: no cover - depends on environment
        raise RegenerateError("grpcio-tools not installed (pip install grpcio-tools==1.85.1)") from exc
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        src_dir = tmp_path.joinpath(*PROTO_VIRTUAL_DIR)
        src_dir.mkdir(parents=True)
        shutil.copyfile(PROTO, src_dir / PROTO.name)
        rel = "/".join(PROTO_VIRTUAL_DIR + (PROTO.name,))
        gen = tmp_path / "gen"
        gen.mkdir()
        _run([sys.executable, "-m", "grpc_tools.protoc", "-I.", "--python_out=gen", rel],
             cwd=tmp_path)
        produced = gen.joinpath(*PROTO_VIRTUAL_DIR, PROTO_OUTPUT)
        if not produced.is_file():
            raise RegenerateError(f"protoc did not write {produced.name}")
        target = out_dir / PROTO_OUTPUT
        target.write_text(any_protobuf_runtime(produced.read_text()))
    return target


# protoc 5.26+ gencode begins with a check that the protobuf runtime is at least the
# protoc's version (google.protobuf.runtime_version, a module protobuf 4.x lacks), so the
# file would refuse every older runtime. The descriptor-building calls after it are the same
# ones protobuf 4.21 gencode makes (builder.BuildMessageAndEnumDescriptors /
# BuildTopDescriptorsAndMessages), so without the check the bindings load on protobuf 4.21
# and later (pyproject: protobuf>=4.21); tests/schema/test_graph_proto.py and .ci/run's
# oldest-protobuf step exercise them there.
RUNTIME_IMPORT = "from google.protobuf import runtime_version as _runtime_version\n"
RUNTIME_CHECK_START = "_runtime_version.ValidateProtobufRuntimeVersion("


def any_protobuf_runtime(code: str) -> str:
    """protoc's Python output without its runtime version check (see above)."""
    if RUNTIME_IMPORT not in code:
        return code  # an older protoc: no check to remove
    code = code.replace(RUNTIME_IMPORT, "", 1)
    start = code.index(RUNTIME_CHECK_START)
    end = code.index(")\n", start) + 2
    return code[:start] + code[end:]


def regenerate(out_dir: str | os.PathLike | None = None) -> list[Path]:
    """Regenerate both bindings into out_dir (default: the schema folder)."""
    out = Path(out_dir) if out_dir is not None else SCHEMA_DIR
    out.mkdir(parents=True, exist_ok=True)
    return [generate_flatbuffers(out), generate_protobuf(out)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m edgelite.schema.regenerate",
        description="Regenerate generated_tflite.py and graph_pb2.py from tflite.fbs and graph.proto.")
    parser.add_argument("--out", metavar="DIR", help="write into DIR instead of the schema folder")
    parser.add_argument("--check", action="store_true",
                        help="regenerate into a temp dir and fail if the committed files differ")
    args = parser.parse_args(argv)
    try:
        if args.check:
            with tempfile.TemporaryDirectory() as tmp:
                regenerate(tmp)
                stale = [name for name in OUTPUTS
                         if not (SCHEMA_DIR / name).is_file()
                         or not filecmp.cmp(Path(tmp) / name, SCHEMA_DIR / name, shallow=False)]
            if stale:
                print("stale generated files: " + ", ".join(stale), file=sys.stderr)
                return 1
            print("generated files are up to date")
            return 0
        versions = (flatc_version(), grpcio_tools_version())
        if versions != (FLATC_VERSION, GRPCIO_TOOLS_VERSION):
            print(f"warning: using flatc {versions[0]} / grpcio-tools {versions[1]}; committed files "
                  f"come from flatc {FLATC_VERSION} / grpcio-tools {GRPCIO_TOOLS_VERSION}",
                  file=sys.stderr)
        for path in regenerate(args.out):
            print(f"wrote {path}")
    except RegenerateError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
