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
"""Keep the zero channels of a padded convolution through the ops that keep them zero.

``PadConvChannels`` computes a conv with ``C`` output channels (``C % 4 != 0``) as a conv with
``C'`` (the next multiple of 4) whose extra filters are zero, sliced back to ``C``. The ops
after it then run on ``C`` channels, which are not whole texture pixels: BlazeFace's 42-channel
stage put its bias add, residual add, ReLU, pooling and the pads of the next convs on buffers,
with layout transforms around each.

This pass, run after ``PadConvChannels``, keeps such a tensor at ``C'`` channels instead,
with the extra channels known to be zero, as long as the ops that read it keep them zero:

* the extra channels of ``strided_slice(conv, channels[0:C])`` are zero when the conv's
  filters beyond ``C`` are a zero pad (``PadConvChannels`` makes them so);
* elementwise ``add``, ``subtract``, ``multiply``, ``maximum``, ``minimum`` of two such tensors,
  or of one and a per-channel or full operand of ``C`` channels (padded with zeros to
  ``C'``): ``f(0, 0) == 0`` for each;
* ``relu``, ``negative``, ``abs``, ``tanh``, ``astype``: ``f(0) == 0``;
* max and average pooling: windows of zeros;
* a zero pad of the channels to ``C + k >= C'`` becomes a pad of the wide tensor by
  ``C + k - C'`` (the conv's input pad of ``PadConvChannels`` becomes the wide tensor itself).

Every rewritten value is emitted at ``C'`` channels, and the original ``C``-channel value is
kept as a slice of it for any other reader (dead slices are removed).
"""

from typing import Dict, List, Optional, Tuple

import tvm
from tvm import relax
from tvm.relax.transform import function_pass
from tvm.relax.utils import get_static_shape
from tvm.ir import Op

from .pad_conv_channels import _pad_axis, _round_up

#: Elementwise ops with f(0, 0) == 0.
_BINARY_OPS = ("relax.add", "relax.subtract", "relax.multiply", "relax.maximum", "relax.minimum")
#: Elementwise ops with f(0) == 0.
_UNARY_OPS = ("relax.nn.relu", "relax.negative", "relax.abs", "relax.tanh", "relax.astype")
_POOL_OPS = ("relax.nn.max_pool2d", "relax.nn.avg_pool2d")

#: (wide var, channel axis, channels C): a C-channel value held as the first C channels of a
#: wide var whose other channels are zero.
_Wide = Tuple[relax.Var, int, int]


def _ops(names) -> List[Op]:
    return [Op.get(name) for name in names]


