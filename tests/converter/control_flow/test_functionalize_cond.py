"""control_flow/functionalize_cond.py (and the If lowering): the cond models end to end."""

import pytest

from .models import FILES, converts_and_matches_tensorflow, no_v1_control_flow_is_left

CONDS = [f for f in FILES if f.split(".")[0] in ("cf_cond", "cf_tf1_cond")]


@pytest.mark.parametrize("name", CONDS)
def test_converts_and_matches_tensorflow(name):
    assert len(CONDS) == 3
    converts_and_matches_tensorflow(name)


@pytest.mark.parametrize("name", [f for f in CONDS if "functional" not in f])
def test_no_v1_control_flow_is_left(name):
    no_v1_control_flow_is_left(name)
