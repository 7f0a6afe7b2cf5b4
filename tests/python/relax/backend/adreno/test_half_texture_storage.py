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
# pylint: disable=invalid-name,missing-docstring,not-callable
"""Tests of HalfTextureStorage: planned float32 image storage becomes half pixels."""

import numpy as np
import tvm_ffi

import tvm
import tvm.testing
from tvm import relax
from tvm.relax.backend.adreno.transform import HalfTextureStorage, half_storage_decisions
from tvm.relax.backend.adreno.transform.half_texture_storage import round_to_half
from tvm.relax.op import vm as vm_op
from tvm.script import tirx as T

TARGET = tvm.target.Target("opencl")
TEXTURE = relax.VDevice(TARGET, 0, "global.texture")
GLOBAL = relax.VDevice(TARGET, 0, "global")
TEXTURE_HALF = relax.VDevice(TARGET, 0, "global.texture-half")
TEX = "global.texture"
SHAPE = [1, 1, 2, 2, 4]  # global.texture: 2 x 2 pixels, 1 layer


@T.prim_func(private=True)
def kernel(a: T.Buffer((1, 1, 2, 2, 4), "float32"), b: T.Buffer((1, 1, 2, 2, 4), "float32")):
    for i, j, k in T.grid(2, 2, 4):
        b[0, 0, i, j, k] = a[0, 0, i, j, k]


@T.prim_func(private=True)
def kernel_rounding_to_half(
    a: T.Buffer((1, 1, 2, 2, 4), "float32"), b: T.Buffer((1, 1, 2, 2, 4), "float32")
):
    for i, j, k in T.grid(2, 2, 4):
        bits = T.uint32()
        b[0, 0, i, j, k] = T.Let(
            T.reinterpret(
                "float32",
                T.bitwise_and(
                    bits
                    + T.uint32(0xFFF)
                    + T.bitwise_and(T.shift_right(bits, T.uint32(13)), T.uint32(1)),
                    T.uint32(0xFFFFE000),
                ),
            ),
            where={bits: T.reinterpret("uint32", a[0, 0, i, j, k])},
        )


def _tensor_type(vdevice, dtype="float32"):
    return relax.TensorType(SHAPE, dtype, vdevice)


def _module(half: bool, extern_use: bool = False):
    """``main`` as PlanTextureStorage leaves it: x (buffer) -> t0 (image) -> out (buffer);
    with ``half``, as HalfTextureStorage should leave it; with ``extern_use``, t0 is also
    passed to a packed function."""
    bb = relax.BlockBuilder()
    gv = bb.add_func(kernel, "k")
    # A kernel writing a half image rounds to nearest itself (a copy: k also writes "out").
    writes_half = bb.add_func(kernel_rounding_to_half, "k_half_store") if half else gv
    dtype = "float32"
    x = relax.Var("x", _tensor_type(GLOBAL, dtype))
    texture = TEXTURE_HALF if half else TEXTURE
    index = 2 if half else 0
    storage_dtype, storage_scope = ("float16", "global.texture-half") if half else (dtype, TEX)
    with bb.function("main", [x]):
        image = bb.emit(
            vm_op.alloc_storage(relax.ShapeExpr([1, 2, 2, 4]), 0, storage_dtype, storage_scope),
            "texture_storage",
        )
        t0 = relax.Var("t0", _tensor_type(texture, dtype))
        bb.emit_normalized(
            relax.VarBinding(
                t0,
                bb.normalize(
                    relax.op.memory.alloc_tensor(image, 0, relax.ShapeExpr(SHAPE), dtype, index)
                ),
            )
        )
        bb.emit(relax.Call(writes_half, [x, t0]))
        if extern_use:
            bb.emit(relax.Call(relax.ExternFunc("test.reads_bytes"), [t0]))
        out = bb.emit(
            relax.op.builtin.alloc_tensor(relax.ShapeExpr(SHAPE), dtype, 1, "global"), "out"
        )
        bb.emit(relax.Call(gv, [t0, out]))
        bb.emit_func_output(out)
    mod = bb.get()
    vdevices = [TEXTURE, GLOBAL] + ([TEXTURE_HALF] if half else [])
    mod.update_global_info("vdevice", vdevices)
    return mod


