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

The rule blocks output channels per thread by how much parallelism a layer has, spreads the
threads over a flat range of output positions and computes the input padding inside the
conv's read. Each case runs with the default knobs (small test shapes: one channel block per
thread) and with a configuration that makes every thread take the most channel blocks, and
must equal the float32 LLVM build on fresh random inputs; the padded input must not be
written by a kernel of its own.
"""

import pytest

from tvm import relax
from tvm.s_tir.dlight.adreno import convolution as conv_rule

import texture_testing as tt


def _conv(channels, out_channels, size, kernel=3, stride=1, epilogue=False, residual=False):
    def network(net):
        x = net.input((1, channels, size, size))
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
    # Bias and ReLU fused into the conv kernel.
    "3x3_bias_relu_8_48": tt.Case(_conv(8, 48, 9, epilogue=True)),
    # A 1x1 conv (no padding block) whose input also feeds the fused residual add.
    "pointwise_bias_relu_residual_16": tt.Case(_conv(16, 16, 8, 1, epilogue=True, residual=True)),
}


@pytest.fixture(name="blocking", params=["default", "most_blocks"])
def _blocking(request, monkeypatch):
    """Which ``Conv2dConfig`` the pipeline's Conv2d rule uses."""
    if request.param == "most_blocks":
        config = conv_rule.Conv2dConfig(min_threads=1)
        monkeypatch.setattr(conv_rule.Conv2dConfig, "from_target", lambda target: config)
    return request.param


@pytest.mark.parametrize(
    "out_blocks, pixels, config, expected",
    [
        # ResNet-50 1x1 2048 -> 512 on 7x7 with the default knobs: too few outputs to block.
        (128, 49, conv_rule.Conv2dConfig(), 1),
        # ResNet-50 1x1 64 -> 256 on 56x56: 64 blocks x 3136 positions allow 2 per thread.
        (64, 3136, conv_rule.Conv2dConfig(), 2),
        # Enough parallelism: capped by max_channel_blocks.
        (64, 3136, conv_rule.Conv2dConfig(min_threads=1), 8),
        # 12 blocks: the largest power of two dividing them.
        (12, 3136, conv_rule.Conv2dConfig(min_threads=1), 4),
        (12, 3136, conv_rule.Conv2dConfig(min_threads=1, max_channel_blocks=2), 2),
        # Dynamic shapes: no blocking.
        (None, 3136, conv_rule.Conv2dConfig(min_threads=1), 1),
        (64, None, conv_rule.Conv2dConfig(min_threads=1), 1),
    ],
)
def test_channel_blocks(out_blocks, pixels, config, expected):
    """Channel blocks per thread: the most that leave enough threads, dividing the blocks."""
    assert conv_rule.channel_blocks(out_blocks, pixels, config) == expected


def test_config_bounded_by_target_threads():
    target = tt.texture_target()
    config = conv_rule.Conv2dConfig.from_target(target)
    assert config.threads <= int(target.attrs["max_num_threads"])


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
