# Licensed to the Apache Software Foundation (ASF) under one
# or more contributor license agreements.  See the NOTICE file
# distributed with this work for additional information
# regarding copyright ownership.  The ASF licenses this file
# to you under the Apache License, Version 2.0 (the
# "License"); you may not use this file except in compliance
# with the License.  You may obtain a copy of the License at
#
#   http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing,
# software distributed under the License is distributed on an
# "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY
# KIND, either express or implied.  See the License for the
# specific language governing permissions and limitations
# under the License.
# pylint: disable=invalid-name,missing-docstring,no-self-argument,not-callable
"""Tests of AnnotateTextureScope: which tensors live in textures, and the copies between
consumers that disagree."""

import numpy as np
import pytest

import tvm
import tvm.testing
from tvm import relax
from tvm.relax.backend.adreno import legalize_passes
from tvm.relax.backend.adreno.transform import (
    AnnotateCustomMemoryScope,
    AnnotateTextureScope,
    TextureLimits,
    choose_texture_scope,
)
from tvm.script import ir as I
from tvm.script import relax as R
from tvm.script import tirx as T

TARGET = tvm.target.Target("qcom/adreno-opencl-texture")
PACKED = (1, 2, 8, 8, 4)


@I.ir_module
class ConvThenMean:
    @R.function
    def main(
        x: R.Tensor((1, 8, 8, 8), "float32"), w: R.Tensor((8, 8, 1, 1), "float32")
    ) -> R.Tensor((1, 8, 1, 1), "float32"):
        with R.dataflow():
            conv = R.nn.conv2d(x, w)
            y = R.mean(conv, axis=[2, 3], keepdims=True)
            R.output(y)
        return y


@I.ir_module
class ConvMeanBias:
    @R.function
    def main(
        x: R.Tensor((1, 8, 8, 8), "float32"),
        w: R.Tensor((8, 8, 1, 1), "float32"),
        b: R.Tensor((1, 8, 1, 1), "float32"),
    ) -> R.Tensor((1, 8, 1, 1), "float32"):
        with R.dataflow():
            conv = R.nn.conv2d(x, w)
            y = R.add(R.mean(conv, axis=[2, 3], keepdims=True), b)
            R.output(y)
        return y


def _before_annotation(mod):
    """``mod`` through the Adreno legalization up to the memory scope annotation."""
    with TARGET:
        passes = legalize_passes(TARGET)
        names = [p.info.name for p in passes]
        return tvm.transform.Sequential(passes[: names.index("AnnotateTextureScope")])(mod)


def _scopes_of(mod, op_name):
    """The memory scope of the result of every call of ``op_name`` in ``main``."""
    op = tvm.ir.Op.get(op_name)
    scopes = []

    def _visit(expr):
        if isinstance(expr, relax.Call) and expr.op.same_as(op):
            scopes.append(str(expr.ty.vdevice.memory_scope))

    relax.analysis.post_order_visit(mod["main"], _visit)
    return scopes


def test_conv_feeding_a_reduction_writes_a_texture():
    mod = _before_annotation(ConvThenMean)
    with TARGET:
        ours = AnnotateTextureScope(TARGET)(mod)
        upstream = AnnotateCustomMemoryScope(TARGET)(mod)
    # Upstream's pass knows reductions only by their Relax attributes.
    assert _scopes_of(upstream, "relax.nn.conv2d") == ["global"]
    assert _scopes_of(ours, "relax.nn.conv2d") == ["global.texture"]


def _elementwise(n: T.int64):
    """An elementwise PrimFunc over the packed shape, as a legalized op with its pattern."""

    @T.prim_func(private=True, s_tir=True)
    def func(
        a: T.Buffer((T.int64(1), T.int64(2), T.int64(8), T.int64(8), T.int64(4)), "float32"),
        b: T.Buffer((T.int64(1), T.int64(2), T.int64(8), T.int64(8), T.int64(4)), "float32"),
    ):
        T.func_attr({"op_pattern": n})
        for i0, i1, i2, i3, i4 in T.grid(1, 2, 8, 8, 4):
            with T.sblock("compute"):
                v0, v1, v2, v3, v4 = T.axis.remap("SSSSS", [i0, i1, i2, i3, i4])
                b[v0, v1, v2, v3, v4] = a[v0, v1, v2, v3, v4] * T.float32(2)

    return func


