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
"""Memory scope annotation that lets reductions read and write textures.

``AnnotateCustomMemoryScope`` (C++, ``src/relax/backend/adreno/annotate_custom_storage.cc``)
decides the scope of every tensor from what its consumers accept.  Its ``SupportsTexture``
accepts any 5-D tensor with a last axis of 4 for PrimFuncs whose ``op_pattern`` is below
``kCommReduce``, but of the reducing ops it knows only conv2d, pooling and layer norm, by
their attributes.  A legalized ``sum``, ``mean``, ``max``, ``min``, ``argmax`` or ``argmin``
is a PrimFunc of pattern ``kCommReduce`` without such attributes, so a texture conv2d feeding
it writes a buffer, or a texture plus a copy to a buffer.

``AnnotateReductionMemoryScope`` runs the C++ pass so that it treats these reductions like
the injective ops: every ``call_tir`` of a reduction PrimFunc whose tensor arguments all have
the packed ``[..., 4]`` shape, and which the Adreno ``Reduction`` schedule rule accepts, is
shown to the C++ pass with ``op_pattern = kInjective``; the pattern is restored right after.
The reduction then reads its input from the producer's texture, and writes a texture when its
result keeps the 4-lane layout (``keepdims=True`` over spatial axes) and its consumer takes
textures.  Everything else stays as the C++ pass decides.  The proper fix belongs in
``SupportsTexture``: accept ``kCommReduce`` PrimFuncs over packed tensors.
"""

from typing import Dict, Optional

import tvm
from tvm import relax, tirx
from tvm.topi.adreno.utils import CHANNEL_BLOCK

from .utils import with_functions, with_private_constants

# OpPatternKind (include/tvm/relax/op_attr_types.h): a reduction alone is kCommReduce, a
# reduction with an elementwise epilogue (the division of a mean) kOutEWiseFusable.
_INJECTIVE = 2
_REDUCING_PATTERNS = (3, 4)
_TEXTURE_RANK = 5

_CALL_TIR = tvm.ir.Op.get("relax.call_tir")


def _is_packed(ty) -> bool:
    """A static 5-D tensor whose last axis is the 4-lane pixel."""
    if not isinstance(ty, relax.TensorType) or ty.shape is None or ty.ndim != _TEXTURE_RANK:
        return False
    dims = list(ty.shape)
    if not all(isinstance(d, tirx.IntImm) for d in dims):
        return False
    return int(dims[-1]) == CHANNEL_BLOCK


def _op_pattern(func: tirx.PrimFunc) -> Optional[int]:
    if func.attrs is None or "op_pattern" not in func.attrs:
        return None
    return int(func.attrs["op_pattern"])


def _texture_reductions(mod: tvm.IRModule, target: tvm.target.Target) -> Dict[str, int]:
    """The reduction PrimFuncs that may read textures, by global name, with their op pattern:
    every call passes only packed tensors, and the Adreno reduction schedule takes the
    function."""
    # pylint: disable=import-outside-toplevel
    from tvm.s_tir.dlight.adreno import Reduction

    verdict: Dict[str, bool] = {}

    def _visit(expr):
        if not isinstance(expr, relax.Call) or not expr.op.same_as(_CALL_TIR):
            return
        name = expr.args[0].name_hint
        args = expr.args[1]
        fields = list(args.fields) if isinstance(args, relax.Tuple) else [args]
        packed = bool(fields) and all(_is_packed(a.ty) for a in fields)
        verdict[name] = verdict.get(name, True) and packed

    for _, func in mod.functions_items():
        if isinstance(func, relax.Function):
            relax.analysis.post_order_visit(func, _visit)

    chosen = {}
    rule = Reduction()
    for gvar, func in mod.functions_items():
        if not isinstance(func, tirx.PrimFunc) or not verdict.get(gvar.name_hint, False):
            continue
        pattern = _op_pattern(func)
        if pattern not in _REDUCING_PATTERNS:
            continue
        if rule.apply(func, target, False) is None:
            continue
        chosen[gvar.name_hint] = pattern
    return chosen


def _with_patterns(mod: tvm.IRModule, patterns: Dict[str, int]) -> tvm.IRModule:
    """``mod`` with the ``op_pattern`` of the named PrimFuncs replaced."""
    updates = {}
    for gvar, func in mod.functions_items():
        if gvar.name_hint in patterns and isinstance(func, tirx.PrimFunc):
            updates[gvar] = func.with_attr("op_pattern", patterns[gvar.name_hint])
    return with_functions(mod, updates)


@tvm.transform.module_pass(opt_level=0, name="AnnotateReductionMemoryScope")
class AnnotateReductionMemoryScope:  # pylint: disable=too-few-public-methods
    """``AnnotateCustomMemoryScope`` with reductions over packed tensors as texture consumers.

    Use it in place of ``AnnotateCustomMemoryScope(target)``, at the same point of the
    pipeline (after the partial legalization and ``AnnotateTIROpPattern``).  See the module
    docstring.

    Parameters
    ----------
    target : tvm.target.Target
        The texture target.

    Returns
    -------
    ret : tvm.transform.Pass
        The pass.
    """

    def __init__(self, target: tvm.target.Target):
        self.target = target

    def transform_module(self, mod: tvm.IRModule, _ctx: tvm.transform.PassContext) -> tvm.IRModule:
        """Annotate memory scopes, letting the selected reductions take textures."""
        # pylint: disable=import-outside-toplevel
        from .transform import AnnotateCustomMemoryScope

        patterns = _texture_reductions(mod, self.target)
        mod = _with_patterns(mod, {name: _INJECTIVE for name in patterns})
        # The C++ pass sets the vdevice of a constant argument in the constant's own node:
        # without copies it would edit the constants of the module given to the pipeline.
        mod = AnnotateCustomMemoryScope(self.target)(with_private_constants(mod))
        return _with_patterns(mod, patterns)
