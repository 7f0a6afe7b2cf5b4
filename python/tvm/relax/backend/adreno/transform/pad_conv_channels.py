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
# pylint: disable=invalid-name
"""Pad conv2d channels to a multiple of 4 so that the convolution stays on textures.

A texture pixel holds four channels, and ``ConvertLayout`` only converts a conv2d to
``NCHW4c`` / ``OIHW4o`` when its channel counts are multiples of 4 (the conv2d layout
inference, C++ ``src/relax/op/nn/convolution.cc``, keeps NCHW otherwise). Such a conv then
runs on buffers, and so does everything next to it: the 3-channel first layer of every image
network, odd widths in pruned or searched networks.

This pass runs before the layout conversion and rewrites

    ``conv2d(x, w)``  into  ``strided_slice(conv2d(pad(x), pad(w)), channels[0:O])``

where ``pad`` adds zero channels up to the next multiple of 4 (input channels of ``x`` and
``w``; output channels of ``w``). Zero input channels meet zero weights, and the padded
output channels are sliced away, so the result is identical to the unpadded conv. Padding a
constant weight is folded at compile time; padding an activation is an injective op that
fuses with the layout transform into the texture. Handled: conv2d in any unpacked layout
(``NCHW``/``OIHW`` as PyTorch and ONNX give it, ``NHWC``/``HWIO`` as TFLite does; the channel
axes are found by their layout letters) with ``groups == 1``, and depthwise conv2d
(``groups == in_channels``, any multiplier: input channel ``c`` and its ``multiplier``
filters move together, so padding at the end keeps the mapping). Other group convolutions
with unaligned channels are left unchanged (on buffers): their padding would interleave per
group.
"""

import tvm
from tvm import relax
from tvm.relax.transform import function_pass
from tvm.relax.utils import get_static_shape
from tvm.ir import Op
from tvm.topi.adreno.utils import CHANNEL_BLOCK


def _round_up(value: int) -> int:
    return (value + CHANNEL_BLOCK - 1) // CHANNEL_BLOCK * CHANNEL_BLOCK


def _pad_axis(expr: relax.Expr, ndim: int, axis: int, amount: int) -> relax.Expr:
    if amount == 0:
        return expr
    width = [0] * (2 * ndim)
    width[2 * axis + 1] = amount
    return relax.op.nn.pad(expr, pad_width=width, pad_value=0.0)


def _channel_axes(data_layout: str, kernel_layout: str, out_layout: str):
    """(data C, kernel O, kernel I, output C) axes of an unpacked 4-D conv2d, else None."""
    if sorted(data_layout) != sorted("NCHW") or sorted(out_layout) != sorted("NCHW"):
        return None
    if sorted(kernel_layout) != sorted("OIHW"):
        return None
    return (
        data_layout.index("C"),
        kernel_layout.index("O"),
        kernel_layout.index("I"),
        out_layout.index("C"),
    )


@relax.expr_functor.mutator
class _ConvChannelPadder(relax.PyExprMutator):  # pylint: disable=abstract-method
    """Pad the channels of conv2d calls whose channel counts are not multiples of 4."""

    conv2d_op = Op.get("relax.nn.conv2d")

    def visit_call_(self, call: relax.Call) -> relax.Expr:  # pylint: disable=arguments-renamed
        call = super().visit_call_(call)
        if not call.op.same_as(self.conv2d_op):
            return call
        attrs = call.attrs
        axes = _channel_axes(attrs.data_layout, attrs.kernel_layout, attrs.out_layout)
        if axes is None:
            return call
        data_c, kernel_o, kernel_i, out_c = axes
        x_shape, w_shape = get_static_shape(call.args[0].ty), get_static_shape(call.args[1].ty)
        if x_shape is None or w_shape is None:
            return call
        in_ch, out_ch, groups = x_shape[data_c], w_shape[kernel_o], int(attrs.groups)
        if in_ch % CHANNEL_BLOCK == 0 and out_ch % CHANNEL_BLOCK == 0:
            return call
        if groups == 1:
            in_pad, out_pad, new_groups, w_in_pad = (
                _round_up(in_ch) - in_ch,
                _round_up(out_ch) - out_ch,
                1,
                _round_up(in_ch) - in_ch,
            )
        elif groups == in_ch and w_shape[kernel_i] == 1:
            multiplier = out_ch // in_ch
            in_pad = _round_up(in_ch) - in_ch
            out_pad = in_pad * multiplier
            new_groups, w_in_pad = in_ch + in_pad, 0
            if (out_ch + out_pad) % CHANNEL_BLOCK:
                return call
        else:
            return call

        data = _pad_axis(call.args[0], 4, data_c, in_pad)
        weight = _pad_axis(_pad_axis(call.args[1], 4, kernel_i, w_in_pad), 4, kernel_o, out_pad)
        conv = relax.op.nn.conv2d(
            data,
            weight,
            strides=attrs.strides,
            padding=attrs.padding,
            dilation=attrs.dilation,
            groups=new_groups,
            data_layout=attrs.data_layout,
            kernel_layout=attrs.kernel_layout,
            out_layout=attrs.out_layout,
            out_dtype=attrs.out_dtype,
        )
        if out_pad == 0:
            # Bound to the call's own variable: ConvertLayout does not carry a layout through
            # a binding of one variable to another, and would unblock the result there.
            return conv
        return relax.op.strided_slice(
            self.builder_.emit(conv), axes=[out_c], begin=[0], end=[out_ch], assume_inbound=True
        )


@function_pass(opt_level=0, name="PadConvChannels")
class PadConvChannels:  # pylint: disable=too-few-public-methods
    """Pad conv2d channels to a multiple of 4; see the module docstring.

    Run before ``ConvertLayout`` to ``NCHW4c``.

    Returns
    -------
    ret : tvm.transform.Pass
        The pass.
    """

    def transform_function(
        self, func: relax.Function, mod: tvm.IRModule, _ctx: tvm.transform.PassContext
    ) -> relax.Function:
        """Apply the rewrite to ``func``, a Relax function of ``mod``."""
        return _ConvChannelPadder(mod).visit_expr(func)
