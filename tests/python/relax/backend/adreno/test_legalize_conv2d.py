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
"""Tests of the Adreno conv2d legalization: which implementation each shape gets (Winograd,
direct, depthwise, group), the Winograd rule of winograd_tile and the option
relax.adreno.winograd."""

import pytest
import tvm_ffi

import tvm
import tvm.testing
from tvm import relax
from tvm.relax.transform.legalize_ops import adreno as legalize_adreno
from tvm.s_tir.dlight.adreno.base import (
    CONV2D,
    DEPTHWISE_CONV2D,
    GROUP_CONV2D,
    SCHEDULE_RULE,
    WINOGRAD_BATCHED_PRODUCT,
    WINOGRAD_INPUT_TRANSFORM,
    WINOGRAD_OUTPUT_TRANSFORM,
)


def _conv_call(data, weight, groups=1, strides=(1, 1), dtype="float32", with_ty_args=True):
    """A normalized NCHW4c / OIHW4o conv2d call; ``ty_args`` as AnnotateCustomMemoryScope
    leaves them (no vdevice here)."""
    x = relax.Var("x", relax.TensorType(data, dtype))
    w = relax.Var("w", relax.TensorType(weight, dtype))
    builder = relax.BlockBuilder()
    with builder.function("main", [x, w]):
        with builder.dataflow():
            call = builder.normalize(
                relax.op.nn.conv2d(
                    x,
                    w,
                    strides=strides,
                    padding=[1, 1],
                    groups=groups,
                    data_layout="NCHW4c",
                    kernel_layout="OIHW4o",
                    out_layout="NCHW4c",
                )
            )
            if with_ty_args:
                call = relax.Call(call.op, call.args, call.attrs, [call.ty])
            out = builder.emit_output(call)
        builder.emit_func_output(out)
    return builder.get(), call


def _legalize(mod):
    return relax.transform.LegalizeOps({"relax.nn.conv2d": legalize_adreno.conv2d_NCHWc_OIHWo})(mod)


def _stage_annotations(mod):
    stages = set()

    def _visit(node):
        if SCHEDULE_RULE in node.annotations:
            stages.add(str(node.annotations[SCHEDULE_RULE]))

    for _, func in mod.functions_items():
        if isinstance(func, tvm.tirx.PrimFunc):
            tvm_ffi.structural_walk(func, [(tvm.s_tir.SBlock, _visit)], order="post")
    return stages


@pytest.mark.parametrize(
    "data, weight, strides, dtype, tile",
    [
        # 512 channels, 8x8 output: F(4x4)
        ((1, 128, 8, 8, 4), (128, 512, 3, 3, 4), (1, 1), "float32", 4),
        # a 4x4 output: F(2x2)
        ((1, 128, 4, 4, 4), (128, 512, 3, 3, 4), (1, 1), "float32", 2),
        # float16 always gets F(2x2)
        ((1, 128, 8, 8, 4), (128, 512, 3, 3, 4), (1, 1), "float16", 2),
        # fewer than 512 channels: direct
        ((1, 64, 8, 8, 4), (64, 256, 3, 3, 4), (1, 1), "float32", 0),
        # stride 2: direct
        ((1, 128, 8, 8, 4), (128, 512, 3, 3, 4), (2, 2), "float32", 0),
        # 1x1 kernel: direct
        ((1, 128, 8, 8, 4), (128, 512, 1, 1, 4), (1, 1), "float32", 0),
    ],
)
def test_winograd_tile_by_shape(data, weight, strides, dtype, tile):
    _, call = _conv_call(data, weight, strides=strides, dtype=dtype)
    assert legalize_adreno.winograd_tile(call) == tile


@pytest.mark.parametrize("mode, tile", [("off", 0), ("2", 2), ("4", 4)])
def test_winograd_option_overrides_the_shape_rule(mode, tile):
    _, small = _conv_call((1, 2, 8, 8, 4), (2, 8, 3, 3, 4))
    _, large = _conv_call((1, 128, 8, 8, 4), (128, 512, 3, 3, 4))
    with tvm.transform.PassContext(config={"relax.adreno.winograd": mode}):
        assert legalize_adreno.winograd_mode() == mode
        assert legalize_adreno.winograd_tile(small) == tile
        assert legalize_adreno.winograd_tile(large) == tile
    assert legalize_adreno.winograd_mode() == "auto"  # the default outside the context
    assert legalize_adreno.winograd_tile(small) == 0


