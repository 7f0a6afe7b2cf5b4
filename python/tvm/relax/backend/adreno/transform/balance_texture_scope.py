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
"""Choose the texture scope of each tensor so that its image is balanced and fits the device.

A texture tensor ``[d0, ..., d(r-2), 4]`` is stored as an ``image2d_array`` whose pixel is the
last axis.  The memory scope names the axis ``a`` that separates height from width:

========================== ===== ============================================
scope                      a     image (width x height x layers)
========================== ===== ============================================
``global.texture``         r-2   ``d(r-2)`` x ``d(r-3)`` x ``d0*...*d(r-4)``
``global.texture-nhwc``    2     ``d2*...*d(r-2)`` x ``d1`` x ``d0``
``global.texture-weight``  1     ``d1*...*d(r-2)`` x ``d0`` x 1
========================== ===== ============================================

:py:func:`choose_texture_scope` takes, among the scopes whose image fits the target, the one
closest to a square.  ``AnnotateTextureScope`` gives each texture tensor that scope.  Upstream's
C++ ``AnnotateCustomMemoryScope`` (``src/relax/backend/adreno/annotate_custom_storage.cc``),
which it replaces, took the first of ``-weight``, ``-nhwc``, ``texture`` that fits: for
activations with batch 1 almost always ``-weight``, an image one pixel high and ``C/4*H*W``
wide, which wastes the 2-D locality of the texture cache and runs into the width limit long
before the memory does.

``BalanceTextureScope`` runs after fusion and chooses again for every texture tensor, for the
tensors that passes after the annotation put in a texture without choosing its scope (the
Winograd legalization gives its two intermediates the module's first texture scope):

* among the scopes whose image fits the target's ``texture_spatial_limit`` (width and height)
  and ``texture_depth_limit`` (layers), it takes the one with the smallest aspect ratio
  ``max(w, h) / min(w, h)``;
* a tensor with no fitting scope, or with a dynamic shape, is kept in ``global`` buffers.

The choice depends only on the shape, so a producer and all its consumers agree on it; a
``to_vdevice`` copy left between two scopes that became equal is removed.
"""

import dataclasses
from typing import List, Optional, Tuple

import tvm
from tvm import relax
from tvm.s_tir.backend.adreno.texture import TEXTURE_SCOPES, image_extent

from .utils import ModuleVDevices, rewrite_relax_functions

_CALL_TIR = tvm.ir.Op.get("relax.call_tir")
_TO_VDEVICE = tvm.ir.Op.get("relax.to_vdevice")


@dataclasses.dataclass(frozen=True)
class TextureLimits:
    """The largest image the target accepts.

    Parameters
    ----------
    spatial : int
        The largest image width and height in pixels (inclusive), ``texture_spatial_limit``.
    depth : int
        The largest number of image array layers (inclusive), ``texture_depth_limit``.
    """

    # Adreno's image side limit (CL_DEVICE_IMAGE2D_MAX_WIDTH/HEIGHT) and array size
    # (CL_DEVICE_IMAGE_MAX_ARRAY_SIZE); the same defaults as the target tag.
    spatial: int = 16384
    depth: int = 2048

    @staticmethod
    def from_target(target: tvm.target.Target) -> "TextureLimits":
        """Read the limits from the target attributes, falling back to the defaults."""
        attrs = target.attrs
        spatial = attrs["texture_spatial_limit"] if "texture_spatial_limit" in attrs else 16384
        depth = attrs["texture_depth_limit"] if "texture_depth_limit" in attrs else 2048
        return TextureLimits(int(spatial), int(depth))


