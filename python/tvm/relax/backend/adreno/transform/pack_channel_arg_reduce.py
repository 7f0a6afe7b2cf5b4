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
"""Move ``argmax`` / ``argmin`` over channels into the packed NCHW4c layout.

``argmax`` and ``argmin`` have no layout inference, so ``ConvertLayout`` puts a
``layout_transform`` from NCHW4c back to NCHW (and, for a conv2d whose channels
``PadConvChannels`` padded to a multiple of 4, a ``strided_slice`` dropping the padded
channels) in front of them: the reduction reads a buffer copy of the texture.  After the
layout conversion, ``PackChannelArgReduce`` rewrites

    ``argmax(strided_slice(layout_transform(x, NCHW4c -> NCHW), channels[0:C]), axis=1)``

(with or without the slice, with or without ``keepdims``) into one ``call_tir`` that reduces
over both packed channel axes of ``x`` and returns the channel index ``4 * c_outer + lane``.
Lanes past ``C`` are left out of the reduction domain, so a padded channel never wins; ties
go to the lowest index, as in NumPy.  ``AnnotateTextureScope`` then lets the kernel
read ``x`` from its texture.
"""

from typing import Optional

import tvm
from tvm import relax, te, tirx
from tvm.ir import Op
from tvm.relax.utils import get_static_shape
from tvm.topi.adreno.utils import CHANNEL_BLOCK

from .utils import rewrite_relax_functions

_ARG_REDUCE_OPS = {"relax.argmax": True, "relax.argmin": False}  # op name -> selects the max
_LAYOUT_TRANSFORM = Op.get("relax.layout_transform")
_STRIDED_SLICE = Op.get("relax.strided_slice")
# The axis ConvertLayout packs when it turns NCHW into NCHW4c.
_CHANNEL_AXIS = 1


def _unpacks_channels(call: relax.Call) -> bool:
    """``call`` is ``layout_transform`` from ``[N, C/4, H, W, 4]`` to ``[N, C, H, W]``."""
    if not isinstance(call, relax.Call) or not call.op.same_as(_LAYOUT_TRANSFORM):
        return False
    src = get_static_shape(call.args[0].ty)
    if src is None or len(src) != 5 or src[-1] != CHANNEL_BLOCK:
        return False
    index_map = call.attrs.index_map
    if len(index_map.initial_indices) != 5 or len(index_map.final_indices) != 4:
        return False
    # Compare the map with (n, c, h, w, l) -> (n, 4 * c + l, h, w) at a point with distinct
    # coordinates: the map is affine, and the point tells the axes apart.
    point = [0, 2, 3, 5, 1]
    values = index_map.map_indices([tirx.IntImm("int64", v) for v in point])
    if not all(isinstance(v, tirx.IntImm) for v in values):
        return False
    return [int(v) for v in values] == [0, 2 * CHANNEL_BLOCK + 1, 3, 5]


def _leading_channels(call: relax.Call) -> Optional[int]:
    """The channel count kept by ``strided_slice(y, axes=[1], begin=[0], end=[C])``."""
    if not isinstance(call, relax.Call) or not call.op.same_as(_STRIDED_SLICE):
        return None
    if len(call.args) < 4 or any(not isinstance(a, relax.Tuple) for a in call.args[1:4]):
        return None
    try:
        axes, begin, end = ([int(v.value) for v in a.fields] for a in call.args[1:4])
    except (AttributeError, TypeError):
        return None
    if len(call.args) > 4 and isinstance(call.args[4], relax.Tuple):
        if any(int(v.value) != 1 for v in call.args[4].fields):
            return None
    if axes != [1] or begin != [0]:
        return None
    return end[0]


