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
"""Texture stores write four distinct channels per pixel (VectorizeTextureStore)."""

import numpy as np
import pytest
import tvm_ffi

import tvm
from tvm import relax
from tvm.ir import Call, Op

import texture_testing as tt

TEXTURE_TARGET = tvm.target.Target("qcom/adreno-opencl-texture", host="llvm")
TEXTURE_STORE = Op.get("tirx.texture2d_store")


def _pack_module(dtype="float32", shape=(1, 16, 14, 14)):
    """NCHW input -> NCHW4c texture (a conv2d's input) -> back: the packing kernel is under test."""
    builder = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType(shape, dtype))
    w = relax.Var("w", relax.TensorType((8, shape[1], 1, 1), dtype))
    with builder.function("main", [x, w]):
        with builder.dataflow():
            y = builder.emit_output(relax.op.nn.conv2d(x, w))
        builder.emit_func_output(y)
    return builder.get()


def _lowered_tir(mod):
    with TEXTURE_TARGET:
        mod = relax.backend.adreno.get_default_pipeline(TEXTURE_TARGET)(mod)
    prim_funcs = {
        gv: func.with_attr("global_symbol", gv.name_hint)
        for gv, func in mod.functions.items()
        if isinstance(func, tvm.tirx.PrimFunc)
    }
    tir_mod = tvm.tirx.transform.BindTarget(TEXTURE_TARGET)(tvm.IRModule(prim_funcs))
    lowering, _, _ = tvm.tirx.get_tir_pipeline("adreno")
    return lowering(tir_mod)


def _texture_store_values(tir_mod):
    values = []

    def _visit(call):
        if call.op.same_as(TEXTURE_STORE):
            values.append(call.args[-1])

    tvm_ffi.structural_walk(tir_mod, [(Call, _visit)], order="post")
    return values


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_every_texture_store_writes_a_full_pixel(dtype):
    values = _texture_store_values(_lowered_tir(_pack_module(dtype)))
    assert values, "the texture path was not taken: no texture2d_store in the lowered module"
    for value in values:
        # A scalar here means each loop iteration overwrote the whole pixel with one channel.
        assert str(value.ty) == f"{dtype}x4", value


@pytest.mark.requires_opencl
def test_packed_texture_holds_every_channel(rng):
    x = rng.uniform(0.5, 1.5, size=(1, 16, 14, 14)).astype("float32")
    x *= rng.choice([-1.0, 1.0], size=x.shape).astype("float32")
    w = rng.uniform(-1.0, 1.0, size=(8, 16, 1, 1)).astype("float32")
    expected = np.einsum("nchw,oc->nohw", x, w[:, :, 0, 0])

    dev = tt.tvm_device()
    vm = relax.VirtualMachine(tvm.compile(_pack_module(), target=TEXTURE_TARGET), dev)
    out = vm["main"](tvm.runtime.tensor(x, dev), tvm.runtime.tensor(w, dev)).numpy()
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
