import numpy as np
import pytest


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)


# Kernel test modules whose ops have native (C) kernels run on both backends: numpy
# (EDGELITE_NATIVE=0) and native (when built; in CI it must be).
BOTH_BACKENDS = {"test_conv", "test_depthwise_conv", "test_fully_connected", "test_reduce",
                 "test_resize", "test_arithmetic", "test_pooling"}


def pytest_generate_tests(metafunc):
    if "backend" in metafunc.fixturenames:
        name = metafunc.module.__name__.rsplit(".", 1)[-1]
        params = ["numpy", "native"] if name in BOTH_BACKENDS else ["any"]
        metafunc.parametrize("backend", params, indirect=True)


@pytest.fixture(autouse=True)
def backend(request, monkeypatch):
    """The backend a test's interpreters run on (see BOTH_BACKENDS)."""
    import os

    from edgelite.interpreter import native

    choice = getattr(request, "param", "any")
    if choice == "numpy":
        monkeypatch.setenv("EDGELITE_NATIVE", "0")
    elif choice == "native":
        if not native.built():
            if os.environ.get("CI"):
                pytest.fail("the native kernels are not built (CI builds them)")
            pytest.skip("native kernels not built")
        monkeypatch.delenv("EDGELITE_NATIVE", raising=False)
    return choice