def test_winograd_option_is_registered_with_its_type():
    assert tvm.transform.PassContext.list_configs()["relax.adreno.winograd"]["type"] == "str"
    with pytest.raises(AttributeError, match="relax.adreno.winograd"):
        tvm.transform.PassContext(config={"relax.adreno.winograd": 4})


def test_unknown_winograd_mode_is_refused():
    _, large = _conv_call((1, 128, 8, 8, 4), (128, 512, 3, 3, 4))
    with tvm.transform.PassContext(config={"relax.adreno.winograd": "8"}):
        with pytest.raises(ValueError, match=r"relax.adreno.winograd='8' is not one of"):
            legalize_adreno.winograd_tile(large)


@pytest.mark.parametrize(
    "weight, groups, rule",
    [
        ((8, 16, 3, 3, 4), 1, CONV2D),
        ((4, 1, 3, 3, 4), 16, DEPTHWISE_CONV2D),
        ((4, 4, 3, 3, 4), 4, GROUP_CONV2D),
    ],
    ids=["direct", "depthwise", "group"],
)
def test_each_conv_kind_names_its_schedule_rule(weight, groups, rule):
    """One PrimFunc, whose one reduction block is annotated with the rule of its kind."""
    mod, _ = _conv_call((1, 4, 8, 8, 4), weight, groups=groups)
    legalized = _legalize(mod)
    (func,) = [f for _, f in legalized.functions_items() if isinstance(f, tvm.tirx.PrimFunc)]
    sch = tvm.s_tir.Schedule(func)
    annotated = [
        str(sch.get(block).annotations[SCHEDULE_RULE])
        for block in sch.get_child_blocks(sch.get_sblock("root"))
        if SCHEDULE_RULE in sch.get(block).annotations
    ]
    assert annotated == [rule]


def test_identical_direct_convs_share_their_prim_func():
    """The annotation is put before the PrimFunc is added: the module keeps one copy."""
    x = relax.Var("x", relax.TensorType((1, 4, 8, 8, 4), "float32"))
    w = relax.Var("w", relax.TensorType((4, 16, 3, 3, 4), "float32"))
    layouts = {"data_layout": "NCHW4c", "kernel_layout": "OIHW4o", "out_layout": "NCHW4c"}
    builder = relax.BlockBuilder()
    with builder.function("main", [x, w]):
        with builder.dataflow():
            first = builder.emit(relax.op.nn.conv2d(x, w, padding=[1, 1], **layouts))
            conv = relax.op.nn.conv2d(first, w, padding=[1, 1], **layouts)
            out = builder.emit_output(conv)
        builder.emit_func_output(out)
    funcs = [f for _, f in _legalize(builder.get()).functions_items()]
    assert len([f for f in funcs if isinstance(f, tvm.tirx.PrimFunc)]) == 1


def test_winograd_conv_is_four_calls_with_annotated_stages():
    mod, _ = _conv_call((1, 128, 8, 8, 4), (128, 512, 3, 3, 4))
    legalized = _legalize(mod)
    calls = []

    def _visit(expr):
        if isinstance(expr, relax.Call) and expr.op.same_as(tvm.ir.Op.get("relax.call_tir")):
            calls.append(expr.args[0].name_hint)

    relax.analysis.post_order_visit(legalized["main"], _visit)
    assert len(calls) == 4, calls
    assert _stage_annotations(legalized) == {
        WINOGRAD_INPUT_TRANSFORM,
        WINOGRAD_BATCHED_PRODUCT,
        WINOGRAD_OUTPUT_TRANSFORM,
    }


def test_float16_conv_keeps_its_dtype():
    mod, _ = _conv_call((1, 4, 8, 8, 4), (8, 16, 3, 3, 4), dtype="float16")
    legalized = _legalize(mod)
    assert legalized["main"].ret_ty.dtype == "float16"
    relax.analysis.well_formed(legalized)


def test_winograd_conv_without_memory_scope_annotation_legalizes():
    """A Winograd-sized conv whose scope nobody annotated (no ty_args) still legalizes: its
    intermediates take the result's own vdevice when the module has no texture one."""
    mod, _ = _conv_call((1, 128, 8, 8, 4), (128, 512, 3, 3, 4), with_ty_args=False)
    legalized = _legalize(mod)
    script = legalized["main"].script()
    assert "relax.nn.conv2d" not in script
    assert "winograd" in script
    relax.analysis.well_formed(legalized)


if __name__ == "__main__":
    tvm.testing.main()
