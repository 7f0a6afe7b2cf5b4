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
"""Depthwise separable blocks as one kernel (the option ``relax.adreno.fuse_depthwise_pointwise``), end to end.

Each block of MobileNetV2 (expand 1x1, depthwise 3x3, project 1x1, residual) and BlazeFace
(depthwise 5x5, 1x1, residual) compiles to one kernel per depthwise/1x1 pair under the option,
two without it, and computes what the float32 LLVM build computes, also with the 1x1 rule's
knobs at their extremes.
"""

import dataclasses

import pytest

from tvm import relax
from tvm.s_tir import dlight as dl

import texture_testing as tt


def _mobilenet_block(channels, expand, out_channels, stride, hw):
    def fn(nb):
        x = nb.input((1, channels, hw, hw))
        y = nb.emit(relax.op.clip(nb.bias(nb.conv2d(x, channels * expand, kernel=1)), 0, 6))
        y = nb.conv2d(y, channels * expand, kernel=3, stride=stride, groups=channels * expand)
        y = nb.emit(relax.op.clip(nb.bias(y), 0, 6))
        y = nb.bias(nb.conv2d(y, out_channels, kernel=1))
        if stride == 1 and channels == out_channels:
            y = nb.emit(relax.op.add(y, x))
        return y

    return fn


def _blazeface_block(channels, hw):
    def fn(nb):
        x = nb.input((1, channels, hw, hw))
        y = nb.bias(nb.conv2d(x, channels, kernel=5, groups=channels))
        y = nb.bias(nb.conv2d(y, channels, kernel=1))
        return nb.emit(relax.op.nn.relu(relax.op.add(y, x)))

    return fn


BLOCKS = {
    "mobilenet_residual": _mobilenet_block(16, 6, 16, 1, 14),
    "mobilenet_stride2": _mobilenet_block(16, 6, 24, 2, 14),
    "blazeface": _blazeface_block(24, 16),
}


def _kernel_names(fn):
    mod = tt.build_network(fn, "float32")
    ex = tt.build_texture(mod)
    return mod, ex, sorted(tt.kernel_sources(ex))


@pytest.mark.parametrize("block", sorted(BLOCKS))
def test_pair_is_one_kernel_only_under_the_option(block):
    _, _, plain = _kernel_names(BLOCKS[block])
    with tt.adreno_options(fuse_depthwise_pointwise=True):
        _, ex, fused = _kernel_names(BLOCKS[block])
    assert [k for k in fused if "dw_pw" in k] == ["fused_dw_pw_kernel"], fused
    assert not [k for k in plain if "dw_pw" in k], plain
    assert len(fused) == len(plain) - 1, (plain, fused)
    tt.assert_kernels_use_images(ex, conv_name="dw_pw")


@pytest.mark.requires_opencl
@pytest.mark.parametrize("block", sorted(BLOCKS))
def test_numerics(block, dtype_mode, rng):
    with tt.adreno_options(fuse_depthwise_pointwise=True):
        tt.check_numerics(BLOCKS[block], dtype_mode, rng, name=block)


def _check_fused_under(monkeypatch, config, block, dtype_mode, rng, name):
    """Compile ``block`` with ``relax.adreno.fuse_depthwise_pointwise`` with ``config`` as its class's
    knobs: the fused rule schedules the pair once and the result equals LLVM's."""
    tt.force_configs(monkeypatch, [config])
    taken = tt.count_schedules(monkeypatch, [dl.adreno.DepthwisePointwiseConv2d])
    with tt.adreno_options(fuse_depthwise_pointwise=True):
        tt.check_numerics(BLOCKS[block], dtype_mode, rng, name=name)
    assert taken == {"DepthwisePointwiseConv2d": 1}, taken


@pytest.mark.requires_opencl
@pytest.mark.parametrize("block", sorted(BLOCKS))
def test_numerics_with_the_depthwise_result_in_registers(monkeypatch, block, dtype_mode, rng):
    """With ``share_depthwise`` off each work item computes the depthwise result of its own
    pixels in registers: every block computes what the LLVM build computes, in every
    precision (the default, shared, is what ``test_numerics`` runs)."""
    config = dl.adreno.DepthwisePointwiseConfig.from_target(tt.texture_target())
    registers = dataclasses.replace(config, share_depthwise=False)
    _check_fused_under(monkeypatch, registers, block, dtype_mode, rng, name=block)


@pytest.mark.requires_opencl
@pytest.mark.parametrize("pick", [min, max], ids=["min", "max"])
def test_numerics_at_knob_extremes(monkeypatch, rng, pick):
    """The fused rule's knobs (the 1x1 tile, work group, guard; the depthwise result in
    registers, then shared by the work group) at their smallest, then largest, choice: the
    fused rule schedules the pair and the block computes right."""
    config = tt.config_at_extreme(dl.adreno.DepthwisePointwiseConfig, tt.texture_target(), pick)
    _check_fused_under(monkeypatch, config, "mobilenet_residual", "float32", rng, name=str(config))
