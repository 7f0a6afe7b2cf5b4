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
# pylint: disable=missing-docstring
"""Tests of dlight.adreno.DepthwisePointwiseConv2d: a depthwise conv and the 1x1 conv reading
it, fused by FuseDepthwisePointwise, as one kernel."""

import dataclasses

import pytest

import tvm
import tvm.testing
from tvm.s_tir import dlight as dl
from tvm.s_tir.dlight.adreno.config import DepthwisePointwiseConfig

from adreno_schedule_testing import (
    alloc_scopes,
    block_names,
    depthwise_pointwise_prim_func,
    fused_prim_funcs,
    only,
    thread_extents,
)

# The decisions asserted here are those for the desktop GPU the knobs were measured on (132
# compute units, waves of 32).
TARGET = tvm.target.Target("qcom/adreno-opencl-texture")


def _config(**knobs):
    """TARGET's config with the desktop GPU's facts and ``knobs`` changed."""
    config = DepthwisePointwiseConfig.from_target(TARGET)
    return dataclasses.replace(config, compute_units=132, wave_size=32, **knobs)


TEXTURE = "global.texture"


def _schedule(func, config=None):
    sch = dl.adreno.DepthwisePointwiseConv2d(config or _config()).apply(func, TARGET, False)
    return None if sch is None else sch.mod["main"]


@pytest.mark.parametrize("stride", [1, 2])
def test_depthwise_result_stays_in_registers(stride):
    """One loop nest bound to threads; the depthwise result, its input row and weights live in
    ``local`` buffers, none in ``global``; the padding and ReLU6 blocks are inlined."""
    func = depthwise_pointwise_prim_func(16, 8, 8, stride=stride, data_scope=TEXTURE)
    scheduled = _schedule(func, _config(share_depthwise=False))
    assert scheduled is not None
    assert set(thread_extents(scheduled)) == {"blockIdx.x", "threadIdx.x"}
    assert alloc_scopes(scheduled) == {"local"}
    names = block_names(scheduled)
    assert not [n for n in names if n.endswith("pad") or n.startswith("compute")], names


def test_work_items_cover_the_pointwise_outputs():
    """The 1x1 conv's tile decides the work items, as for Conv2d without split-K: 2 output
    channel blocks (8 channels) x 64 pixels, one texel each at so few items."""
    func = depthwise_pointwise_prim_func(16, 8, 8, data_scope=TEXTURE)
    scheduled = _schedule(func, _config(split_k=16, share_depthwise=False))
    assert thread_extents(scheduled) == {"blockIdx.x": 1, "threadIdx.x": 128}


def test_shared_depthwise_once_per_group():
    """With ``share_depthwise`` (the default) the depthwise result lives in local memory
    (``shared``) and a work group holds every output channel tile of its pixels: 64 output
    channels at one block a tile (the occupancy guard on 256 pixels) are 16 tiles, so 8 pixels
    of a 16-wide row per group of 128 threads, 32 groups."""
    func = depthwise_pointwise_prim_func(32, 16, 64, data_scope=TEXTURE)
    scheduled = _schedule(func)
    assert alloc_scopes(scheduled) == {"local", "shared"}
    assert thread_extents(scheduled) == {"blockIdx.x": 32, "threadIdx.x": 128}


def test_shared_falls_back_when_tiles_exceed_a_group():
    """More output channel tiles than a work group has threads: no group can hold them all,
    and the rule keeps the depthwise result in registers."""
    func = depthwise_pointwise_prim_func(16, 8, 1024, data_scope=TEXTURE)
    config = _config(share_depthwise=True, threads=64)
    scheduled = _schedule(func, config)
    assert alloc_scopes(scheduled) == {"local"}
    registers = _config(threads=64, share_depthwise=False)
    tvm.ir.assert_structural_equal(scheduled, _schedule(func, registers))


def test_depthwise_input_in_a_buffer_is_declined():
    """Work items past the output's end compute a depthwise result unguarded: only an image
    read, which clamps, may do that."""
    assert _schedule(depthwise_pointwise_prim_func(16, 8, 8)) is None


def test_single_convolutions_are_declined():
    assert _schedule(only(fused_prim_funcs((1, 4, 8, 8, 4), (8, 16, 1, 1, 4)))) is None
    assert _schedule(only(fused_prim_funcs((1, 4, 8, 8, 4), (4, 1, 3, 3, 4), groups=16))) is None


def test_tuner_searches_the_pointwise_knobs():
    """MetaSchedule's Adreno space tries the 1x1 rule's knobs on the fused workload: distinct
    candidates, the rule's default first."""
    # pylint: disable-next=import-outside-toplevel
    from tvm.s_tir.meta_schedule import adreno as msa

    rule = dl.adreno.DepthwisePointwiseConv2d()
    space = msa.knob_space(rule, TARGET)
    assert space[0] == DepthwisePointwiseConfig.from_target(TARGET) and len(space) > 1
    assert {config.share_depthwise for config in space} == {False, True}
    workload = tvm.IRModule({"main": depthwise_pointwise_prim_func(32, 16, 32, data_scope=TEXTURE)})
    found = msa.candidates(workload, TARGET, [rule], max_candidates=3)
    assert [c.rule for c in found] == ["DepthwisePointwiseConv2d"] * 3
    default = _schedule(workload["main"])
    tvm.ir.assert_structural_equal(found[0].schedule.mod["main"], default)


if __name__ == "__main__":
    tvm.testing.main()
