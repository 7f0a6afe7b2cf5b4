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
"""Give the operands of broadcast arithmetic the same rank, so that they follow ``NCHW4c``.

TFLite models (and other NHWC frontends) add a convolution's bias as a 1-D tensor ``(C,)``
broadcast along the last axis of the ``NHWC`` result. ``ConvertLayout`` cannot describe a 1-D
operand in a channel-blocked layout (the C++ binary-op layout inference,
``InferLayoutBinaryEwise`` in ``src/relax/op/tensor/binary.cc``, keeps both operands in their
initial layout when their ranks differ), so the ``add`` stays in ``NHWC``: every convolution's
result is transformed back out of its texture for the bias add and into a texture again for
the next layer. In BlazeFace that is two layout transforms per convolution.

By NumPy broadcasting rules an operand of lower rank is the same operand reshaped with leading
axes of extent 1, so ``add(x, b)`` with ``x`` of shape ``(N, H, W, C)`` and ``b`` of shape
``(C,)`` equals ``add(x, reshape(b, (1, 1, 1, C)))``. After this rewrite the layout inference
sees two 4-D operands, converts both, and the bias add fuses into the convolution's texture
kernel. Reshapes of constants are folded at compile time.

Only per-channel operands of a conv2d's result are aligned (the conv's output layout names the
channel axis): an operand that broadcasts over the channels (extent 1 there) cannot be blocked,
and ``ConvertLayout`` fails on it, where the lower rank made it keep the op in its layout. A
one-element operand (ONNX writes scalars as ``(1,)``) becomes a scalar, which any layout takes.
"""

from typing import Optional

import tvm
from tvm import relax
from tvm.relax.transform import function_pass
from tvm.relax.utils import get_static_shape
from tvm.ir import Op

from .utils import ACTIVATION_RANK, BINARY_BROADCAST_OPS, conv2d_channel_axis


@relax.expr_functor.mutator
class _RankAligner(relax.PyExprMutator):  # pylint: disable=abstract-method
    ops = tuple(Op.get(name) for name in BINARY_BROADCAST_OPS)
    conv_op = Op.get("relax.nn.conv2d")
    astype_op = Op.get("relax.astype")

    def visit_call_(self, call: relax.Call) -> relax.Expr:  # pylint: disable=arguments-renamed
        """Reshape the per-channel operand of a broadcast op on a convolution's result."""
        call = super().visit_call_(call)
        if not any(call.op.same_as(op) for op in self.ops) or len(call.args) != 2:
            return call
        shapes = [get_static_shape(arg.ty) for arg in call.args]
        if any(shape is None for shape in shapes):
            return call
        ranks = [len(shape) for shape in shapes]
        if max(ranks) != ACTIVATION_RANK or min(ranks) in (0, ACTIVATION_RANK):
            # Scalars broadcast in any layout already; equal ranks need nothing.
            return call
        low = ranks.index(min(ranks))
        args = list(call.args)
        if all(dim == 1 for dim in shapes[low]):
            # One element (ONNX writes scalars as shape (1,)): a scalar broadcasts in any
            # layout, while (1, 1, 1, 1) has a channel axis NCHW4c cannot block.
            args[low] = self.builder_.emit(relax.op.reshape(args[low], []))
            return relax.Call(call.op, args, call.attrs, call.ty_args, call.span)
        full = shapes[1 - low]
        channel = self._channel_axis(call.args[1 - low])
        padded = [1] * (ACTIVATION_RANK - ranks[low]) + shapes[low]
        if channel is None or any(
            extent != (full[channel] if axis == channel else 1)
            for axis, extent in enumerate(padded)
        ):
            # Only a per-channel vector is aligned: an operand that broadcasts over the
            # channels (extent 1 there) cannot be blocked by ConvertLayout.
            return call
        args[low] = self.builder_.emit(relax.op.reshape(args[low], padded))
        return relax.Call(call.op, args, call.attrs, call.ty_args, call.span)

    def _channel_axis(self, expr: relax.Expr) -> Optional[int]:
        """The channel axis of ``expr`` when a conv2d computes it (its output layout says),
        possibly followed by casts."""
        value = self.lookup_binding(expr) if isinstance(expr, relax.Var) else None
        while isinstance(value, relax.Call) and value.op.same_as(self.astype_op):
            # float16 storage with float32 accumulation: the bias follows the cast back
            arg = value.args[0]
            value = self.lookup_binding(arg) if isinstance(arg, relax.Var) else None
        if not isinstance(value, relax.Call) or not value.op.same_as(self.conv_op):
            return None
        return conv2d_channel_axis(value)


@function_pass(opt_level=0, name="AlignBroadcastRank")
class AlignBroadcastRank:  # pylint: disable=too-few-public-methods
    """Reshape the per-channel, lower-rank operand of a broadcast op on a conv2d result to
    rank 4.

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
        return _RankAligner(mod).visit_expr(func)
