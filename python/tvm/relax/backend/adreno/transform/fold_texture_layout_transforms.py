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
"""Cancel, sink and merge layout transforms out of and into ``NCHW4c``.

``FoldTextureLayoutTransforms``, run after ``ConvertLayout``,

1. drops a layout transform that undoes the ones before it (``NCHW4c -> NCHW -> NCHW4c``,
   or with an axis permutation between, ``NCHW4c -> NHWC -> NCHW -> NCHW4c``);
2. moves a layout transform out of ``NCHW4c`` below the elementwise op that consumes it, when
   that is its only use, so the op runs in ``NCHW4c`` and the transform meets (and cancels)
   the next one into ``NCHW4c``. The op's other operands follow: scalars as they are,
   channel-complete tensors (a ``(1, C, 1, 1)`` bias, a residual) transformed too, which
   cancels for a residual that comes out of ``NCHW4c`` and folds for a constant bias.
3. moves a layout transform out of ``NCHW4c`` below an ``nn.pad`` that pads channels by
   whole texel blocks (BlazeFace's and palm detection's shortcuts widen the channels by a
   multiple of 4 with zeros): the pad runs in ``NCHW4c``, padding the channel-block axis.
   ``ConvertLayout`` leaves such pads in the unpacked layout, between a transform out of
   ``NCHW4c`` and one back (the C++ root: ``InferLayoutPad`` in
   ``src/relax/op/nn/nn.cc`` keeps the initial layout for a sub-indexed layout; it could map
   a pad of whole blocks as done here);
4. moves a layout transform out of ``NCHW4c`` below an ``image.resize2d`` of the unpacked
   layout (``NCHW`` or ``NHWC``): a resize maps each channel plane on its own, so it runs in
   ``NCHW4c`` (TOPI's resize takes blocked layouts) and reads and writes textures, and the
   transforms around it cancel (the upsampling of MediaPipe's palm detector). The C++ root:
   ``InferLayoutResize2d`` in ``src/relax/op/image/resize.cc`` keeps the initial layout for a
   sub-indexed one, where it could keep the blocked layout as done here;
5. merges identical transforms of one tensor (``ConvertLayout`` emits one per use, so an
   ``NHWC`` input read by a conv and a residual add was transformed twice).

``FoldTextureLayoutTransforms`` applies to any such transform, not only those around
transposed convolutions.
"""

import math
from typing import List, Optional

import tvm
import tvm_ffi
from tvm import relax, tirx
from tvm.sym import Analyzer
from tvm.ir import Op
from tvm.relax.utils import get_static_shape
from tvm.topi.adreno.utils import CHANNEL_BLOCK

from .utils import BINARY_BROADCAST_OPS

#: Unary elementwise ops that compute the same in any layout of their operand (as do the
#: ``BINARY_BROADCAST_OPS``).
UNARY_OPS = (
    "relax.nn.relu",
    "relax.sigmoid",
    "relax.tanh",
    "relax.exp",
    "relax.negative",
    "relax.abs",
    "relax.sqrt",
    "relax.astype",
    "relax.nn.silu",
)
#: Longest chain of layout transforms and permutations looked through to find one that
#: undoes another (TFLite: NCHW4c -> NHWC -> NCHW -> NCHW4c around a transposed conv).
_MAX_CHAIN = 3


def _undoes(maps, shape: List[int]) -> bool:
    """Whether applying ``maps`` in order to the indices of a tensor of ``shape`` gives them
    back."""
    analyzer = Analyzer()
    indices = maps[0].initial_indices
    for var, extent in zip(indices, shape):
        analyzer.bind(var, tvm.ir.Range(0, extent))
    mapped = list(maps[0].final_indices)
    for index_map in maps[1:]:
        if len(index_map.initial_indices) != len(mapped):
            return False
        mapped = index_map.map_indices(mapped)
    return len(mapped) == len(indices) and all(
        analyzer.can_prove_equal(a, b) for a, b in zip(mapped, indices)
    )


def _permutation(call: relax.Call):
    """The index map of a ``permute_dims`` call."""
    ndim = len(get_static_shape(call.args[0].ty))
    axes = call.attrs.axes
    axes = list(reversed(range(ndim))) if axes is None else [int(a) for a in axes]
    return tirx.IndexMap.from_func(lambda *idx: [idx[a] for a in axes], ndim=ndim)


def _uses_var(expr, var) -> bool:
    return any(v.same_as(var) for v in tirx.analysis.undefined_vars(expr))


def _lane_axes(into: tirx.IndexMap) -> List[int]:
    """The unpacked axes that ``into`` (unpacked -> blocked) folds into the lanes: the
    channel axis of a texture layout."""
    lanes = into.final_indices[-1]
    return [axis for axis, var in enumerate(into.initial_indices) if _uses_var(lanes, var)]


