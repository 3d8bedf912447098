"""One Settings object per Interpreter (interpreter/settings.py): built once, from the
constructor's arguments, and passed down whole -- every subgraph's allocation and every
kernel's OpContext see the same values."""

import numpy as np
import pytest

from edgelite.interpreter import Interpreter, Kernel, OutputSpec
from edgelite.interpreter.kernel_set import KernelSet, Rounding
from edgelite.interpreter.settings import DEFAULT_SETTINGS, Settings

from .kernels.test_custom import scaled_model


def _recording_kernel(seen: list) -> Kernel:
    """y = x, recording what prepare() was given."""
    def prepare(ctx):
        seen.append((ctx.quant, ctx.threads))
        return (OutputSpec(ctx.input(0).shape, ctx.input(0).dtype),), None

    def eval(_, inputs, outputs):
        np.copyto(outputs[0], inputs[0])

    return Kernel(prepare, eval)


@pytest.mark.parametrize("kernels, rounding, threads", [
    ("reference", "single", 3), ("micro", "double", 1), ("default", "double", 2)])
def test_the_constructor_builds_one_settings_object_every_kernel_sees(kernels, rounding,
                                                                       threads):
    seen = []
    custom = {"Copy": _recording_kernel(seen)}
    interp = Interpreter(model_content=scaled_model(None, name="Copy"), kernels=kernels,
                         rounding=rounding, num_threads=threads, memory_limit=1 << 24,
                         max_loop_iterations=7, custom_kernels=custom, blas_threads=None,
                         split_batch=False, native=False)
    s = interp._settings
    assert isinstance(s, Settings)
    assert (s.quant.kernels, s.quant.rounding, s.quant.native) == \
        (KernelSet(kernels), Rounding(rounding), False)
    assert (s.threads, s.memory_limit, s.max_loop_iterations, s.blas_threads,
            s.split_batch, s.preserve_all_tensors) == (threads, 1 << 24, 7, None, False, False)
    assert dict(s.custom_kernels) == custom
    interp.allocate_tensors()
    assert interp._program.settings is s  # passed down, not rebuilt
    assert seen == [(s.quant, threads)]
    assert interp._state.max_loop_iterations == 7
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    interp.set_tensor(interp.get_input_details()[0]["index"], x)
    interp.invoke()
    np.testing.assert_array_equal(interp.get_tensor(interp.get_output_details()[0]["index"]), x)


def test_defaults():
    assert DEFAULT_SETTINGS == Settings()
    assert (DEFAULT_SETTINGS.threads, DEFAULT_SETTINGS.memory_limit,
            dict(DEFAULT_SETTINGS.custom_kernels)) == (1, None, {})
    with pytest.raises(AttributeError):
        DEFAULT_SETTINGS.threads = 2  # frozen
