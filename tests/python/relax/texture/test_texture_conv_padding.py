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
"""Convolutions whose channel counts are not multiples of 4 stay on textures.

``PadConvChannels`` pads input and output channels with zeros up to a multiple of 4 before
the NCHW4c layout conversion and slices the padding away after the conv. Each case checks that
the conv reads a texture (before the pass it fell back to buffers) and that the result equals
the float32 LLVM build of the unpadded module.
"""

import pytest

from tvm import relax
from tvm.relax.backend.adreno.transform.pad_conv_channels import PadConvChannels

import texture_testing as tt


def _conv(channels, out_channels, size, kernel=3, stride=1, groups=1, bias=False):
    def fn(nb):
        y = nb.conv2d(
            nb.input((1, channels, size, size)),
            out_channels,
            kernel=kernel,
            stride=stride,
            groups=groups,
        )
        return nb.bias(y) if bias else y

    return fn


def _chain(nb):
    """A 3-channel image through two odd-width layers: 3 -> 6 -> 10 channels."""
    y = nb.conv2d(nb.input((1, 3, 10, 10)), 6, kernel=3)
    y = nb.emit(relax.op.nn.relu(nb.bias(y)))
    y = nb.conv2d(y, 6, kernel=3, groups=6)
    return nb.conv2d(y, 10, kernel=1)


CASES = {
    "image_rgb_3x3": tt.Case(_conv(3, 8, 12)),
    "image_rgb_3x3_stride2_bias": tt.Case(_conv(3, 16, 13, stride=2, bias=True)),
    "out_channels_6": tt.Case(_conv(8, 6, 9)),
    "odd_5_to_7_stride2": tt.Case(_conv(5, 7, 11, stride=2)),
    "pointwise_3_to_5": tt.Case(_conv(3, 5, 7, kernel=1)),
    "depthwise_6": tt.Case(_conv(6, 6, 9, groups=6)),
    "depthwise_3_multiplier2": tt.Case(_conv(3, 6, 8, groups=3)),
    "chain_3_6_10": tt.Case(_chain, convs=3),
}


def test_pass_pads_and_slices():
    """The rewrite itself: padded conv, output sliced back to the original channel count."""
    mod = tt.build_network(_conv(3, 6, 8), "float32")
    padded = PadConvChannels()(mod)
    text = padded.script()
    assert "R.nn.pad" in text and "R.strided_slice" in text, text
    assert "R.Tensor((1, 8, 8, 8)" in text, text


def test_unaligned_group_conv_is_left_alone():
    """Group convs other than depthwise keep their channels (padding would interleave)."""
    mod = tt.build_network(_conv(6, 6, 8, groups=2), "float32")
    assert "R.nn.pad" not in PadConvChannels()(mod).script()


@pytest.mark.parametrize("case", list(CASES))
def test_compile(case, compile_dtype_mode):
    tt.check_compile(CASES[case], compile_dtype_mode)


@pytest.mark.requires_opencl
@pytest.mark.parametrize("case", list(CASES))
def test_numerics(case, dtype_mode, rng):
    tt.check_numerics(CASES[case].fn, dtype_mode, rng, name=case)
