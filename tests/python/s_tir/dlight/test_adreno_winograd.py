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
"""Tests of dlight.adreno.Winograd: each annotated Winograd stage gets its schedule, and the
workloads of the other Adreno rules are declined."""

import pytest

import tvm
import tvm.testing
from tvm import tirx
from tvm.s_tir import dlight as dl

from adreno_schedule_testing import (
    block_names,
    fused_prim_funcs,
    loops,
    only,
    thread_extents,
    vectorized_extents,
)

TARGET = tvm.target.Target("qcom/adreno-opencl-texture")


def _schedule(func):
    sch = dl.adreno.Winograd().apply(func, TARGET, False)
    return None if sch is None else sch.mod["main"]


def _stages(tile=4):
    """The PrimFuncs of an F(tile x tile, 3x3) conv of 256 channels on an 8x8 map, by stage."""
    with tvm.transform.PassContext(config={"relax.adreno.winograd": str(tile)}):
        funcs = fused_prim_funcs((1, 64, 8, 8, 4), (64, 256, 3, 3, 4))
    stages = {}
    for name, func in funcs.items():
        for stage in ("weight_transform", "input_transform", "batched_product"):
            if stage in name:
                stages[stage] = func
        if name.startswith("conv2d_NCHWc_OIHWo_winograd"):
            stages["output_transform"] = func
    assert len(stages) == 4, list(funcs)
    return stages


@pytest.mark.parametrize("tile", [2, 4])
def test_input_transform_is_one_thread_per_channel_texel_and_tile(tile):
    """64 channel texels x (8 / tile)^2 tiles, the padding inlined, whole texels written."""
    func = _schedule(_stages(tile)["input_transform"])
    tiles = (8 // tile) ** 2
    assert thread_extents(func) == {"blockIdx.x": 64 * tiles // 64, "threadIdx.x": 64}
    assert vectorized_extents(func) == [4]
    assert not [name for name in block_names(func) if name.endswith("pad")]


def test_batched_product_reads_pixels_and_accumulates_texels():
    func = _schedule(_stages()["batched_product"])
    # 6 x 6 points x 64 output texels x 4 tiles
    assert thread_extents(func) == {"blockIdx.x": 36 * 64 * 4 // 64, "threadIdx.x": 64}
    # the V pixel read, the product's lanes, the init, the store
    assert vectorized_extents(func) == [4, 4, 4, 4]


def test_output_transform_loops_over_the_tile_without_unrolling():
    """Unrolled texture stores with staged lanes are miscompiled (CodeGenC SSA cache), so the
    tile loops must stay serial."""
    func = _schedule(_stages()["output_transform"])
    assert thread_extents(func) == {"blockIdx.x": 64 * 4 // 64, "threadIdx.x": 64}
    assert vectorized_extents(func) == [4]
    assert not [loop for loop in loops(func) if loop.kind == tirx.ForKind.UNROLLED]


def test_weight_transform_is_left_to_other_rules():
    """It carries no stage annotation (constant weights fold it at compile time)."""
    assert _schedule(_stages()["weight_transform"]) is None


@pytest.mark.parametrize(
    "weight, groups",
    [((8, 16, 3, 3, 4), 1), ((4, 1, 3, 3, 4), 16), ((4, 4, 3, 3, 4), 4)],
    ids=["direct", "depthwise", "group"],
)
def test_other_convs_are_declined(weight, groups):
    assert _schedule(only(fused_prim_funcs((1, 4, 8, 8, 4), weight, groups=groups))) is None


def test_reduction_is_declined():
    data = tvm.te.placeholder((1, 4, 8, 8, 4), "float32", name="x")
    func = tvm.te.create_prim_func([data, tvm.topi.sum(data, axis=[2, 3])])
    assert _schedule(func) is None


if __name__ == "__main__":
    tvm.testing.main()
