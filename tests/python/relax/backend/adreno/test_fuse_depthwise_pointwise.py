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
# pylint: disable=not-callable
"""Tests of relax.backend.adreno.transform.FuseDepthwisePointwise."""

import pytest

import tvm
import tvm.testing
from tvm import relax, s_tir, tirx
from tvm.relax.backend.adreno.transform import FuseDepthwisePointwise
from tvm.relax.transform.legalize_ops import adreno as legalize_adreno
from tvm.s_tir.dlight.adreno.base import CONV2D, DEPTHWISE_CONV2D, schedule_rule_of

CHANNELS, PIXELS = 16, 8


def _conv(x, weight, groups=1, strides=1, padding=0):
    return relax.op.nn.conv2d(
        x,
        weight,
        strides=strides,
        padding=padding,
        groups=groups,
        data_layout="NCHW4c",
        kernel_layout="OIHW4o",
        out_layout="NCHW4c",
    )


def _fused(pointwise_kernel=1, pointwise_stride=1, share=False):
    """After ``FuseOps``: a depthwise 3x3 conv with ReLU6 read by a conv of 8 output channels
    (``pointwise_kernel`` x ``pointwise_kernel``); ``share``: the depthwise result is also an
    output of ``main``."""
    x = relax.Var("x", relax.TensorType((1, CHANNELS // 4, PIXELS, PIXELS, 4), "float32"))
    w_dw = relax.Var("w_dw", relax.TensorType((CHANNELS // 4, 1, 3, 3, 4), "float32"))
    w_pw = relax.Var(
        "w_pw", relax.TensorType((2, CHANNELS, pointwise_kernel, pointwise_kernel, 4), "float32")
    )
    builder = relax.BlockBuilder()
    with builder.function("main", [x, w_dw, w_pw]):
        with builder.dataflow():
            depthwise = builder.emit(_conv(x, w_dw, groups=CHANNELS, padding=1))
            act = builder.emit(relax.op.clip(depthwise, 0, 6))
            out = builder.emit(_conv(act, w_pw, strides=pointwise_stride))
            outs = builder.emit_output(relax.Tuple([out, act]) if share else out)
        builder.emit_func_output(outs)
    return tvm.transform.Sequential(
        [
            relax.transform.LegalizeOps({"relax.nn.conv2d": legalize_adreno.conv2d_NCHWc_OIHWo}),
            relax.transform.AnnotateTIROpPattern(),
            relax.transform.FuseOps(),
        ]
    )(builder.get())


def _fuse(mod):
    with tvm.transform.PassContext(config={"relax.adreno.fuse_depthwise_pointwise": True}):
        return FuseDepthwisePointwise()(mod)


def _calls(func):
    """The callees of the bindings of ``func``: GlobalVar names, ``call_tir`` PrimFunc names."""
    names = []
    for block in func.body.blocks:
        for binding in block.bindings:
            value = binding.value
            if isinstance(value, relax.Call) and isinstance(value.op, tvm.ir.GlobalVar):
                names.append(value.op.name_hint)
            elif isinstance(value, relax.Call) and value.op.name == "relax.call_tir":
                names.append(value.args[0].name_hint)
    return names


def _conv_rules(func):
    sch = s_tir.Schedule(func)
    blocks = sch.get_child_blocks(sch.get_sblock(name="root", func_name="main"))
    return [rule for rule in (schedule_rule_of(sch, b) for b in blocks) if rule]


def test_depthwise_group_joins_its_pointwise_reader():
    """The depthwise group and the 1x1 conv become one primitive function, the depthwise
    result an internal value flowing into the 1x1 conv's data, and FuseTIR makes it one
    PrimFunc with both convolutions."""
    before = _fused()
    assert len(_calls(before["main"])) == 2
    after = _fuse(before)
    (callee,) = _calls(after["main"])
    group = after[callee]
    assert group.attrs["Primitive"]
    inner = [b for block in group.body.blocks for b in block.bindings]
    calls = [b.value for b in inner if isinstance(b.value, relax.Call)]
    call_tirs = [call for call in calls if call.op.name == "relax.call_tir"]
    rules = [_conv_rules(after[call.args[0]]) for call in call_tirs]
    assert rules[0] == [DEPTHWISE_CONV2D] and rules[-1] == [CONV2D], rules
    pointwise_data = call_tirs[-1].args[1].fields[0]
    assert any(pointwise_data.same_as(b.var) for b in inner), "read from a parameter"
    assert len(group.params) == 3  # x, the depthwise weight, the 1x1 weight
    fused = relax.transform.FuseTIR()(after)
    (prim_func,) = [f for f in fused.functions.values() if isinstance(f, tirx.PrimFunc)]
    assert _conv_rules(prim_func) == [DEPTHWISE_CONV2D, CONV2D]


def test_nothing_changes_outside_the_option():
    before = _fused()
    tvm.ir.assert_structural_equal(FuseDepthwisePointwise()(before), before)


@pytest.mark.parametrize(
    "variant",
    [
        {"share": True},
        {"pointwise_kernel": 3},
        {"pointwise_stride": 2},
    ],
    ids=["depthwise_result_read_twice", "kxk_reader", "strided_reader"],
)
def test_other_readers_keep_two_kernels(variant):
    """A depthwise result that is also an output, or read by a KxK or a strided conv, stays
    where it is: only a stride-1 1x1 conv can compute it where it reads it."""
    before = _fused(**variant)
    tvm.ir.assert_structural_equal(_fuse(before), before)


def test_function_without_a_pair_is_unchanged():
    """The pair in ``main`` fuses; another Relax function of the module stays as it was."""
    before = _fused()
    x = relax.Var("x", relax.TensorType((1, 4), "float32"))
    builder = relax.BlockBuilder()
    with builder.function("other", [x]):
        with builder.dataflow():
            out = builder.emit_output(relax.op.add(x, x))
        builder.emit_func_output(out)
    other = builder.get()["other"]
    before["other"] = other
    after = _fuse(before)
    tvm.ir.assert_structural_equal(after["other"], other)
    assert len(_calls(after["main"])) == 1


if __name__ == "__main__":
    tvm.testing.main()
