"""Builds edgelite's optional native kernels (edgelite.interpreter._native); the package's
metadata lives in pyproject.toml. Without a working C compiler the build warns and the
install goes on: the numpy kernels run (interpreter/native.py)."""

import sys
import warnings

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

SOURCES = ["interpreter/native/module.c", "interpreter/native/requant.c",
           "interpreter/native/depthwise.c", "interpreter/native/gemm.c",
           "interpreter/native/gemm_neon.c",  # ARM only: empty elsewhere
           "interpreter/native/conv.c", "interpreter/native/runloop.c",
           # element-wise, table, pool, reduce, quantize, softmax kernels
           "interpreter/native/module_ops.c", "interpreter/native/elementwise.c",
           "interpreter/native/lut.c", "interpreter/native/reduce.c",
           "interpreter/native/pool.c", "interpreter/native/quantize.c",
           "interpreter/native/softmax.c", "interpreter/native/adaround.c",
           "interpreter/native/steps.c", "interpreter/native/tensor_stats.c",
           "interpreter/native/threadpool.c", "interpreter/native/entropy.c",
           # float32 kernels
           "interpreter/native/module_float.c", "interpreter/native/depthwise_f32.c",
           "interpreter/native/activations_f32.c", "interpreter/native/transcend_f32.c", "interpreter/native/fc_f32.c",
           "interpreter/native/resize_f32.c", "interpreter/native/binary_f32.c",
           "interpreter/native/pool_f32.c", "interpreter/native/conv_blas.c",
           "interpreter/native/gemm_f32.c"]
FLAGS = [] if sys.platform == "win32" else ["-O3", "-std=c11", "-fno-math-errno"]


class OptionalBuildExt(build_ext):
    """build_ext that warns instead of failing: the extension is optional."""

    def run(self):
        try:
            super().run()
        except Exception as e:  # no compiler / headers: distutils errors of several kinds
            warnings.warn(f"edgelite: native kernels not built ({e}); the numpy kernels run")

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as e:
            warnings.warn(f"edgelite: native kernels not built ({e}); the numpy kernels run")


setup(
    ext_modules=[Extension("edgelite.interpreter._native", SOURCES,
                           depends=["interpreter/native/native.h",
                                    "interpreter/native/native_float.h",
                                    "interpreter/native/vexp.h",
                                    "interpreter/native/threadpool.h"],
                           extra_compile_args=FLAGS, optional=True)],
    cmdclass={"build_ext": OptionalBuildExt},
)
