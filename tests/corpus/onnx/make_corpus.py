#!/usr/bin/python3
"""Generate the malformed-ONNX corpus and its MANIFEST.

    /usr/bin/python3 tests/corpus/onnx/make_corpus.py   (from anywhere)

Every file is tiny and must make q8 fail with one clear message. MANIFEST
lines are  FILE<TAB>SUBSTRING[<TAB>Q8RUN_SUBSTRING]: q8_model_load (no input
shapes) must fail with a message containing SUBSTRING; q8run, given the
float32[2] input x.npy, must exit 1 with one stderr line containing
Q8RUN_SUBSTRING (SUBSTRING when absent), or, where Q8RUN_SUBSTRING is OK,
succeed (the input file fixes what the model left open).

Valid models go to valid/ with their expected outputs in valid/EXPECTED
(they must load and run; they are also the fuzzer's seeds). special/ holds
inputs for tests that build their own folder. Deterministic: running it
twice gives the same bytes.
"""
import os
import random
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))

F = TensorProto.FLOAT


# ---- raw protobuf wire encoding, for surgery ----
def varint(v):
    out = bytearray()
    v &= (1 << 64) - 1
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def key(field, wt):
    return varint(field << 3 | wt)


def ld(field, payload):
    return key(field, 2) + varint(len(payload)) + payload


def vi(name, dims=(2,), elem=F):
    return helper.make_tensor_value_info(name, elem, list(dims) if dims is not None else None)


def model(nodes, inputs=None, outputs=None, inits=(), opset=13, ir=8, name="g"):
    if inputs is None:
        inputs = [vi("x")]
    if outputs is None:
        outputs = [vi("y")]
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)] if opset else [])
    m.ir_version = ir
    if not opset:
        del m.opset_import[:]
    m.producer_name = "q8-corpus"
    return m


def relu_model(**kw):
    return model([helper.make_node("Relu", ["x"], ["y"], name="relu")], **kw)


def ser(m):
    return m.SerializeToString()


def tensor(name, dims, dtype=F, **fields):
    t = TensorProto()
    t.name = name
    t.data_type = dtype
    t.dims.extend(dims)
    for k, v in fields.items():
        if isinstance(v, (list, tuple)):
            getattr(t, k).extend(v)
        else:
            setattr(t, k, v)
    return t


def add_model(nodes, inits, **kw):
    """y = x + w with initializer(s) inits (Add: an op some helper will write)."""
    return model(nodes, inits=inits, **kw)


def with_init(t):
    # An initializer nothing needs to be valid to be read: import reads them all.
    return ser(model([helper.make_node("Relu", ["x"], ["y"], name="relu")], inits=[t]))


def ext(t, **kv):
    t.data_location = TensorProto.EXTERNAL
    for k, v in kv.items():
        e = t.external_data.add()
        e.key = k
        e.value = str(v)
    return t


def graph_bytes_nested(depth):
    """GraphProto -> NodeProto(If) -> AttributeProto(GRAPH) -> GraphProto ...
    written by hand so no library refuses to build it."""
    g = ld(2, b"inner")  # GraphProto.name
    for _ in range(depth):
        attr = ld(1, b"then_branch") + key(20, 0) + varint(5) + ld(6, g)  # name, type, g
        node = ld(1, b"c") + ld(2, b"o") + ld(4, b"If") + ld(5, attr)   # input, output, op, attr
        g = ld(1, node) + ld(2, b"n")
    return g


