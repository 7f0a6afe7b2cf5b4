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
"""Tests of BalanceTextureScope and choose_texture_scope: the most square image that fits the
target's limits, global buffers for tensors that fit none or have dynamic shapes."""

import pytest

import tvm
import tvm.testing
from tvm import tirx
from tvm.relax.backend.adreno.transform import (
    BalanceTextureScope,
    TextureLimits,
    choose_texture_scope,
)
from tvm.script import ir as I
from tvm.script import relax as R
from tvm.script import tirx as T


@pytest.mark.parametrize(
    "shape, scope",
    [
        # texture: 32 x 32 x 16 layers; -weight would be 16384 x 1
        ((1, 16, 32, 32, 4), "global.texture"),
        # nhwc: 4096 x 2; texture: 4096 x 1; weight: 8192 x 1
        ((1, 2, 1, 4096, 4), "global.texture-nhwc"),
        # nhwc: 9 x 64 x 64 layers; weight would be 576 x 64
        ((64, 64, 3, 3, 4), "global.texture-nhwc"),
        # a 1x1 weight of 16384 filters: 4096 layers is too many for texture and nhwc
        ((4096, 4, 1, 1, 4), "global.texture-weight"),
        # exactly at the limit fits (the C++ pass refused a side equal to the limit)
        ((1, 1, 1, 16384, 4), "global.texture"),
        # no image fits: wider than 16384 in every scope
        ((1, 1, 1, 16385, 4), "global"),
        # not a pixel of 4 lanes
        ((1, 4, 8, 8, 3), "global"),
        ((4, 4), "global"),
    ],
)
def test_most_square_fitting_image_is_chosen(shape, scope):
    assert choose_texture_scope(shape, TextureLimits()) == scope


def test_dynamic_shape_stays_in_a_buffer():
    height = tirx.Var("h", "int64")
    assert choose_texture_scope((1, 4, height, 8, 4), TextureLimits()) == "global"


def test_smaller_limits_move_a_tensor_to_a_buffer():
    shape = (1, 16, 32, 32, 4)
    assert choose_texture_scope(shape, TextureLimits(spatial=16, depth=2048)) == "global"
    assert choose_texture_scope(shape, TextureLimits(spatial=32, depth=8)) == "global"


def test_limits_are_read_from_the_target():
    target = tvm.target.Target(
        {
            "kind": "opencl",
            "device": "adreno",
            "keys": ["adreno", "opencl", "gpu", "texture"],
            "texture_spatial_limit": 1024,
            "texture_depth_limit": 64,
        }
    )
    assert TextureLimits.from_target(target) == TextureLimits(spatial=1024, depth=64)


def test_pass_rescopes_a_one_row_weight_image_into_a_square_one():
    @I.ir_module
    class Before:
        I.module_global_infos(
            {
                "vdevice": [
                    I.vdevice("opencl", 0, "global"),
                    I.vdevice("opencl", 0, "global.texture-weight"),
                ]
            }
        )

        @T.prim_func(private=True, s_tir=True)
        def relu(
            x: T.Buffer((T.int64(1), T.int64(16), T.int64(32), T.int64(32), T.int64(4)), "float32"),
            y: T.Buffer((T.int64(1), T.int64(16), T.int64(32), T.int64(32), T.int64(4)), "float32"),
        ):
            for n, c, h, w, l in T.grid(T.int64(1), T.int64(16), T.int64(32), T.int64(32), 4):
                with T.sblock("relu"):
                    vn, vc, vh, vw, vl = T.axis.remap("SSSSS", [n, c, h, w, l])
                    y[vn, vc, vh, vw, vl] = T.max(x[vn, vc, vh, vw, vl], T.float32(0))

        @R.function
        def main(
            x: R.Tensor((1, 16, 32, 32, 4), "float32"),
        ) -> R.Tensor((1, 16, 32, 32, 4), "float32", "opencl:1:global.texture-weight"):
            cls = Before
            with R.dataflow():
                y = R.call_tir(
                    cls.relu,
                    (x,),
                    out_ty=R.Tensor(
                        (1, 16, 32, 32, 4), "float32", "opencl:1:global.texture-weight"
                    ),
                )
                R.output(y)
            return y

    @I.ir_module
    class Expected:
        I.module_global_infos(
            {
                "vdevice": [
                    I.vdevice("opencl", 0, "global"),
                    I.vdevice("opencl", 0, "global.texture-weight"),
                    I.vdevice("opencl", 0, "global.texture"),
                ]
            }
        )

        @T.prim_func(private=True, s_tir=True)
        def relu(
            x: T.Buffer((T.int64(1), T.int64(16), T.int64(32), T.int64(32), T.int64(4)), "float32"),
            y: T.Buffer((T.int64(1), T.int64(16), T.int64(32), T.int64(32), T.int64(4)), "float32"),
        ):
            for n, c, h, w, l in T.grid(T.int64(1), T.int64(16), T.int64(32), T.int64(32), 4):
                with T.sblock("relu"):
                    vn, vc, vh, vw, vl = T.axis.remap("SSSSS", [n, c, h, w, l])
                    y[vn, vc, vh, vw, vl] = T.max(x[vn, vc, vh, vw, vl], T.float32(0))

        @R.function
        def main(
            x: R.Tensor((1, 16, 32, 32, 4), "float32"),
        ) -> R.Tensor((1, 16, 32, 32, 4), "float32", "opencl:2:global.texture"):
            cls = Expected
            with R.dataflow():
                y = R.call_tir(
                    cls.relu,
                    (x,),
                    out_ty=R.Tensor((1, 16, 32, 32, 4), "float32", "opencl:2:global.texture"),
                )
                R.output(y)
            return y

    target = tvm.target.Target("qcom/adreno-opencl-texture")
    tvm.ir.assert_structural_equal(BalanceTextureScope(target)(Before), Expected)


if __name__ == "__main__":
    tvm.testing.main()
