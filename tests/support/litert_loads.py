"""Every .tflite edgelite's converter writes during the test session must load in LiteRT.

tests/conftest.py wraps the converter's last step (`edgelite.converter.export_tflite`, the
name convert_detailed calls) for every test: each model exported during the test is built
into a LiteRT Interpreter and its tensors allocated when the test ends (AUTO resolver, the
one `Interpreter(model_content=...)` uses). A model LiteRT refuses fails the test with LiteRT's
message, e.g. "concatenation.cc ... t->params.scale != output->params.scale".

Left out: files with CUSTOM operators (they load where their kernels are registered: the
allow_custom_ops tests write ops no runtime has) and tests marked
``@pytest.mark.litert_cannot_load(reason)`` (a test that writes a file for another runtime,
e.g. one LiteRT is known to reject, and says why).
"""

from __future__ import annotations

import pytest

from edgelite.interpreter.loader.model import load_model


def has_custom_ops(model: bytes) -> bool:
    return any(op.name == "CUSTOM" for sg in load_model(model).subgraphs for op in sg.operators)


def load_problem(litert, model: bytes) -> str | None:
    """None if LiteRT builds and allocates the model, else its message (one line)."""
    try:
        interp = litert.Interpreter(model_content=model, num_threads=1)
        interp.allocate_tensors()
    except Exception as exc:  # LiteRT raises RuntimeError / ValueError with its log
        return " | ".join(line.strip() for line in str(exc).splitlines() if line.strip())
    return None


class ExportRecorder:
    """Wraps export_tflite; keeps the bytes of every model exported."""

    def __init__(self, original):
        self.original, self.models = original, []

    def __call__(self, *args, **kwargs):
        model = self.original(*args, **kwargs)
        self.models.append(model)
        return model

    def check(self, litert) -> None:
        __tracebackhide__ = True
        for i, model in enumerate(self.models):
            if has_custom_ops(model):
                continue
            problem = load_problem(litert, model)
            if problem is not None:
                pytest.fail(f"model {i + 1} of {len(self.models)} edgelite wrote in this test "
                            f"does not load in LiteRT: {problem[:1500]}", pytrace=False)
