#!/usr/bin/env python
"""Build the issue-13 sequence / control-flow / streaming test models (dev-only; needs
TensorFlow; ~5 min on 2 cores).

    python models/build_rnn.py                        # everything, from the repository root
    python models/build_rnn.py --only rnn_gru rnn_lstm

Small seeded random-weight models (batch 1, static shapes): Keras LSTM / GRU / ConvLSTM2D /
Bidirectional(LSTM) / SimpleRNN frozen twice (TF1 control-flow frames, and functional
StatelessWhile), TF1 dynamic_rnn / static_rnn / tf.cond graphs, tf.functions with While, If
and PartitionedCall, a grouped Conv2D, TensorFlow's own .tflite files of them (float, int8;
int8 conversions in subprocesses because TF's calibrator segfaults on While loops), and a
streaming int8 keyword spotter with resource variables (kws_stream).  Everything is listed,
with sizes and op lists, in models/rnn_models.json.  The code is models/builders/rnn*.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # models/: the builders package

from builders.rnn_main import main  # noqa: E402  (sets env, seeds, single-threaded TF)

if __name__ == "__main__":
    sys.exit(main())
