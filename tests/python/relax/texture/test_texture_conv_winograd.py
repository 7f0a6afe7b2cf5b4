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
"""Winograd conv2d on the Adreno texture target.

The Adreno conv2d legalization picks Winograd F(4x4, 3x3) or F(2x2, 3x3) for 3x3 stride-1
convolutions with at least 16 channels (``winograd_tile``); ``winograd_mode`` overrides it.
The chosen implementation shows in the PrimFunc name (``..._winograd4`` / ``..._winograd2``).
"""

import numpy as np
import pytest

import tvm
from tvm import relax
from tvm.relax.transform.legalize_ops import adreno as legalize_adreno
from tvm.topi.adreno.conv2d_winograd import winograd_matrices

import texture_testing as tt


def _conv(channels, out_channels, size, bias_relu=True):
    def fn(nb):
        y = nb.conv2d(nb.input((1, channels, size, size)), out_channels, kernel=3)
        return nb.emit(relax.op.nn.relu(nb.bias(y))) if bias_relu else y

    return fn


def _impl(mod, mode="auto"):
    with legalize_adreno.winograd_mode(mode):
        lowered = tt.lower_to_scopes(mod)
    names = [c.func for c in tt.texture_call_scopes(lowered)]
    for tile in (4, 2):
        if any(f"winograd{tile}" in n and "weight" not in n for n in names):
            return f"winograd{tile}", lowered
    return "direct", lowered


@pytest.mark.parametrize("tile", [2, 4])
def test_transform_matrices(tile):
    """A^T [(G g) * (B^T d)] is the 1-D correlation of d with g."""
    a_t, b_t, g = winograd_matrices(tile)
    rng = np.random.default_rng(0)
    d, k = rng.standard_normal(tile + 2), rng.standard_normal(3)
    expected = np.array([d[i : i + 3] @ k for i in range(tile)])
    np.testing.assert_allclose(a_t @ ((g @ k) * (b_t @ d)), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "shape, mode, dtype_mode, expected",
    [
        ((16, 16, 8), "auto", "float32", "winograd4"),
        ((16, 24, 6), "auto", "float32", "winograd2"),  # 6 % 4 != 0
        ((16, 16, 8), "auto", "float16", "winograd2"),  # F(4x4) too inexact in half
        ((16, 16, 8), "auto", "float16_acc32", "winograd4"),  # transforms in float32
        ((8, 16, 8), "auto", "float32", "direct"),  # too few channels
        ((16, 16, 8), "off", "float32", "direct"),
        ((8, 8, 8), "2", "float32", "winograd2"),
        ((8, 8, 6), "4", "float32", "winograd4"),
        ((8, 8, 8), "4", "float16", "winograd2"),
    ],
)
def test_strategy(shape, mode, dtype_mode, expected):
    mod = tt.build_network(_conv(*shape), dtype_mode)
    impl, lowered = _impl(mod, mode)
    assert impl == expected, tt.describe_scopes(lowered)
    if impl != "direct":
        tt.assert_conv2d_uses_texture(lowered)


def test_mode_is_validated():
    with pytest.raises(ValueError):
        with legalize_adreno.winograd_mode("8"):
            pass


def test_constant_weights_are_transformed_at_compile_time():
    """With bound weights FoldConstant evaluates the weight transform: no kernel for it."""
    mod = tt.build_network(_conv(16, 16, 8, bias_relu=False), "float32")
    rng = np.random.default_rng(1)
    weight = {p.name: v for p, v in zip(mod["main"].params, tt.random_inputs(mod, rng))}
    bound = relax.transform.BindParams("main", {"w0": tvm.runtime.tensor(weight["w0"])})(mod)
    ex = tt.build_texture(bound)
    kernels = tt.kernel_sources(ex)
    assert any("winograd4" in n for n in kernels), sorted(kernels)
    assert not any("weight_transform" in n for n in kernels), sorted(kernels)


@pytest.mark.requires_opencl
@pytest.mark.parametrize("shape", [(16, 16, 8), (16, 20, 6)], ids=["F4x4", "F2x2"])
def test_numerics(shape, dtype_mode, rng):
    tt.check_numerics(_conv(*shape), dtype_mode, rng, name=f"winograd {shape}")
