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
"""Texture scopes: balanced images, the target's image limits, dynamic shapes.

* ``choose_texture_scope`` picks the fitting scope with the most square image.
* With a target whose limits are small (16 pixels per side, 8 layers), a tensor just under a
  limit stays in a texture and one just over it falls back to buffers, and both give the right
  answer.  (``AnnotateCustomMemoryScope`` refuses a side equal to the limit, so "just under"
  is one pixel below it.)
* A tensor with a dynamic shape never gets a texture scope (the C++ pass names one,
  ``global.texture-nchw``, that nothing downstream knows): it stays in buffers, its kernels
  are scheduled by the generic GPU rules (``SymbolicShapeFallback``), and a module with a
  symbolic batch, height or width compiles once and runs right at several sizes.
"""

import numpy as np
import pytest

import tvm
from tvm import relax, te, topi
from tvm.s_tir import dlight as dl
from tvm.relax.backend.adreno.transform import TextureLimits, choose_texture_scope

import texture_testing as tt

SMALL = TextureLimits(spatial=16, depth=8)


@pytest.mark.parametrize(
    "shape,limits,expected",
    [
        # batch 1 activation: 4 layers of 14x14 beats 784x1 (weight) and 196x4 (nhwc)
        ((1, 4, 14, 14, 4), TextureLimits(), "global.texture"),
        # 16 layers of 56x56 (texture); nhwc 3136x16 and weight 50176x1 are worse or too wide
        ((1, 16, 56, 56, 4), TextureLimits(), "global.texture"),
        # 16 wide x 1 high (texture, 16 layers) and 4x2 (nhwc, 8 layers) lose to 8x8 (weight)
        ((8, 2, 1, 4, 4), TextureLimits(), "global.texture-weight"),
        # too many layers for texture: nhwc 196x512 fits and is squarer than weight
        ((1, 512, 14, 14, 4), TextureLimits(depth=256), "global.texture-nhwc"),
        # at the spatial limit exactly (inclusive): fits
        ((1, 4, 16, 16, 4), SMALL, "global.texture"),
        # one over: 17 wide does not fit, nhwc 289 and weight 1156 are too wide: buffers
        ((1, 4, 17, 17, 4), SMALL, "global"),
        # 8 layers fit, 9 do not (nhwc 64 wide, weight 576 wide: too wide)
        ((1, 8, 8, 8, 4), SMALL, "global.texture"),
        ((1, 9, 8, 8, 4), SMALL, "global"),
        # not a packed tensor, or dynamic: buffers
        ((1, 16, 8, 8), TextureLimits(), "global"),
        ((tvm.tirx.Var("n", "int64"), 4, 8, 8, 4), TextureLimits(), "global"),
    ],
)
def test_choose_texture_scope(shape, limits, expected):
    assert choose_texture_scope(shape, limits) == expected


def _small_limit_target(spatial=16, depth=8) -> tvm.target.Target:
    config = dict(tt.texture_target().export())
    config["texture_spatial_limit"] = spatial
    config["texture_depth_limit"] = depth
    return tvm.target.Target(config)


def _lower(mod, target):
    with target:
        passes = relax.pipeline.library_dispatch_passes(target)
        passes += relax.pipeline.legalize_passes(target)
        return tvm.transform.Sequential(passes)(mod)


def _conv_relu(channels, side):
    def _fn(nb):
        y = nb.conv2d(nb.input((1, channels, side, side)), channels, kernel=3)
        return nb.emit(relax.op.nn.relu(nb.conv2d(nb.emit(relax.op.nn.relu(y)), channels, 3)))

    return _fn


def _conv_io_scopes(lowered):
    convs = tt.conv2d_calls(lowered)
    assert convs, tt.describe_scopes(lowered)
    return convs


# (name, channels, side, texture expected): the conv2d activations are (1, C/4, side, side, 4)
LIMIT_CASES = [
    ("spatial_under", 16, 15, True),
    ("spatial_over", 16, 17, False),
    ("depth_under", 28, 8, True),  # 7 layers
    ("depth_over", 36, 8, False),  # 9 layers; nhwc would be 64 wide
]


@pytest.mark.parametrize("name,channels,side,texture", LIMIT_CASES)
def test_limit_scopes(name, channels, side, texture):
    target = _small_limit_target()
    mod = tt.build_network(_conv_relu(channels, side), "float32")
    lowered = _lower(mod, target)
    scopes = [s for c in _conv_io_scopes(lowered) for s in c.inputs[:1] + c.outputs]
    if texture:
        assert any(tt.is_texture(s) for s in scopes), f"{name}: " + tt.describe_scopes(lowered)
        for s in scopes:
            assert s in ("global", "global.texture"), f"{name}: " + tt.describe_scopes(lowered)
    else:
        assert all(s == "global" for s in scopes), f"{name}: " + tt.describe_scopes(lowered)
    tvm.compile(mod, target=target)


@pytest.mark.requires_opencl
@pytest.mark.parametrize("name,channels,side,texture", LIMIT_CASES)
def test_limit_numerics(name, channels, side, texture, rng):
    del texture
    fn = _conv_relu(channels, side)
    mod = tt.build_network(fn, "float32")
    ex = tvm.compile(mod, target=_small_limit_target())
    inputs = tt.random_inputs(mod, rng)
    actual = tt.run_vm(ex, tt.tvm_device(), inputs)
    tt.assert_close(actual, tt.reference(fn, inputs), "float32", context=name)


