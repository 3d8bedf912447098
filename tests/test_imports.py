"""The package's import graph has no cycle.

A cycle (a imports b, b imports a, directly or around a longer loop) makes the import order
matter, breaks ``from a import name`` for whichever module runs second, and used to be
dodged by imports moved inside functions. The graph here is built from the source with
``ast``: an edge for every import at module level (inside ``if`` / ``try`` / class bodies
too, not inside functions, and not under ``if TYPE_CHECKING:``, which never runs) of one
of the package's modules, and an edge to each package the imported module lies in (Python
runs a package's __init__ before its modules: importing ``kernels.lstm.float_cell`` runs
``kernels/lstm/__init__.py``), unless the importer itself lies in that package (its
__init__ is then already running). A cycle fails the test, named.
"""

from __future__ import annotations

import ast
import re
from collections import deque
from pathlib import Path

from tests.conftest import ROOT

# folder -> the package it installs as (pyproject.toml's package-dir)
PARTS = {"api": "edgelite", "converter": "edgelite.converter",
         "interpreter": "edgelite.interpreter", "schema": "edgelite.schema",
         "cli": "edgelite.cli"}


def package_modules(root: Path = ROOT) -> dict[str, tuple[Path | None, bool]]:
    """Dotted module name -> (its file, whether it is a package's __init__); compiled
    extension modules have no file to read."""
    modules: dict[str, tuple[Path | None, bool]] = {}
    for folder, package in PARTS.items():
        for path in sorted((root / folder).rglob("*.py")):
            parts = list(path.relative_to(root / folder).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts.pop()
            modules[".".join([package, *parts])] = (path, is_package)
    # the compiled extensions setup.py builds (built or not: `from . import _native`)
    for name in re.findall(r'Extension\(\s*"([\w.]+)"', (root / "setup.py").read_text()):
        modules.setdefault(name, (None, False))
    return modules


def _module_level(body: list[ast.stmt]):
    """The import statements run when the module is imported (not those in functions)."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, ast.ClassDef):
            yield from _module_level(node.body)
        elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from _module_level(node.orelse)
        elif isinstance(node, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
            for block in ("body", "orelse", "finalbody"):
                yield from _module_level(getattr(node, block, []))
            for handler in getattr(node, "handlers", []):
                yield from _module_level(handler.body)


def imported(module: str, is_package: bool, node: ast.Import | ast.ImportFrom,
             modules) -> set[str]:
    """The package's modules one import statement loads (their parents aside)."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names if alias.name in modules}
    if node.level:
        base = module if is_package else module.rpartition(".")[0]
        for _ in range(node.level - 1):
            base = base.rpartition(".")[0]
        base = f"{base}.{node.module}" if node.module else base
    else:
        base = node.module or ""
    found = set()
    for alias in node.names:
        sub = f"{base}.{alias.name}"
        found.add(sub if sub in modules else base)  # a submodule, or a name from base
    return found & set(modules)


def _packages_above(module: str) -> set[str]:
    parts = module.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))}


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    modules = package_modules(root)
    graph = {}
    for name, (path, is_package) in modules.items():
        edges = set()
        if path is not None:
            tree = ast.parse(path.read_text(), str(path))
            for node in _module_level(tree.body):
                edges |= imported(name, is_package, node, modules)
        running = _packages_above(name) | ({name} if is_package else set())
        for target in list(edges):
            edges |= {p for p in _packages_above(target) if p in modules} - running
        graph[name] = edges - {name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One shortest cycle through each module that lies on a cycle, without repeats."""
    found, seen = [], set()
    for start in sorted(graph):
        previous = {start: None}
        queue = deque([start])
        while queue:
            node = queue.popleft()
            if start in graph[node]:
                path = [node]
                while previous[path[-1]] is not None:
                    path.append(previous[path[-1]])
                path.reverse()
                if frozenset(path) not in seen:
                    seen.add(frozenset(path))
                    found.append(path)
                break
            for nxt in sorted(graph[node]):
                if nxt not in previous:
                    previous[nxt] = node
                    queue.append(nxt)
    return found


def test_the_scan_sees_the_imports():
    graph = import_graph()
    assert "edgelite.interpreter.kernels.base" in graph["edgelite.interpreter.kernels.opdef"]
    assert "edgelite.errors" in graph["edgelite.interpreter.loader.model"]
    assert "edgelite.interpreter._native" in graph["edgelite.interpreter.native"]
    # only module-level imports: api/__init__.py loads the converter inside convert()
    assert "edgelite.converter" not in graph["edgelite"]
    # the packages a module lies in run first: svdf.py's import of lstm/operands.py runs
    # lstm/__init__.py; a module's own packages are already running
    assert "edgelite.interpreter.kernels.lstm" in graph["edgelite.interpreter.kernels.svdf"]
    assert "edgelite.interpreter.kernels" not in graph["edgelite.interpreter.kernels.rnn"]


def test_a_cycle_is_found_and_named():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_no_import_cycles():
    found = cycles(import_graph())
    assert not found, "import cycles (move what both need into a module both import):\n" + \
        "\n".join(" -> ".join([*cycle, cycle[0]]) for cycle in found)


def _local_imports(module: str, is_package: bool, path: Path, modules):
    """(line, imported modules) of the package's modules imported inside functions."""
    tree = ast.parse(path.read_text(), str(path))
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    found = imported(module, is_package, node, modules)
                    if found:
                        yield node.lineno, found


def test_the_interpreter_imports_at_the_top():
    # An import inside a function used to dodge a cycle; the interpreter has none left, and
    # a new one is a cycle to break (move the shared piece), not to hide.
    modules = package_modules()
    found = [f"{path.relative_to(ROOT)}:{line} imports {sorted(targets)}"
             for name, (path, is_package) in sorted(modules.items())
             if path is not None and (name.startswith("edgelite.interpreter")
                                      or name.count(".") == 1 and name in ROOT_LEVEL)
             for line, targets in _local_imports(name, is_package, path, modules)]
    assert not found, "imports inside functions:\n" + "\n".join(found)


# The package root's modules every part imports (api/): they import nothing of the package.
ROOT_LEVEL = {"edgelite.errors", "edgelite.names", "edgelite.fileio"}


def test_the_shared_modules_import_only_each_other():
    graph = import_graph()
    for name in ROOT_LEVEL:
        assert graph[name] <= ROOT_LEVEL, (name, graph[name] - ROOT_LEVEL)