@relax.expr_functor.mutator
class _LayoutFolder(relax.PyExprMutator):  # pylint: disable=abstract-method
    layout_op = Op.get("relax.layout_transform")
    permute_op = Op.get("relax.permute_dims")
    pad_op = Op.get("relax.nn.pad")
    resize_op = Op.get("relax.image.resize2d")
    unary_ops = tuple(Op.get(name) for name in UNARY_OPS)
    binary_ops = tuple(Op.get(name) for name in BINARY_BROADCAST_OPS)

    def __init__(self, mod: tvm.IRModule, uses):
        super().__init__(mod)
        self.uses = uses

    def _unblocking(self, var: relax.Expr, only_use: bool = True) -> Optional[relax.Call]:
        """The ``layout_transform`` bound to ``var`` when it leaves a texture layout (5-D
        input blocked by 4, 4-D output, no padding) and, with ``only_use``, ``var`` has no
        other use."""
        if not isinstance(var, relax.Var) or only_use and self.uses.get(var, 0) != 1:
            return None
        value = self.lookup_binding(var)
        if not isinstance(value, relax.Call) or not value.op.same_as(self.layout_op):
            return None
        src, dst = get_static_shape(value.args[0].ty), get_static_shape(value.ty)
        if src is None or dst is None or len(src) != 5 or src[-1] != CHANNEL_BLOCK or len(dst) != 4:
            return None
        if value.attrs.pad_value is not None or math.prod(src) != math.prod(dst):
            return None  # padding or cropping channels: not a plain change of layout
        return value

    def visit_call_(self, call: relax.Call) -> relax.Expr:  # pylint: disable=arguments-renamed
        call = super().visit_call_(call)
        if call.op.same_as(self.layout_op):
            return self._cancel(call)
        if any(call.op.same_as(op) for op in self.unary_ops + self.binary_ops):
            return self._sink(call)
        if call.op.same_as(self.pad_op):
            return self._sink_pad(call)
        if call.op.same_as(self.resize_op):
            return self._sink_resize(call)
        return call

    def _cancel(self, call: relax.Call) -> relax.Expr:
        """The tensor ``call`` started from when ``call`` undoes the layout transforms and
        axis permutations before it (TFLite puts a ``permute_dims`` between them)."""
        maps = [call.attrs.index_map]
        current = call.args[0]
        for _ in range(_MAX_CHAIN):
            value = self.lookup_binding(current) if isinstance(current, relax.Var) else None
            if not isinstance(value, relax.Call):
                return call
            if value.op.same_as(self.layout_op) and value.attrs.pad_value is None:
                maps.insert(0, value.attrs.index_map)
            elif value.op.same_as(self.permute_op):
                maps.insert(0, _permutation(value))
            else:
                return call
            current = value.args[0]
            shape = get_static_shape(current.ty)
            if shape is not None and shape == get_static_shape(call.ty) and _undoes(maps, shape):
                return current
        return call

    def _sink(self, call: relax.Call) -> relax.Expr:
        tensors = [i for i, arg in enumerate(call.args) if isinstance(arg.ty, relax.TensorType)]
        unblock = None
        for i in tensors:
            unblock = self._unblocking(call.args[i])
            if unblock is not None:
                break
        if unblock is None:
            return call
        out_shape = get_static_shape(unblock.ty)
        back = unblock.attrs.index_map
        into = back.inverse(get_static_shape(unblock.args[0].ty))
        channel = _lane_axes(into)
        args = list(call.args)
        for i in tensors:
            other = self._unblocking(args[i])
            if other is not None and tvm_ffi.structural_equal(other.attrs.index_map, back):
                args[i] = other.args[0]
                continue
            shape = get_static_shape(args[i].ty)
            if shape is None:
                return call
            if not shape:
                continue
            if len(shape) != 4 or len(channel) != 1 or shape[channel[0]] != out_shape[channel[0]]:
                return call
            args[i] = self.builder_.emit(relax.op.layout_transform(args[i], into))
        blocked = self.builder_.emit(relax.Call(call.op, args, call.attrs, call.ty_args))
        return relax.op.layout_transform(blocked, back)

    def _sink_pad(self, call: relax.Call) -> relax.Expr:
        """``pad(unpack(x))`` as ``unpack(pad(x))`` when the pad keeps whole texel blocks.

        The unpacked tensor may have other readers: the pad is then no longer one of them,
        and the transform goes when the others were folded away too (an elementwise op
        would instead be computed twice, in both layouts)."""
        unblock = self._unblocking(call.args[0], only_use=False)
        if unblock is None:
            return call
        back = unblock.attrs.index_map
        into = back.inverse(get_static_shape(unblock.args[0].ty))
        widths = [int(w) for w in call.attrs.pad_width]
        channel = _lane_axes(into)
        blocked_widths = []
        for index in into.final_indices[:-1]:
            # each blocked axis but the lanes is one unpacked axis (n, c // 4, h, w)
            axis = [a for a, var in enumerate(into.initial_indices) if _uses_var(index, var)]
            if len(axis) != 1:
                return call
            before, after = widths[2 * axis[0]], widths[2 * axis[0] + 1]
            if (before or after) and axis[0] in channel:
                # the channel axis: whole blocks of constant lanes only
                if (
                    call.attrs.pad_mode != "constant"
                    or before % CHANNEL_BLOCK
                    or after % CHANNEL_BLOCK
                ):
                    return call
                before, after = before // CHANNEL_BLOCK, after // CHANNEL_BLOCK
            blocked_widths += [before, after]
        blocked = self.builder_.emit(
            relax.op.nn.pad(
                unblock.args[0],
                blocked_widths + [0, 0],
                call.attrs.pad_mode,
                float(call.attrs.pad_value),
            )
        )
        return relax.op.layout_transform(blocked, back)


    def _sink_resize(self, call: relax.Call) -> relax.Expr:
        """``resize2d(unpack(x))`` as ``unpack(resize2d(x))`` in ``NCHW4c``, when the unpacked
        tensor is in the resize's layout: batch, channel, height and width of the blocked
        tensor each come from the axis of that name, the lanes from the channel axis."""
        unblock = self._unblocking(call.args[0])
        layout = str(call.attrs.layout)
        if unblock is None or sorted(layout) != sorted("NCHW"):
            return call
        back = unblock.attrs.index_map
        into = back.inverse(get_static_shape(unblock.args[0].ty))
        for index, name in zip(into.final_indices[:-1], "NCHW"):
            axes = [a for a, var in enumerate(into.initial_indices) if _uses_var(index, var)]
            if axes != [layout.index(name)]:
                return call
        if _lane_axes(into) != [layout.index("C")]:
            return call
        attrs = call.attrs
        blocked = self.builder_.emit(
            relax.op.image.resize2d(
                unblock.args[0],
                call.args[1],
                roi=[float(value) for value in attrs.roi],
                layout=f"NCHW{CHANNEL_BLOCK}c",
                method=attrs.method,
                coordinate_transformation_mode=attrs.coordinate_transformation_mode,
                rounding_method=attrs.rounding_method,
                cubic_alpha=float(attrs.cubic_alpha),
                cubic_exclude=int(attrs.cubic_exclude),
                extrapolation_value=float(attrs.extrapolation_value),
                out_dtype=attrs.out_dtype,
            )
        )
        return relax.op.layout_transform(blocked, back)