def test_planned_image_becomes_half():
    """The image storage is float16 in global.texture-half; its tensor stays float32 and
    names the -half virtual device (appended: the others keep their indices); the buffer and
    the kernel are untouched."""
    after = HalfTextureStorage(enabled=True)(_module(half=False))
    tvm.ir.assert_structural_equal(after, _module(half=True))


def test_off_by_default():
    """Off unless enabled or the PassContext option relax.adreno.float16_storage is true."""
    before = _module(half=False)
    tvm.ir.assert_structural_equal(HalfTextureStorage()(before), before)
    tvm.ir.assert_structural_equal(HalfTextureStorage(enabled=False)(before), before)


def test_the_pass_context_option_turns_it_on_when_the_pass_runs():
    before = _module(half=False)
    half_storage = HalfTextureStorage()  # made outside the context: read when it runs
    assert (
        tvm.transform.PassContext.list_configs()["relax.adreno.float16_storage"]["type"] == "bool"
    )
    with tvm.transform.PassContext(config={"relax.adreno.float16_storage": True}):
        tvm.ir.assert_structural_equal(half_storage(before), _module(half=True))
    with tvm.transform.PassContext(config={"relax.adreno.float16_storage": False}):
        tvm.ir.assert_structural_equal(half_storage(before), before)


def test_texture_read_by_a_packed_function_stays_float32():
    """A packed function may read the image's bytes as float32: the storage stays as it is,
    and the decision says why."""
    before = _module(half=False, extern_use=True)
    tvm.ir.assert_structural_equal(HalfTextureStorage(enabled=True)(before), before)
    reasons = {d.name: d.reason for d in half_storage_decisions(before)["main"]}
    assert reasons == {"t0": "non-kernel", "out": "buffer"}


def test_decisions_name_half_and_buffer_tensors():
    reasons = {d.name: d.reason for d in half_storage_decisions(_module(half=False))["main"]}
    assert reasons == {"t0": "half", "out": "buffer"}


def test_round_to_half_is_round_to_nearest_even():
    """round_to_half gives numpy's float16 rounding (nearest, ties to even) on the float16
    normal range: random values, the exact ties between two halves, and halves themselves."""
    rng = np.random.default_rng()
    halves = rng.uniform(-60000, 60000, 4096).astype(np.float16).astype(np.float32)
    halves = halves[np.abs(halves) >= 2.0**-14]
    # The float32 midway between each half and the next one up in magnitude: a tie.
    toward = np.where(halves > 0, np.inf, -np.inf).astype(np.float16)
    next_up = np.nextafter(halves.astype(np.float16), toward)
    ties = ((halves.astype(np.float64) + next_up.astype(np.float64)) / 2).astype(np.float32)
    values = np.concatenate(
        [
            rng.uniform(-1, 1, 4096).astype(np.float32) * 10.0 ** rng.integers(-4, 4, 4096),
            ties[np.isfinite(ties)],
            halves,
        ]
    ).astype(np.float32)
    n = values.size

    @T.prim_func
    def rounding(a: T.Buffer((n,), "float32"), b: T.Buffer((n,), "float32")):
        for i in range(n):
            b[i] = a[i]

    def _round(store):
        return tvm.tirx.BufferStore(store.buffer, round_to_half(store.value), store.indices)

    func = tvm_ffi.structural_map(rounding, (tvm.tirx.BufferStore, _round), order="post")
    lib = tvm.compile(tvm.IRModule({"main": func}), target="llvm")
    out = tvm.runtime.empty((n,), "float32", tvm.cpu())
    lib["main"](tvm.runtime.tensor(values), out)
    expected = values.astype(np.float16).astype(np.float32)
    normal = np.abs(values) >= 2.0**-14
    np.testing.assert_array_equal(out.numpy()[normal], expected[normal])
    # Ties went to the even neighbour, not always up: some stay at the half below them.
    tie_part = out.numpy()[4096 : 4096 + int(np.isfinite(ties).sum())]
    assert (np.abs(tie_part) < np.abs(ties[np.isfinite(ties)])).any()


if __name__ == "__main__":
    tvm.testing.main()
