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
"""Gather the lanes of a vectorized texture store before the store is issued.

``TextureFlatten`` turns a write to the RGBA axis of a texture into one
``texture2d_store`` call inside a vectorized loop over the four channels. When
``VectorizeLoop`` cannot widen the stored value (for example, a strided read from
a local cache), it falls back to a scalar loop, and each iteration then writes
the *whole pixel* with one scalar: the pixel ends up holding the last channel's
value broadcast to all four channels.

This pass moves the value computation into a small local staging buffer, which
``VectorizeLoop`` handles like any other buffer store, and issues the texture
store once, after the loop, with a 4-lane load of that buffer.

The root cause is in C++ (``VectorizeLoop`` scalarizes ``texture2d_store``
without gathering its lanes); this pass keeps the lowering right until that is
fixed there.
"""

import tvm_ffi

import tvm
from tvm import tirx
from tvm.ir import Call, Op

_TEXTURE_STORE = Op.get("tirx.texture2d_store")


def _uses_var(expr, var) -> bool:
    found = []

    def _visit(node):
        if node.same_as(var):
            found.append(node)

    tvm_ffi.structural_walk(expr, [(tirx.Var, _visit)], order="post")
    return bool(found)


def _split_guarded_store(stmt):
    """Return (guards, store call) when ``stmt`` is ``if c0: if c1: ... texture2d_store``."""
    guards = []
    while isinstance(stmt, tirx.IfThenElse) and stmt.else_case is None:
        guards.append(stmt.condition)
        stmt = stmt.then_case
    if (
        isinstance(stmt, tirx.Evaluate)
        and isinstance(stmt.value, Call)
        and stmt.value.op.same_as(_TEXTURE_STORE)
    ):
        return guards, stmt.value
    return None, None


def _wrap_guards(guards, stmt):
    for cond in reversed(guards):
        stmt = tirx.IfThenElse(cond, stmt, None)
    return stmt


def _rewrite_loop(loop: tirx.For):
    if loop.kind != tirx.ForKind.VECTORIZED:
        return loop
    guards, store = _split_guarded_store(loop.body)
    if store is None or not isinstance(loop.extent, tirx.IntImm):
        return loop
    lanes = int(loop.extent.value)
    *address, value = store.args
    if any(_uses_var(arg, loop.loop_var) for arg in address + guards):
        # The loop walks over pixels, not over the channels of one pixel.
        return loop
    if not _uses_var(value, loop.loop_var) or not value.ty.is_scalar():
        return loop

    staging = tirx.decl_buffer((lanes,), value.ty.dtype, "texture_store_lanes", scope="local")
    gather = tirx.For(
        loop.loop_var,
        loop.min,
        loop.extent,
        tirx.ForKind.VECTORIZED,
        _wrap_guards(guards, tirx.BufferStore(staging, value, [loop.loop_var - loop.min])),
    )
    pixel = tirx.BufferLoad(staging, [tirx.Ramp(tirx.IntImm("int32", 0), 1, lanes)])
    issue = _wrap_guards(guards, tirx.Evaluate(Call(store.op, [*address, pixel], ret_ty=store.ty)))
    return tirx.SeqStmt([tirx.AllocBuffer(staging), gather, issue])


@tvm.tirx.transform.prim_func_pass(opt_level=0, name="VectorizeTextureStore")
class VectorizeTextureStore:
    """Stage the channels of vectorized ``texture2d_store`` calls through a local buffer.

    Run after ``FlattenBuffer`` and before ``VectorizeLoop``.
    """

    def transform_function(self, func, _mod, _ctx):  # pylint: disable=missing-function-docstring
        return tvm_ffi.structural_map(func, (tirx.For, _rewrite_loop), order="post")


def _scalar_texture_stores(func) -> int:
    count = 0

    def _visit(call):
        nonlocal count
        if call.op.same_as(_TEXTURE_STORE) and call.args[-1].ty.is_scalar():
            count += 1

    tvm_ffi.structural_walk(func, [(Call, _visit)], order="post")
    return count


@tvm.tirx.transform.prim_func_pass(opt_level=0, name="VerifyTextureStore")
class VerifyTextureStore:
    """Reject texture stores whose value is a scalar.

    ``texture2d_store`` writes a whole RGBA pixel. A scalar value means the schedule
    spread the four channels of a pixel over threads or over a loop that was not
    vectorized: every write then replaces the pixel with one channel broadcast to all
    four, a silently wrong result. Run after ``VectorizeLoop``.
    """

    def transform_function(self, func, _mod, _ctx):  # pylint: disable=missing-function-docstring
        count = _scalar_texture_stores(func)
        if count:
            name = (
                func.attrs["global_symbol"] if func.attrs and "global_symbol" in func.attrs else "?"
            )
            raise ValueError(
                f"{name}: {count} texture store(s) write a single channel into a 4-channel "
                "pixel; schedule the texture's last axis (extent 4) as a vectorized loop "
                "inside one thread (see dlight.adreno.Fallback)"
            )
        return func