def _packed_channel_arg_reduce(x, channels: int, keepdims: bool, select_max: bool, dtype: str):
    """TE compute: index of the max (min) over the channels ``[0, channels)`` of packed ``x``."""
    batch, chunks, height, width, lanes = x.shape
    outer = te.reduce_axis((0, chunks), name="c_outer")
    lane = te.reduce_axis((0, lanes), name="c_lane")
    worst = tirx.const(float("-inf") if select_max else float("inf"), x.dtype)

    def _combine(lhs, rhs):
        wins = lhs[1] > rhs[1] if select_max else lhs[1] < rhs[1]
        better = tirx.Or(wins, tirx.And(lhs[1] == rhs[1], lhs[0] < rhs[0]))
        return tirx.Select(better, lhs[0], rhs[0]), tirx.Select(better, lhs[1], rhs[1])

    def _identity(index_dtype, value_dtype):
        # An index past every channel: it loses all ties against a real channel.
        return tirx.const(channels, index_dtype), tirx.const(worst.value, value_dtype)

    reducer = te.comm_reducer(_combine, _identity, name="argmax" if select_max else "argmin")
    index = (outer * lanes + lane).astype(dtype)

    def _body(n, h, w):
        value = x[n, outer, h, w, lane]
        if channels < int(chunks) * int(lanes):
            # A padded lane enters as the identity: it loses against every real channel.
            # (A reduction condition, ``where=``, is dropped by create_prim_func for tuple
            # reducers, so the lanes are masked in the value instead.)
            valid = index < channels
            value = tirx.Select(valid, value, worst)
            return reducer(
                (tirx.Select(valid, index, tirx.const(channels, dtype)), value), axis=[outer, lane]
            )
        return reducer((index, value), axis=[outer, lane])

    if keepdims:
        out = te.compute((batch, 1, height, width), lambda n, _, h, w: _body(n, h, w), name="T")
    else:
        out = te.compute((batch, height, width), _body, name="T")
    return out[0]


@relax.expr_functor.mutator
class _ChannelArgReducePacker(relax.PyExprMutator):  # pylint: disable=abstract-method
    """Rewrite argmax/argmin over the channels of an unpacked NCHW4c tensor."""

    def visit_call_(self, call: relax.Call) -> relax.Expr:  # pylint: disable=arguments-renamed
        """Replace a channel argmax/argmin of an unpacked tensor; leave other calls."""
        call = super().visit_call_(call)
        if not isinstance(call.op, Op) or call.op.name not in _ARG_REDUCE_OPS:
            return call
        if call.attrs.axis is None or not isinstance(call.args[0], relax.Var):
            return call
        dims = get_static_shape(call.args[0].ty)
        if dims is None or len(dims) != 4 or int(call.attrs.axis) % 4 != _CHANNEL_AXIS:
            return call
        producer = self.lookup_binding(call.args[0])
        channels = dims[_CHANNEL_AXIS]
        if _leading_channels(producer) is not None and isinstance(producer.args[0], relax.Var):
            producer = self.lookup_binding(producer.args[0])
        if not _unpacks_channels(producer):
            return call
        packed = producer.args[0]
        if channels > get_static_shape(packed.ty)[1] * CHANNEL_BLOCK:
            return call
        name = call.op.name[len("relax.") :]
        return self.builder_.call_te(
            _packed_channel_arg_reduce,
            packed,
            channels=channels,
            keepdims=bool(call.attrs.keepdims),
            select_max=_ARG_REDUCE_OPS[call.op.name],
            dtype=call.ty.dtype,
            primfunc_name_hint=f"{name}_packed_channels",
        )


@tvm.transform.module_pass(opt_level=0, name="PackChannelArgReduce")
class PackChannelArgReduce:  # pylint: disable=too-few-public-methods
    """Rewrite ``argmax``/``argmin`` over the channels of a tensor unpacked from NCHW4c into a
    reduction over the packed tensor, so that it can read the texture.

    Run after ``ConvertLayout`` to NCHW4c.  See the module docstring.

    Returns
    -------
    ret : tvm.transform.Pass
        The pass.
    """

    def transform_module(self, mod: tvm.IRModule, _ctx: tvm.transform.PassContext) -> tvm.IRModule:
        """Apply the rewrite to every Relax function of ``mod``; drop the unpacking copies
        left without a use."""
        return rewrite_relax_functions(
            mod, _ChannelArgReducePacker(mod), relax.analysis.remove_all_unused
        )
