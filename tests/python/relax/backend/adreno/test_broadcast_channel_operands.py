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
"""Tests of BroadcastChannelOperands: a one-channel operand of broadcast arithmetic on
activations is broadcast to every channel before ConvertLayout blocks them."""

import pytest

import tvm
import tvm.testing
from tvm import relax
from tvm.relax.backend.adreno.transform.broadcast_channel_operands import (
    BroadcastChannelOperands,
)
from tvm.script import ir as I
from tvm.script import relax as R

_BLOCKED = {"relax.nn.conv2d": ["NCHW4c", "OIHW4o"]}


@I.ir_module
class SpatialMap:
    """Features times a one-channel map, as in a spatial attention block."""

    @R.function
    def main(
        x: R.Tensor((1, 8, 6, 6), "float32"),
        w: R.Tensor((8, 8, 1, 1), "float32"),
        s: R.Tensor((1, 1, 6, 6), "float32"),
    ) -> R.Tensor((1, 8, 6, 6), "float32"):
        with R.dataflow():
            conv = R.nn.conv2d(x, w)
            y = R.multiply(conv, s)
            R.output(y)
        return y


def test_one_channel_map_is_broadcast_to_the_channels():
    @I.ir_module
    class Expected:
        @R.function
        def main(
            x: R.Tensor((1, 8, 6, 6), "float32"),
            w: R.Tensor((8, 8, 1, 1), "float32"),
            s: R.Tensor((1, 1, 6, 6), "float32"),
        ) -> R.Tensor((1, 8, 6, 6), "float32"):
            with R.dataflow():
                conv = R.nn.conv2d(x, w)
                wide = R.broadcast_to(s, R.shape([1, 8, 6, 6]))
                y = R.multiply(conv, wide)
                R.output(y)
            return y

    tvm.ir.assert_structural_equal(BroadcastChannelOperands()(SpatialMap), Expected)


def test_nhwc_row_vector_keeps_broadcasting_over_the_rows():
    """NHWC: the channel axis is the last; the operand still broadcasts over H."""

    @I.ir_module
    class Before:
        @R.function
        def main(
            x: R.Tensor((1, 6, 6, 8), "float32"),
            w: R.Tensor((8, 1, 1, 8), "float32"),
            v: R.Tensor((1, 1, 6, 1), "float32"),
        ) -> R.Tensor((1, 6, 6, 8), "float32"):
            with R.dataflow():
                conv = R.nn.conv2d(x, w, data_layout="NHWC", kernel_layout="OHWI")
                y = R.subtract(v, conv)
                R.output(y)
            return y

    @I.ir_module
    class Expected:
        @R.function
        def main(
            x: R.Tensor((1, 6, 6, 8), "float32"),
            w: R.Tensor((8, 1, 1, 8), "float32"),
            v: R.Tensor((1, 1, 6, 1), "float32"),
        ) -> R.Tensor((1, 6, 6, 8), "float32"):
            with R.dataflow():
                conv = R.nn.conv2d(x, w, data_layout="NHWC", kernel_layout="OHWI")
                wide = R.broadcast_to(v, R.shape([1, 1, 6, 8]))
                y = R.subtract(wide, conv)
                R.output(y)
            return y

    tvm.ir.assert_structural_equal(BroadcastChannelOperands()(Before), Expected)


def test_one_element_operand_becomes_a_scalar():
    @I.ir_module
    class Before:
        @R.function
        def main(
            x: R.Tensor((1, 8, 6, 6), "float32"),
            w: R.Tensor((8, 8, 1, 1), "float32"),
            s: R.Tensor((1, 1, 1, 1), "float32"),
        ) -> R.Tensor((1, 8, 6, 6), "float32"):
            with R.dataflow():
                conv = R.nn.conv2d(x, w)
                y = R.multiply(conv, s)
                R.output(y)
            return y

    @I.ir_module
    class Expected:
        @R.function
        def main(
            x: R.Tensor((1, 8, 6, 6), "float32"),
            w: R.Tensor((8, 8, 1, 1), "float32"),
            s: R.Tensor((1, 1, 1, 1), "float32"),
        ) -> R.Tensor((1, 8, 6, 6), "float32"):
            with R.dataflow():
                conv = R.nn.conv2d(x, w)
                scalar = R.reshape(s, R.shape([]))
                y = R.multiply(conv, scalar)
                R.output(y)
            return y

    tvm.ir.assert_structural_equal(BroadcastChannelOperands()(Before), Expected)


def test_operands_with_channels_and_functions_without_conv_are_kept():
    """A per-channel operand follows NCHW4c as it is; without a conv2d nothing is blocked."""

    @I.ir_module
    class PerChannel:
        @R.function
        def main(
            x: R.Tensor((1, 8, 6, 6), "float32"),
            w: R.Tensor((8, 8, 1, 1), "float32"),
            b: R.Tensor((1, 8, 1, 1), "float32"),
        ) -> R.Tensor((1, 8, 6, 6), "float32"):
            with R.dataflow():
                conv = R.nn.conv2d(x, w)
                y = R.add(conv, b)
                R.output(y)
            return y

    @I.ir_module
    class NoConv:
        @R.function
        def main(
            x: R.Tensor((1, 8, 6, 6), "float32"), s: R.Tensor((1, 1, 6, 6), "float32")
        ) -> R.Tensor((1, 8, 6, 6), "float32"):
            with R.dataflow():
                y = R.multiply(x, s)
                R.output(y)
            return y

    for mod in (PerChannel, NoConv):
        tvm.ir.assert_structural_equal(BroadcastChannelOperands()(mod), mod)


def test_convert_layout_blocks_the_broadcast_op_after_the_pass():
    # The root: the C++ layout inference of binary ops cannot block a channel axis of
    # extent 1 and fails instead of keeping the op in its layout.
    with pytest.raises(tvm.error.InternalError, match="Cannot broadcast from 5 to 4"):
        relax.transform.ConvertLayout(_BLOCKED)(SpatialMap)
    converted = relax.transform.ConvertLayout(_BLOCKED)(BroadcastChannelOperands()(SpatialMap))
    ranks = []

    def _visit(expr):
        if isinstance(expr, relax.Call) and expr.op.name == "relax.multiply":
            ranks.append(expr.ty.ndim)

    relax.analysis.post_order_visit(converted["main"], _visit)
    assert ranks == [5]


if __name__ == "__main__":
    tvm.testing.main()
