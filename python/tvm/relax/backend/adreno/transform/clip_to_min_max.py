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
"""Rewrite ``clip`` into ``minimum(maximum(x, lo), hi)`` so that it follows the NCHW4c layout.

``relax.clip`` has no layout inference (C++ ``src/relax/op/tensor/unary.cc`` registers it
without ``FRelaxInferLayout``), so ``ConvertLayout`` leaves it in NCHW: a ReLU6 after a texture
convolution (MobileNet's activation) then costs a layout transform back to NCHW, a buffer
kernel and a layout transform into the next conv's texture, and it cannot fuse into the conv.
``maximum`` and ``minimum`` with scalar bounds are broadcast ops that follow any layout, so
after this rewrite the activation stays in NCHW4c and ``FuseOps`` puts it into the conv's
kernel. The result is identical (clip is defined as exactly this composition).
"""

import tvm
from tvm import relax
from tvm.relax.transform import function_pass
from tvm.ir import Op


@relax.expr_functor.mutator
class _ClipRewriter(relax.PyExprMutator):
    clip_op = Op.get("relax.clip")

    def visit_call_(self, call: relax.Call) -> relax.Expr:  # pylint: disable=arguments-renamed
        call = super().visit_call_(call)
        if not call.op.same_as(self.clip_op):
            return call
        x_ty = call.args[0].ty
        if not isinstance(x_ty, relax.TensorType) or x_ty.ndim != 4:
            return call
        dtype = x_ty.dtype
        low = relax.const(float(call.args[1].value), dtype)
        high = relax.const(float(call.args[2].value), dtype)
        lower = self.builder_.emit(relax.op.maximum(call.args[0], low))
        return relax.op.minimum(lower, high)


@function_pass(opt_level=0, name="ClipToMinMax")
class ClipToMinMax:  # pylint: disable=too-few-public-methods
    """Rewrite ``clip`` of 4-D tensors into ``minimum(maximum(x, lo), hi)``.

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
        return _ClipRewriter(mod).visit_expr(func)
