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
from tvm.relax.dpl import is_op, rewrite_call, wildcard
from tvm.relax.transform import function_pass

_X, _LOW, _HIGH = wildcard(), wildcard(), wildcard()
_CLIP = is_op("relax.clip")(_X, _LOW, _HIGH)


def _clip_to_min_max(clip: relax.Call, matches) -> relax.Expr:
    """The replacement of a matched ``clip``: itself unless its input is a 4-D tensor."""
    x = matches[_X]
    if not isinstance(x.ty, relax.TensorType) or x.ty.ndim != 4:
        return clip
    dtype = x.ty.dtype
    low = relax.const(float(matches[_LOW].value), dtype)
    high = relax.const(float(matches[_HIGH].value), dtype)
    return relax.op.minimum(relax.op.maximum(x, low), high)


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
        self, func: relax.Function, _mod: tvm.IRModule, _ctx: tvm.transform.PassContext
    ) -> relax.Function:
        """Apply the rewrite to ``func``."""
        return rewrite_call(_CLIP, _clip_to_min_max, func)
