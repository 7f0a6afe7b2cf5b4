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
# pylint: disable=invalid-name,not-callable
"""Float16 texture storage with float32 arithmetic (``HalfTextureStorage``).

The kernels stay float32 (``read_imagef`` / ``write_imagef``); the images between them are
``CL_HALF_FLOAT``, so the mode needs images but no ``cl_khr_fp16`` and runs on PoCL and Intel.
Checked here: the pass's rewrite and its off switch, the numbers against the float32 reference
on fresh random inputs within the half-storage bound (and measurably not float32: the error is
that of half rounding), and the runtime counters: every image between kernels is half, and the
bytes of the images are half those of the float32 build.
"""

import numpy as np
import pytest

import tvm
from tvm import relax
from tvm.relax.backend.adreno.transform import HalfTextureStorage, half_storage_decisions

import texture_testing as tt


def _conv_chain(nb):
    x = nb.input((1, 16, 14, 14))
    y = nb.emit(relax.op.nn.relu(nb.bias(nb.conv2d(x, 32))))
    y = nb.emit(relax.op.nn.relu(nb.bias(nb.conv2d(y, 32, kernel=1))))
    return nb.conv2d(y, 16)


def _depthwise_pool(nb):
    x = nb.input((1, 32, 16, 16))
    y = nb.emit(relax.op.nn.relu(nb.conv2d(x, 32, groups=32)))
    y = nb.emit(relax.op.nn.max_pool2d(y, pool_size=2, strides=2))
    return nb.conv2d(y, 16, kernel=1)


def _residual(nb):
    x = nb.input((1, 16, 12, 12))
    y = nb.emit(relax.op.nn.relu(nb.conv2d(x, 16)))
    y = nb.conv2d(y, 16)
    return nb.emit(relax.op.nn.relu(relax.op.add(x, y)))


NETWORKS = {"conv_chain": _conv_chain, "depthwise_pool": _depthwise_pool, "residual": _residual}


@tvm.instrument.pass_instrument
class _After:
    """The module after each named pass of a compilation."""

    def __init__(self, *names):
        self.names, self.mods = names, {}

    def run_after_pass(self, mod, info):
        if info.name in self.names:
            self.mods[info.name] = mod


def _planned(mod):
    """``mod`` as the texture pipeline has it right after PlanTextureStorage."""
    snap = _After("PlanTextureStorage", "HalfTextureStorage")
    with tvm.transform.PassContext(opt_level=3, instruments=[snap]):
        tt.build_texture(mod)
    return snap.mods


_ALLOC_STORAGE = tvm.ir.Op.get("relax.vm.alloc_storage")
_ALLOC_TENSOR = tvm.ir.Op.get("relax.memory.alloc_tensor")


def _allocations(func):
    storages, tensors = {}, {}
    for block in func.body.blocks:
        for binding in block.bindings:
            value = binding.value
            if isinstance(value, relax.Call) and value.op.same_as(_ALLOC_STORAGE):
                storages[binding.var.name] = (str(value.args[2].value), str(value.args[3].value))
            if isinstance(value, relax.Call) and value.op.same_as(_ALLOC_TENSOR):
                tensors[binding.var.name] = (value.args[0].name, int(value.args[4].value))
    return storages, tensors


def test_off_unless_asked():
    """Without the option (and without enabled=True) the pipeline's pass changes nothing."""
    mods = _planned(tt.build_network(_conv_chain, "float32"))
    tvm.ir.assert_structural_equal(mods["HalfTextureStorage"], mods["PlanTextureStorage"])
    planned = mods["PlanTextureStorage"]
    tvm.ir.assert_structural_equal(HalfTextureStorage(enabled=False)(planned), planned)
    tvm.ir.assert_structural_equal(HalfTextureStorage()(planned), planned)


def test_rewrites_image_storage_to_half_pixels():
    """Every image storage becomes float16 in global.texture-half; its tensors stay float32 and
    name a virtual device of the -half scope; buffers and the signature are untouched."""
    planned = _planned(tt.build_network(_conv_chain, "float32"))["PlanTextureStorage"]
    after = HalfTextureStorage(enabled=True)(planned)
    before_storages, before_tensors = _allocations(planned["main"])
    after_storages, after_tensors = _allocations(after["main"])
    vdevices = list(after.global_infos["vdevice"])
    assert [str(v.memory_scope) for v in vdevices[: len(planned.global_infos["vdevice"])]] == [
        str(v.memory_scope) for v in planned.global_infos["vdevice"]
    ]
    textures = {n for n, (_, scope) in before_storages.items() if scope == "global.texture"}
    assert textures, "the plan has no image storage"
    for name, (dtype, scope) in after_storages.items():
        if name in textures:
            assert (dtype, scope) == ("float16", "global.texture-half")
        else:
            assert (dtype, scope) == before_storages[name]
    for name, (storage, index) in after_tensors.items():
        if storage in textures:
            assert str(vdevices[index].memory_scope).endswith("-half"), (name, index)
        else:
            assert index == before_tensors[name][1]
    tvm.ir.assert_structural_equal(after["main"].params, planned["main"].params)
    tvm.ir.assert_structural_equal(after["main"].ret_ty, planned["main"].ret_ty)
    decisions = half_storage_decisions(planned)["main"]
    assert {d.reason for d in decisions} == {"half", "buffer"}
    assert all(d.dtype == "float32" for d in decisions)


