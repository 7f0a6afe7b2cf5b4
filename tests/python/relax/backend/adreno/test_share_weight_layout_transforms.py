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
"""Tests of ShareWeightLayoutTransforms: the channel blockings of weights between buffers call
one PrimFunc over symbolic extents; activations, textures and other maps keep their kernels."""

import numpy as np
import pytest

import tvm
import tvm.testing
from tvm import relax, tirx
from tvm.relax.backend.adreno.transform import ShareWeightLayoutTransforms
from tvm.script import tirx as T

TEXTURE = tvm.target.Target("qcom/adreno-opencl-texture", host="llvm")
CALL_TIR = tvm.ir.Op.get("relax.call_tir")


def _oihw4o(o, i, h, w):
    return (o // 4, i, h, w, o % 4)


def _static_blocking(shape, out_scope="global"):
    """The OIHW4o blocking of a weight of ``shape`` as the Adreno legalization leaves it: the
    annotated scatter, between buffers unless ``out_scope`` says otherwise."""
    o, i, h, w = shape

    @T.prim_func(private=True, s_tir=True)
    def func(
        data: T.Buffer((o, i, h, w), "float32"),
        out: T.Buffer((o // 4, i, h, w, 4), "float32", scope=out_scope),
    ):
        T.func_attr({"tirx.noalias": True})
        for lo, li, lh, lw in T.grid(o, i, h, w):
            with T.sblock("te_layout_transform"):
                v_o, v_i, v_h, v_w = T.axis.remap("SSSS", [lo, li, lh, lw])
                T.reads(data[v_o, v_i, v_h, v_w])
                T.writes(out[v_o // 4, v_i, v_h, v_w, v_o % 4])
                T.sblock_attr({"schedule_rule": "adreno.layout_transform"})
                out[v_o // 4, v_i, v_h, v_w, v_o % 4] = data[v_o, v_i, v_h, v_w]

    return func


def _calling_module(params, calls, num_input=1):
    """A module whose ``main`` takes ``params`` (name, shape), the first ``num_input`` of them
    runtime inputs (None: no ``num_input``), and returns the ``call_tir`` of each PrimFunc of
    ``calls`` (name, PrimFunc, argument name)."""
    args = {name: relax.Var(name, relax.TensorType(shape, "float32")) for name, shape in params}
    attrs = None if num_input is None else {"num_input": num_input}
    builder = relax.BlockBuilder()
    with builder.function("main", list(args.values()), attrs=attrs):
        with builder.dataflow():
            gvars, outs = {}, []
            for name, func, arg in calls:
                if name not in gvars:
                    gvars[name] = builder.add_func(func, name)
                out_ty = relax.TensorType([int(d) for d in func.params[1].shape], "float32")
                outs.append(builder.emit(relax.call_tir(gvars[name], (args[arg],), out_ty)))
            result = builder.emit_output(relax.Tuple(outs))
        builder.emit_func_output(result)
    return builder.get()


def _two_weights(num_input=1):
    """Two weights of different shapes blocked into OIHW4o, and an activation blocked by the
    kernel of one of them."""
    block_12x8 = _static_blocking((12, 8, 1, 1))
    return _calling_module(
        [("x", (12, 8, 1, 1)), ("w1", (8, 4, 3, 3)), ("w2", (12, 8, 1, 1))],
        [
            ("block_8x4", _static_blocking((8, 4, 3, 3)), "w1"),
            ("block_12x8", block_12x8, "w2"),
            ("block_12x8", block_12x8, "x"),
        ],
        num_input,
    )


def _calls(func):
    """The ``call_tir`` calls of a Relax function, in order."""
    calls = []

    def visit(expr):
        if isinstance(expr, relax.Call) and expr.op.same_as(CALL_TIR):
            calls.append(expr)

    relax.analysis.post_order_visit(func, visit)
    return calls


def _generic_blocking(rank=4):
    """Upstream's legalization of the OIHW4o blocking of a tensor of symbolic extents."""
    extents = [tirx.Var(f"d{axis}", "int64") for axis in range(rank)]
    data = relax.Var("data", relax.TensorType(extents, "float32"))
    builder = relax.BlockBuilder()
    with builder.function("main", [data]):
        out = builder.emit(relax.op.layout_transform(data, index_map=_oihw4o))
        builder.emit_func_output(out)
    legalized = relax.transform.LegalizeOps()(builder.get())
    (func,) = [f for _, f in legalized.functions_items() if isinstance(f, tirx.PrimFunc)]
    return func


def test_weight_blockings_of_two_shapes_call_one_shape_generic_kernel():
    before = _two_weights()
    after = ShareWeightLayoutTransforms()(before)
    first, second, activation = _calls(after["main"])
    assert first.args[0].same_as(second.args[0])
    shared = after[first.args[0]]
    tvm.ir.assert_structural_equal(shared, _generic_blocking(), map_free_vars=True)
    # The results keep their static types; the activation keeps its kernel for its shape.
    assert [list(c.ty_args[0].shape) for c in (first, second)] == [[2, 4, 3, 3, 4], [3, 8, 1, 1, 4]]
    assert activation.args[0].name_hint == "block_12x8"
    tvm.ir.assert_structural_equal(after[activation.args[0]], _static_blocking((12, 8, 1, 1)))
    # The static kernel of the 8x4 weight is gone: nothing calls it.
    names = {gvar.name_hint for gvar, _ in after.functions_items()}
    assert "block_8x4" not in names and "block_12x8" in names


def test_module_without_num_input_is_unchanged():
    mod = _two_weights(num_input=None)
    tvm.ir.assert_structural_equal(ShareWeightLayoutTransforms()(mod), mod)


def test_texture_output_keeps_its_kernel():
    """An image needs static extents: a blocking that writes a texture is not shared."""
    before = _calling_module(
        [("x", (1,)), ("w", (8, 4, 3, 3))],
        [("block_to_texture", _static_blocking((8, 4, 3, 3), "global.texture"), "w")],
    )
    tvm.ir.assert_structural_equal(ShareWeightLayoutTransforms()(before), before)


def test_map_other_than_a_channel_blocking_keeps_its_kernel():
    """A transpose of a weight is a layout transform too, but not a channel blocking."""

    @T.prim_func(private=True, s_tir=True)
    def swap_io(w: T.Buffer((8, 4, 3, 3), "float32"), out: T.Buffer((4, 8, 3, 3), "float32")):
        T.func_attr({"tirx.noalias": True})
        for o, i, h, kw in T.grid(8, 4, 3, 3):
            with T.sblock("te_layout_transform"):
                v_o, v_i, v_h, v_w = T.axis.remap("SSSS", [o, i, h, kw])
                T.reads(w[v_o, v_i, v_h, v_w])
                T.writes(out[v_i, v_o, v_h, v_w])
                T.sblock_attr({"schedule_rule": "adreno.layout_transform"})
                out[v_i, v_o, v_h, v_w] = w[v_o, v_i, v_h, v_w]

    before = _calling_module([("x", (1,)), ("w", (8, 4, 3, 3))], [("swap_io", swap_io, "w")])
    tvm.ir.assert_structural_equal(ShareWeightLayoutTransforms()(before), before)


def _conv_net():
    """Three convolutions whose weights are parameters after one runtime input."""
    data = relax.Var("data", relax.TensorType((1, 8, 10, 10), "float32"))
    weights = [
        relax.Var("w0", relax.TensorType((16, 8, 3, 3), "float32")),
        relax.Var("w1", relax.TensorType((8, 16, 1, 1), "float32")),
        relax.Var("w2", relax.TensorType((12, 8, 3, 3), "float32")),
    ]
    builder = relax.BlockBuilder()
    with builder.function("main", [data, *weights], attrs={"num_input": 1}):
        with builder.dataflow():
            out = data
            for weight in weights:
                out = builder.emit(relax.op.nn.relu(relax.op.nn.conv2d(out, weight, padding=1)))
            out = builder.emit_output(out)
        builder.emit_func_output(out)
    return builder.get()


def test_texture_pipeline_blocks_all_weights_with_one_kernel():
    mod = _conv_net()
    with TEXTURE:
        lowered = tvm.transform.Sequential(relax.backend.adreno.legalize_passes(TEXTURE))(mod)
    # Parameters are re-typed on their device: found by name.
    weights = {"w0", "w1", "w2"}
    blockings = [c for c in _calls(lowered["main"]) if c.args[1].fields[0].name in weights]
    assert len(blockings) == 3
    assert len({call.args[0] for call in blockings}) == 1
    shared = lowered[blockings[0].args[0]]
    assert [p.scope() for p in shared.params] == ["global", "global"]


@pytest.mark.requires_opencl
def test_shared_kernel_blocks_each_weight_right_on_opencl():
    """The network with its weights blocked by the shared kernel computes what LLVM does."""
    mod = _conv_net()
    rng = np.random.default_rng()
    inputs = [
        rng.standard_normal([int(d) for d in p.ty.shape]).astype("float32")
        for p in mod["main"].params
    ]
    dev = tvm.opencl(0)
    texture = relax.VirtualMachine(tvm.compile(mod, target=TEXTURE), dev)
    reference = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
    out = texture["main"](*[tvm.runtime.tensor(a, dev) for a in inputs]).numpy()
    expected = reference["main"](*[tvm.runtime.tensor(a) for a in inputs]).numpy()
    scale = np.abs(expected).max()
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4 * scale)


if __name__ == "__main__":
    tvm.testing.main()