def _use_counts(func: relax.Function) -> dict:
    counts: dict = {}

    def _visit(expr):
        if isinstance(expr, relax.Call):
            for arg in expr.args:
                if isinstance(arg, relax.Var):
                    counts[arg] = counts.get(arg, 0) + 1
                elif isinstance(arg, relax.Tuple):
                    for field in arg.fields:
                        if isinstance(field, relax.Var):
                            counts[field] = counts.get(field, 0) + 1

    relax.analysis.post_order_visit(func, _visit)
    return counts


def _fold_function(
    func: relax.Function, mod: tvm.IRModule, _ctx: tvm.transform.PassContext
) -> relax.Function:
    """``func``, a Relax function of ``mod``, with its layout transforms folded."""
    return _LayoutFolder(mod, _use_counts(func)).visit_expr(func)


@tvm.transform.module_pass(opt_level=0, name="FoldTextureLayoutTransforms")
class FoldTextureLayoutTransforms:  # pylint: disable=too-few-public-methods
    """Cancel inverse layout transforms and move transforms out of ``NCHW4c`` below
    elementwise ops, channel pads of whole blocks and resizes.

    Run after ``ConvertLayout``; see the module docstring.

    Returns
    -------
    ret : tvm.transform.Pass
        The pass.
    """

    def transform_module(self, mod: tvm.IRModule, _ctx: tvm.transform.PassContext) -> tvm.IRModule:
        """Rewrite every Relax function of ``mod``, then drop aliases and unused bindings."""
        mod = relax.transform.function_pass(
            _fold_function, opt_level=0, name="FoldTextureLayoutTransformsInFunctions"
        )(mod)
        # A cancelled pair leaves ``y = x``: the C++ scope annotation does not look through
        # such aliases (the producer would see no consumer and stay in a buffer).
        mod = relax.transform.CanonicalizeBindings()(mod)
        # ConvertLayout transforms a tensor once per use: merge the copies.
        mod = relax.transform.EliminateCommonSubexpr()(mod)
        return relax.transform.DeadCodeElimination()(mod)
