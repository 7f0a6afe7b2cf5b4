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
"""Broadcast a one-channel operand of broadcast arithmetic to every channel before the
activations are blocked, so that both operands follow ``NCHW4c``.

A spatial attention map multiplies features ``(1, C, H, W)`` by a map ``(1, 1, H, W)`` that
broadcasts over the channels (CBAM, attention gates); a model may also scale by a 4-D
one-element constant ``(1, 1, 1, 1)``. ``ConvertLayout`` blocks the features' channels and
cannot block a channel axis of extent 1: the C++ binary-op layout inference
(``InferLayoutBinaryEwise`` in ``src/relax/op/tensor/binary.cc``) finds that the operand cannot
take ``NCHW4c`` and then asks ``FollowDecision`` for a 4-D layout that follows the 5-D one,
which fails ("Cannot broadcast from 5 to 4") and stops the compile. Relay adjusted the split
factor of such an operand to 1; Relax does not.

By NumPy broadcasting rules, an operand of extent 1 on an axis equals the same operand
broadcast to the result's extent there. So the one-channel operand is broadcast to the
result's channels (``broadcast_to``; over the other axes it still broadcasts as before), both
operands take ``NCHW4c``, and the op stays on textures; a constant's broadcast is folded at
compile time. A one-element operand becomes a scalar instead, which any layout takes.

The channel axis is that of the function's convolutions, the ops ``ConvertLayout`` blocks
first; a function without a conv2d, or with convolutions of different layouts, is left as it
is.
"""

from typing import Optional

import tvm
from tvm import relax
from tvm.ir import Op
from tvm.relax.transform import function_pass
from tvm.relax.utils import get_static_shape

from .utils import ACTIVATION_RANK, BINARY_BROADCAST_OPS, conv2d_channel_axis


def _conv_channel_axis(func: relax.Function) -> Optional[int]:
    """The channel axis of the activations of ``func``: the ``C`` of its convolutions' output
    layout, when they all have the same one."""
    conv_op = Op.get("relax.nn.conv2d")
    convs_by_layout = {}

    def _visit(expr):
        if isinstance(expr, relax.Call) and expr.op.same_as(conv_op):
            convs_by_layout[str(expr.attrs.out_layout or expr.attrs.data_layout)] = expr

    relax.analysis.post_order_visit(func, _visit)
    if len(convs_by_layout) != 1:
        return None
    return conv2d_channel_axis(next(iter(convs_by_layout.values())))


@relax.expr_functor.mutator
class _ChannelBroadcaster(relax.PyExprMutator):  # pylint: disable=abstract-method
    ops = tuple(Op.get(name) for name in BINARY_BROADCAST_OPS)

    def __init__(self, mod: tvm.IRModule, channel_axis: int):
        super().__init__(mod)
        self.channel_axis = channel_axis

    def visit_call_(self, call: relax.Call) -> relax.Expr:  # pylint: disable=arguments-renamed
        """Broadcast the one-channel operands of a broadcast op whose result has channels."""
        call = super().visit_call_(call)
        if not any(call.op.same_as(op) for op in self.ops) or len(call.args) != 2:
            return call
        shapes = [get_static_shape(arg.ty) for arg in call.args]
        out = get_static_shape(call.ty)
        if out is None or any(shape is None or len(shape) != ACTIVATION_RANK for shape in shapes):
            return call
        channels = out[self.channel_axis]
        if channels == 1 or all(shape[self.channel_axis] != 1 for shape in shapes):
            return call
        args = list(call.args)
        for i, shape in enumerate(shapes):
            if shape[self.channel_axis] != 1:
                continue
            if all(extent == 1 for extent in shape):
                args[i] = self.builder_.emit(relax.op.reshape(args[i], []))
            else:
                shape = list(shape)
                shape[self.channel_axis] = channels
                args[i] = self.builder_.emit(relax.op.broadcast_to(args[i], shape))
        return relax.Call(call.op, args, call.attrs, call.ty_args, call.span)


@function_pass(opt_level=0, name="BroadcastChannelOperands")
class BroadcastChannelOperands:  # pylint: disable=too-few-public-methods
    """Broadcast the one-channel operand of a broadcast op on activations with channels to
    every channel (a one-element operand becomes a scalar).

    Run before ``ConvertLayout``; see the module docstring.

    Returns
    -------
    ret : tvm.transform.Pass
        The pass.
    """

    def transform_function(
        self, func: relax.Function, mod: tvm.IRModule, _ctx: tvm.transform.PassContext
    ) -> relax.Function:
        """Apply the rewrite to ``func``, a Relax function of ``mod``."""
        channel_axis = _conv_channel_axis(func)
        if channel_axis is None:
            return func
        return _ChannelBroadcaster(mod, channel_axis).visit_expr(func)