def choose_texture_scope(shape, limits: TextureLimits) -> str:
    """The texture scope with the most balanced image that fits ``limits``, or ``global``.

    Parameters
    ----------
    shape : Sequence[int or PrimExpr]
        The tensor shape.  A dynamic shape, a last axis other than 4, or fewer than three axes
        give ``global``.
    limits : TextureLimits
        The target's image limits.

    Returns
    -------
    scope : str
        ``global.texture``, ``global.texture-nhwc``, ``global.texture-weight`` or ``global``.
    """
    dims: List[int] = []
    for dim in shape:
        if not isinstance(dim, (int, tvm.tirx.IntImm)):
            return "global"
        dims.append(int(dim))
    if len(dims) < 3 or dims[-1] != 4:
        return "global"
    best: Optional[Tuple[float, int, str]] = None
    for rank, scope in enumerate(TEXTURE_SCOPES):
        if scope == "global.texture-nhwc" and len(dims) < 4:
            continue  # the nhwc separator needs a depth, a height and a width axis
        width, height, layers = image_extent(dims, scope)
        if min(width, height, layers) < 1:
            continue
        if width > limits.spatial or height > limits.spatial or layers > limits.depth:
            continue
        # Smallest aspect ratio first; on a tie the order of TEXTURE_SCOPES decides.
        key = (max(width, height) / min(width, height), rank, scope)
        if best is None or key < best:
            best = key
    return "global" if best is None else best[2]


def _is_texture_scope(scope: str) -> bool:
    return scope.startswith("global.texture")


@relax.expr_functor.mutator
class _ScopeRewriter(relax.PyExprMutator):  # pylint: disable=abstract-method
    """Re-choose the texture scope of every call_tir result and to_vdevice target."""

    def __init__(self, mod: tvm.IRModule, target: tvm.target.Target, limits: TextureLimits):
        super().__init__(mod)
        self.target = target
        self.limits = limits
        self.vdevices = ModuleVDevices(mod)

    def vdevice(self, like, scope: str):
        """The module's VDevice for ``scope`` on the device of ``like``."""
        return self.vdevices.get(like.target, scope, int(like.vdevice_id))

    def rescope(self, ty):
        """``ty`` with every texture scope replaced by the balanced one for its shape."""
        if isinstance(ty, relax.TupleType):
            return relax.TupleType([self.rescope(f) for f in ty.fields])
        if not isinstance(ty, relax.TensorType) or ty.vdevice is None:
            return ty
        scope = str(ty.vdevice.memory_scope)
        if not _is_texture_scope(scope):
            return ty
        shape = ty.shape.values if isinstance(ty.shape, relax.ShapeExpr) else None
        new_scope = "global" if shape is None else choose_texture_scope(shape, self.limits)
        if new_scope == scope:
            return ty
        return relax.TensorType(ty.shape, ty.dtype, self.vdevice(ty.vdevice, new_scope))

    def visit_call_(self, call: relax.Call) -> relax.Expr:  # pylint: disable=arguments-renamed
        call = super().visit_call_(call)
        if call.op.same_as(_CALL_TIR):
            ty_args = [self.rescope(t) for t in call.ty_args]
            return relax.Call(call.op, call.args, call.attrs, ty_args)
        if call.op.same_as(_TO_VDEVICE):
            dst_ty = self.rescope(relax.TensorType(call.ty.shape, call.ty.dtype, call.ty.vdevice))
            src_vdev = call.args[0].ty.vdevice
            dst_vdev = dst_ty.vdevice
            if src_vdev is not None and str(src_vdev.memory_scope) == str(dst_vdev.memory_scope):
                return call.args[0]
            return relax.op.to_vdevice(call.args[0], dst_vdev)
        return call


@tvm.transform.module_pass(opt_level=0, name="BalanceTextureScope")
class BalanceTextureScope:  # pylint: disable=too-few-public-methods
    """Re-choose the scope of texture tensors: balanced images within the target's limits,
    ``global`` buffers for tensors that fit no image or have dynamic shapes.

    Run after ``FoldVDeviceScopeChange`` and before ``SpecializePrimFuncBasedOnCallSite``,
    which copies the call-site scopes into the PrimFunc buffers.

    Parameters
    ----------
    target : Optional[tvm.target.Target]
        The texture target; the current target when omitted.

    Returns
    -------
    ret : tvm.transform.Pass
        The pass.
    """

    def __init__(self, target: Optional[tvm.target.Target] = None):
        self.target = target

    def transform_module(self, mod: tvm.IRModule, _ctx: tvm.transform.PassContext) -> tvm.IRModule:
        """Rewrite the scopes of every Relax function of ``mod``."""
        target = self.target or tvm.target.Target.current(allow_none=False)
        rewriter = _ScopeRewriter(mod, target, TextureLimits.from_target(target))
        return rewriter.vdevices.write(rewrite_relax_functions(mod, rewriter))
