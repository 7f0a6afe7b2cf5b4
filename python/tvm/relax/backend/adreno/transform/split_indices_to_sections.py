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
"""Rewrite ``split`` at indices of 4-D tensors so that ``ConvertLayout`` blocks it right.

``ConvertLayout``'s rule for ``relax.split`` (C++ ``InferLayoutSplit`` in
``src/relax/op/tensor/manipulate.cc``) moves the split's axis into the new layout but keeps
``indices_or_sections`` as it was. Sections stay right in ``NCHW4c`` (C/4 blocks cut in the
same number of pieces), indices do not: they count channels, the blocked axis counts blocks of
4. ``split(conv, [64], axis=1)`` of a 128-channel conv output becomes a split of its 32
blocks at 64: one piece of 128 channels and an empty one, and the next conv fails type
inference ("the data channel size is 0"). YOLOv8's C2f block splits every stage this way.
When a piece is not a whole number of blocks the rule falls back to NCHW, which is right.

Before ``ConvertLayout``, a split of a 4-D tensor at static indices becomes:

- ``split(x, n)`` when its n pieces are equal (the same tensors): then blocked right;
- one ``strided_slice`` per piece when the pieces differ and each is a multiple of 4 (the
  same tensors): ``ConvertLayout`` keeps each slice in the original layout, which costs a
  layout transform but is right on any axis;
- itself otherwise: a piece that is not a whole number of blocks makes the rule fall back.
"""

import math

import tvm
from tvm import relax
from tvm.relax.dpl import is_op, rewrite_call, wildcard
from tvm.relax.transform import function_pass

_X = wildcard()
_SPLIT = is_op("relax.split")(_X)
_BLOCK = 4  # the channel block of NCHW4c


def _static_pieces(call: relax.Call, x: relax.Expr):
    """(axis, piece lengths) of a split of a static 4-D tensor at indices, or None."""
    indices = call.attrs.indices_or_sections
    ty = x.ty
    if isinstance(indices, tvm.tirx.IntImm) or not isinstance(ty, relax.TensorType):
        return None
    if ty.ndim != 4 or not isinstance(ty.shape, relax.ShapeExpr):
        return None
    axis = int(call.attrs.axis) % 4
    extent = ty.shape.values[axis]
    if not isinstance(extent, tvm.tirx.IntImm) or not indices:
        return None
    bounds = [0] + [int(i) for i in indices] + [int(extent)]
    if any(b <= a for a, b in zip(bounds, bounds[1:])):
        return None  # empty or clamped pieces: numpy's rules, left to the op as they are
    return axis, [b - a for a, b in zip(bounds, bounds[1:])]


def _rewrite_split(call: relax.Call, matches) -> relax.Expr:
    x = matches[_X]
    found = _static_pieces(call, x)
    if found is None:
        return call
    axis, pieces = found
    if len(set(pieces)) == 1:
        return relax.op.split(x, len(pieces), axis)
    if math.gcd(*pieces) % _BLOCK != 0:
        return call
    begins = [sum(pieces[:i]) for i in range(len(pieces))]
    slices = [relax.op.strided_slice(x, [axis], [b], [b + p]) for b, p in zip(begins, pieces)]
    return relax.Tuple(slices)


@function_pass(opt_level=0, name="SplitIndicesToSections")
class SplitIndicesToSections:  # pylint: disable=too-few-public-methods
    """Rewrite ``split`` of 4-D tensors at indices into sections or slices.

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
        return rewrite_call(_SPLIT, _rewrite_split, func)
