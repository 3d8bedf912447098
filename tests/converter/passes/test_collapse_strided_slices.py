"""collapse_strided_slices: random pairs of slices (masks, negative indices and strides,
shrink and ellipsis) collapse into one plain slice with the same numbers; new-axis-only
slices become RESHAPEs, identities go, slices with new axes and real selection are left
alone."""

import numpy as np
import pytest

from edgelite.converter.passes import collapse_strided_slices

from ..irgraph import check, input_graph, rand, run_ir, then

SHAPE = (3, 5, 6, 4)


def strided_slice(g, x, name, begin, end, strides, **masks):
    consts = [g.const(f"{name}/{k}", np.int32(v))
              for k, v in (("begin", begin), ("end", end), ("strides", strides))]
    return then(g, "STRIDED_SLICE", [x] + consts, name, **masks)


def random_slice(r, rank):
    """begin, end, strides and masks for a rank-`rank` input, sometimes with an ellipsis."""
    m = int(r.integers(1, rank + 1))
    begin, end, strides = [], [], []
    masks = dict(begin_mask=0, end_mask=0, shrink_axis_mask=0, ellipsis_mask=0)
    ellipsis = int(r.integers(0, m)) if m < rank and r.random() < 0.4 else -1
    for i in range(m):
        step = int(r.choice([1, 1, 2, -1, -2, 3]))
        begin.append(int(r.integers(-7, 7)))
        end.append(int(r.integers(-7, 7)))
        strides.append(step)
        if i == ellipsis:
            masks["ellipsis_mask"] |= 1 << i
            continue
        masks["begin_mask"] |= int(r.random() < 0.3) << i
        masks["end_mask"] |= int(r.random() < 0.3) << i
    return begin, end, strides, masks


def _numpy_slice(x, begin, end, strides, masks):
    index = []
    for i, (b, e, s) in enumerate(zip(begin, end, strides)):
        if masks["ellipsis_mask"] >> i & 1:
            index.append(Ellipsis)
        elif masks.get("shrink_axis_mask", 0) >> i & 1:
            index.append(b)
        else:
            index.append(slice(None if masks["begin_mask"] >> i & 1 else b,
                               None if masks["end_mask"] >> i & 1 else e, s))
    return x[tuple(index)]


def _random_pair(r, x_val):
    """Two slices, each selecting something (empty results say nothing)."""
    while True:
        first = random_slice(r, x_val.ndim)
        mid = _numpy_slice(x_val, *first)
        if 0 in mid.shape:
            continue
        second = random_slice(r, mid.ndim)
        if r.random() < 0.5 and mid.ndim and mid.shape[0] > 1:  # a shrink on axis 0 too
            second[3]["shrink_axis_mask"] = 1
            second[0][0], second[2][0] = int(r.integers(-mid.shape[0], mid.shape[0])), 1
            second[3]["ellipsis_mask"] &= ~1
            second[3]["begin_mask"] &= ~1
        want = _numpy_slice(mid, *second)
        if want.size:
            return first, second, want


@pytest.mark.parametrize("seed", range(40))
def test_two_random_slices_become_one(seed):
    x_val = rand(*SHAPE)
    first, second, want = _random_pair(np.random.default_rng(seed), x_val)
    g, x = input_graph(SHAPE)
    a = strided_slice(g, x, "a", *first[:3], **first[3])
    g.outputs = [strided_slice(g, a, "b", *second[:3], **second[3])]
    assert collapse_strided_slices.run(g) >= 1
    g.remove_dead_ops()  # the first slice, which nothing reads now
    # one plain slice of x (a RESHAPE where it only drops axes of size 1; nothing where
    # both select everything)
    assert len(g.ops) <= 1 and all(op.inputs[0] is x and not op.options.get("ellipsis_mask")
                                   for op in g.ops), g.op_counts()
    np.testing.assert_array_equal(run_ir(g, x_val)[0] if g.ops else x_val, want)


def test_yolo_rows_read_the_head_directly():
    """p[0] then [:, 0:2], [:, 2:4], [:, 4:5], [:, 5:]: four slices of p."""
    g, p = input_graph((1, 12, 8))
    p0 = strided_slice(g, p, "p0", [0], [1], [1], shrink_axis_mask=1)
    parts = [strided_slice(g, p0, f"part{i}", [0, b], [0, e], [1, 1], ellipsis_mask=1,
                           end_mask=2 if e == 0 else 0)
             for i, (b, e) in enumerate([(0, 2), (2, 4), (4, 5), (5, 0)])]
    g.outputs = [then(g, "CONCATENATION", parts, "rows", axis=1)]
    check(g, collapse_strided_slices.run, rand(1, 12, 8), 4,
          {"STRIDED_SLICE": 5, "CONCATENATION": 1})
    assert not any(op.options.get("ellipsis_mask") for op in g.ops)
    g.remove_dead_ops()
    assert g.op_counts() == {"STRIDED_SLICE": 4, "CONCATENATION": 1}


def test_new_axis_only_becomes_reshape_and_identity_goes():
    g, x = input_graph((4, 4))
    y = strided_slice(g, x, "y", [0], [0], [1], new_axis_mask=1)
    same = strided_slice(g, then(g, "RELU", [y], "r"), "same", [0], [0], [1], begin_mask=1,
                         end_mask=1)
    g.outputs = [then(g, "RELU", [same], "out")]
    check(g, collapse_strided_slices.run, rand(4, 4), 2, {"RESHAPE": 1, "RELU": 2})


def test_new_axis_with_a_real_selection_is_left_alone():
    g, x = input_graph((4, 6))
    g.outputs = [strided_slice(g, x, "y", [0, 0, 1], [0, 0, 5], [1, 1, 2], new_axis_mask=1,
                               begin_mask=2, end_mask=2)]
    check(g, collapse_strided_slices.run, rand(4, 6), 0, {"STRIDED_SLICE": 1})


def test_computed_bounds_are_left_alone():
    g, x = input_graph((4, 6))
    b = g.tensor("b", np.int32, (2,))
    g.inputs.append(b)
    consts = [g.const(f"{k}", np.int32(v)) for k, v in (("e", [4, 6]), ("s", [1, 1]))]
    a = then(g, "STRIDED_SLICE", [x, b] + consts, "a")
    g.outputs = [strided_slice(g, a, "y", [0, 1], [2, 3], [1, 1])]
    assert collapse_strided_slices.run(g) == 0
