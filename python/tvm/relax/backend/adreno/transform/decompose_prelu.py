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
"""Rewrite ``nn.prelu`` into ``maximum(x, 0) + alpha * minimum(x, 0)`` so that it follows the
NCHW4c layout.

The layout inference of ``relax.nn.prelu`` (C++ ``src/relax/op/nn/nn.cc``) does not take a
packed layout such as NCHW4c, so ``ConvertLayout`` leaves a PReLU after a texture convolution
in the unpacked layout: a layout transform out of the texture, a buffer kernel and a layout
transform back into the next conv's texture, for every PReLU of a network (MediaPipe's palm
detector has 31), and it cannot fuse into the conv. ``maximum``, ``minimum``, ``multiply``
and ``add`` follow any layout, the slope becomes a per-channel operand like a bias, and
``FuseOps`` puts the activation into the conv's kernel. The result is identical: for
``x > 0`` it is ``x + alpha * 0``, otherwise ``0 + alpha * x``.
"""

import tvm
from tvm import relax
from tvm.relax.transform import function_pass
from tvm.ir import Op


@relax.expr_functor.mutator
class _PReLUDecomposer(relax.PyExprMutator):  # pylint: disable=abstract-method
    prelu_op = Op.get("relax.nn.prelu")

    def visit_call_(self, call: relax.Call) -> relax.Expr:  # pylint: disable=arguments-renamed
        call = super().visit_call_(call)
        if not call.op.same_as(self.prelu_op):
            return call
        x_ty, alpha_ty = call.args[0].ty, call.args[1].ty
        if not isinstance(x_ty, relax.TensorType) or x_ty.ndim < 1:
            return call
        if not isinstance(alpha_ty, relax.TensorType) or alpha_ty.ndim != 1:
            return call
        axis = int(call.attrs.axis) % x_ty.ndim
        # The slope along the channel axis, broadcast over the others (as a bias is).
        shape = [1] * x_ty.ndim
        shape[axis] = -1
        alpha = self.builder_.emit(relax.op.reshape(call.args[1], shape))
        zero = relax.const(0.0, x_ty.dtype)
        positive = self.builder_.emit(relax.op.maximum(call.args[0], zero))
        negative = self.builder_.emit(relax.op.minimum(call.args[0], zero))
        scaled = self.builder_.emit(relax.op.multiply(alpha, negative))
        return relax.op.add(positive, scaled)


@function_pass(opt_level=0, name="DecomposePReLU")
class DecomposePReLU:  # pylint: disable=too-few-public-methods
    """Rewrite ``nn.prelu`` with a 1-D slope into ``maximum(x, 0) + alpha * minimum(x, 0)``.

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
        return _PReLUDecomposer(mod).visit_expr(func)
