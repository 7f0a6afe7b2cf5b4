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
"""One module per root cause of a wrong texture result, compared with the LLVM build."""

import numpy as np
import pytest

import tvm
from tvm import relax
from tvm.s_tir import dlight as dl

import texture_testing as tt

TEXTURE_TARGET = tvm.target.Target("qcom/adreno-opencl-texture", host="llvm")


def _signed(rng, shape, low=0.25, high=1.0):
    """Uniform magnitudes in [low, high) with random signs: no zeros, no saturation."""
    values = rng.uniform(low, high, size=shape) * rng.choice([-1.0, 1.0], size=shape)
    return values.astype("float32")


def _function(params, body):
    builder = relax.BlockBuilder()
    variables = [relax.Var(name, relax.TensorType(shape, "float32")) for name, shape in params]
    with builder.function("main", variables):
        with builder.dataflow():
            out = builder.emit_output(body(builder, *variables))
        builder.emit_func_output(out)
    return builder.get()


def _shared_conv_output():
    """conv1 feeds a standalone relu kernel (texture in, texture out) and the residual add."""

    def body(bb, x, w1, w2):
        c1 = bb.emit(relax.op.nn.conv2d(x, w1))
        r = bb.emit(relax.op.nn.relu(c1))
        c2 = bb.emit(relax.op.nn.conv2d(r, w2, padding=[1, 1, 1, 1]))
        return relax.op.add(c2, c1)

    shapes = [("x", (1, 16, 10, 10)), ("w1", (16, 16, 1, 1)), ("w2", (16, 16, 3, 3))]
    return _function(shapes, body), [s for _, s in shapes]


def _nhwc_pool_channel_pad():
    """NHWC max pool whose fused epilogue pads channels 6 -> 8 (BlazeFace's residual branch)."""

    def body(bb, x, y):
        pooled = bb.emit(relax.op.nn.max_pool2d(x, [2, 2], [2, 2], layout="NHWC"))
        padded = bb.emit(relax.op.nn.pad(pooled, [0, 0, 0, 0, 0, 0, 0, 2]))
        return relax.op.nn.relu(relax.op.add(padded, y))

    shapes = [("x", (1, 16, 16, 6)), ("y", (1, 8, 8, 8))]
    return _function(shapes, body), [s for _, s in shapes]


def _unit_window_pool_negative_scale():
    """A 1x1 max pooling of stride 2 (an FPN's extra level) scaled by a negative factor: the
    scale must not be folded into the pooling's initial value (the lowest float)."""

    def body(bb, x, w, s):
        c = bb.emit(relax.op.nn.conv2d(x, w, padding=[1, 1, 1, 1]))
        pooled = bb.emit(relax.op.nn.max_pool2d(c, [1, 1], [2, 2]))
        return relax.op.multiply(pooled, relax.op.negative(relax.op.abs(s)))

    shapes = [("x", (1, 8, 10, 10)), ("w", (8, 8, 3, 3)), ("s", (1,))]
    return _function(shapes, body), [s for _, s in shapes]


def _nine_wide_intermediate():
    """A value read three times (so not inlined) in the fused kernel that packs the NHWC
    conv's input texture: its rows of 9 must not become a 9-lane vector, a type OpenCL C
    does not have (the build failed in CodeGenOpenCL)."""

    def body(bb, x, w):
        t = bb.emit(relax.op.sqrt(relax.op.add(relax.op.abs(x), relax.const(1.0, "float32"))))
        y = bb.emit(relax.op.concat([t, relax.op.nn.relu(t), relax.op.negative(t)], axis=1))
        y = bb.emit(relax.op.permute_dims(y, [0, 2, 3, 1]))
        conv = relax.op.nn.conv2d(y, w, padding=1, data_layout="NHWC", kernel_layout="HWIO")
        return relax.op.permute_dims(bb.emit(conv), [0, 3, 1, 2])

    shapes = [("x", (1, 1, 9, 9)), ("w", (3, 3, 3, 8))]
    return _function(shapes, body), [s for _, s in shapes]


def _channel_max_of_four_columns():
    """The maximum over the channels of a conv result 4 pixels wide: its 4 output columns
    are the image's width, not the lanes of a pixel (the build failed with an undefined
    variable when the reduction vectorized them)."""

    def body(bb, x, w):
        conv = bb.emit(relax.op.nn.conv2d(x, w))
        return relax.op.max(conv, axis=[1], keepdims=True)

    shapes = [("x", (1, 8, 32, 4)), ("w", (8, 8, 1, 1))]
    return _function(shapes, body), [s for _, s in shapes]


def _same_conv_twice(groups: int):
    """Two convolutions of one shape in a row: one PrimFunc, called texture -> texture, then
    texture -> buffer (the output leaves the blocked layout)."""

    def build():
        def body(bb, x, w1, w2):
            c1 = bb.emit(relax.op.nn.conv2d(x, w1, padding=[1, 1, 1, 1], groups=groups))
            return relax.op.nn.conv2d(c1, w2, padding=[1, 1, 1, 1], groups=groups)

        weight = (8, 8 // groups, 3, 3)
        shapes = [("x", (1, 8, 12, 12)), ("w1", weight), ("w2", weight)]
        return _function(shapes, body), [s for _, s in shapes]

    return build


CASES = {
    "standalone_elementwise_on_textures": _shared_conv_output,
    "reduction_epilogue_larger_than_output": _nhwc_pool_channel_pad,
    "same_conv_twice": _same_conv_twice(groups=1),
    "same_depthwise_conv_twice": _same_conv_twice(groups=8),
    "unit_window_pool_negative_scale": _unit_window_pool_negative_scale,
    "nine_wide_intermediate": _nine_wide_intermediate,
    "channel_max_of_four_columns": _channel_max_of_four_columns,
}


def _run(mod, target, dev, arrays):
    vm = relax.VirtualMachine(tvm.compile(mod, target=target), dev)
    return vm["main"](*[tvm.runtime.tensor(a, dev) for a in arrays]).numpy()


@pytest.mark.requires_opencl
@pytest.mark.parametrize("case", list(CASES))
def test_texture_build_matches_llvm(case, rng):
    mod, shapes = CASES[case]()
    arrays = [_signed(rng, shape) for shape in shapes]
    expected = _run(mod, "llvm", tvm.cpu(), arrays)
    actual = _run(mod, TEXTURE_TARGET, tt.tvm_device(), arrays)
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("case", ["same_conv_twice", "same_depthwise_conv_twice"])
def test_one_kernel_per_call_site_scopes(case):
    """The two calls of one conv PrimFunc write an image and a buffer: each has its own
    kernel (with one kernel, the first call passed an image where it took a buffer)."""
    mod, _ = CASES[case]()
    kernels = tt.kernel_sources(tvm.compile(mod, target=TEXTURE_TARGET))
    convs = [k for k in kernels.values() if "conv2d" in k.name]
    assert sorted(k.writes_image for k in convs) == [False, True], [k.name for k in convs]
    assert all(k.reads_image for k in convs), [k.params for k in convs]


def test_scalar_texture_store_is_a_compile_error(monkeypatch):
    """Without dlight.adreno.Fallback a standalone relu writes one channel per thread: the
    TIR pipeline must refuse it instead of producing a kernel that overwrites pixels."""
    monkeypatch.setattr(dl.adreno, "Fallback", dl.gpu.Fallback)
    mod, _ = _shared_conv_output()
    with pytest.raises(Exception, match="write a single channel into a 4-channel pixel"):
        tvm.compile(mod, target=TEXTURE_TARGET)
