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
"""Legalize ``relax.layout_transform`` for Adreno GPUs.

The generic legalization lowers the op; here its block is annotated
``schedule_rule = adreno.layout_transform`` (``tvm.s_tir.dlight.adreno.base``), which is how
``dl.adreno.LayoutTransform`` finds it. A transform that pads (the result has elements that no
input element maps to) is left unannotated: its block selects between the input and the pad
value, which the vector schedule of ``LayoutTransform`` does not handle, and the Adreno
``Fallback`` rule schedules it.

The PrimFunc depends only on the input's static shape and dtype, the index map and the pad
value, and building it (a TE compute and two schedules) costs milliseconds: the texture
pipeline has a transform per conv weight and bias, most of them alike (106 calls, 7 of every
10 a repeat, in MobileNetV2).  The PrimFunc of each such key is built once and kept; a kept
PrimFunc is reused only while the module being legalized holds it, where ``bb.add_func`` of
a new build would return it anyway (it deduplicates structurally).  Another module builds its
own: the buffer names come from the first call's argument, so one module's names never reach
another's kernels.
"""

import collections

import tvm
import tvm_ffi
from tvm import relax, s_tir, tirx
from tvm.s_tir.dlight.adreno.base import LAYOUT_TRANSFORM, SCHEDULE_RULE


def _pads(call: relax.Call) -> bool:
    """Whether the transform's output has elements outside the image of its input."""
    _, padding = call.attrs.index_map.non_surjective_inverse(call.args[0].ty.shape)
    return not isinstance(padding, tirx.IntImm)


# (shape, dtype, pad value) -> [(index map, PrimFunc, name, legalized call)], most recent last.
_BUILT = collections.OrderedDict()
# Distinct keys kept: the transforms of a few models.
_BUILT_KEYS = 256


def _key(call: relax.Call):
    """The cache key of a transform of a static input (None when the shape is symbolic)."""
    shape = call.args[0].ty.shape
    if shape is None or not all(isinstance(dim, tirx.IntImm) for dim in shape):
        return None
    pad = call.attrs.pad_value
    if pad is not None:
        if not isinstance(pad, (tirx.IntImm, tirx.FloatImm)):
            return None
        pad = (str(pad.ty), pad.value)
    return (tuple(int(dim) for dim in shape), str(call.args[0].ty.dtype), pad)


def _lookup(key, index_map, mod):
    """The kept PrimFunc of the transform, if ``mod`` holds it."""
    for cached_map, func, name, legalized in _BUILT.get(key, ()):
        if tvm_ffi.structural_equal(cached_map, index_map, map_free_vars=True):
            if not any(func.same_as(held) for held in mod.functions.values()):
                return None
            _BUILT.move_to_end(key)
            return func, name, legalized
    return None


def _remember(key, index_map, func, name, legalized):
    entries = [
        entry
        for entry in _BUILT.get(key, ())
        if not tvm_ffi.structural_equal(entry[0], index_map, map_free_vars=True)
    ]
    _BUILT[key] = entries + [(index_map, func, name, legalized)]
    _BUILT.move_to_end(key)
    while len(_BUILT) > _BUILT_KEYS:
        _BUILT.popitem(last=False)


def _build(call: relax.Call):
    """The annotated PrimFunc, its name and the generic legalization of ``call``."""
    scratch = relax.BlockBuilder()
    legalized = tvm.ir.Op.get("relax.layout_transform").get_attr("FLegalize")(scratch, call)
    gvar = legalized.args[0]
    func = scratch.get()[gvar]
    if not _pads(call):
        sch = s_tir.Schedule(func)
        (block,) = sch.get_child_blocks(sch.get_sblock("root"))
        sch.annotate(block, SCHEDULE_RULE, LAYOUT_TRANSFORM)
        func = sch.mod["main"]
    return func, gvar.name_hint, legalized


def layout_transform(bb: relax.BlockBuilder, call: relax.Call) -> relax.Expr:
    """Legalize a ``relax.layout_transform`` call; see the module docstring.

    The generic legalization builds its PrimFunc in a scratch builder, so that the annotated
    PrimFunc is the one added to the module (identical transforms share it).

    Parameters
    ----------
    bb : relax.BlockBuilder
        The block builder of the legalization.
    call : relax.Call
        The ``relax.layout_transform`` call.

    Returns
    -------
    expr : relax.Expr
        The ``call_tir`` computing it.
    """
    key = _key(call)
    index_map = call.attrs.index_map
    built = None if key is None else _lookup(key, index_map, bb.get())
    if built is None:
        func, name, legalized = _build(call)
    else:
        func, name, legalized = built
        legalized = relax.Call(
            legalized.op,
            [legalized.args[0], relax.Tuple([call.args[0]])],
            legalized.attrs,
            legalized.ty_args,
        )
    gvar = bb.add_func(func, name)
    if key is not None and built is None and len(legalized.args) == 2:
        # Kept as the module holds it: the first of its kind that was added.
        _remember(key, index_map, bb.get()[gvar], name, legalized)
    return relax.Call(legalized.op, [gvar, *legalized.args[1:]], legalized.attrs, legalized.ty_args)