def _consumers(texture_readers: int, buffer_readers: int) -> tvm.IRModule:
    """``y = ew(x)`` read by elementwise consumers (which read textures) and by opaque ones
    (which read buffers); every consumer's result is returned."""
    bb = relax.BlockBuilder()
    ew = bb.add_func(_elementwise(0), "ew")
    opaque = bb.add_func(_elementwise(8), "opaque")
    x = relax.Var("x", relax.TensorType(PACKED, "float32"))
    out_ty = relax.TensorType(PACKED, "float32")
    with bb.function("main", [x]):
        with bb.dataflow():
            y = bb.emit(relax.call_tir(ew, (x,), out_ty), "y")
            outs = [bb.emit(relax.call_tir(ew, (y,), out_ty)) for _ in range(texture_readers)]
            outs += [bb.emit(relax.call_tir(opaque, (y,), out_ty)) for _ in range(buffer_readers)]
            gv = bb.emit_output(relax.Tuple(outs))
        bb.emit_func_output(gv)
    return bb.get()


def _binding(mod, name):
    for block in mod["main"].body.blocks:
        for binding in block.bindings:
            if binding.var.name == name:
                return binding
    raise KeyError(name)


def _copies(mod):
    """``(source name, destination scope)`` of every ``to_vdevice`` in ``main``."""
    op = tvm.ir.Op.get("relax.to_vdevice")
    found = []
    for block in mod["main"].body.blocks:
        for binding in block.bindings:
            if isinstance(binding.value, relax.Call) and binding.value.op.same_as(op):
                source = binding.value.args[0].name
                found.append((source, str(binding.value.attrs.dst_vdevice.memory_scope)))
    return found


def test_a_result_takes_the_scope_most_consumers_ask_for():
    with TARGET:
        mod = AnnotateTextureScope(TARGET)(_consumers(texture_readers=2, buffer_readers=1))
    assert _binding(mod, "y").var.ty.vdevice.memory_scope == "global.texture"
    assert [copy for copy in _copies(mod) if copy[0] == "y"] == [("y", "global")]


def test_a_tie_keeps_the_result_in_a_buffer():
    with TARGET:
        mod = AnnotateTextureScope(TARGET)(_consumers(texture_readers=1, buffer_readers=1))
    assert _binding(mod, "y").var.ty.vdevice.memory_scope == "global"
    assert [copy for copy in _copies(mod) if copy[0] == "y"] == [("y", "global.texture")]


def test_parameters_and_results_are_buffers():
    """The packed parameter is read by a texture consumer: it stays a buffer, and the
    consumer reads a copy."""
    with TARGET:
        mod = AnnotateTextureScope(TARGET)(_consumers(texture_readers=1, buffer_readers=0))
    main = mod["main"]
    assert main.params[0].ty.vdevice.memory_scope == "global"
    assert ("x", "global.texture") in _copies(mod)
    assert all(field.vdevice.memory_scope == "global" for field in main.ret_ty.fields)


def test_the_module_keeps_its_own_virtual_devices():
    """The module's VDevices stay, first; the pass adds one per scope it writes."""
    mod = _consumers(texture_readers=2, buffer_readers=1)
    host = relax.VDevice(tvm.target.Target("llvm"), 0, "global")
    mod.update_global_info("vdevice", [host])
    with TARGET:
        vdevices = list(AnnotateTextureScope(TARGET)(mod).global_infos["vdevice"])
    tvm.ir.assert_structural_equal(vdevices[0], host)
    assert sorted(str(v.memory_scope) for v in vdevices[1:]) == ["global", "global.texture"]
    assert {v.target.kind.name for v in vdevices[1:]} == {"opencl"}


def _constants(mod):
    found = []

    def _visit(expr):
        if isinstance(expr, tvm.ir.GenericConst):
            found.append(expr)

    relax.analysis.post_order_visit(mod["main"], _visit)
    return found


def test_constants_of_the_input_are_left_as_they_were():
    """A constant argument gets its scope in a new node; the module given to the pass keeps
    its constants untouched."""
    bias = np.random.uniform(-1, 1, (1, 8, 1, 1)).astype("float32")
    mod = _before_annotation(relax.transform.BindParams("main", {"b": bias})(ConvMeanBias))
    snapshot = tvm.ir.load_json(tvm.ir.save_json(mod))
    with TARGET:
        annotated = AnnotateTextureScope(TARGET)(mod)
    tvm.ir.assert_structural_equal(mod, snapshot)
    (given,) = _constants(mod)
    assert given.ty.vdevice is None
    (planned,) = _constants(annotated)
    assert planned.ty.vdevice.memory_scope.startswith("global.texture")
    # The bias in NCHW4c, as the layout pass folded it; the tensor is shared, not copied.
    packed = bias.reshape(1, 2, 4, 1, 1).transpose(0, 1, 3, 4, 2)
    np.testing.assert_array_equal(planned.value.numpy(), packed)
    assert planned.value.same_as(given.value)


