"""Which LiteRT integer arithmetic the interpreter reproduces (an Interpreter option).

LiteRT has more than one implementation of each integer op, and they do not always
round alike (see the table in quant_math.py). edgelite reproduces two of them:

* ``KernelSet.DEFAULT`` -- what ``ai_edge_litert.interpreter.Interpreter`` runs by
  default (``OpResolverType.AUTO`` == ``BUILTIN``): the XNNPACK delegate for the ops it
  takes (its own requantization: float32 scales, round half to even), the optimized
  builtin kernels for the rest.
* ``KernelSet.REFERENCE`` -- ``OpResolverType.BUILTIN_REF``: TFLite's reference kernels.

``Rounding`` picks how the fixed-point MultiplyByQuantizedMultiplier rounds where a kernel
uses it (DOUBLE in the installed LiteRT 2.3.0 build; SINGLE is that of builds with
``TFLITE_SINGLE_ROUNDING=1``, such as some TFLite Micro ports).

    Interpreter(model_path=..., kernels="reference", rounding="single")
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from .quant_math import Rounding


class KernelSet(enum.Enum):
    DEFAULT = "default"  # LiteRT AUTO / BUILTIN: XNNPACK where it applies, else optimized
    REFERENCE = "reference"  # LiteRT BUILTIN_REF


@dataclass(frozen=True)
class QuantConfig:
    kernels: KernelSet = KernelSet.DEFAULT
    rounding: Rounding = Rounding.DOUBLE

    @property
    def reference(self) -> bool:
        return self.kernels is KernelSet.REFERENCE

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
