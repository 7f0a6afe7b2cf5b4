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
"""The real device's image limits: enforced with a clear error, and turned into target limits
so that a tensor too large for the device's images stays in buffers. (That the runtime reports
what OpenCL reports is tests/python/runtime/test_device_texture_limits.py, against its own
query of the ICD loader.)

The target's defaults (16384 pixels per side, 2048 layers) describe Adreno GPUs; PoCL and
Intel's CPU runtime report the same, NVIDIA larger.  To exercise a device smaller than its
target, the tests compile for a target whose limits are larger than the device's.
"""

import numpy as np
import pytest

import tvm
from tvm import relax, rpc
from tvm.relax.backend.adreno import texture_target_for_device

import texture_testing as tt

pytestmark = pytest.mark.requires_opencl

LARGE_LIMIT = 1 << 20


def _device_limits():
    limits = tt.tvm_device().texture_limits()
    assert limits is not None, "the OpenCL runtime does not report image limits"
    return limits


def _large_limit_target() -> tvm.target.Target:
    config = dict(tt.texture_target().export())
    config["texture_spatial_limit"] = LARGE_LIMIT
    config["texture_depth_limit"] = LARGE_LIMIT
    return tvm.target.Target(config)


def test_limits_through_an_rpc_session():
    session = rpc.LocalSession()
    assert session.device("opencl", 0).texture_limits() == _device_limits()


def test_non_opencl_device_has_no_texture_limits():
    assert tvm.cpu().texture_limits() is None
    assert tvm.cpu().texture_spatial_limit() is None


@pytest.mark.parametrize("axis", ["width", "height", "layers"])
def test_texture_over_a_device_limit_is_a_clear_error(axis):
    width, height, layers = _device_limits()
    # A global.texture tensor (N, C/4, H, W, 4) is a W x H image array of N*C/4 layers.
    shape = {
        "width": (1, 1, 1, width + 1, 4),
        "height": (1, 1, height + 1, 1, 4),
        "layers": (layers + 1, 1, 1, 1, 4),
    }[axis]
    dev = tt.tvm_device()
    with pytest.raises(ValueError) as info:
        tvm.runtime.empty(shape, "float32", dev, mem_scope="global.texture")
    message = str(info.value)
    assert "exceeds the image limits" in message
    assert f"({width}x{height}, {layers} layers)" in message
    assert "texture_target_for_device" in message
    # The failed allocation leaves the device usable.
    data = np.random.default_rng().uniform(-1, 1, (1, 1, 2, 2, 4)).astype("float32")
    small = tvm.runtime.empty(data.shape, "float32", dev, mem_scope="global.texture")
    small.copyfrom(data)
    np.testing.assert_array_equal(small.numpy(), data)


def test_target_for_device_takes_the_smaller_limits():
    width, height, layers = _device_limits()
    dev = tt.tvm_device()
    lowered = texture_target_for_device(dev, _large_limit_target())
    assert int(lowered.attrs["texture_spatial_limit"]) == min(width, height)
    assert int(lowered.attrs["texture_depth_limit"]) == layers
    assert "texture" in lowered.keys
    config = dict(tt.texture_target().export())
    config["texture_spatial_limit"], config["texture_depth_limit"] = 16, 8
    kept = texture_target_for_device(dev, tvm.target.Target(config))
    assert int(kept.attrs["texture_spatial_limit"]) == 16
    assert int(kept.attrs["texture_depth_limit"]) == 8
    with pytest.raises(ValueError, match="is not a texture target"):
        texture_target_for_device(dev, "opencl")


def _wide_conv(nb):
    # The (1, 1, 1, W, 4) activations are W pixels wide in every texture scope.
    width = _device_limits()[0] + 4
    return nb.emit(relax.op.nn.relu(nb.conv2d(nb.input((1, 4, 1, width)), 4, kernel=1)))


def _texture_tensors(mod, target):
    with target:
        passes = relax.pipeline.library_dispatch_passes(target)
        passes += relax.pipeline.legalize_passes(target)
        lowered = tvm.transform.Sequential(passes)(mod)
    return tt.count_texture_tensors(lowered), tt.describe_scopes(lowered)


def test_tensor_too_wide_for_the_device_falls_back_to_buffers(rng):
    mod = tt.build_network(_wide_conv, "float32")
    dev = tt.tvm_device()
    inputs = tt.random_inputs(mod, rng)

    # Compiled for a target with larger images than the device has: the conv's activations
    # go to textures, and running fails with the runtime's clear error.
    large = _large_limit_target()
    count, scopes = _texture_tensors(mod, large)
    assert count > 0, scopes
    with pytest.raises(ValueError, match="exceeds the image limits"):
        tt.run_vm(tvm.compile(mod, target=large), dev, inputs)

    # With the device's limits they stay in buffers and the answer is right.
    fitted = texture_target_for_device(dev, large)
    count, scopes = _texture_tensors(mod, fitted)
    assert count == 0, scopes
    actual = tt.run_vm(tvm.compile(mod, target=fitted), dev, inputs)
    tt.assert_close(actual, tt.reference(_wide_conv, inputs), "float32", context="wide conv")