def main():
    entries = []  # (file, content bytes, substring, q8run substring or None)

    def add(fname, data, sub, runsub=None):
        if isinstance(data, onnx.ModelProto):
            data = ser(data)
        entries.append((fname, data, sub, runsub))

    valid = ser(relu_model())

    # -- wire level --
    add("empty.onnx", b"", "the file is empty")
    rnd = random.Random(8)
    add("random_bytes.onnx", bytes(rnd.randrange(256) for _ in range(200)), "not a valid ONNX model")
    add("text_file.onnx", b"this is not a model\n", "not a valid ONNX model")
    add("trunc_key.onnx", valid + b"\x80", "truncated field key")
    add("trunc_varint.onnx", valid + key(1, 0) + b"\xff\xff", "truncated varint")
    add("trunc_fixed64.onnx", valid + key(15, 1) + b"\x01\x02", "truncated 64-bit field")
    add("trunc_fixed32.onnx", valid + key(15, 5) + b"\x01", "truncated 32-bit field")
    # Cut inside the graph field at several points.
    gstart = valid.index(b"\x3a")  # ModelProto.graph: field 7, wire type 2
    for i, frac in enumerate((0.1, 0.5, 0.9)):
        glen = len(valid) - gstart
        cut = gstart + 2 + int((glen - 2) * frac)
        add("trunc_graph_%d.onnx" % i, valid[:cut], "runs past the end")
    add("trunc_half.onnx", valid[: len(valid) // 2], "not a valid ONNX model")
    # Cut inside a top-level varint of the model itself (model_version, 6 bytes).
    m = relu_model()
    m.model_version = 1 << 40
    mv = ser(m)
    at = mv.index(key(5, 0) + varint(1 << 40))
    add("trunc_mid_varint.onnx", mv[: at + 3], "truncated varint")
    add("trunc_mid_key.onnx", mv[:at] + b"\xa8", "truncated field key")
    add("bad_wiretype.onnx", valid + key(3, 7), "invalid wire type")
    add("group_wiretype.onnx", valid + key(3, 3), "invalid wire type")
    add("len_past_end.onnx", valid + key(20, 2) + varint(1000) + b"abc", "runs past the end")
    add("len_huge.onnx", valid + key(7, 2) + varint(1 << 62), "runs past the end")
    add("varint_11_bytes.onnx", valid + key(1, 0) + b"\xff" * 10 + b"\x01", "truncated varint")
    bomb = key(1, 0) + varint(8) + ld(7, graph_bytes_nested(70)) + ld(8, ld(1, b"") + key(2, 0) + varint(13))
    add("nesting_bomb.onnx", bomb, "nested too deeply")
    # Wire-valid, but protobuf-c rejects it (a string field with a varint).
    add("wrong_field_type.onnx", valid + key(2, 0) + varint(5), "not a valid ONNX model")

    # -- model structure --
    m = relu_model()
    m.ClearField("graph")
    add("no_graph.onnx", m, "it has no graph")
    add("no_opset.onnx", relu_model(opset=0), "declares no ai.onnx opset version")
    add("opset_too_new.onnx", relu_model(opset=99), "opset 99 is newer")
    m = relu_model()
    m.opset_import[0].domain = "com.example"
    add("opset_other_domain_only.onnx", m, "declares no ai.onnx opset version")
    add("no_outputs.onnx", model([helper.make_node("Relu", ["x"], ["y"])], outputs=[]),
        "the graph has no outputs")
    add("output_not_produced.onnx", model([helper.make_node("Relu", ["x"], ["y"])],
                                          outputs=[vi("y"), vi("z")]),
        "graph output 'z' is not produced")
    add("output_listed_twice.onnx", model([helper.make_node("Relu", ["x"], ["y"])],
                                          outputs=[vi("y"), vi("y")]),
        "graph output 'y' is listed twice")
    add("cycle.onnx", model([helper.make_node("Relu", ["b"], ["a"], name="n1"),
                             helper.make_node("Relu", ["a"], ["b"], name="n2"),
                             helper.make_node("Relu", ["x"], ["y"], name="n3")]),
        "cycle")
    add("self_loop.onnx", model([helper.make_node("Relu", ["y"], ["y"], name="loop")]), "cycle")
    add("input_not_produced.onnx", model([helper.make_node("Relu", ["nowhere"], ["y"], name="r")]),
        "input 'nowhere' is not produced by any node")
    add("dup_node_output.onnx", model([helper.make_node("Relu", ["x"], ["y"], name="a"),
                                       helper.make_node("Relu", ["x"], ["y"], name="b")]),
        "output name 'y' is already defined")
    add("node_output_is_input.onnx", model([helper.make_node("Relu", ["x"], ["x"], name="a"),
                                            helper.make_node("Relu", ["x"], ["y"], name="b")]),
        "output name 'x' is already defined")
    w = tensor("w", [2], float_data=[1, 2])
    add("dup_initializer.onnx", model([helper.make_node("Relu", ["x"], ["y"])], inits=[w, w]),
        "initializer 'w' is defined twice")
    add("dup_graph_input.onnx", model([helper.make_node("Relu", ["x"], ["y"])],
                                      inputs=[vi("x"), vi("x")]),
        "graph input 'x' is defined twice")
    add("node_no_op_type.onnx", model([helper.make_node("", ["x"], ["y"], name="anon")]),
        "has no op_type")
    add("unsupported_op.onnx", model([helper.make_node("NoSuchOp", ["x"], ["y"], name="n")]),
        "op NoSuchOp is not supported")
    add("unsupported_domain.onnx",
        model([helper.make_node("Relu", ["x"], ["y"], name="n", domain="com.example")]),
        "op com.example.Relu is not supported")
    add("control_chars_in_name.onnx",
        model([helper.make_node("NoSuchOp", ["x"], ["y"], name="evil\nname\x1b[31m")]),
        "op NoSuchOp is not supported")
    add("relu_two_inputs.onnx", model([helper.make_node("Relu", ["x", "x"], ["y"], name="r")]),
        "has 2 inputs, expected 1 to 1")
    add("sigmoid_int_input.onnx",
        model([helper.make_node("Sigmoid", ["x"], ["y"], name="r")],
              inputs=[vi("x", elem=TensorProto.INT64)]),
        "dtype int64 is not supported")

    # -- graph inputs --
    add("input_sequence.onnx", model([helper.make_node("Relu", ["x"], ["y"])],
                                     inputs=[helper.make_tensor_sequence_value_info("x", F, [2])]),
        "graph input 'x' is not a tensor")
    add("input_dynamic.onnx", model([helper.make_node("Relu", ["x"], ["y"])],
                                    inputs=[vi("x", dims=("batch", 2))]),
        "dynamic dims 0 ('batch')", "the model wants rank 2, got rank 1")
    add("input_no_shape.onnx", model([helper.make_node("Relu", ["x"], ["y"])],
                                     inputs=[vi("x", dims=None)]),
        "input 'x' has no shape in the model", "OK")
    add("input_negative_dim.onnx", model([helper.make_node("Relu", ["x"], ["y"])],
                                         inputs=[vi("x", dims=(-3,))]),
        "graph input 'x': dim 0 is -3")
    add("input_huge_dims.onnx", model([helper.make_node("Relu", ["x"], ["y"])],
                                      inputs=[vi("x", dims=(1 << 32, 1 << 32))]),
        "graph input 'x': shape is too large")
    add("input_too_many_dims.onnx", model([helper.make_node("Relu", ["x"], ["y"])],
                                          inputs=[vi("x", dims=(1,) * 9)]),
        "has 9 dims, at most 8")
    add("input_bad_elem_type.onnx", model([helper.make_node("Relu", ["x"], ["y"])],
                                          inputs=[vi("x", elem=77)]),
        "unsupported element type 77")
    add("input_string.onnx", model([helper.make_node("Relu", ["x"], ["y"])],
                                   inputs=[vi("x", elem=TensorProto.STRING)]),
        "unsupported element type 8")
    add("input_no_name.onnx", model([helper.make_node("Relu", ["x"], ["y"])], inputs=[vi("")]),
        "a graph input has no name")

    # -- initializers --
    add("init_no_name.onnx", with_init(tensor("", [2], float_data=[1, 2])), "initializer 0 has no name")
    add("init_huge_dims.onnx", with_init(tensor("w", [1 << 40, 1 << 40], raw_data=b"\0" * 8)),
        "tensor 'w': shape has negative dims or is too large")
    add("init_dims_overflow.onnx", with_init(tensor("w", [(1 << 62), 4], raw_data=b"\0" * 8)),
        "tensor 'w': shape has negative dims or is too large")
    # A big but representable shape with no data: must be refused before
    # allocating gigabytes.
    add("init_big_no_data.onnx", with_init(tensor("w", [1 << 20, 1 << 12], raw_data=b"\0" * 8)),
        "raw_data has 8 bytes")
    add("init_big_typed_short.onnx", with_init(tensor("w", [1 << 20, 1 << 12], float_data=[1.0])),
        "float_data has 1 values, its shape needs 4294967296")
    add("init_negative_dims.onnx", with_init(tensor("w", [-2], float_data=[1, 2])), "negative dims")
    add("init_raw_short.onnx", with_init(tensor("w", [2], raw_data=b"\0" * 4)), "raw_data has 4 bytes")
    add("init_raw_long.onnx", with_init(tensor("w", [2], raw_data=b"\0" * 12)), "raw_data has 12 bytes")
    add("init_float_data_count.onnx", with_init(tensor("w", [2], float_data=[1, 2, 3])),
        "float_data has 3 values, its shape needs 2")
    add("init_int64_data_count.onnx", with_init(tensor("w", [3], TensorProto.INT64, int64_data=[1])),
        "int64_data has 1 values, its shape needs 3")
    add("init_int32_data_count.onnx", with_init(tensor("w", [2], TensorProto.INT8, int32_data=[1, 2, 3])),
        "int32_data has 3 values, its shape needs 2")
    add("init_double_data_count.onnx", with_init(tensor("w", [2], TensorProto.DOUBLE, double_data=[1.0])),
        "double_data has 1 values")
    add("init_uint64_data_count.onnx", with_init(tensor("w", [2], TensorProto.UINT64, uint64_data=[1])),
        "uint64_data has 1 values")
    add("init_wrong_typed_field.onnx", with_init(tensor("w", [2], TensorProto.INT64, float_data=[1, 2])),
        "int64_data has 0 values, its shape needs 2")
    add("init_unknown_dtype.onnx", with_init(tensor("w", [2], 99, raw_data=b"\0" * 8)),
        "tensor 'w': unknown data type 99")
    add("init_undefined_dtype.onnx", with_init(tensor("w", [2], 0, raw_data=b"\0" * 8)),
        "tensor 'w': unknown data type 0")
    add("init_string.onnx", with_init(tensor("w", [1], TensorProto.STRING, string_data=[b"hi"])),
        "string tensors are not supported")
    add("init_too_many_dims.onnx", with_init(tensor("w", [1] * 9, raw_data=b"\0" * 4)),
        "9 dims, at most 8")
    t = tensor("w", [2], float_data=[1, 2])
    t.segment.begin = 0
    t.segment.end = 2
    add("init_segment.onnx", with_init(t), "segmented tensors are not supported")

    # -- external data (ext_data.bin, 16 bytes, lies beside the corpus) --
    add("ext_abs_path.onnx", with_init(ext(tensor("w", [2]), location="/etc/passwd")),
        "leaves the model's folder")
    add("ext_dotdot.onnx", with_init(ext(tensor("w", [2]), location="../onnx/ext_data.bin")),
        "leaves the model's folder")
    add("ext_dotdot_inner.onnx", with_init(ext(tensor("w", [2]), location="sub/../../x.bin")),
        "leaves the model's folder")
    add("ext_backslash.onnx", with_init(ext(tensor("w", [2]), location="..\\x.bin")),
        "leaves the model's folder")
    add("ext_missing_file.onnx", with_init(ext(tensor("w", [2]), location="no_such_file.bin")),
        "cannot open external data")
    add("ext_no_location.onnx", with_init(ext(tensor("w", [2]), offset=0)),
        "external data without a location")
    add("ext_offset_past_end.onnx",
        with_init(ext(tensor("w", [2]), location="ext_data.bin", offset=12)),
        "has 16 bytes, needs 8 at offset 12")
    add("ext_offset_huge.onnx",
        with_init(ext(tensor("w", [2]), location="ext_data.bin", offset=(1 << 64) - 1)),
        "has 16 bytes, needs 8 at offset")
    add("ext_bad_offset.onnx", with_init(ext(tensor("w", [2]), location="ext_data.bin", offset="-4")),
        "bad external data offset '-4'")
    add("ext_offset_overflow.onnx",
        with_init(ext(tensor("w", [2]), location="ext_data.bin", offset="99999999999999999999999")),
        "bad external data offset")
    add("ext_length_mismatch.onnx",
        with_init(ext(tensor("w", [2]), location="ext_data.bin", length=4)),
        "external data length 4, but its shape needs 8 bytes")
    add("ext_too_small.onnx", with_init(ext(tensor("w", [5]), location="ext_data.bin")),
        "has 16 bytes, needs 20 at offset 0")
    add("ext_is_directory.onnx", with_init(ext(tensor("w", [2]), location="subdir")),
        "is a folder, not a regular file")
    add("ext_big_shape.onnx", with_init(ext(tensor("w", [1 << 20, 1 << 12]), location="ext_data.bin")),
        "has 16 bytes, needs 17179869184")

    # -- Constant nodes --
    add("constant_no_value.onnx",
        model([helper.make_node("Constant", [], ["c"], name="k"),
               helper.make_node("Relu", ["x"], ["y"])]),
        "needs exactly one attribute, has 0")
    add("constant_two_values.onnx",
        model([helper.make_node("Constant", [], ["c"], name="k", value_float=1.0, value_int=2),
               helper.make_node("Relu", ["x"], ["y"])]),
        "needs exactly one attribute, has 2")
    add("constant_sparse.onnx",
        model([helper.make_node("Constant", [], ["c"], name="k",
                                sparse_value=helper.make_sparse_tensor(
                                    helper.make_tensor("v", F, [1], [1.0]),
                                    helper.make_tensor("i", TensorProto.INT64, [1], [0]), [4])),
               helper.make_node("Relu", ["x"], ["y"])]),
        "attribute 'sparse_value' is not supported")
    k = helper.make_node("Constant", [], ["c"], name="k", value_float=1.0)
    k.attribute[0].type = onnx.AttributeProto.INT
    add("constant_value_float_as_int.onnx", model([k, helper.make_node("Relu", ["x"], ["y"])]),
        "attribute 'value_float' has type INT, ONNX defines it as FLOAT")
    k = helper.make_node("Constant", [], ["c"], name="k",
                         value=tensor("v", [2], raw_data=b"\0" * 3))
    add("constant_bad_tensor.onnx", model([k, helper.make_node("Relu", ["x"], ["y"])]),
        "raw_data has 3 bytes")
    add("constant_no_output.onnx",
        model([helper.make_node("Constant", [], [], name="k", value_float=1.0),
               helper.make_node("Relu", ["x"], ["y"])]),
        "needs exactly one output")
    add("constant_dup_output.onnx",
        model([helper.make_node("Constant", [], ["x"], name="k", value_float=1.0),
               helper.make_node("Relu", ["x"], ["y"])]),
        "output name 'x' is defined twice")

    # -- attributes --
    add("attr_wrong_type_int.onnx",
        model([helper.make_node("Flatten", ["x"], ["y"], name="f", axis=1.5)]),
        "node 'f' (Flatten): attribute 'axis' has type FLOAT, ONNX defines it as INT")
    add("attr_wrong_type_ints.onnx",
        model([helper.make_node("Transpose", ["x"], ["y"], name="t", perm="0")]),
        "attribute 'perm' has type STRING, ONNX defines it as INTS")
    a = helper.make_node("Softmax", ["x"], ["y"], name="s", axis=0)
    a.attribute[0].type = onnx.AttributeProto.UNDEFINED
    a.attribute[0].ClearField("i")
    add("attr_no_type.onnx", model([a]), "attribute 'axis' has no value")
    # AttributeProto.type = 99 (protobuf refuses to build it: byte surgery).
    raw = ser(model([helper.make_node("Relu", ["x"], ["y"], name="r", foo=1)]))
    assert raw.count(key(20, 0) + varint(2)) == 1
    add("attr_unknown_type.onnx", raw.replace(key(20, 0) + varint(2), key(20, 0) + varint(99)),
        "attribute 'foo' has unknown type 99")
    add("attr_internal_name.onnx",
        model([helper.make_node("Relu", ["x"], ["y"], name="r", _igemm_path="c")]),
        "attribute '_igemm_path': names starting with '_' are q8's own")
    k = helper.make_node("Constant", [], ["c"], name="k")
    at = k.attribute.add()
    at.name = "value"
    at.type = onnx.AttributeProto.TENSOR
    add("constant_value_no_tensor.onnx", model([k, helper.make_node("Relu", ["x"], ["y"])]),
        "node 'k' (Constant): 'value' has no tensor")
    a = helper.make_node("Relu", ["x"], ["y"], name="r")
    at = a.attribute.add()
    at.name = "g"
    at.type = onnx.AttributeProto.GRAPH
    add("attr_graph_missing.onnx", model([a]), "attribute 'g' has no graph")
    a = helper.make_node("Relu", ["x"], ["y"], name="r")
    at = a.attribute.add()
    at.name = "t"
    at.type = onnx.AttributeProto.TENSOR
    add("attr_tensor_missing.onnx", model([a]), "attribute 't' has no tensor")
    a = helper.make_node("Relu", ["x"], ["y"], name="r")
    a.attribute.append(helper.make_attribute("t", tensor("t", [3], raw_data=b"\0")))
    add("attr_tensor_bad.onnx", model([a]), "raw_data has 1 bytes")

    # -- If --
    def branch(nodes, outs, name):
        return helper.make_graph(nodes, name, [], outs)

    then_b = branch([helper.make_node("Relu", ["x"], ["t"])], [vi("t")], "then")
    else_b = branch([helper.make_node("Relu", ["x"], ["e"])], [vi("e")], "else")
    # a condition computed at run time runs either branch: they must agree
    else_7 = helper.make_graph([], "else7", [], [vi("e7", dims=(7,))],
                               [tensor("e7", [7], float_data=[0] * 7)])
    add("if_runtime_branch_shapes.onnx",
        model([helper.make_node("If", ["c"], ["y"], name="if", then_branch=then_b, else_branch=else_7)],
              inputs=[vi("x"), vi("c", dims=(), elem=TensorProto.BOOL)]),
        "both branches must give one dtype, shape and scale")
    cond = tensor("c", [], TensorProto.BOOL, int32_data=[1])
    add("if_missing_branch.onnx",
        model([helper.make_node("If", ["c"], ["y"], name="if", else_branch=else_b)], inits=[cond]),
        "missing then_branch")
    add("if_no_cond.onnx",
        model([helper.make_node("If", [], ["y"], name="if", then_branch=then_b, else_branch=else_b)]),
        "has no condition input")
    add("if_cond_empty.onnx",
        model([helper.make_node("If", ["c"], ["y"], name="if", then_branch=then_b, else_branch=else_b)],
              inits=[tensor("c", [0], TensorProto.BOOL)]),
        "condition must hold one value")
    add("if_cond_double.onnx",
        model([helper.make_node("If", ["c"], ["y"], name="if", then_branch=then_b, else_branch=else_b)],
              inits=[tensor("c", [], TensorProto.DOUBLE, double_data=[1.0])]),
        "condition has dtype float64")
    two = branch([helper.make_node("Relu", ["x"], ["t"]), helper.make_node("Relu", ["x"], ["u"])],
                 [vi("t"), vi("u")], "two")
    add("if_branch_outputs.onnx",
        model([helper.make_node("If", ["c"], ["y"], name="if", then_branch=two, else_branch=else_b)],
              inits=[cond]),
        "then_branch has 2 outputs, the node 1")
    bad = branch([helper.make_node("Relu", ["nope"], ["t"], name="inner")], [vi("t")], "bad")
    add("if_branch_undefined.onnx",
        model([helper.make_node("If", ["c"], ["y"], name="if", then_branch=bad, else_branch=else_b)],
              inits=[cond]),
        "input 'nope' is not produced by any node")
    clash = branch([helper.make_node("Relu", ["x"], ["y"], name="inner")], [vi("y")], "clash")
    add("if_branch_name_clash.onnx",
        model([helper.make_node("If", ["c"], ["y"], name="if", then_branch=clash, else_branch=else_b)],
              inits=[cond]),
        "then_branch redefines the name 'y'")
    inner_unsup = branch([helper.make_node("NoSuchOp", ["x"], ["t"], name="deep")], [vi("t")], "u")
    add("if_branch_unsupported.onnx",
        model([helper.make_node("If", ["c"], ["y"], name="if", then_branch=inner_unsup,
                                else_branch=else_b)], inits=[cond]),
        "node 'deep' (NoSuchOp): op NoSuchOp is not supported")
    # A cycle through a branch: the If's branch reads z, z is computed from
    # the If's output.
    loop_b = branch([helper.make_node("Relu", ["z"], ["t"], name="inner")], [vi("t")], "loop")
    add("if_branch_cycle.onnx",
        model([helper.make_node("If", ["c"], ["y"], name="if", then_branch=loop_b, else_branch=else_b),
               helper.make_node("Relu", ["y"], ["z"], name="after")],
              outputs=[vi("y"), vi("z")], inits=[cond]),
        "the graph has a cycle through this node")
    selfloop = branch([helper.make_node("Relu", ["q"], ["t"], name="b"),
                       helper.make_node("Relu", ["q"], ["q"], name="a")], [vi("t")], "self")
    add("if_branch_self_loop.onnx",
        model([helper.make_node("If", ["c"], ["y"], name="if", then_branch=selfloop,
                                else_branch=else_b)], inits=[cond]),
        "node 'a' (Relu): the graph has a cycle through this node")

    # ---- write ----
    os.makedirs(os.path.join(HERE, "subdir"), exist_ok=True)
    with open(os.path.join(HERE, "subdir", "README"), "w") as f:
        f.write("A folder named as external data: the loader must refuse it.\n")
    with open(os.path.join(HERE, "ext_data.bin"), "wb") as f:
        f.write(np.arange(4, dtype=np.float32).tobytes())
    names = set()
    with open(os.path.join(HERE, "MANIFEST"), "w") as man:
        man.write("# file<TAB>expected substring of q8_model_load's error"
                  "[<TAB>expected substring of q8run's error]\n"
                  "# generated by make_corpus.py: do not edit\n")
        for fname, data, sub, runsub in entries:
            assert fname not in names, fname
            names.add(fname)
            with open(os.path.join(HERE, fname), "wb") as f:
                f.write(data)
            man.write("%s\t%s%s\n" % (fname, sub, "\t" + runsub if runsub else ""))

    # ---- special cases created at test time ----
    # ext_symlink.onnx reads link.bin; the test puts it in a temp folder
    # where link.bin is a symlink to a file outside that folder.
    sp = os.path.join(HERE, "special")
    os.makedirs(sp, exist_ok=True)
    with open(os.path.join(sp, "ext_symlink.onnx"), "wb") as f:
        f.write(with_init(ext(tensor("w", [2]), location="link.bin")))
    # ext_ok.onnx: the same with a regular file, which must load.
    with open(os.path.join(sp, "ext_ok.onnx"), "wb") as f:
        f.write(ser(model([helper.make_node("Relu", ["x"], ["y"])],
                          inits=[ext(tensor("w", [2]), location="data.bin", offset=8, length=8)])))

    # Two outputs whose file names clash once sanitized ("a/b" and "a_b").
    with open(os.path.join(sp, "out_name_clash.onnx"), "wb") as f:
        f.write(ser(model([helper.make_node("Relu", ["x"], ["a/b"]), helper.make_node("Relu", ["x"], ["a_b"])],
                          outputs=[vi("a/b"), vi("a_b")])))
    # Outputs y (float32) and b (bfloat16, which .npy cannot hold): q8run
    # must fail before writing y.
    with open(os.path.join(sp, "out_bf16.onnx"), "wb") as f:
        f.write(ser(model([helper.make_node("Relu", ["x"], ["y"])],
                          inputs=[vi("x"), vi("b", elem=TensorProto.BFLOAT16)],
                          outputs=[vi("y"), vi("b", elem=TensorProto.BFLOAT16)])))
    # Two inputs with a dynamic first dim: given one input, q8run must name
    # the missing one rather than ask for its dims.
    with open(os.path.join(sp, "two_dynamic.onnx"), "wb") as f:
        f.write(ser(model([helper.make_node("Add", ["a", "b"], ["y"])],
                          inputs=[vi("a", ("N", 2)), vi("b", ("N", 2))],
                          outputs=[vi("y", ("N", 2))])))
    with open(os.path.join(sp, "b_bf16.pb"), "wb") as f:
        f.write(tensor("b", [2], TensorProto.BFLOAT16, int32_data=[0x3f80, 0x4000]).SerializeToString())

    # ---- valid models: must load and run; also the fuzzer's seeds ----
    # With x = [-1, 2], outputs must hold these values (EXPECTED lines:
    # FILE<TAB>NAME=V,V;NAME=V...).
    R, X = [0, 2], [-1, 2]
    relu = lambda i, o, **kw: helper.make_node("Relu", [i], [o], **kw)
    ident = lambda i, o, **kw: helper.make_node("Identity", [i], [o], **kw)
    w_init = tensor("w", [2], raw_data=np.array([1, -1], np.float32).tobytes())
    valid = [
        ("relu.onnx", relu_model(), {"y": R}),
        ("identity_chain.onnx", model([ident("x", "a"), relu("a", "b"), ident("b", "y")]), {"y": R}),
        ("unsorted.onnx", model([relu("a", "y", name="second"), relu("x", "a", name="first")]), {"y": R}),
        ("const_fold.onnx",
         model([helper.make_node("Constant", [], ["c"], value=tensor("v", [2], float_data=[-1, 2])),
                relu("c", "d"), relu("x", "y")], outputs=[vi("y"), vi("d")]),
         {"y": R, "d": R}),
        ("initializers.onnx",
         model([relu("w", "v"), relu("x", "y")], outputs=[vi("y"), vi("v")],
               inits=[w_init, tensor("i8", [3], TensorProto.INT8, int32_data=[1, 2, 3]),
                      tensor("i64", [1], TensorProto.INT64, int64_data=[7])]),
         {"y": R, "v": [1, 0]}),
        ("if_const.onnx",
         model([helper.make_node("If", ["c"], ["y"], name="if", then_branch=then_b, else_branch=else_b)],
               inits=[cond]),
         {"y": R}),
        ("if_else.onnx",
         model([helper.make_node("If", ["c"], ["y"], name="if", then_branch=then_b,
                                 else_branch=branch([ident("x", "e")], [vi("e")], "else_id"))],
               inits=[tensor("c", [], TensorProto.BOOL, int32_data=[0])]),
         {"y": X}),
        ("if_nested.onnx",
         model([helper.make_node(
             "If", ["c"], ["y"], name="outer",
             then_branch=branch([helper.make_node("If", ["c"], ["m"], name="inner",
                                                  then_branch=then_b, else_branch=else_b)],
                                [vi("m")], "mid"),
             else_branch=else_b)], inits=[cond]),
         {"y": R}),
        ("if_branch_reads_later_value.onnx",
         model([helper.make_node("If", ["c"], ["y"], name="if", else_branch=else_b,
                                 then_branch=branch([relu("z", "t", name="inner")], [vi("t")], "late")),
                relu("x", "z", name="after")],
               outputs=[vi("y"), vi("z")], inits=[cond]),
         {"y": R, "z": R}),
        ("if_branch_unsorted.onnx",
         model([helper.make_node("If", ["c"], ["y"], name="if", else_branch=else_b,
                                 then_branch=branch([relu("u", "t", name="second"),
                                                     relu("x", "u", name="first")],
                                                    [vi("t")], "unsorted"))],
               inits=[cond]),
         {"y": R}),
        ("dynamic.onnx", model([relu("x", "y")], inputs=[vi("x", dims=("n",))]), {"y": R}),
        ("dynamic_minus_one.onnx", model([relu("x", "y")], inputs=[vi("x", dims=(-1,))]), {"y": R}),
        ("no_shape.onnx", model([relu("x", "y")], inputs=[vi("x", dims=None)]), {"y": R}),
        ("attrs.onnx",
         model([helper.make_node("Relu", ["x"], ["y"], name="r", alpha=1.0, ints=[1, 2],
                                 s="str", strs=["a", "b"], fl=[1.5])]),
         {"y": R}),
        ("passthrough.onnx", model([], outputs=[vi("x")]), {"x": X}),
        ("constant_forms.onnx",
         model([helper.make_node("Constant", [], ["c1"], value_float=2.0),
                helper.make_node("Constant", [], ["c2"], value_ints=[1, 2]),
                helper.make_node("Constant", [], ["c3"], value_floats=[1.0, 2.0]),
                helper.make_node("Constant", [], ["c4"], value_int=3),
                relu("x", "y")],
               outputs=[vi("y"), vi("c1", dims=()), vi("c2", elem=TensorProto.INT64)]),
         {"y": R, "c1": [2], "c2": [1, 2]}),
        ("old_ir.onnx", relu_model(ir=3, opset=7), {"y": R}),
        # Identity removal: renaming a producer's output, readers before and
        # after the Identity, chains, outputs that must stay.
        ("id_rename.onnx", model([relu("x", "a"), ident("a", "y")]), {"y": R}),
        ("id_rename_earlier_reader.onnx",
         model([relu("x", "a", name="p"), relu("a", "b", name="k"), ident("a", "y", name="i")],
               outputs=[vi("y"), vi("b")]),
         {"y": R, "b": R}),
        ("id_both_outputs.onnx", model([relu("x", "a"), ident("a", "y")], outputs=[vi("a"), vi("y")]),
         {"a": R, "y": R}),
        ("id_input_to_output.onnx", model([ident("x", "y"), relu("x", "z")], outputs=[vi("y"), vi("z")]),
         {"y": X, "z": R}),
        ("id_chain_rename.onnx",
         model([relu("x", "a"), ident("a", "b"), ident("b", "c"), relu("a", "d"), relu("b", "e")],
               outputs=[vi("c"), vi("d"), vi("e")]),
         {"c": R, "d": R, "e": R}),
        ("id_const_output.onnx", model([ident("w", "k"), relu("x", "y")], outputs=[vi("y"), vi("k")],
                                       inits=[w_init]),
         {"y": R, "k": [1, -1]}),
    ]
    vdir = os.path.join(HERE, "valid")
    os.makedirs(vdir, exist_ok=True)
    with open(os.path.join(vdir, "EXPECTED"), "w") as ex:
        ex.write("# file<TAB>output=values;... for input x = [-1, 2]; generated by make_corpus.py\n")
        for fname, m, outs in valid:
            with open(os.path.join(vdir, fname), "wb") as f:
                f.write(ser(m))
            ex.write("%s\t%s\n" % (fname, ";".join(
                "%s=%s" % (k, ",".join(str(v) for v in vals)) for k, vals in outs.items())))
    print("wrote %d corpus files, %d valid models" % (len(entries), len(valid)), file=sys.stderr)


if __name__ == "__main__":
    main()
