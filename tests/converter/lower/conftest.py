import pytest

# The shared checks live in lowering.py: let pytest show the compared values when they fail.
pytest.register_assert_rewrite("tests.converter.lower.lowering")
