"""Our GraphDef subset parses TensorFlow-written GraphDefs like TensorFlow does."""

import json
from pathlib import Path

import pytest
from google.protobuf import json_format, text_format

from edgelite.schema import graph_pb2

DATA = Path(__file__).parent / "data"


def _tf_parse():
    return json.loads((DATA / "tiny_conv_graph.json").read_text())


def _as_dict(msg):
    return json_format.MessageToDict(msg, preserving_proto_field_name=True)


def test_binary_graphdef_matches_tensorflow_parse():
    g = graph_pb2.GraphDef()
    g.ParseFromString((DATA / "tiny_conv_graph.pb").read_bytes())
    assert _as_dict(g) == _tf_parse()
    ops = {n.name: n for n in g.node}
    conv = ops["conv"]
    assert conv.op == "Conv2D"
    assert list(conv.attr["strides"].list.i) == [1, 2, 2, 1]
    assert conv.attr["padding"].s == b"SAME"
    assert conv.attr["T"].type == graph_pb2.DT_FLOAT
    assert conv.attr["data_format"].s == b"NHWC"
    image = ops["image"]
    assert image.op == "Placeholder"
    assert [d.size for d in image.attr["shape"].shape.dim] == [1, 8, 8, 3]
    consts = [n for n in g.node if n.op == "Const"]
    assert consts and all(n.attr["value"].WhichOneof("value") == "tensor" for n in consts)
    assert g.versions.producer > 0


def test_text_graphdef_matches_tensorflow_parse():
    g = text_format.Parse((DATA / "tiny_conv_graph.pbtxt").read_text(), graph_pb2.GraphDef(),
                          allow_unknown_field=True)
    assert _as_dict(g) == _tf_parse()


def test_matches_tensorflow_descriptors():
    """Field numbers / enum values equal TensorFlow's own protos (when TF is installed)."""
    tf_graph = pytest.importorskip("tensorflow.core.framework.graph_pb2")
    from tensorflow.core.framework import (attr_value_pb2, node_def_pb2, tensor_pb2,
                                           tensor_shape_pb2, types_pb2, versions_pb2)
    pairs = [(graph_pb2.GraphDef, tf_graph.GraphDef), (graph_pb2.NodeDef, node_def_pb2.NodeDef),
             (graph_pb2.VersionDef, versions_pb2.VersionDef),
             (graph_pb2.AttrValue, attr_value_pb2.AttrValue),
             (graph_pb2.AttrValue.ListValue, attr_value_pb2.AttrValue.ListValue),
             (graph_pb2.NameAttrList, attr_value_pb2.NameAttrList),
             (graph_pb2.TensorProto, tensor_pb2.TensorProto),
             (graph_pb2.TensorShapeProto, tensor_shape_pb2.TensorShapeProto),
             (graph_pb2.TensorShapeProto.Dim, tensor_shape_pb2.TensorShapeProto.Dim)]
    for ours, theirs in pairs:
        tf_fields = {f.name: (f.number, f.type) for f in theirs.DESCRIPTOR.fields}
        for f in ours.DESCRIPTOR.fields:
            assert tf_fields[f.name] == (f.number, f.type), (ours.DESCRIPTOR.name, f.name)
    ours = {v.name: v.number for v in graph_pb2.DataType.DESCRIPTOR.values}
    theirs = {v.name: v.number for v in types_pb2.DataType.DESCRIPTOR.values}
    assert ours == theirs


def test_known_numbers():
    f = {x.name: x.number for x in graph_pb2.NodeDef.DESCRIPTOR.fields}
    assert (f["name"], f["op"], f["input"], f["device"], f["attr"]) == (1, 2, 3, 4, 5)
    t = {x.name: x.number for x in graph_pb2.TensorProto.DESCRIPTOR.fields}
    assert (t["dtype"], t["tensor_shape"], t["tensor_content"], t["half_val"],
            t["float_val"], t["int_val"], t["int64_val"], t["uint64_val"]) == (1, 2, 4, 13, 5, 7, 10, 17)
    assert graph_pb2.DT_FLOAT == 1 and graph_pb2.DT_BFLOAT16 == 14 and graph_pb2.DT_HALF == 19
    assert graph_pb2.DT_FLOAT_REF == 101
