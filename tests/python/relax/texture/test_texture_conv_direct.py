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
"""The direct NCHW4c convolution schedule (``dl.adreno.Conv2d``).

The rule gives each work item a tile of output channel blocks x output columns, shrunk by the
occupancy guard when the layer has few work items, reads the input row under the tile once per
kernel row (a sliding window) and computes the input padding inside the conv's read. Each case
runs with the default knobs (small test shapes: the guard shrinks the tile to one pixel), with
the largest tile and the guard off, with a tile of odd columns, never and most split across
threads (split-K, for deep layers with few outputs), with work groups that stage the input
(and the weights) of each step in local memory, split or not, and must equal the float32
LLVM build on fresh random inputs; the padded input must not be written by a kernel of its own.
"""

import re

import pytest

from tvm import relax
from tvm.s_tir.dlight.adreno import config as rule_config
from tvm.s_tir.dlight.adreno import convolution as conv_rule

import texture_testing as tt


def _conv(
    channels, out_channels, size, kernel=3, stride=1, epilogue=False, residual=False, batch=1
):
    def network(net):
        x = net.input((batch, channels, size, size))
        y = net.conv2d(x, out_channels, kernel, stride)
        y = net.emit(relax.op.nn.relu(net.bias(y))) if epilogue else y
        return net.emit(relax.op.add(y, x)) if residual else y

    return network


CASES = {
    # A deep reduction on a 7x7 map; 49 * 8 threads leave a partial last work group, and
    # with 8 blocks per thread the 49 threads are a single work group.
    "pointwise_64_32_7x7": tt.Case(_conv(64, 32, 7, kernel=1)),
    # 12 channel blocks: 4 per thread at most; 3 * 25 threads in one work group.
    "pointwise_16_48_5x5": tt.Case(_conv(16, 48, 5, kernel=1)),
    # Strided 3x3 with zero padding on an odd map (padding read inside the conv).
    "3x3_stride2_16_32_15x15": tt.Case(_conv(16, 32, 15, stride=2)),
    # The image stem: 3 channels padded to 4, 7x7 stride 2 with padding 3.
    "stem_7x7_stride2_3_32": tt.Case(_conv(3, 32, 20, kernel=7, stride=2)),
    # Two images: a work group of whole rows stays within one image.
    "3x3_batch2_8_16_6x6": tt.Case(_conv(8, 16, 6, batch=2)),
    # Bias and ReLU fused into the conv kernel.
    "3x3_bias_relu_8_48": tt.Case(_conv(8, 48, 9, epilogue=True)),
    # A 1x1 conv (no padding block) whose input also feeds the fused residual add.
    "pointwise_bias_relu_residual_16": tt.Case(_conv(16, 16, 8, 1, epilogue=True, residual=True)),
    # Deep layers with few outputs: the input channels split across threads (split-K), 4 ways
    # for the 1x1, 8 for the 3x3 (whose residual is read in the write-back of the partials).
    "split_k_pointwise_256_32_7x7": tt.Case(_conv(256, 32, 7, kernel=1)),
    "split_k_3x3_bias_relu_residual_64_7x7": tt.Case(
        _conv(64, 64, 7, epilogue=True, residual=True)
    ),
    # A split layer of an even height: the row tiles of a split work group.
    "split_k_3x3_64_32_8x8": tt.Case(_conv(64, 32, 8)),
}


# The knob extremes: the guard off and the largest tile (with the default split of the input
# channels: a tile of 32 pixels per thread in the write-back), the kernel window unrolled; a
# 3-column tile (widths 6, 9, 15); one pixel, never split; the most split (16 ways where the
# channels allow), unrolled.
TILES = {
    "default": None,
    "largest_tile": rule_config.Conv2dConfig(
        channel_blocks=8,
        columns=4,
        pointwise_columns=4,
        occupancy_waves=(),
        unroll_window=True,
    ),
    "three_columns": rule_config.Conv2dConfig(
        channel_blocks=2, columns=3, pointwise_columns=3, occupancy_waves=()
    ),
    "one_pixel": rule_config.Conv2dConfig(channel_blocks=1, columns=1, split_k=1),
    "split_k_16": rule_config.Conv2dConfig(split_k=16, split_k_waves=16, unroll_window=True),
    # Work groups of whole rows staging each step's input in local memory, never split; and
    # with the weights staged too, a 3-column tile, the guard off.
    "staged_input": rule_config.Conv2dConfig(shared_rows=2, split_k=1),
    "staged_weights": rule_config.Conv2dConfig(
        channel_blocks=2,
        columns=3,
        pointwise_columns=3,
        occupancy_waves=(),
        shared_rows=4,
        shared_weights=True,
        split_k=1,
    ),
    # The most split, each step's weights staged by the whole work group.
    "split_k_16_staged_weights": rule_config.Conv2dConfig(
        split_k=16, split_k_waves=16, shared_weights=True
    ),
    # Tiles of several output rows: 4 rows never split; 2 rows split with the weights staged
    # and the window unrolled.
    "four_rows": rule_config.Conv2dConfig(tile_rows=4, occupancy_waves=(), split_k=1),
    "two_rows_split_k_staged_weights": rule_config.Conv2dConfig(
        tile_rows=2, split_k=16, split_k_waves=16, shared_weights=True, unroll_window=True
    ),
    # The kernel columns alone unrolled over a 3-column tile, split with the weights staged.
    "unrolled_columns": rule_config.Conv2dConfig(
        columns=3, occupancy_waves=(), unroll_columns=True, shared_weights=True
    ),
}


