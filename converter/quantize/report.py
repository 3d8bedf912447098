"""What quantize() did: the report its steps fill in (pipeline.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .adaround import AdaRoundReport
from .bias_correction import BiasCorrectionReport
from .calibrate import CalibrationStats
from .equalize import EqualizeReport
from .lstm_check import LstmCheck
from .observers import CalibConfig
from .options import QuantMode
from .selective import GoalKind, SelectiveReport

if TYPE_CHECKING:
    from .auto import AutoReport


@dataclass
class QuantizeReport:
    mode: QuantMode
    calibration: CalibrationStats | None = None
    ranges: dict[str, tuple[float, float]] = field(default_factory=dict)
    calib_method: CalibConfig = CalibConfig()
    equalization: EqualizeReport | None = None
    bias_correction: BiasCorrectionReport | None = None
    adaround: AdaRoundReport | None = None
    selective: SelectiveReport | None = None
    auto: "AutoReport | None" = None     # what --calib-method auto tried and chose
    lstms: list[LstmCheck] = field(default_factory=list)  # the LSTMs measured (lstm_check.py)
    # ops the rewrite was told to leave float (--keep-float patterns: an output name or an
    # op type) -> why; ops without an integer kernel stay float too, unlisted
    kept_float: dict[str, str] = field(default_factory=dict)
    steps: list[str] = field(default_factory=list)  # the pipeline's steps run (pipeline.py)

    def float_reasons(self) -> dict[str, str]:
        """kept_float with the later steps' choices: --min-sqnr's search, weights-only
        LSTMs."""
        reasons = dict(self.kept_float)
        if self.selective is not None:
            flag = "--min-sqnr" if self.selective.goal.kind is GoalKind.MIN_SQNR else \
                "--max-accuracy-drop"
            reasons.update(dict.fromkeys(self.selective.kept, f"kept float by {flag}"))
        for check in self.lstms:
            if not check.integer:
                reasons[check.name] = "LSTM weights-only: " + check.line()
        return reasons
