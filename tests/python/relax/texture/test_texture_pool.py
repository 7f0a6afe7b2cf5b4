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
"""2-D pooling on textures: max and average pooling (padding counted and not, ceil mode),
global and adaptive pooling, and a pooled tensor feeding several branches.

Adaptive pooling whose output size does not divide the input (7 to 3, 10 to 4, 11 to 5) gives
every output its own window; ``dl.adreno.VaryingWindowPool2D`` schedules it (average from Relax,
max from TOPI directly: Relax has no adaptive max pooling op).

The pool reads the conv2d result from a texture (the conv2d writes it there) in every case;
the numbers must match the float32 LLVM build.  Max pooling, average pooling and the pooling
branch used to be upstream's known numerical failures.
"""

import re

import numpy as np
import pytest

import tvm
from tvm import relax, te, tirx, topi
from tvm.s_tir import dlight as dl

import texture_testing as tt

N, C, H, W = 1, 16, 11, 11


def _conv(nb, x=None, channels=C, side=H):
    return nb.conv2d(x if x is not None else nb.input((N, C, side, side)), channels, kernel=3)


def _max_pool(pool_size, strides, padding=0, ceil_mode=False):
    def _fn(nb):
        return nb.emit(
            relax.op.nn.max_pool2d(
                _conv(nb),
                pool_size=pool_size,
                strides=strides,
                padding=padding,
                ceil_mode=ceil_mode,
            )
        )

    return _fn


def _avg_pool(pool_size, strides, padding, ceil_mode, count_include_pad):
    def _fn(nb):
        return nb.emit(
            relax.op.nn.avg_pool2d(
                _conv(nb),
                pool_size=pool_size,
                strides=strides,
                padding=padding,
                ceil_mode=ceil_mode,
                count_include_pad=count_include_pad,
            )
        )

    return _fn


def _adaptive(output_size, side=H, then_conv=False):
    """conv (side x side) -> adaptive average pool [-> 1x1 conv, so the pool writes a texture]"""

    def _fn(nb):
        pooled = nb.emit(
            relax.op.nn.adaptive_avg_pool2d(_conv(nb, side=side), output_size=output_size)
        )
        return nb.conv2d(pooled, 8, kernel=1) if then_conv else pooled

    return _fn


def _pool_branches(nb):
    """conv -> max pool -> (conv a, conv b, relu): the pooled texture feeds three consumers."""
    pooled = nb.emit(relax.op.nn.max_pool2d(_conv(nb), pool_size=3, strides=2, padding=1))
    a = nb.conv2d(pooled, 8, kernel=1)
    b = nb.conv2d(pooled, 8, kernel=3)
    return [a, b, nb.emit(relax.op.nn.relu(pooled))]


def _pool_concat_branches(nb):
    """Inception-like: avg pool next to two convs of the same input, concatenated."""
    x = _conv(nb)
    pooled = nb.emit(relax.op.nn.avg_pool2d(x, pool_size=3, strides=1, padding=1))
    return nb.emit(
        relax.op.concat([nb.conv2d(x, 8, kernel=1), nb.conv2d(pooled, 8, kernel=1)], axis=1)
    )