@pytest.fixture(name="blocking", params=list(TILES))
def _blocking(request, monkeypatch):
    """Which ``Conv2dConfig`` the pipeline's Conv2d rule uses."""
    config = TILES[request.param]
    if config is not None:
        monkeypatch.setattr(rule_config.Conv2dConfig, "from_target", lambda target: config)
    return request.param


GUARD_OFF = rule_config.Conv2dConfig(occupancy_waves=())
# The desktop GPU the defaults were measured on: 132 compute units, waves of 32.
DESKTOP = rule_config.Conv2dConfig(compute_units=132, wave_size=32)
# One compute unit of one-thread waves: waves per compute unit are the work items.
ONE_THREAD_WAVES = rule_config.Conv2dConfig(
    channel_blocks=4, columns=4, compute_units=1, wave_size=1
)


@pytest.mark.parametrize(
    "shape, config, expected",
    [
        # (output channel blocks, batch x rows, width): ResNet-50 3x3 64 -> 64 on 56x56, the
        # default tile (2 blocks x 2 columns) leaves 8 x 56 x 28 = 12544 items, 3 waves per
        # unit of the desktop GPU (132 units, waves of 32): halved twice (below 8 and 4
        # waves); 65 waves per unit of the generic Adreno (3 units, waves of 64): kept.
        ((16, 56, 56), DESKTOP, (1, 1)),
        ((16, 56, 56), rule_config.Conv2dConfig(), (2, 2)),
        ((16, 56, 56), GUARD_OFF, (2, 2)),
        # Widths: the largest divisor up to the columns; a power of two of the channel blocks.
        ((12, 8, 14), GUARD_OFF, (2, 2)),
        ((3, 8, 7), GUARD_OFF, (1, 1)),
        ((12, 8, 9), rule_config.Conv2dConfig(channel_blocks=8, occupancy_waves=()), (4, 1)),
        (
            (12, 8, 9),
            rule_config.Conv2dConfig(channel_blocks=8, columns=4, occupancy_waves=()),
            (4, 3),
        ),
        # The guard at each threshold: 64 items (at the 4 x 4 tile) are >= 8 waves: kept.
        ((16, 4, 16), ONE_THREAD_WAVES, (4, 4)),
        # 3 items: < 8 waves (halve the blocks), < 4 (halve the columns), not < 2: (2, 2).
        ((4, 3, 4), ONE_THREAD_WAVES, (2, 2)),
        # 1 item: all three thresholds: blocks, columns, blocks.
        ((4, 1, 4), ONE_THREAD_WAVES, (1, 2)),
        # Dynamic shapes: no tile.
        ((None, 56, 56), GUARD_OFF, (1, 1)),
        ((16, None, 56), GUARD_OFF, (1, 1)),
    ],
)
def test_conv_tile(shape, config, expected):
    """The per-item tile: the config's, shrunk by the guard where the layer has few items."""
    assert conv_rule.conv_tile(*shape, config) == expected


def test_pointwise_columns():
    """A 1x1 conv takes ``pointwise_columns`` (default 1), a KxK one ``columns``."""
    assert conv_rule.conv_tile(16, 28, 28, GUARD_OFF, pointwise=True) == (2, 1)
    wide = rule_config.Conv2dConfig(pointwise_columns=4, occupancy_waves=())
    assert conv_rule.conv_tile(16, 28, 28, wide, pointwise=True) == (2, 4)
    assert conv_rule.conv_tile(16, 28, 28, wide, pointwise=False) == (2, 2)


def test_config_bounded_by_target_threads():
    target = tt.texture_target()
    config = rule_config.Conv2dConfig.from_target(target)
    assert config.threads <= int(target.attrs["max_num_threads"])


def test_tile_in_kernel(monkeypatch):
    """The largest tile is the kernel's: 8 blocks x 4 columns = 128 accumulators, and the
    input row under a stride-2 3x3 tile (3 * 2 + 3 = 9 pixels of 4 channels) staged once per
    kernel row."""
    monkeypatch.setattr(
        rule_config.Conv2dConfig, "from_target", lambda target: TILES["largest_tile"]
    )
    _, executable = tt.check_compile(CASES["3x3_stride2_16_32_15x15"], "float32")
    (conv,) = [k for name, k in tt.kernel_sources(executable).items() if "conv2d" in name]
    # (the accumulator of a part of the input channels where they are split: ``_rf``)
    assert re.search(r"conv2d_NCHWc_OIHWo(_rf)?_local_ptr\[128\]", conv.body), conv.body[:600]
    assert "data_pad_local_ptr[36]" in conv.body, conv.body[:600]


@pytest.mark.usefixtures("blocking")
@pytest.mark.parametrize("case", ["3x3_stride2_16_32_15x15", "stem_7x7_stride2_3_32"])
def test_padding_inside_conv(case):
    """No kernel writes the zero-padded input: the conv reads the unpadded texture."""
    _, executable = tt.check_compile(CASES[case], "float32")
    kernels = tt.kernel_sources(executable)
    conv = [k for name, k in kernels.items() if "conv2d" in name]
    assert len(conv) == 1, sorted(kernels)
    assert conv[0].reads_image, conv[0].params
    writers = [k.name for k in kernels.values() if "data_pad" in k.params]
    assert not writers, f"kernels passing the padded input through memory: {writers}"


@pytest.mark.requires_opencl
@pytest.mark.parametrize("case", list(CASES))
def test_numerics(case, blocking, rng):
    """Equal to the LLVM build on fresh random inputs, with either blocking."""
    tt.check_case(CASES[case], "float32", rng, name=f"{case} ({blocking})")
