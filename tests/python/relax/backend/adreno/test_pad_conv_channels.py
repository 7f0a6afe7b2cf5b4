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
"""Tests of PadConvChannels: conv2d channels are zero-padded to a multiple of 4."""

import tvm
import tvm.testing
from tvm import relax
from tvm.relax.backend.adreno.transform.pad_conv_channels import PadConvChannels
from tvm.script import ir as I
from tvm.script import relax as R


def test_rgb_conv_is_padded_and_sliced():
    """3 input channels padded to 4 (data and weight), 6 output channels padded to 8 and
    sliced back."""

    @I.ir_module
    class Before:
        @R.function
        def main(
            x: R.Tensor((1, 3, 8, 8), "float32"), w: R.Tensor((6, 3, 3, 3), "float32")
        ) -> R.Tensor((1, 6, 8, 8), "float32"):
            with R.dataflow():
                y = R.nn.conv2d(x, w, padding=[1, 1, 1, 1])
                R.output(y)
            return y

    @I.ir_module
    class Expected:
        @R.function
        def main(
            x: R.Tensor((1, 3, 8, 8), "float32"), w: R.Tensor((6, 3, 3, 3), "float32")
        ) -> R.Tensor((1, 6, 8, 8), "float32"):
            with R.dataflow():
                data = R.nn.pad(x, pad_width=[0, 0, 0, 1, 0, 0, 0, 0], pad_value=0.0)
                w_in = R.nn.pad(w, pad_width=[0, 0, 0, 1, 0, 0, 0, 0], pad_value=0.0)
                weight = R.nn.pad(w_in, pad_width=[0, 2, 0, 0, 0, 0, 0, 0], pad_value=0.0)
                conv = R.nn.conv2d(data, weight, padding=[1, 1, 1, 1], out_dtype=None)
                y = R.strided_slice(conv, [1], [0], [6], assume_inbound=True)
                R.output(y)
            return y

    tvm.ir.assert_structural_equal(PadConvChannels()(Before), Expected)


def test_nhwc_conv_pads_the_axes_its_layouts_name():
    """TFLite's first layer: NHWC data, HWIO weight, 3 input channels padded to 4 on axis 3 of
    the data and axis 2 of the weight; 6 output channels padded on the weight's axis 3 and
    sliced back on the output's axis 3."""

    @I.ir_module
    class Before:
        @R.function
        def main(
            x: R.Tensor((1, 8, 8, 3), "float32"), w: R.Tensor((3, 3, 3, 6), "float32")
        ) -> R.Tensor((1, 8, 8, 6), "float32"):
            with R.dataflow():
                y = R.nn.conv2d(
                    x, w, padding=[1, 1, 1, 1], data_layout="NHWC", kernel_layout="HWIO"
                )
                R.output(y)
            return y

    @I.ir_module
    class Expected:
        @R.function
        def main(
            x: R.Tensor((1, 8, 8, 3), "float32"), w: R.Tensor((3, 3, 3, 6), "float32")
        ) -> R.Tensor((1, 8, 8, 6), "float32"):
            with R.dataflow():
                data = R.nn.pad(x, pad_width=[0, 0, 0, 0, 0, 0, 0, 1], pad_value=0.0)
                w_in = R.nn.pad(w, pad_width=[0, 0, 0, 0, 0, 1, 0, 0], pad_value=0.0)
                weight = R.nn.pad(w_in, pad_width=[0, 0, 0, 0, 0, 0, 0, 2], pad_value=0.0)
                conv = R.nn.conv2d(
                    data,
                    weight,
                    padding=[1, 1, 1, 1],
                    data_layout="NHWC",
                    kernel_layout="HWIO",
                    out_layout="NHWC",
                    out_dtype=None,
                )
                y = R.strided_slice(conv, [3], [0], [6], assume_inbound=True)
                R.output(y)
            return y

    tvm.ir.assert_structural_equal(PadConvChannels()(Before), Expected)


