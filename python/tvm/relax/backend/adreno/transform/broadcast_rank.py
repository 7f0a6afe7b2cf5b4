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
"""

import tvm
from tvm import relax
from tvm.ir import Op

#: Binary broadcast ops whose layout inference needs operands of equal rank.
BROADCAST_OPS = (
    "relax.add",
    "relax.subtract",
    "relax.multiply",
    "relax.divide",
    "relax.maximum",
    "relax.minimum",
    "relax.power",
)
#: Only the 4-D activations the texture pipeline converts to ``NCHW4c`` are worth aligning.
ACTIVATION_RANK = 4


def _static_shape(ty):
    if not isinstance(ty, relax.TensorType) or ty.shape is None:
        return None
    try:
        return [int(dim) for dim in ty.shape]
    except (TypeError, ValueError):
        return None


@relax.expr_functor.mutator
class _RankAligner(relax.PyExprMutator):
    ops = tuple(Op.get(name) for name in BROADCAST_OPS)

    def visit_call_(self, call: relax.Call) -> relax.Expr:  # pylint: disable=arguments-renamed
        """Reshape the lower-rank operand of a 4-D broadcast op."""
        call = super().visit_call_(call)
        if not any(call.op.same_as(op) for op in self.ops) or len(call.args) != 2:
            return call
        shapes = [_static_shape(arg.ty) for arg in call.args]
        if any(shape is None for shape in shapes):
            return call
        ranks = [len(shape) for shape in shapes]
        if max(ranks) != ACTIVATION_RANK or min(ranks) in (0, ACTIVATION_RANK):
            # Scalars broadcast in any layout already; equal ranks need nothing.
            return call
        args = list(call.args)
        low = ranks.index(min(ranks))
        if all(dim == 1 for dim in shapes[low]):
            # One element (ONNX writes scalars as shape (1,)): a scalar broadcasts in any
            # layout, while (1, 1, 1, 1) has a channel axis NCHW4c cannot block.
            padded = []
        else:
            padded = [1] * (ACTIVATION_RANK - ranks[low]) + shapes[low]
        args[low] = self.builder_.emit(relax.op.reshape(args[low], padded))
        return relax.Call(call.op, args, call.attrs, call.ty_args, call.span)


@tvm.transform.module_pass(opt_level=0, name="AlignBroadcastRank")
class AlignBroadcastRank:  # pylint: disable=too-few-public-methods
    """Reshape the lower-rank operand of a 4-D broadcast op to rank 4.

    Run before ``ConvertLayout``; see the module docstring.

    Returns
    -------
    ret : tvm.transform.Pass
        The pass.
    """

    def transform_module(self, mod: tvm.IRModule, _ctx: tvm.transform.PassContext) -> tvm.IRModule:
        """Apply the rewrite to every Relax function of ``mod``."""
        aligner = _RankAligner(mod)
        for gvar, func in mod.functions_items():
            if isinstance(func, relax.Function):
                aligner.builder_.update_func(gvar, aligner.visit_expr(func))
        return aligner.builder_.get()
