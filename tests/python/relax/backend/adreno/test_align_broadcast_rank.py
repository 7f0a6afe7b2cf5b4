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
"""Tests of AlignBroadcastRank: per-channel operands of a conv2d result become 4-D."""

import tvm
import tvm.testing
from tvm import relax
from tvm.relax.backend.adreno.transform.align_broadcast_rank import AlignBroadcastRank
from tvm.script import ir as I
from tvm.script import relax as R


def test_nhwc_bias_vector_is_reshaped_to_rank_4():
    @I.ir_module
    class Before:
        @R.function
        def main(
            x: R.Tensor((1, 6, 6, 8), "float32"),
            w: R.Tensor((8, 1, 1, 8), "float32"),
            b: R.Tensor((8,), "float32"),
        ) -> R.Tensor((1, 6, 6, 8), "float32"):
            with R.dataflow():
                conv = R.nn.conv2d(x, w, data_layout="NHWC", kernel_layout="OHWI")
                y = R.add(conv, b)
                R.output(y)
            return y

    @I.ir_module
    class Expected:
        @R.function
        def main(
            x: R.Tensor((1, 6, 6, 8), "float32"),
            w: R.Tensor((8, 1, 1, 8), "float32"),
            b: R.Tensor((8,), "float32"),
        ) -> R.Tensor((1, 6, 6, 8), "float32"):
            with R.dataflow():
                conv = R.nn.conv2d(x, w, data_layout="NHWC", kernel_layout="OHWI")
                bias = R.reshape(b, R.shape([1, 1, 1, 8]))
                y = R.add(conv, bias)
                R.output(y)
            return y

    tvm.ir.assert_structural_equal(AlignBroadcastRank()(Before), Expected)


def test_bias_behind_a_cast_follows_the_conv_layout():
    """float16 storage with float32 accumulation: the bias is added after the cast back."""

    @I.ir_module
    class Before:
        @R.function
        def main(
            x: R.Tensor((1, 6, 6, 8), "float16"),
            w: R.Tensor((8, 1, 1, 8), "float16"),
            b: R.Tensor((8,), "float16"),
        ) -> R.Tensor((1, 6, 6, 8), "float16"):
            with R.dataflow():
                conv = R.nn.conv2d(
                    x, w, data_layout="NHWC", kernel_layout="OHWI", out_dtype="float32"
                )
                half = R.astype(conv, "float16")
                y = R.multiply(b, half)
                R.output(y)
            return y

    @I.ir_module
    class Expected:
        @R.function
        def main(
            x: R.Tensor((1, 6, 6, 8), "float16"),
            w: R.Tensor((8, 1, 1, 8), "float16"),
            b: R.Tensor((8,), "float16"),
        ) -> R.Tensor((1, 6, 6, 8), "float16"):
            with R.dataflow():
                conv = R.nn.conv2d(
                    x, w, data_layout="NHWC", kernel_layout="OHWI", out_dtype="float32"
                )
                half = R.astype(conv, "float16")
                scale = R.reshape(b, R.shape([1, 1, 1, 8]))
                y = R.multiply(scale, half)
                R.output(y)
            return y

    tvm.ir.assert_structural_equal(AlignBroadcastRank()(Before), Expected)


def test_one_element_operand_becomes_a_scalar():
    @I.ir_module
    class Before:
        @R.function
        def main(
            x: R.Tensor((1, 8, 6, 6), "float32"), s: R.Tensor((1,), "float32")
        ) -> R.Tensor((1, 8, 6, 6), "float32"):
            with R.dataflow():
                y = R.multiply(x, s)
                R.output(y)
            return y

    @I.ir_module
    class Expected:
        @R.function
        def main(
            x: R.Tensor((1, 8, 6, 6), "float32"), s: R.Tensor((1,), "float32")
        ) -> R.Tensor((1, 8, 6, 6), "float32"):
            with R.dataflow():
                scalar = R.reshape(s, R.shape([]))
                y = R.multiply(x, scalar)
                R.output(y)
            return y

    tvm.ir.assert_structural_equal(AlignBroadcastRank()(Before), Expected)


def test_operands_that_are_not_per_channel_are_kept():
    """A vector along W of an NCHW conv (it broadcasts over the channels), and a per-channel
    vector on a tensor no conv2d produced: ConvertLayout could not block either."""

    @I.ir_module
    class Before:
        @R.function
        def main(
            x: R.Tensor((1, 8, 6, 6), "float32"),
            w: R.Tensor((8, 8, 1, 1), "float32"),
            v: R.Tensor((6,), "float32"),
            b: R.Tensor((8,), "float32"),
        ) -> R.Tensor((1, 6, 6, 8), "float32"):
            with R.dataflow():
                conv = R.nn.conv2d(x, w)
                y = R.add(conv, v)
                t = R.permute_dims(y, [0, 2, 3, 1])
                z = R.add(t, b)
                R.output(z)
            return z

    tvm.ir.assert_structural_equal(AlignBroadcastRank()(Before), Before)


def test_aligned_bias_add_is_converted_to_the_packed_layout():
    """The reason for the pass: after it ConvertLayout blocks the bias add with the conv."""

    @I.ir_module
    class Before:
        @R.function
        def main(
            x: R.Tensor((1, 6, 6, 8), "float32"),
            w: R.Tensor((8, 1, 1, 8), "float32"),
            b: R.Tensor((8,), "float32"),
        ) -> R.Tensor((1, 6, 6, 8), "float32"):
            with R.dataflow():
                conv = R.nn.conv2d(x, w, data_layout="NHWC", kernel_layout="OHWI")
                y = R.add(conv, b)
                R.output(y)
            return y

    layouts = {"relax.nn.conv2d": ["NCHW4c", "OIHW4o"]}
    converted = relax.transform.ConvertLayout(layouts)(AlignBroadcastRank()(Before))
    ranks = []

    def _visit(expr):
        if isinstance(expr, relax.Call) and expr.op.name == "relax.add":
            ranks.append(expr.ty.ndim)

    relax.analysis.post_order_visit(converted["main"], _visit)
    assert ranks == [5]


if __name__ == "__main__":
    tvm.testing.main()
