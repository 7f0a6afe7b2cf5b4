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
"""Keep channel reductions with ``keepdims=True`` out of the packed NCHW4c layout.

``ConvertLayout`` rewrites a reduction over the channel axis of an NCHW tensor produced in
NCHW4c into a reduction over both channel axes ``[1, 4]`` with ``keepdims=True``.  Its result
has the shape ``[N, 1, H, W, 1]``, and the ``layout_transform`` back to NCHW that follows it
cannot be legalized: ``IndexMap.non_surjective_inverse`` (C++,
``src/tirx/ir/index_map.cc``) fails on the unit-extent packed axes with "Could not parse
mapping as sum of iterators".  The layout inference of the statistical ops
(``src/relax/op/tensor/statistical.cc``) is where the degenerate packed shape comes from; it
lives in the compiler library, so this pass avoids the pattern instead: before the layout
conversion it rewrites

    ``op(x, axis, keepdims=True)``  into  ``expand_dims(op(x, axis, keepdims=False), axis)``

for 4-D inputs whose channel axis is reduced.  The reduction then leaves the packed layout
(as reductions without ``keepdims`` already do) and the ``expand_dims`` only inserts unit
axes in a buffer, which ``RewriteBufferReshapeToView`` turns into a zero-copy reshape.
"""

from typing import List

import tvm
from tvm import relax
from tvm.relax.transform import function_pass
from tvm.ir import Op

# Reductions whose layout inference keeps the packed channel axis when keepdims=True: every
# op registered with StatisticalAttrs.
_STATISTICAL_OPS = frozenset(
    [
        "relax.sum",
        "relax.mean",
        "relax.max",
        "relax.min",
        "relax.prod",
        "relax.std",
        "relax.variance",
    ]
)
# The axis ConvertLayout packs when it turns NCHW into NCHW4c.
_CHANNEL_AXIS = 1


def _reduced_axes(call: relax.Call, ndim: int) -> List[int]:
    if call.attrs.axis is None:
        return list(range(ndim))
    return sorted(int(a) % ndim for a in call.attrs.axis)


@relax.expr_functor.mutator
class _ChannelKeepdimsRewriter(relax.PyExprMutator):  # pylint: disable=abstract-method
    """Rewrite keepdims channel reductions of 4-D tensors into reduce + expand_dims."""

    def visit_call_(self, call: relax.Call) -> relax.Expr:  # pylint: disable=arguments-renamed
        """Split a keepdims channel reduction of a 4-D tensor; leave other calls."""
        call = super().visit_call_(call)
        if not isinstance(call.op, Op) or call.op.name not in _STATISTICAL_OPS:
            return call
        if not call.attrs.keepdims:
            return call
        x_ty = call.args[0].ty
        if not isinstance(x_ty, relax.TensorType) or x_ty.ndim != 4:
            return call
        axes = _reduced_axes(call, 4)
        if _CHANNEL_AXIS not in axes:
            return call
        op_fn = getattr(relax.op, call.op.name[len("relax.") :])
        reduced = self.builder_.emit(op_fn(call.args[0], axis=axes, keepdims=False))
        return relax.op.expand_dims(reduced, axis=axes)


@function_pass(opt_level=0, name="SplitChannelReductionKeepdims")
class SplitChannelReductionKeepdims:  # pylint: disable=too-few-public-methods
    """Rewrite ``reduce(x, axis, keepdims=True)`` of 4-D tensors over the channel axis into
    ``expand_dims(reduce(x, axis, keepdims=False), axis)``.

    Run before ``ConvertLayout`` to NCHW4c.  See the module docstring for the reason.

    Returns
    -------
    ret : tvm.transform.Pass
        The pass.
    """

    def transform_function(
        self, func: relax.Function, mod: tvm.IRModule, _ctx: tvm.transform.PassContext
    ) -> relax.Function:
        """Apply the rewrite to ``func``, a Relax function of ``mod``."""
        return _ChannelKeepdimsRewriter(mod).visit_expr(func)
