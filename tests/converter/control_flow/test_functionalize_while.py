"""control_flow/functionalize_while.py (and the While lowering): the loop models end to end."""

import pytest

from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.errors import GraphError

from .models import DATA, FILES, converts_and_matches_tensorflow, no_v1_control_flow_is_left

LOOPS = [f for f in FILES if f.split(".")[0] in ("cf_counter", "cf_rnn", "cf_nested",
                                                 "cf_loop_cond")]


def test_every_model_is_there():
    assert len(FILES) == 12  # cf_tf1_cond and cf_call are built one way only
    assert len(LOOPS) == 8


@pytest.mark.parametrize("name", LOOPS)
def test_converts_and_matches_tensorflow(name):
    converts_and_matches_tensorflow(name)


@pytest.mark.parametrize("name", [f for f in LOOPS if "functional" not in f])
def test_no_v1_control_flow_is_left(name):
    no_v1_control_flow_is_left(name)


def test_loop_invariant_weights_fold_inside_the_body():
    """cf_rnn's body reads W through a loop variable the body returns unchanged: the
    MatMul becomes a FULLY_CONNECTED with constant weights in the body, the interface keeps
    the variable (as input and output of the body)."""
    for suffix in ("", ".functional"):
        result = convert_detailed(str(DATA / f"cf_rnn{suffix}.pb"))
        loop = next(op for op in result.graph.ops if op.type == "WHILE")
        body = loop.subgraphs["body"]
        fc = next(op for op in body.ops if op.type == "FULLY_CONNECTED")
        assert fc.inputs[1].is_const and fc.inputs[1].shape == (4, 4)
        passthrough = [i for i, (a, b) in enumerate(zip(body.inputs, body.outputs)) if a is b]
        assert len(passthrough) >= 1


def test_an_output_inside_the_loop_is_refused_with_one_line():
    with pytest.raises(GraphError, match=r"output 'while/body/_1/while/mul' is computed "
                                         r"inside a loop or cond"):
        convert_detailed(str(DATA / "cf_counter.pb"),
                         ConvertOptions(outputs=["while/body/_1/while/mul"]))
