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
# pylint: disable=invalid-name,missing-docstring,no-self-argument,not-callable
"""Tests of the Adreno texture store passes: VectorizeTextureStore stages the lanes of a pixel,
VerifyTextureStore rejects a texture store of a single channel."""

import pytest
import tvm_ffi

import tvm
import tvm.testing
from tvm import tirx
from tvm.s_tir.backend.adreno.transform import VectorizeTextureStore, VerifyTextureStore
from tvm.script import tirx as T


def _vectorize_texture_store(func):
    return VectorizeTextureStore()(tvm.IRModule({"main": func}))["main"]


def test_lanes_of_a_strided_value_are_staged_and_stored_once():
    @T.prim_func(private=True)
    def before(tex: T.handle, src: T.Buffer((16,), "float32")):
        for lane in T.vectorized(4):
            T.evaluate(T.call_intrin("handle", "tirx.texture2d_store", tex, 1, 2, src[lane * 4]))

    @T.prim_func(private=True)
    def expected(tex: T.handle, src: T.Buffer((16,), "float32")):
        texture_store_lanes = T.alloc_local((4,))
        for lane in T.vectorized(4):
            texture_store_lanes[lane] = src[lane * 4]
        T.evaluate(
            T.call_intrin(
                "handle", "tirx.texture2d_store", tex, 1, 2, texture_store_lanes[T.Ramp(0, 1, 4)]
            )
        )

    tvm.ir.assert_structural_equal(_vectorize_texture_store(before), expected)


def test_bound_check_guards_both_the_staging_and_the_store():
    @T.prim_func(private=True)
    def before(tex: T.handle, src: T.Buffer((16,), "float32"), n: T.int32):
        for lane in T.vectorized(4):
            if n > 3:
                T.evaluate(
                    T.call_intrin("handle", "tirx.texture2d_store", tex, 1, 2, src[lane * 4])
                )

    @T.prim_func(private=True)
    def expected(tex: T.handle, src: T.Buffer((16,), "float32"), n: T.int32):
        texture_store_lanes = T.alloc_local((4,))
        for lane in T.vectorized(4):
            if n > 3:
                texture_store_lanes[lane] = src[lane * 4]
        if n > 3:
            T.evaluate(
                T.call_intrin(
                    "handle",
                    "tirx.texture2d_store",
                    tex,
                    1,
                    2,
                    texture_store_lanes[T.Ramp(0, 1, 4)],
                )
            )

    tvm.ir.assert_structural_equal(_vectorize_texture_store(before), expected)


def test_loop_over_pixels_is_kept():
    """The loop variable is in the address: each iteration writes a pixel of its own."""

    @T.prim_func(private=True)
    def before(tex: T.handle, src: T.Buffer((16,), "float32")):
        for x in T.vectorized(4):
            T.evaluate(T.call_intrin("handle", "tirx.texture2d_store", tex, x, 0, src[x * 4]))

    tvm.ir.assert_structural_equal(_vectorize_texture_store(before), before)


def _lower_vectors(func, stage_lanes):
    passes = [VectorizeTextureStore()] if stage_lanes else []
    passes += [tirx.transform.VectorizeLoop(), VerifyTextureStore()]
    return tvm.transform.Sequential(passes)(tvm.IRModule({"main": func}))


@T.prim_func
def strided_pixel(tex: T.handle, src: T.Buffer((16,), "float32")):
    T.func_attr({"global_symbol": "strided_pixel"})
    for lane in T.vectorized(4):
        T.evaluate(T.call_intrin("handle", "tirx.texture2d_store", tex, 1, 2, src[lane * 4]))


def test_staged_store_writes_a_four_lane_value():
    stores = []

    def _visit(call):
        if call.op.same_as(tvm.ir.Op.get("tirx.texture2d_store")):
            stores.append(str(call.args[-1].ty))

    mod = _lower_vectors(strided_pixel, stage_lanes=True)
    tvm_ffi.structural_walk(mod, [(tvm.ir.Call, _visit)], order="post")
    assert stores == ["float32x4"]


def test_single_channel_store_is_an_error_naming_the_function():
    """Without the staging VectorizeLoop scalarizes the store: a serial loop of writes of the
    whole pixel, one channel each."""
    with pytest.raises(ValueError, match="strided_pixel: 1 texture store.*single channel"):
        _lower_vectors(strided_pixel, stage_lanes=False)


if __name__ == "__main__":
    tvm.testing.main()