def test_conv_needing_no_output_slice_binds_its_own_variable():
    """3 input channels padded, 8 output channels kept: the padded conv is bound to the
    original variable, with no variable-to-variable binding after it."""

    @I.ir_module
    class Before:
        @R.function
        def main(
            x: R.Tensor((1, 3, 8, 8), "float32"), w: R.Tensor((8, 3, 3, 3), "float32")
        ) -> R.Tensor((1, 8, 8, 8), "float32"):
            with R.dataflow():
                y = R.nn.conv2d(x, w, padding=[1, 1, 1, 1])
                z = R.nn.relu(y)
                R.output(z)
            return z

    @I.ir_module
    class Expected:
        @R.function
        def main(
            x: R.Tensor((1, 3, 8, 8), "float32"), w: R.Tensor((8, 3, 3, 3), "float32")
        ) -> R.Tensor((1, 8, 8, 8), "float32"):
            with R.dataflow():
                data = R.nn.pad(x, pad_width=[0, 0, 0, 1, 0, 0, 0, 0], pad_value=0.0)
                weight = R.nn.pad(w, pad_width=[0, 0, 0, 1, 0, 0, 0, 0], pad_value=0.0)
                y = R.nn.conv2d(data, weight, padding=[1, 1, 1, 1], out_dtype=None)
                z = R.nn.relu(y)
                R.output(z)
            return z

    after = PadConvChannels()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    # ConvertLayout carries NCHW4c from the conv to its consumer: the result is unblocked
    # once, at the output, not between the conv and the relu.
    blocked = relax.transform.ConvertLayout({"relax.nn.conv2d": ["NCHW4c", "OIHW4o", "NCHW4c"]})(
        after
    )
    unblocked = [
        binding.var.name
        for block in blocked["main"].body.blocks
        for binding in block.bindings
        if isinstance(binding.value, relax.Call)
        and binding.value.op.name == "relax.layout_transform"
        and binding.value.args[0].ty.ndim == 5
    ]
    assert unblocked == ["z"], unblocked


def test_packed_layouts_are_kept():
    @I.ir_module
    class Before:
        @R.function
        def main(
            x: R.Tensor((1, 1, 8, 8, 4), "float32"), w: R.Tensor((6, 4, 3, 3), "float32")
        ) -> R.Tensor((1, 6, 6, 6), "float32"):
            with R.dataflow():
                y = R.nn.conv2d(x, w, data_layout="NCHW4c", out_layout="NCHW")
                R.output(y)
            return y

    tvm.ir.assert_structural_equal(PadConvChannels()(Before), Before)


def test_depthwise_conv_pads_channels_and_groups_together():
    @I.ir_module
    class Before:
        @R.function
        def main(
            x: R.Tensor((1, 6, 8, 8), "float32"), w: R.Tensor((6, 1, 3, 3), "float32")
        ) -> R.Tensor((1, 6, 8, 8), "float32"):
            with R.dataflow():
                y = R.nn.conv2d(x, w, padding=[1, 1, 1, 1], groups=6)
                R.output(y)
            return y

    @I.ir_module
    class Expected:
        @R.function
        def main(
            x: R.Tensor((1, 6, 8, 8), "float32"), w: R.Tensor((6, 1, 3, 3), "float32")
        ) -> R.Tensor((1, 6, 8, 8), "float32"):
            with R.dataflow():
                data = R.nn.pad(x, pad_width=[0, 0, 0, 2, 0, 0, 0, 0], pad_value=0.0)
                weight = R.nn.pad(w, pad_width=[0, 2, 0, 0, 0, 0, 0, 0], pad_value=0.0)
                conv = R.nn.conv2d(data, weight, padding=[1, 1, 1, 1], groups=8, out_dtype=None)
                y = R.strided_slice(conv, [1], [0], [6], assume_inbound=True)
                R.output(y)
            return y

    tvm.ir.assert_structural_equal(PadConvChannels()(Before), Expected)


def test_aligned_and_grouped_convs_are_kept():
    """Channels already a multiple of 4 need nothing; a group conv with 3 channels per group
    would need padding inside every group, which the pass does not do."""

    @I.ir_module
    class Before:
        @R.function
        def main(
            x: R.Tensor((1, 8, 8, 8), "float32"),
            w: R.Tensor((8, 8, 1, 1), "float32"),
            g: R.Tensor((6, 3, 1, 1), "float32"),
            x6: R.Tensor((1, 6, 8, 8), "float32"),
        ) -> R.Tuple(R.Tensor((1, 8, 8, 8), "float32"), R.Tensor((1, 6, 8, 8), "float32")):
            with R.dataflow():
                aligned = R.nn.conv2d(x, w)
                grouped = R.nn.conv2d(x6, g, groups=2)
                out = (aligned, grouped)
                R.output(out)
            return out

    tvm.ir.assert_structural_equal(PadConvChannels()(Before), Before)


if __name__ == "__main__":
    tvm.testing.main()
