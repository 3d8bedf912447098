"""One int8 TF conversion of an issue-13 model, in its own process (run by rnn_tflite.py as
``python -m builders.rnn_worker <name> <int8|int8_io> <out.tflite>`` from models/).

TF 2.21's calibrator segfaults on While-loop models; in a subprocess that costs one file, not
the build.  The model is rebuilt from its seeded definition (builders/rnn.py, rnn_kws.py), so
it has the same weights as in the parent process."""

from __future__ import annotations

import sys
from pathlib import Path

from .rnn import FUNCTIONS, KERAS, keras_input_specs, keras_model
from .rnn_tflite import converter_for


def main(name: str, mode: str, out: str) -> int:
    if name in KERAS:
        model = keras_model(name)
        conv = converter_for(name, mode, keras_model=model, inputs=keras_input_specs(model))
    elif name in FUNCTIONS:
        conv = converter_for(name, mode, function=FUNCTIONS[name][0](),
                             inputs={"x": ([1, 8], "float32")})
    else:
        from .rnn_kws import kws_converter

        conv = kws_converter(mode)
    Path(out).write_bytes(conv.convert())
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
