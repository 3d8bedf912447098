"""A local Ray cluster of 2 CPUs, one per test module that asks for it; skipped where Ray
is not installed, and a failure under CI (the suite must not shrink silently)."""

import importlib

import pytest

from tests.conftest import missing


@pytest.fixture(scope="module")
def ray_session():
    try:
        ray = importlib.import_module("ray")
    except ImportError:
        missing("ray is not installed: pip install -e '.[test]'")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             logging_level="ERROR")
    try:
        yield ray
    finally:
        ray.shutdown()
