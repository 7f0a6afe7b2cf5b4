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
"""Read the zero padding around a texture from the image sampler instead of testing for it.

A convolution's zero padding, inlined into its input read, reads the input texture under a
guard: ``if_then_else(1 <= h and h < H + 1 and 1 <= w and w < W + 1, texture[h - 1, w - 1],
0)``. The OpenCL code generator reads every image with a ``CLK_ADDRESS_CLAMP`` sampler, which
returns the border color for a pixel outside the image's width or height, and the border
color of an RGBA image is zero in all four channels. A guard term that only says "this pixel
is inside the image" is therefore already done by the sampler, and this pass drops it, so the
read costs no comparisons and branches (the "padding through the sampler" of MNN's and
TFLite's image kernels).

The pass takes a term only when it is exactly one of ``x >= 0``, ``x < width``, ``y >= 0``,
``y < height`` for the read's image coordinates ``x, y`` (after moving a constant between its
sides), with the width and height of the image that holds the kernel parameter read; the
else value must be zero. Terms on the layer coordinate stay (an image array clamps its layer
index instead of returning the border), and so does any other term.

It relies on two things of the device:

* each texture argument is an image of its tensor's own extent (the OpenCL runtime allocates
  a texture tensor, or a view of flat storage, as an image of exactly that geometry);
* its OpenCL driver returns the border for a read outside the image, as the standard says.
  Intel's CPU OpenCL runtime (2026.2) does not: it crashes on such reads.

So the pass is an opt-in optimization, at ``opt_level`` 4 above the default pipeline's:
compile with ``tvm.transform.PassContext(opt_level=3,
required_pass=["TextureBorderPadding"])`` (or ``opt_level=4``) for a device that honours the
border. It runs after ``TextureFlatten`` (which makes the ``texture2d_load`` calls) and before
``SplitHostDevice`` (the parameters' shapes are needed).
"""

from typing import List, Optional, Tuple

import tvm_ffi

import tvm
from tvm import tirx
from tvm.ir import Call, Expr, Op
from tvm.sym import Analyzer

from ..texture import TEXTURE_SCOPES, image_extent

_TEXTURE_LOAD = Op.get("tirx.texture2d_load")
_IF_THEN_ELSE = Op.get("prim.if_then_else")


def _image_sizes(func: tirx.PrimFunc) -> List[Tuple[Expr, Tuple[int, int]]]:
    """(data pointer, (width, height)) of each texture parameter with a static shape."""
    sizes = []
    for param in func.params:
        if not isinstance(param.ty, tirx.BufferType):
            continue
        scope = str(param.scope())
        shape = param.shape
        if scope not in TEXTURE_SCOPES or not all(isinstance(d, tirx.IntImm) for d in shape):
            continue
        width, height, _ = image_extent([int(dim) for dim in shape], scope)
        sizes.append((param.data, (width, height)))
    return sizes


def _image_size(pointer: Expr, sizes) -> Optional[Tuple[int, int]]:
    return next((size for data, size in sizes if tvm_ffi.structural_equal(data, pointer)), None)


def _conjuncts(cond: Expr) -> List[Expr]:
    if isinstance(cond, tirx.And):
        return _conjuncts(cond.a) + _conjuncts(cond.b)
    return [cond]


def _is_zero(expr: Expr) -> bool:
    if isinstance(expr, tirx.Broadcast):
        expr = expr.value
    return isinstance(expr, (tirx.FloatImm, tirx.IntImm)) and expr.value == 0


def _is_inside_test(term: Expr, coord: Expr, size: int, analyzer: Analyzer) -> bool:
    """Whether ``term`` is ``coord >= 0`` or ``coord < size`` up to a constant on both sides."""

    def _offset(expr) -> Optional[int]:  # expr - coord, when it is a constant
        diff = analyzer.simplify(expr - coord)
        return int(diff.value) if isinstance(diff, tirx.IntImm) else None

    if isinstance(term, (tirx.LE, tirx.LT)):
        lower, upper = term.a, term.b
        strict = isinstance(term, tirx.LT)
    elif isinstance(term, (tirx.GE, tirx.GT)):
        lower, upper = term.b, term.a
        strict = isinstance(term, tirx.GT)
    else:
        return False
    if isinstance(lower, tirx.IntImm):  # lower <= coord + d  <=>  coord >= lower - d
        offset = _offset(upper)
        bound = None if offset is None else int(lower.value) - offset + int(strict)
        return bound == 0
    if isinstance(upper, tirx.IntImm):  # coord + d < upper  <=>  coord < upper - d
        offset = _offset(lower)
        bound = None if offset is None else int(upper.value) - offset + int(not strict)
        return bound == size
    return False


def _strip_guard(call: Call, sizes, analyzer: Analyzer) -> Call:
    if not call.op.same_as(_IF_THEN_ELSE) or not _is_zero(call.args[2]):
        return call
    load = call.args[1]
    if not (isinstance(load, Call) and load.op.same_as(_TEXTURE_LOAD)):
        return call
    size = _image_size(load.args[0], sizes)
    if size is None:
        return call
    coords = ((load.args[1], size[0]), (load.args[2], size[1]))
    terms = _conjuncts(call.args[0])
    kept = [
        term
        for term in terms
        if not any(_is_inside_test(term, coord, extent, analyzer) for coord, extent in coords)
    ]
    if len(kept) == len(terms):
        return call
    if not kept:
        return load
    return Call(call.op, [tirx.all(*kept), load, call.args[2]], ret_ty=call.ty)


@tvm.tirx.transform.prim_func_pass(opt_level=4, name="TextureBorderPadding")
class TextureBorderPadding:
    """Drop the guard terms of a zero-padded texture read that the image sampler's border
    already implies (see the module docstring). Opt-in: ``opt_level`` 4."""

    def transform_function(self, func, _mod, _ctx):  # pylint: disable=missing-function-docstring
        sizes = _image_sizes(func)
        if not sizes:
            return func
        analyzer = Analyzer()
        return tvm_ffi.structural_map(
            func, (Call, lambda call: _strip_guard(call, sizes, analyzer)), order="post"
        )
