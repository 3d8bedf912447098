"""Which LiteRT integer arithmetic the interpreter reproduces (an Interpreter option).

LiteRT has more than one implementation of each integer op, and they do not always
round alike (see the table in quant_math.py). edgelite reproduces two of them:

* ``KernelSet.DEFAULT`` -- what ``ai_edge_litert.interpreter.Interpreter`` runs by
  default (``OpResolverType.AUTO`` == ``BUILTIN``): the XNNPACK delegate for the ops it
  takes (its own requantization: float32 scales, round half to even), the optimized
  builtin kernels for the rest.
* ``KernelSet.REFERENCE`` -- ``OpResolverType.BUILTIN_REF``: TFLite's reference kernels.
* ``KernelSet.MICRO`` -- TensorFlow Lite Micro's reference kernels (what the
  ``tflite-micro`` runtime and a firmware built from TFLM's portable kernels compute).
  TFLM shares most of LiteRT's reference code (tensorflow/lite/kernels/internal/
  reference/), so this set is REFERENCE (``QuantConfig.reference`` is true for both)
  except where TFLM's own kernel sources differ; each such op picks its one documented
  difference in prepare() through ``QuantConfig.micro`` (the list is in quant_math.py's
  table, column MICRO). TFLM dropped its uint8 kernels: with this set allocate_tensors()
  refuses every op TFLM refuses for its uint8 operands (micro/uint8.py) -- TF's uint8
  files, edgelite's ``--quantize uint8`` -- and runs int8 models with uint8 inputs and
  outputs (QUANTIZE uint8 <-> int8), as TFLM does.

``Rounding`` picks how the fixed-point MultiplyByQuantizedMultiplier rounds where a kernel
uses it. DOUBLE is that of the installed LiteRT 2.3.0 build and of TFLM's ``tflite-micro``
build; SINGLE is that of builds compiled with ``TFLITE_SINGLE_ROUNDING=1`` (a compile-time
flag of TFLite's common.h, off by default in LiteRT and TFLM alike; a firmware build may
set it). Measured against the tflite-micro runtime on the 397 test digits: kernels="micro"
matches TFLM on every image of keras_cnn.tf_int8 and tf1_cnn.tf_int8 with DOUBLE, and
differs on 76 and 3 images with SINGLE (on 67 of 397 for the 16x8 keras_cnn file) --
SINGLE does not model the tflite-micro package, only builds with that flag.

    Interpreter(model_path=..., kernels="micro")
    Interpreter(model_path=..., kernels="reference", rounding="single")
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from .quant_math import Rounding


class KernelSet(enum.Enum):
    DEFAULT = "default"  # LiteRT AUTO / BUILTIN: XNNPACK where it applies, else optimized
    REFERENCE = "reference"  # LiteRT BUILTIN_REF
    MICRO = "micro"  # TensorFlow Lite Micro's reference kernels


@dataclass(frozen=True)
class QuantConfig:
    kernels: KernelSet = KernelSet.DEFAULT
    rounding: Rounding = Rounding.DOUBLE
    native: bool = False  # run the native (C) kernels where an op has one (native.py)

    @property
    def reference(self) -> bool:
        """TFLite's reference kernels: LiteRT's BUILTIN_REF, or TFLM's (which share them)."""
        return self.kernels in (KernelSet.REFERENCE, KernelSet.MICRO)

    @property
    def micro(self) -> bool:
        """TFLM's reference kernels, where they differ from LiteRT's BUILTIN_REF."""
        return self.kernels is KernelSet.MICRO

    @classmethod
    def make(cls, kernels="default", rounding="double") -> "QuantConfig":
        """From enum members or their string values; ValueError names the choices."""
        try:
            k = kernels if isinstance(kernels, KernelSet) else KernelSet(str(kernels).lower())
            r = rounding if isinstance(rounding, Rounding) else Rounding(str(rounding).lower())
        except ValueError:
            raise ValueError(
                f"kernels must be one of {[k.value for k in KernelSet]} and rounding one of "
                f"{[r.value for r in Rounding]}, got {kernels!r} / {rounding!r}"
            ) from None
        return cls(k, r)


DEFAULT_CONFIG = QuantConfig()