@relax.expr_functor.mutator
class _PaddedChannelKeeper(relax.PyExprMutator):  # pylint: disable=abstract-method
    slice_op = Op.get("relax.strided_slice")
    conv2d_op = Op.get("relax.nn.conv2d")
    pad_op = Op.get("relax.nn.pad")
    binary_ops = _ops(_BINARY_OPS)
    unary_ops = _ops(_UNARY_OPS)
    pool_ops = _ops(_POOL_OPS)

    def __init__(self, mod: tvm.IRModule):
        super().__init__(mod)
        self.zero_tail: Dict[relax.Var, int] = {}  # wide var -> its first channel known zero

    def _bound(self, expr: relax.Expr, ops) -> Optional[relax.Call]:
        """The call bound to the var ``expr`` when it is one of ``ops``."""
        if not isinstance(expr, relax.Var):
            return None
        value = self.lookup_binding(expr)
        if isinstance(value, relax.Call) and any(value.op.same_as(op) for op in ops):
            return value
        return None

    @staticmethod
    def _channel_slice(call: relax.Call) -> Optional[_Wide]:
        """(source, axis, C) of ``strided_slice(source, [axis], [0], [C])``, else None."""
        fields = []
        for arg in call.args[1:]:
            if not isinstance(arg, relax.Tuple) or len(arg.fields) != 1:
                return None
            value = arg.fields[0]
            if not isinstance(value, tvm.tirx.IntImm):
                return None  # a symbolic bound
            fields.append(int(value))
        axis, begin, end = fields[:3]
        if begin != 0 or fields[3:] not in ([], [1]) or not isinstance(call.args[0], relax.Var):
            return None
        return call.args[0], axis, end

    def _wide_of(self, expr: relax.Expr) -> Optional[_Wide]:
        """The wide form of ``expr`` when it is a channel slice of a zero-tailed var."""
        value = self._bound(expr, [self.slice_op])
        found = self._channel_slice(value) if value is not None else None
        if found is None:
            return None
        source, axis, channels = found
        zero_from = self.zero_tail.get(source)
        shape = get_static_shape(source.ty)
        if zero_from is None or zero_from > channels or shape is None:
            return None
        if shape[axis] != _round_up(channels):
            return None
        return found

    def _note_padded_conv(self, call: relax.Call) -> None:
        """Mark the conv under a channel slice as zero-tailed when its extra filters are a zero
        pad of the kernel's output-channel axis."""
        found = self._channel_slice(call)
        if found is None:
            return
        source, axis, channels = found
        conv = self._bound(source, [self.conv2d_op])
        if conv is None or conv.attrs.out_layout.index("C") != axis:
            return
        kernel_o = conv.attrs.kernel_layout.index("O")
        pad = self._bound(conv.args[1], [self.pad_op])
        if pad is None or pad.attrs.pad_mode != "constant" or float(pad.attrs.pad_value) != 0.0:
            return
        w_shape = get_static_shape(conv.args[1].ty)
        padded_from = w_shape[kernel_o] - int(pad.attrs.pad_width[2 * kernel_o + 1])
        if padded_from <= channels:
            self.zero_tail[source] = padded_from

    def _emit_wide(self, value: relax.Expr, axis: int, channels: int) -> relax.Expr:
        wide = self.builder_.emit(value)
        self.zero_tail[wide] = channels
        return relax.op.strided_slice(wide, axes=[axis], begin=[0], end=[channels])

    def _widen_operand(self, arg: relax.Expr, axis: int, channels: int) -> Optional[relax.Expr]:
        """``arg`` at the wide channel count with zeros beyond ``channels``, else None."""
        wide = self._wide_of(arg)
        if wide is not None:
            return wide[0] if wide[1:] == (axis, channels) else None
        shape = get_static_shape(arg.ty)
        if shape is None or len(shape) <= axis or shape[axis] != channels:
            return None
        extra = _round_up(channels) - channels
        pad = self._bound(arg, [self.pad_op])
        if pad is not None and self._zero_channel_pad(pad, axis) is not None:
            # a pad of zero channels up to C pads on to C' instead
            widths = [int(w) for w in pad.attrs.pad_width]
            widths[2 * axis + 1] += extra
            return relax.op.nn.pad(pad.args[0], pad_width=widths, pad_value=0.0)
        return _pad_axis(arg, len(shape), axis, extra)

    @staticmethod
    def _zero_channel_pad(call: relax.Call, axis: int) -> Optional[int]:
        """The zero channels ``call`` (an ``nn.pad``) appends on ``axis``; None when it pads
        with another value or before the channels."""
        widths = [int(w) for w in call.attrs.pad_width]
        if call.attrs.pad_mode != "constant" or float(call.attrs.pad_value) != 0.0:
            return None
        if widths[2 * axis] != 0:
            return None
        return widths[2 * axis + 1]

    def visit_call_(self, call: relax.Call) -> relax.Expr:  # pylint: disable=arguments-renamed
        call = super().visit_call_(call)
        if call.op.same_as(self.slice_op):
            self._note_padded_conv(call)
            return call
        if any(call.op.same_as(op) for op in self.binary_ops):
            return self._binary(call)
        if any(call.op.same_as(op) for op in self.unary_ops + self.pool_ops):
            return self._unary(call)
        if call.op.same_as(self.pad_op):
            return self._pad(call)
        return call

    def _binary(self, call: relax.Call) -> relax.Expr:
        wides = [w for w in (self._wide_of(arg) for arg in call.args) if w is not None]
        if not wides:
            return call
        _, axis, channels = wides[0]
        args = [self._widen_operand(arg, axis, channels) for arg in call.args]
        if any(arg is None for arg in args):
            return call
        return self._emit_wide(relax.Call(call.op, args, call.attrs), axis, channels)

    def _unary(self, call: relax.Call) -> relax.Expr:
        wide = self._wide_of(call.args[0])
        if wide is None:
            return call
        source, axis, channels = wide
        if any(call.op.same_as(op) for op in self.pool_ops):
            if call.attrs.layout.index("C") != axis or call.attrs.out_layout != call.attrs.layout:
                return call
        new_args = [source] + list(call.args[1:])
        return self._emit_wide(relax.Call(call.op, new_args, call.attrs), axis, channels)

    def _pad(self, call: relax.Call) -> relax.Expr:
        wide = self._wide_of(call.args[0])
        if wide is None:
            return call
        source, axis, channels = wide
        appended = self._zero_channel_pad(call, axis)
        extra = _round_up(channels) - channels
        if appended is None or appended < extra:
            return call
        widths = [int(w) for w in call.attrs.pad_width]
        widths[2 * axis + 1] = appended - extra
        if not any(widths):
            return source
        return relax.op.nn.pad(source, pad_width=widths, pad_value=0.0)


@function_pass(opt_level=0, name="KeepPaddedChannels")
class KeepPaddedChannels:  # pylint: disable=too-few-public-methods
    """Keep tensors after a channel-padded conv at the padded channel count while their extra
    channels stay zero; see the module docstring.

    Run after ``PadConvChannels``, before ``ConvertLayout``.

    Returns
    -------
    ret : tvm.transform.Pass
        The pass.
    """

    def transform_function(
        self, func: relax.Function, mod: tvm.IRModule, _ctx: tvm.transform.PassContext
    ) -> relax.Function:
        """Rewrite ``func``, then drop the slices no reader is left for."""
        func = _PaddedChannelKeeper(mod).visit_expr(func)
        return relax.analysis.remove_all_unused(func)