def _dynamic_module(dims) -> tvm.IRModule:
    """conv2d 3x3 -> relu -> max_pool2d 2x2 -> conv2d 1x1 on an input of shape ``dims``, where
    a string is a symbolic dimension."""
    syms = {}
    shape = [
        syms.setdefault(d, tvm.tirx.Var(d, "int64")) if isinstance(d, str) else d for d in dims
    ]
    channels = int(dims[1])
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType(shape, "float32"))
    w0 = relax.Var("w0", relax.TensorType([channels, channels, 3, 3], "float32"))
    w1 = relax.Var("w1", relax.TensorType([channels, channels, 1, 1], "float32"))
    with bb.function("main", [x, w0, w1]):
        with bb.dataflow():
            y = bb.emit(relax.op.nn.relu(relax.op.nn.conv2d(x, w0, padding=1)))
            y = bb.emit(relax.op.nn.max_pool2d(y, pool_size=2, strides=2))
            out = bb.emit_output(relax.op.nn.conv2d(y, w1))
        bb.emit_func_output(out)
    return bb.get()


# name -> symbolic input shape, and the concrete shapes each build is run with
DYNAMIC_CASES = {
    "batch": (("n", 8, 8, 8), [(1, 8, 8, 8), (2, 8, 8, 8), (3, 8, 8, 8)]),
    "spatial": ((1, 8, "h", "w"), [(1, 8, 8, 8), (1, 8, 6, 10), (1, 8, 12, 7)]),
    "batch_and_spatial": (("n", 4, "h", "h"), [(1, 4, 4, 4), (2, 4, 10, 10)]),
}


@pytest.mark.parametrize("case", list(DYNAMIC_CASES))
def test_dynamic_shape_scopes(case):
    """A tensor with a symbolic shape never gets a texture scope: every call_tir argument and
    result is a buffer before the schedules run (and so none is named global.texture-nchw)."""
    target = tt.texture_target()
    with target:
        passes = relax.pipeline.library_dispatch_passes(target)
        passes += relax.pipeline.legalize_passes(target)
        passes = [p for p in passes if p.info.name != "ApplyDefaultSchedule"]
        lowered = tvm.transform.Sequential(passes)(_dynamic_module(DYNAMIC_CASES[case][0]))
    calls = tt.texture_call_scopes(lowered)
    assert any("conv2d_NCHWc" in c.func for c in calls), tt.describe_scopes(lowered)
    for call in calls:
        for scope in call.inputs + call.outputs:
            assert scope == "global", tt.describe_scopes(lowered)


def test_symbolic_shape_fallback_takes_only_symbolic_kernels():
    """The rule schedules a PrimFunc with a symbolic shape and leaves a static one to the
    Adreno rules."""
    target = tt.texture_target()
    rule = dl.adreno.SymbolicShapeFallback()
    for dims, taken in [(("n", 4, 6, 6), True), ((2, 4, 6, 6), False)]:
        shape = [tvm.tirx.Var(d, "int64") if isinstance(d, str) else d for d in dims]
        data = te.placeholder(shape, "float32", name="data")
        func = te.create_prim_func([data, topi.nn.relu(data)]).with_attr("target", target)
        assert (rule.apply(func, target, False) is not None) == taken, dims


@pytest.mark.parametrize("case", list(DYNAMIC_CASES))
def test_dynamic_shape_build(case):
    """The whole module compiles (dl.adreno.LayoutTransform used to call min() on a symbolic
    extent, SpecializePrimFuncBasedOnCallSite to reject ``h // 2`` buffer shapes), and no
    kernel takes an image."""
    ex = tt.build_texture(_dynamic_module(DYNAMIC_CASES[case][0]))
    kernels = tt.kernel_sources(ex)
    assert any("conv2d" in name for name in kernels), sorted(kernels)
    assert all(not k.image_params for k in kernels.values()), sorted(kernels)


@pytest.mark.requires_opencl
@pytest.mark.parametrize("case", list(DYNAMIC_CASES))
def test_dynamic_shape_numerics(case, rng):
    """One build, run at several concrete shapes, against the LLVM build of the same module."""
    dims, shapes = DYNAMIC_CASES[case]
    mod = _dynamic_module(dims)
    ex = tt.build_texture(mod)
    ref = tt.build_llvm(mod)
    channels = dims[1]
    for shape in shapes:
        x = rng.uniform(-1, 1, size=shape).astype("float32")
        w0 = rng.uniform(-1, 1, size=(channels, channels, 3, 3)) / np.sqrt(9 * channels)
        w1 = rng.uniform(-1, 1, size=(channels, channels, 1, 1)) / np.sqrt(channels)
        inputs = [x, w0.astype("float32"), w1.astype("float32")]
        actual = tt.run_vm(ex, tt.tvm_device(), inputs)
        desired = tt.run_vm(ref, tvm.cpu(), inputs)
        tt.assert_close(actual, desired, "float32", context=f"{case} at {shape}")
