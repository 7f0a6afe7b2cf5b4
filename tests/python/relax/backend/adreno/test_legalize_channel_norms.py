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
"""Tests of LegalizeChannelNorms: normalizations along the channels are lowered before
ConvertLayout, the others are left to it."""

import pytest

import tvm
import tvm.testing
from tvm import relax
from tvm.relax.backend.adreno.transform.legalize_channel_norms import LegalizeChannelNorms
from tvm.script import ir as I
from tvm.script import relax as R


def _calls(func):
    names = []

    def _visit(expr):
        if isinstance(expr, relax.Call) and isinstance(expr.op, tvm.ir.Op):
            names.append(expr.op.name)

    relax.analysis.post_order_visit(func, _visit)
    return names


@I.ir_module
class GroupNormOverChannels:
    @R.function
    def main(
        x: R.Tensor((1, 8, 6, 6), "float32"),
        gamma: R.Tensor((8,), "float32"),
        beta: R.Tensor((8,), "float32"),
    ) -> R.Tensor((1, 8, 6, 6), "float32"):
        with R.dataflow():
            y = R.nn.group_norm(x, gamma, beta, num_groups=2, channel_axis=1, axes=[2, 3])
            R.output(y)
        return y


@I.ir_module
class LayerNormOverChannels:
    @R.function
    def main(
        x: R.Tensor((1, 8, 6, 6), "float32"),
        gamma: R.Tensor((8, 6, 6), "float32"),
        beta: R.Tensor((8, 6, 6), "float32"),
    ) -> R.Tensor((1, 8, 6, 6), "float32"):
        with R.dataflow():
            y = R.nn.layer_norm(x, gamma, beta, axes=[1, 2, 3])
            R.output(y)
        return y


@pytest.mark.parametrize("before", [GroupNormOverChannels, LayerNormOverChannels])
def test_norm_over_channels_is_legalized_as_legalize_ops_does(before):
    tvm.ir.assert_structural_equal(
        LegalizeChannelNorms()(before), relax.transform.LegalizeOps()(before)
    )


def test_norm_over_width_is_left_to_convert_layout():
    @I.ir_module
    class Before:
        @R.function
        def main(
            x: R.Tensor((1, 8, 6, 6), "float32"),
            gamma: R.Tensor((6,), "float32"),
            beta: R.Tensor((6,), "float32"),
        ) -> R.Tensor((1, 8, 6, 6), "float32"):
            with R.dataflow():
                y = R.nn.layer_norm(x, gamma, beta, axes=[-1])
                R.output(y)
            return y

    tvm.ir.assert_structural_equal(LegalizeChannelNorms()(Before), Before)


def test_channel_norm_after_a_texture_conv_converts_layout():
    """Without the pass, ConvertLayout moves the group norm into NCHW4c with C-shaped gamma
    and beta, and type inference fails; with it, the norm reads an NCHW copy."""

    @I.ir_module
    class Before:
        @R.function
        def main(
            x: R.Tensor((1, 8, 6, 6), "float32"),
            w: R.Tensor((8, 8, 1, 1), "float32"),
            gamma: R.Tensor((8,), "float32"),
            beta: R.Tensor((8,), "float32"),
        ) -> R.Tensor((1, 8, 6, 6), "float32"):
            with R.dataflow():
                conv = R.nn.conv2d(x, w)
                y = R.nn.group_norm(conv, gamma, beta, num_groups=2, channel_axis=1, axes=[2, 3])
                R.output(y)
            return y

    layouts = {"relax.nn.conv2d": ["NCHW4c", "OIHW4o"]}
    converted = relax.transform.ConvertLayout(layouts)(LegalizeChannelNorms()(Before))
    calls = _calls(converted["main"])
    assert "relax.nn.group_norm" not in calls
    # into NCHW4c for the conv, back to NCHW for the legalized norm
    assert calls.count("relax.layout_transform") == 3


if __name__ == "__main__":
    tvm.testing.main()