# name -> (Case, PrimFunc name of the pool)
CASES = {
    "max_2x2_s2": (tt.Case(_max_pool(2, 2), conv_output_texture=True), "max_pool2d"),
    "max_3x3_s2_pad1": (tt.Case(_max_pool(3, 2, 1), conv_output_texture=True), "max_pool2d"),
    "max_3x3_s2_ceil": (
        tt.Case(_max_pool(3, 2, 0, ceil_mode=True), conv_output_texture=True),
        "max_pool2d",
    ),
    "avg_3x3_s1_pad1_excl": (
        tt.Case(_avg_pool(3, 1, 1, False, False), conv_output_texture=True),
        "avg_pool2d",
    ),
    "avg_3x3_s1_pad1_incl": (
        tt.Case(_avg_pool(3, 1, 1, False, True), conv_output_texture=True),
        "avg_pool2d",
    ),
    "avg_3x3_s2_pad1_ceil_excl": (
        tt.Case(_avg_pool(3, 2, 1, True, False), conv_output_texture=True),
        "avg_pool2d",
    ),
    "avg_3x3_s2_pad1_ceil_incl": (
        tt.Case(_avg_pool(3, 2, 1, True, True), conv_output_texture=True),
        "avg_pool2d",
    ),
    "global_avg": (tt.Case(_adaptive(1), conv_output_texture=True), "adaptive_avg_pool2d"),
    "adaptive_avg_5": (tt.Case(_adaptive(5), conv_output_texture=True), "adaptive_avg_pool2d"),
    "adaptive_avg_3x4": (
        tt.Case(_adaptive((3, 4)), conv_output_texture=True),
        "adaptive_avg_pool2d",
    ),
    # windows of 3 rows, overlapping by one: [0, 3), [2, 5), [4, 7)
    "adaptive_avg_7_to_3": (
        tt.Case(_adaptive(3, side=7), conv_output_texture=True),
        "adaptive_avg_pool2d",
    ),
    # windows of 3 and 4 rows; the pooled tensor feeds a conv, so the pool writes a texture
    "adaptive_avg_10_to_4_conv": (
        tt.Case(_adaptive(4, side=10, then_conv=True), convs=2, conv_output_texture=True),
        "adaptive_avg_pool2d",
    ),
    "pool_branches": (tt.Case(_pool_branches, convs=3, conv_output_texture=True), "max_pool2d"),
    "pool_concat_branches": (
        tt.Case(_pool_concat_branches, convs=3, conv_output_texture=True),
        "avg_pool2d",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_compile(case, compile_dtype_mode):
    test_case, pool_name = CASES[case]
    lowered, ex = tt.check_compile(test_case, compile_dtype_mode)
    pools = [c for c in tt.texture_call_scopes(lowered) if pool_name in c.func]
    assert pools, tt.describe_scopes(lowered)
    for call in pools:
        assert all(
            tt.is_texture(s) for s in call.inputs
        ), f"{call.func} does not read a texture:\n  " + tt.describe_scopes(lowered)
    kernels = [k for name, k in tt.kernel_sources(ex).items() if pool_name in name]
    assert kernels and all(k.reads_image for k in kernels), sorted(tt.kernel_sources(ex))


@pytest.mark.requires_opencl
@pytest.mark.parametrize("case", list(CASES))
def test_numerics(case, dtype_mode, rng):
    tt.check_numerics(CASES[case][0].fn, dtype_mode, rng, name=case)


def test_adaptive_pool_writes_texture():
    """Windows that differ per output still store whole pixels: the pooled tensor a conv2d
    consumes stays in a texture, written by the pool kernel with write_image."""
    lowered, ex = tt.check_compile(CASES["adaptive_avg_10_to_4_conv"][0], "float32")
    pools = [c for c in tt.texture_call_scopes(lowered) if "adaptive_avg_pool2d" in c.func]
    assert pools and all(tt.is_texture(s) for c in pools for s in c.outputs), tt.describe_scopes(
        lowered
    )
    kernels = [k for name, k in tt.kernel_sources(ex).items() if "adaptive_avg_pool2d" in name]
    assert kernels and all(k.reads_image and k.writes_image for k in kernels)


# Relax has no adaptive max pooling op; TOPI has, and gives it the same per-output windows.
def _adaptive_max_func(shape, output_size, scope):
    data = te.placeholder(shape, "float32", name="data")
    out = topi.nn.adaptive_pool(data, output_size, "max", "NCHW4c")
    func = te.create_prim_func([data, out])
    buffers = [tirx.decl_buffer(t.shape, t.dtype, t.op.name, scope=scope) for t in (data, out)]
    return func.specialize(dict(zip(func.params, buffers))).with_attr("global_symbol", "main")


def _adaptive_max_texture_build(shape, output_size):
    target = tt.texture_target()
    mod = tvm.IRModule({"main": _adaptive_max_func(shape, output_size, "global.texture")})
    with target:
        mod = dl.ApplyDefaultSchedule(dl.adreno.VaryingWindowPool2D())(mod)
    return tvm.tirx.build(mod, target=target, pipeline="adreno")


def test_adaptive_max_on_textures_compile():
    """The window rule takes max pooling too (no epilogue: the maximum is kept in registers
    and stored once, since a kernel cannot read back an image it writes)."""
    source = _adaptive_max_texture_build((1, 2, 7, 7, 4), (3, 3)).imports[0].inspect_source()
    assert re.search(r"read_imagef|READ_IMAGEF", source) and "write_imagef" in source, source
    assert re.search(r"= max\(\w+\[0\], \w+\)", source), source


def _nhwc_pool_then_channel_pad(side, channels, pad):
    """MediaPipe's detectors (BlazeFace, palm): a 2x2 max pooling in NHWC on buffers, then zero
    channels appended for the residual add of a wider block."""
    x = relax.Var("x", relax.TensorType((1, side, side, channels), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            pooled = bb.emit(
                relax.op.nn.max_pool2d(x, pool_size=2, strides=2, layout="NHWC", out_layout="NHWC")
            )
            padded = bb.emit_output(
                relax.op.nn.pad(pooled, pad_width=[0, 0, 0, 0, 0, 0, 0, pad], pad_value=0.0)
            )
        bb.emit_func_output(padded)
    return bb.get()


@pytest.mark.requires_opencl
@pytest.mark.parametrize("side,channels,pad", [(12, 8, 8), (10, 6, 10)])
def test_pool_then_channel_pad_numerics(side, channels, pad, rng):
    """The pooling is computed at the pad's outputs (one thread each, no threads sharing a
    window): right values in the pooled channels, zeros in the padded ones."""
    ex = tt.build_texture(_nhwc_pool_then_channel_pad(side, channels, pad))
    (source,) = [k.body for name, k in tt.kernel_sources(ex).items() if "max_pool2d" in name]
    assert "barrier(" not in source, source
    data = rng.uniform(-1, 1, size=(1, side, side, channels)).astype("float32")
    (out,) = tt.run_vm(ex, tt.tvm_device(), [data])
    half = side // 2
    pooled = data.reshape(1, half, 2, half, 2, channels).max(axis=(2, 4))
    expected = np.concatenate([pooled, np.zeros((1, half, half, pad), "float32")], axis=-1)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.requires_opencl
@pytest.mark.parametrize("side,output_size", [(7, (3, 3)), (10, (4, 3))])
def test_adaptive_max_on_textures_numerics(side, output_size, rng):
    """Texture in, texture out, against the same TOPI function built for LLVM."""
    shape = (1, 2, side, side, 4)
    out_shape = (1, 2, *output_size, 4)
    data = rng.uniform(-1, 1, size=shape).astype("float32")
    dev = tt.tvm_device()
    image_in = tvm.runtime.empty(shape, "float32", dev, mem_scope="global.texture")
    image_in.copyfrom(data)
    image_out = tvm.runtime.empty(out_shape, "float32", dev, mem_scope="global.texture")
    _adaptive_max_texture_build(shape, output_size)["main"](image_in, image_out)
    ref = tvm.tirx.build(_adaptive_max_func(shape, output_size, "global"), target="llvm")
    desired = tvm.runtime.empty(out_shape, "float32", tvm.cpu())
    ref["main"](tvm.runtime.tensor(data), desired)
    tt.assert_close(
        [image_out.numpy()], [desired.numpy()], "float32", context=f"{side} -> {output_size}"
    )
