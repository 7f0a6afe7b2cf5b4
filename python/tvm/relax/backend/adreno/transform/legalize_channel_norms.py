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
"""Keep normalizations whose parameters run along the channel axis out of ``ConvertLayout``.

``ConvertLayout`` to ``NCHW4c`` splits the channel axis ``C`` into ``C/4`` and an inner axis of
4.  The layout inference of the normalization ops (C++, ``InferLayoutLayerNorm``,
``InferLayoutGroupNorm``, ``InferLayoutInstanceNorm`` and ``InferLayoutRMSNorm`` in
``src/relax/op/nn/nn.cc``) moves such an op into ``NCHW4c`` by renaming its axes only: it keeps
``gamma``, ``beta`` (``weight`` for ``rms_norm``) in their ``C``-shaped layout and does not add the
inner axis of 4 to the normalized axes, so the rewritten call fails type inference
("requires the input gamma, beta, etc., to have size same as the lengths of the data on the given
axes") and the whole compilation stops.  Normalizations over the spatial axes only are not
affected.

``LegalizeChannelNorms`` lowers the affected calls to their TOPI kernels (the ordinary
legalization of each op) before ``ConvertLayout`` runs.  A ``call_tir`` has no layout inference,
so ``ConvertLayout`` gives it its input in the original layout: the convolution before it writes
its result to a buffer, one layout transform brings it back to ``NCHW``, and the normalization
runs on buffers.  The fix belongs in the C++ inference (transform gamma and beta to the split
layout and normalize over the inner axis too); this pass is the fallback until it is there.
"""

from typing import List

import tvm
from tvm import relax
from tvm.ir import Op

from .utils import rewrite_relax_functions

# The normalizations whose per-element parameters follow the normalized axes (layer_norm,
# rms_norm) or the channel axis (group_norm, instance_norm).
_NORM_OPS = (
    "relax.nn.layer_norm",
    "relax.nn.group_norm",
    "relax.nn.instance_norm",
    "relax.nn.rms_norm",
)

# The axis ConvertLayout splits: C of NCHW, the layout the Adreno conv2d converts from.
_CHANNEL_AXIS = 1


def _parameter_axes(call: relax.Call, ndim: int) -> List[int]:
    """The axes of the input that the op's gamma/beta/weight run along (non-negative)."""
    attrs = call.attrs
    axes = [int(a) % ndim for a in attrs.axes]
    if hasattr(attrs, "channel_axis"):
        axes.append(int(attrs.channel_axis) % ndim)
    return axes


@relax.expr_functor.mutator
class _ChannelNormLegalizer(relax.PyExprMutator):  # pylint: disable=abstract-method
    norm_ops = [Op.get(name) for name in _NORM_OPS]

    def visit_call_(self, call: relax.Call) -> relax.Expr:  # pylint: disable=arguments-renamed
        call = super().visit_call_(call)
        if not any(call.op.same_as(op) for op in self.norm_ops):
            return call
        x_ty = call.args[0].ty
        if not isinstance(x_ty, relax.TensorType) or x_ty.ndim != 4:
            return call
        if _CHANNEL_AXIS not in _parameter_axes(call, x_ty.ndim):
            return call
        return call.op.get_attr("FLegalize")(self.builder_, call)


@tvm.transform.module_pass(opt_level=0, name="LegalizeChannelNorms")
class LegalizeChannelNorms:  # pylint: disable=too-few-public-methods
    """Legalize ``layer_norm``, ``group_norm``, ``instance_norm`` and ``rms_norm`` of 4-D tensors
    whose parameters run along the channel axis, so that ``ConvertLayout`` keeps them in
    ``NCHW`` on buffers.

    Run right before ``ConvertLayout``; see the module docstring.

    Returns
    -------
    ret : tvm.transform.Pass
        The pass.
    """

    def transform_module(self, mod: tvm.IRModule, _ctx: tvm.transform.PassContext) -> tvm.IRModule:
        """Apply the rewrite to every Relax function of ``mod``."""
        return rewrite_relax_functions(mod, _ChannelNormLegalizer(mod))
