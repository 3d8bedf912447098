"""tests/ mirrors the source tree: a test module is named after the module it tests and sits
in the matching folder, so a module's tests are found without a search, and a module
without tests shows.

* tests/interpreter/kernels/test_X.py tests interpreter/kernels/X.py, and every kernel
  module that declares ``OPS`` (an op family) has its test module;
* interpreter/kernels/ holds the op families (a module, or a package whose __init__ is the
  family and whose modules are its parts: lstm/), the registry's own modules (REGISTRY) and
  folders of helpers (common/, int16/, hybrid/, custom/); a helper module at the top is
  refused, so the folder keeps showing which modules are ops;
* tests/converter/passes/test_X.py tests the pass converter/passes/X.py, and every pass
  of the pipeline is run by a test there;
* everywhere in MIRRORED, test_X.py names X.py or the package X/ next to it
  (tests/converter/test_passes.py: the pipeline in converter/passes/__init__.py;
  tests/converter/quantize/test_observers.py: quantize/observers/).

converter/lower/ has its own check: tests/converter/lower/test_coverage.py (each rule
module's test module covers exactly that module's rules).

And the other way round: every module of api/, cli/, converter/ and interpreter/ has its test
module at the mirrored path (X/Y/Z.py -> tests/X/Y/test_Z.py), unless TESTED_ELSEWHERE
names where it is tested and why.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import pytest

from edgelite.converter import passes
from edgelite.interpreter import kernels
from tests.conftest import ROOT

TESTS = ROOT / "tests"
# test folder -> source folder, both relative to the repository root.
MIRRORED = {
    "tests/api": "api",
    "tests/cli": "cli",
    "tests/interpreter": "interpreter",
    "tests/interpreter/kernels": "interpreter/kernels",
    "tests/interpreter/kernels/custom": "interpreter/kernels/custom",
    "tests/interpreter/kernels/common": "interpreter/kernels/common",
    "tests/interpreter/kernels/hybrid": "interpreter/kernels/hybrid",
    "tests/interpreter/kernels/int16": "interpreter/kernels/int16",
    "tests/interpreter/kernels/lstm": "interpreter/kernels/lstm",
    "tests/interpreter/loader": "interpreter/loader",
    "tests/interpreter/micro": "interpreter/micro",
    "tests/converter": "converter",
    "tests/converter/passes": "converter/passes",
    "tests/converter/quantize": "converter/quantize",
    "tests/converter/accuracy": "converter/accuracy",
    "tests/converter/shards": "converter/shards",
    "tests/converter/control_flow": "converter/control_flow",
    "tests/converter/savedmodel": "converter/savedmodel",
    "tests/converter/keras": "converter/keras",
    "tests/bench": "bench",
}
CHECKED_ELSEWHERE = {"tests/converter/lower"}  # test_coverage.py
# Test modules about one concern across a whole part rather than one module: names read
# from files reach every message escaped (api/names.py, tested in tests/api/);
# the same in the accuracy API's reports (tests/api/test_accuracy_names.py); hostile data
# files and output paths through every command that reads or writes them.
ACROSS_THE_PART = {"tests/converter/test_names.py", "tests/api/test_accuracy_names.py",
                   "tests/cli/test_hostile_inputs.py"}

# The parts whose every module has a test module at the mirrored path.
PARTS = ("api", "cli", "converter", "interpreter")
# Modules (or folders, ending in "/") tested elsewhere on purpose: where, and why.
TESTED_ELSEWHERE = {
    "api/__main__.py": "tests/cli/test_errors.py: `python -m edgelite` is the command",
    "cli/__main__.py": "tests/cli/test_errors.py: `python -m edgelite.cli` is the command",
    "converter/quantize/observers/": "tests/converter/quantize/test_observers.py: the "
                                     "calibration methods side by side on the same data",
    "converter/keras/layers/": "tests/converter/keras/test_layers.py (the registry, one "
                               "layer per file) and test_files.py (whole Keras files)",
    "interpreter/kernels/common/transpose_scatter.py": "tests/interpreter/kernels/"
        "test_transpose_conv.py and hybrid/test_transpose_conv.py: TRANSPOSE_CONV's geometry "
        "and scatter through both paths that share it",
}


def _test_modules(folder: Path) -> list[Path]:
    return sorted(folder.glob("test_*.py"))


def _names_a_module(test: Path, source: Path) -> bool:
    name = test.stem.removeprefix("test_")
    return (source / f"{name}.py").is_file() or (source / name / "__init__.py").is_file()


@pytest.mark.parametrize("tests_folder", sorted(MIRRORED))
def test_every_test_module_is_named_after_the_module_it_tests(tests_folder):
    source = ROOT / MIRRORED[tests_folder]
    strays = [str(t.relative_to(ROOT)) for t in _test_modules(ROOT / tests_folder)
              if str(t.relative_to(ROOT)) not in ACROSS_THE_PART
              and not _names_a_module(t, source)]
    assert not strays, (f"name each test module test_X.py after the module X.py (or package "
                        f"X/) of {MIRRORED[tests_folder]}/ it tests: {strays}")


def test_every_test_folder_of_the_parts_is_mirrored():
    # A new folder of tests under interpreter/ or converter/ must be listed above (and so
    # mirror a source folder), or it would escape the check.
    folders = {str(t.parent.relative_to(ROOT))
               for part in ("interpreter", "converter") for t in (TESTS / part).rglob("test_*.py")}
    assert folders - set(MIRRORED) - CHECKED_ELSEWHERE == set()


def _op_families() -> list[str]:
    return sorted(info.name for info in pkgutil.iter_modules(kernels.__path__)
                  if hasattr(importlib.import_module(f"{kernels.__name__}.{info.name}"), "OPS"))


def test_every_op_family_has_a_test_module():
    families = _op_families()
    assert {"activations", "conv", "softmax", "lstm"} <= set(families)  # the scan finds them
    missing = [f"tests/interpreter/kernels/test_{name}.py" for name in families
               if not (TESTS / "interpreter" / "kernels" / f"test_{name}.py").is_file()]
    assert not missing, f"kernel modules with OPS and no test module: add {missing}"


# The kernels' top level: the op families, the registry's own modules and helper folders.
REGISTRY = {"base", "opdef", "versions"}
HELPER_FOLDERS = {"common", "int16", "hybrid", "custom"}


def test_the_kernels_top_level_holds_op_families():
    families = set(_op_families())
    strays = sorted(info.name for info in pkgutil.iter_modules(kernels.__path__)
                    if info.name not in families | REGISTRY | HELPER_FOLDERS)
    assert not strays, (f"interpreter/kernels/ holds op families (modules with OPS): move "
                        f"the helpers {strays} into common/ (or the folder of their paths)")
    for folder in HELPER_FOLDERS:
        package = importlib.import_module(f"{kernels.__name__}.{folder}")
        with_ops = [info.name for info in pkgutil.iter_modules(package.__path__)
                    if hasattr(importlib.import_module(f"{package.__name__}.{info.name}"),
                               "OPS")]
        assert not with_ops, \
            f"kernels/{folder}/ holds helpers; op families {with_ops} belong at the top"


def _passes_run_by(folder: Path) -> set[str]:
    """The names X of every ``X.run`` in the test modules of ``folder``."""
    run = set()
    for test in _test_modules(folder):
        for node in ast.walk(ast.parse(test.read_text(), str(test))):
            if isinstance(node, ast.Attribute) and node.attr == "run" \
                    and isinstance(node.value, ast.Name):
                run.add(node.value.id)
    return run


def test_every_pass_is_run_by_the_pass_tests():
    run = _passes_run_by(TESTS / "converter" / "passes")
    missing = sorted(set(passes.PASS_NAMES) - run)
    assert not missing, (f"passes no test under tests/converter/passes/ runs: {missing} "
                         f"(add test_<pass>.py)")


def _mirrored_test(module: Path) -> Path:
    """X/Y/Z.py -> tests/X/Y/test_Z.py."""
    rel = module.relative_to(ROOT)
    return TESTS / rel.parent / f"test_{rel.name}"


def _tested_elsewhere(rel: str) -> bool:
    return any(rel == key or (key.endswith("/") and rel.startswith(key))
               for key in TESTED_ELSEWHERE)


def _modules_without_tests() -> list[str]:
    missing = []
    for part in PARTS:
        for module in sorted((ROOT / part).rglob("*.py")):
            rel = str(module.relative_to(ROOT))
            if module.name == "__init__.py" or _tested_elsewhere(rel):
                continue
            if not _mirrored_test(module).is_file():
                missing.append(f"{rel}: add {_mirrored_test(module).relative_to(ROOT)}")
    return missing


def test_every_module_has_its_test_module():
    assert (ROOT / "interpreter" / "interpreter.py").is_file()  # the scan sees the parts
    missing = _modules_without_tests()
    if missing:
        pytest.fail("modules without a test module at the mirrored path (or an entry in "
                    "TESTED_ELSEWHERE, tests/test_layout.py):\n" + "\n".join(missing),
                    pytrace=False)


def test_the_modules_tested_elsewhere_exist():
    stale = [key for key in TESTED_ELSEWHERE if not (ROOT / key).exists()]
    assert not stale, f"TESTED_ELSEWHERE in tests/test_layout.py names what is gone: {stale}"
