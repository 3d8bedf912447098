"""Every lowering rule has tests here: each module of converter/lower/ with RULES has a
test_<module>.py whose COVERED set is exactly that module's TF op types, and together they
are the registry. A new rule without a test fails this."""

import ast
import importlib
import inspect
import pkgutil

from edgelite.converter import lower

RULE_MODULES = sorted(
    info.name for info in pkgutil.iter_modules(lower.__path__)
    if hasattr(importlib.import_module(f"{lower.__name__}.{info.name}"), "RULES"))


def _covered(module: str) -> set[str]:
    return importlib.import_module(f"{__package__}.test_{module}").COVERED


def test_every_rule_module_has_a_test_module():
    assert RULE_MODULES == ["activations", "array_ops", "basic", "control", "conv", "crop",
                            "detection", "einsum", "embeddings", "fake_quant", "functional",
                            "image", "linalg", "math_ops", "nn", "random", "resample",
                            "scatter", "spectral", "tensor_lists"]
    for module in RULE_MODULES:
        rules = set(importlib.import_module(f"{lower.__name__}.{module}").RULES)
        assert _covered(module) == rules, module


def test_the_tests_cover_the_registry():
    covered = set().union(*(_covered(m) for m in RULE_MODULES))
    assert covered == set(lower.REGISTRY)


def test_each_covered_op_is_named_outside_the_covered_set():
    """A COVERED entry must also be a string in the module's tests (a node's op, a table
    key), so listing an op there without testing it does not count."""
    for module in RULE_MODULES:
        tree = ast.parse(inspect.getsource(importlib.import_module(
            f"{__package__}.test_{module}")))
        covered_node = next(n for n in tree.body if isinstance(n, ast.Assign)
                            and getattr(n.targets[0], "id", None) == "COVERED")
        inside = {id(n) for n in ast.walk(covered_node)}
        named = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)
                 and isinstance(n.value, str) and id(n) not in inside}
        assert _covered(module) <= named, (module, sorted(_covered(module) - named))
