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
"""Depthwise and grouped conv2d on the Adreno texture target.

Before the Adreno legalization chose an implementation per shape, every conv2d with
``groups > 1`` failed to compile for the texture target ("Divide by zero" in TOPI's
``conv2d_NCHWc_OIHWo``). Each case here compiles with the conv reading a texture, runs on the
OpenCL device, and matches the float32 LLVM build of the same module.
"""

import re

import pytest

from tvm import relax
from tvm.s_tir.dlight.adreno import config as rule_config

import texture_testing as tt


def _depthwise(channels, size, multiplier=1, kernel=3, stride=1, padding=None, dilation=1):
    def fn(nb):
        x = nb.input((1, channels, size, size))
        w = nb.param("w", (channels * multiplier, 1, kernel, kernel))
        pad = (kernel // 2) * dilation if padding is None else padding
        return nb.emit(
            relax.op.nn.conv2d(
                x,
                w,
                strides=stride,
                padding=pad,
                dilation=dilation,
                groups=channels,
                out_dtype=nb.dtype,
            )
        )

    return fn


def _group(channels, out_channels, groups, size, kernel=3, stride=1):
    def fn(nb):
        x = nb.input((1, channels, size, size))
        return nb.conv2d(x, out_channels, kernel=kernel, stride=stride, groups=groups)

    return fn


def _mobilenet_block(nb):
    """Depthwise 3x3 + bias + relu6, then pointwise 1x1 + bias + relu: MobileNet's unit."""
    x = nb.input((1, 16, 10, 10))
    y = nb.bias(nb.conv2d(x, 16, kernel=3, groups=16))
    y = nb.emit(relax.op.clip(y, 0, 6))
    y = nb.bias(nb.conv2d(y, 24, kernel=1))
    return nb.emit(relax.op.nn.relu(y))


CASES = {
    "depthwise_3x3": tt.Case(_depthwise(8, 9)),
    "depthwise_3x3_stride2": tt.Case(_depthwise(16, 11, stride=2)),
    "depthwise_5x5_dilation2": tt.Case(_depthwise(8, 12, kernel=5, dilation=2)),
    "depthwise_3x3_nopad": tt.Case(_depthwise(12, 7, padding=0)),
    "depthwise_multiplier2": tt.Case(_depthwise(8, 8, multiplier=2)),
    "depthwise_multiplier3": tt.Case(_depthwise(4, 7, multiplier=3)),
    "group_aligned": tt.Case(_group(16, 16, 2, 8)),
    "group_aligned_stride2": tt.Case(_group(16, 32, 4, 9, stride=2)),
    "group_unaligned": tt.Case(_group(8, 8, 4, 8)),
    "group_unaligned_1x1": tt.Case(_group(8, 12, 2, 6, kernel=1)),
    "mobilenet_block": tt.Case(_mobilenet_block, convs=2, conv_output_texture=True),
}

# The PrimFunc each case's convolution is legalized into (the implementation chosen).
IMPLEMENTATION = {
    "depthwise": "depthwise_conv2d_NCHWc_OIHWo",
    "group": "group_conv2d_NCHWc_OIHWo",
    "mobilenet": "depthwise_conv2d_NCHWc_OIHWo",
}


@pytest.mark.parametrize("case", list(CASES))
def test_compile(case, compile_dtype_mode):
    lowered, _ = tt.check_compile(CASES[case], compile_dtype_mode)
    impl = IMPLEMENTATION[case.split("_")[0]]
    calls = [c for c in tt.texture_call_scopes(lowered) if impl in c.func]
    assert calls, f"no {impl} call:\n  " + tt.describe_scopes(lowered)
    assert all(tt.is_texture(c.inputs[0]) for c in calls), tt.describe_scopes(lowered)


@pytest.mark.requires_opencl
@pytest.mark.parametrize("case", list(CASES))
def test_numerics(case, dtype_mode, rng):
    tt.check_numerics(CASES[case].fn, dtype_mode, rng, name=case)


# The streaming depthwise kernel at its knob extremes: one pixel per item (no window reuse),
# and 8 columns x 8 rows (more than most test shapes: the largest divisors are taken).
@pytest.fixture(name="tile", params=[(1, 1), (8, 8)], ids=["1x1", "8x8"])
def _tile(request, monkeypatch):
    columns, rows = request.param
    tt.force_configs(monkeypatch, [rule_config.GroupConv2dConfig(columns=columns, rows=rows)])
    return request.param


@pytest.mark.requires_opencl
@pytest.mark.parametrize("case", [c for c in CASES if c.startswith(("depthwise", "mobilenet"))])
def test_depthwise_tile_numerics(case, tile, rng):
    tt.check_numerics(CASES[case].fn, "float32", rng, name=f"{case} ({tile[0]} x {tile[1]})")


@pytest.mark.parametrize("slide", ["along_rows", "down_columns"])
@pytest.mark.parametrize(
    "case, outputs, window",
    [
        # The inputs are square, so the counts hold for rows and columns alike.
        # 9 outputs a row: 3 per item; at stride 1 a 3x3 row of 3 outputs spans 5 pixels.
        ("depthwise_3x3", 3, 5),
        # 6 outputs a row at stride 2: 3 per item, (3 - 1) * 2 + 3 = 7 pixels.
        ("depthwise_3x3_stride2", 3, 7),
        # 5x5 at dilation 2 on 12 outputs a row: 4 per item, 3 + 4 * 2 + 1 = 12 pixels.
        ("depthwise_5x5_dilation2", 4, 12),
    ],
)
def test_depthwise_window_slides(case, outputs, window, slide, monkeypatch):
    """An item of one row keeps up to 4 output columns in registers and stages the input row
    under them once per kernel row; an item of one column keeps up to 4 rows and stages the
    input column under them once per kernel column. Either way the window slides in
    registers, not through the image."""
    knobs = {"columns": 4, "rows": 1} if slide == "along_rows" else {"columns": 1, "rows": 4}
    tt.force_configs(monkeypatch, [rule_config.GroupConv2dConfig(**knobs)])
    _, ex = tt.check_compile(CASES[case], "float32")
    (kernel,) = [k for n, k in tt.kernel_sources(ex).items() if "depthwise" in n]
    # the staging loop stays rolled, the taps within it are unrolled
    staged, unrolled = ("kh", "kw") if slide == "along_rows" else ("kw", "kh")
    assert f"for (int {staged} = 0;" in kernel.body, kernel.body[:500]
    assert f"for (int {unrolled} = 0;" not in kernel.body, kernel.body[:500]
    assert f"conv2d_NCHWc_OIHWo_local_ptr[{outputs}];" in kernel.body, kernel.body[:500]
    assert f"data_pad_local_ptr[{window}];" in kernel.body, kernel.body[:500]
    assert kernel.body.count("READ_IMAGEF") == 1, "one image read (in the staging loop)"


# Picks one lane out of a pixel read: ``((float*)&v_)[lane]`` in TVM's OpenCL.
_LANE_PICK = re.compile(r"\(\((float|half)\*\)&\w+\)\[")


@pytest.mark.parametrize(
    "case, whole_pixels",
    [("depthwise_3x3", True), ("depthwise_3x3_stride2", True), ("depthwise_multiplier3", False)],
)
def test_depthwise_reads_whole_pixels(case, whole_pixels):
    """With channel multiplier 1 each tap is one pixel read of the input image (no lane
    picked out of it); with multiplier 3 the lanes of an output texel come from different
    input texels, so they are read lane by lane."""
    _, ex = tt.check_compile(CASES[case], "float32")
    (kernel,) = [k for n, k in tt.kernel_sources(ex).items() if "depthwise" in n]
    assert kernel.reads_image, kernel.name
    picks = _LANE_PICK.search(kernel.body)
    if whole_pixels:
        assert picks is None, f"{kernel.name} reads single lanes: {picks.group(0)!r}"
    else:
        assert picks is not None, f"{kernel.name}: expected lane-by-lane reads"
