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
"""Turn reshape-like kernels between buffers into zero-copy reshapes.

The generic GPU pipeline runs ``RewriteDataflowReshape`` after legalization, so ``reshape``,
``expand_dims``, ``squeeze`` and ``flatten`` become views of their input.  The Adreno pipeline
schedules its PrimFuncs with dlight inside its legalization phase, and a scheduled PrimFunc no
longer matches the reshape pattern, so every reshape there became a copy kernel (for example
the ``expand_dims`` after a channel reduction, or the flatten between a texture convolution and
a dense layer).  The C++ pass cannot be told which calls are safe: a reshape whose input or
output lives in a texture is not a view (the image shape depends on the tensor shape).

``RewriteBufferReshapeToView`` therefore runs before scheduling and rewrites only the
``call_tir`` of a reshape-pattern PrimFunc whose argument and result are both in the ``global``
scope into ``R.reshape``, which the VM lowers to a view.
"""

import tvm
from tvm import relax
from tvm.relax.transform import function_pass

from .utils import call_tir_args


def _is_buffer(ty) -> bool:
    """A tensor type outside any texture scope (no vdevice means the default ``global``)."""
    if not isinstance(ty, relax.TensorType):
        return False
    vdev = ty.vdevice
    return vdev is None or str(vdev.memory_scope) in ("", "global")


def _same_element_count(in_ty, out_ty) -> bool:
    """Whether both static shapes hold the same number of elements (unknown counts as no)."""
    counts = []
    for ty in (in_ty, out_ty):
        shape = ty.shape
        if shape is None or not isinstance(shape, relax.ShapeExpr):
            return False
        count = 1
        for dim in shape.values:
            if not isinstance(dim, tvm.tirx.IntImm):
                return False
            count *= int(dim.value)
        counts.append(count)
    return counts[0] == counts[1]


@relax.expr_functor.mutator
class _ReshapeRewriter(relax.PyExprMutator):  # pylint: disable=abstract-method
    """Replace call_tir of buffer-to-buffer reshape PrimFuncs by R.reshape."""

    def __init__(self, mod: tvm.IRModule):
        super().__init__(mod)
        self.mod = mod
        self._is_reshape = {}

    def _reshape_func(self, gvar: relax.GlobalVar) -> bool:
        name = gvar.name_hint
        if name not in self._is_reshape:
            func = self.mod[gvar]
            self._is_reshape[name] = isinstance(
                func, tvm.tirx.PrimFunc
            ) and relax.analysis.has_reshape_pattern(func)
        return self._is_reshape[name]

    def visit_call_(self, call: relax.Call) -> relax.Expr:  # pylint: disable=arguments-renamed
        call = super().visit_call_(call)
        fields = call_tir_args(call)
        # A third call_tir argument passes symbolic shape values: not a plain reshape.
        if fields is None or len(call.args) != 2:
            return call
        if len(fields) != 1 or len(call.ty_args) != 1:
            return call
        out_ty = call.ty_args[0]
        if not (_is_buffer(fields[0].ty) and _is_buffer(out_ty)):
            return call
        if out_ty.shape is None or not self._reshape_func(call.args[0]):
            return call
        if not _same_element_count(fields[0].ty, out_ty):
            # A slice that drops trailing channels also matches the reshape pattern.
            return call
        return relax.op.reshape(fields[0], out_ty.shape)


@function_pass(opt_level=0, name="RewriteBufferReshapeToView")
class RewriteBufferReshapeToView:  # pylint: disable=too-few-public-methods
    """Rewrite ``call_tir`` of reshape-like PrimFuncs between ``global`` buffers into
    ``R.reshape`` (a view at run time).  Texture operands are left alone.

    Run after fusion and before the dlight schedules; follow it with
    ``DeadCodeElimination`` to drop the PrimFuncs no longer called.

    Returns
    -------
    ret : tvm.transform.Pass
        The pass.
    """

    def transform_function(
        self, func: relax.Function, mod: tvm.IRModule, _ctx: tvm.transform.PassContext
    ) -> relax.Function:
        """Apply the rewrite to ``func``, a Relax function of ``mod``."""
        return _ReshapeRewriter(mod).visit_expr(func)