def test_float16_textures_stay_as_they_are():
    """A float16 network has no float32 texture: nothing to do, and the census says why."""
    planned = _planned(tt.build_network(_conv_chain, "float16"))["PlanTextureStorage"]
    tvm.ir.assert_structural_equal(HalfTextureStorage(enabled=True)(planned), planned)
    reasons = {d.reason for d in half_storage_decisions(planned)["main"]}
    assert "half" not in reasons and "dtype" in reasons


def _counters():
    return {str(k): int(v) for k, v in tvm.get_global_func("runtime.opencl.counters")().items()}


def _run_counted(ex, inputs):
    # Images pooled by earlier tests of this process would be reused instead of created.
    tvm.get_global_func("vm.builtin.memory_manager.clear")()
    tvm.get_global_func("runtime.opencl.reset_counters")()
    out = tt.run_vm(ex, tt.tvm_device(), inputs)
    return out, _counters()


@pytest.mark.requires_opencl
@pytest.mark.parametrize("name", list(NETWORKS))
def test_half_storage_numerics_and_images(name, rng):
    """Outputs within the half-storage bound of the float32 reference, with an error that only
    half rounding explains; every image created is CL_HALF_FLOAT and the images take half the
    bytes of the float32 build's."""
    net = NETWORKS[name]
    mod = tt.build_network(net, "float32")
    inputs = tt.random_inputs(mod, rng)
    reference = tt.reference(net, inputs)[0]
    half, half_counts = _run_counted(tt.build_texture_half_storage(mod), inputs)
    full, full_counts = _run_counted(tt.build_texture(mod), inputs)
    assert half[0].dtype == np.float32 and half[0].shape == reference.shape
    scale = float(np.abs(reference).max())
    rtol, atol = tt.HALF_STORAGE_TOLERANCE
    np.testing.assert_allclose(half[0], reference, rtol=rtol, atol=atol * scale)
    half_error = float(np.abs(half[0] - reference).max()) / scale
    full_error = float(np.abs(full[0] - reference).max()) / scale
    # Half rounding (2**-11 relative) of every intermediate shows, float32 reassociation not.
    assert half_error > 1e-4 > full_error, (half_error, full_error)
    assert half_counts["images_created"] > 0
    assert half_counts["half_images_created"] == half_counts["images_created"]
    assert full_counts["half_images_created"] == 0
    assert full_counts["images_created"] == half_counts["images_created"]
    assert 2 * half_counts["image_bytes_created"] == full_counts["image_bytes_created"]


@pytest.mark.requires_opencl
def test_host_copies_round_to_nearest_even():
    """A float32 tensor in a -half scope reads back what float16 rounding gives (numpy's),
    across the half range: normals, subnormals, overflow to inf, NaN."""
    dev = tt.tvm_device()
    shape = (1, 16, 1024, 4)
    values = np.arange(65536, dtype=np.uint16).view(np.float16).astype(np.float32)
    rng = np.random.default_rng()
    scaled = rng.standard_normal(65536).astype(np.float32) * np.exp2(
        rng.integers(-30, 18, 65536)
    ).astype(np.float32)
    for data in (values, scaled):
        tensor = tvm.runtime.empty(shape, "float32", dev, mem_scope="global.texture-half")
        tensor.copyfrom(data.reshape(shape))
        with np.errstate(over="ignore"):
            expected = data.astype(np.float16).astype(np.float32)
        np.testing.assert_array_equal(tensor.numpy().ravel(), expected)


def test_half_scope_rejects_other_dtypes():
    """Only float32 (or float16) tensors can live in half pixels: one clear error."""
    if not tt.opencl_device().available:
        pytest.skip(f"no OpenCL device: {tt.opencl_device().reason}")
    with pytest.raises(ValueError, match="supports float32 and float16 only"):
        tvm.runtime.empty((1, 2, 3, 4), "int32", tt.tvm_device(), mem_scope="global.texture-half")