@I.ir_module
class ConvThenTransposed:
    @R.function
    def main(
        x: R.Tensor((1, 8, 8, 8), "float32"),
        w: R.Tensor((8, 8, 3, 3), "float32"),
        wt: R.Tensor((8, 8, 2, 2), "float32"),
    ) -> R.Tensor((1, 8, 16, 16), "float32"):
        with R.dataflow():
            conv = R.nn.conv2d(x, w, padding=1)
            y = R.nn.conv2d_transpose(conv, wt, strides=2)
            R.output(y)
        return y


def test_transposed_conv_reads_its_data_from_a_texture_and_its_weight_from_a_buffer():
    mod = _before_annotation(ConvThenTransposed)
    with TARGET:
        annotated = AnnotateTextureScope(TARGET)(mod)
    (gvar,) = [gv for gv in annotated.get_global_vars() if "conv2d_transpose" in gv.name_hint]
    # Found by its schedule_rule annotation, not by conv2d attributes put on the PrimFunc.
    assert "op_attrs" not in annotated[gvar].attrs
    calls = []

    def _visit(expr):
        if isinstance(expr, relax.Call) and expr.args and expr.args[0].same_as(gvar):
            calls.append(expr)

    relax.analysis.post_order_visit(annotated["main"], _visit)
    (call,) = calls
    data, weight = call.args[1].fields
    assert data.ty.vdevice.memory_scope == "global.texture"
    assert weight.ty.vdevice.memory_scope == "global"
    assert _scopes_of(annotated, "relax.nn.conv2d") == ["global.texture"]


def _conv_weight_scopes(mod):
    """The memory scope of the weight of every ``conv2d`` call in ``main``."""
    op = tvm.ir.Op.get("relax.nn.conv2d")
    scopes = []

    def _visit(expr):
        if isinstance(expr, relax.Call) and expr.op.same_as(op):
            scopes.append(str(expr.args[1].ty.vdevice.memory_scope))

    relax.analysis.post_order_visit(mod["main"], _visit)
    return scopes


def _weights_in_textures(enabled):
    return tvm.transform.PassContext(config={"relax.adreno.conv_weights_in_textures": enabled})


def test_conv_weights_are_textures_only_with_the_option():
    """By default the conv reads its blocked weight from a buffer; with the PassContext option
    ``relax.adreno.conv_weights_in_textures`` the weight's blocking writes a texture the conv
    reads, with no copy; the option set to False is the default, and it is read when the
    pass runs, not when it is made."""
    mod = _before_annotation(ConvThenMean)
    annotate = AnnotateTextureScope(TARGET)
    with TARGET:
        default = annotate(mod)
        with _weights_in_textures(True):
            textures = annotate(mod)
        with _weights_in_textures(False):
            off = annotate(mod)
    assert _conv_weight_scopes(default) == ["global"]
    # the scope of every texture of that shape: (2, 8, 1, 1, 4) is 16 layers of one texel
    weight_scope = choose_texture_scope((2, 8, 1, 1, 4), TextureLimits.from_target(TARGET))
    assert weight_scope.startswith("global.texture")
    assert _conv_weight_scopes(textures) == [weight_scope]
    assert not _copies(textures)
    tvm.ir.assert_structural_equal(off, default)


def test_conv_weights_option_takes_a_bool():
    options = tvm.transform.PassContext.list_configs()
    assert options["relax.adreno.conv_weights_in_textures"]["type"] == "bool"
    with pytest.raises(AttributeError, match="relax.adreno.conv_weights_in_textures takes bool"):
        _weights_in_textures("yes")


def test_reductions_keep_their_op_pattern():
    mod = _before_annotation(ConvThenMean)
    with TARGET:
        ours = AnnotateTextureScope(TARGET)(mod)
    patterns = {
        gvar.name_hint: int(func.attrs["op_pattern"])
        for gvar, func in ours.functions_items()
        if isinstance(func, tvm.tirx.PrimFunc)
    }
    assert patterns["mean"] == 4  # kCommReduce


if __name__ == "__main__":
    tvm.testing.main()
