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
"""Tests of ``relax.backend.adreno.texture_target_for_device``.

The texture target built for a device carries the smaller of the target's and the device's
image limits (``texture_spatial_limit``: width and height, ``texture_depth_limit``: layers),
so that a tensor whose image does not fit the device stays in buffers.  The device's limits
come from ``Device.texture_limits``; most tests stand in for the runtime function behind it
(``runtime.opencl.image_limit``) and need no device.
"""

import importlib

import numpy as np
import pytest

import tvm
import tvm.testing
from tvm.relax.backend.adreno import texture_target_for_device
from tvm.script import ir as I
from tvm.script import relax as R

# ``tvm.runtime.device`` is the device constructor; the module of the Device class is needed.
device_module = importlib.import_module("tvm.runtime.device")

TEXTURE_TAG = "qcom/adreno-opencl-texture"
IMAGE_LIMIT_FUNC = "runtime.opencl.image_limit"

requires_image_limit_func = pytest.mark.skipif(
    tvm.get_global_func(IMAGE_LIMIT_FUNC, allow_missing=True) is None,
    reason=f"{IMAGE_LIMIT_FUNC} is not registered (the OpenCL runtime library of "
    "src/runtime/opencl is not loaded)",
)


@pytest.fixture(name="device_limits")
def fixture_device_limits(monkeypatch):
    """Make every OpenCL device report the given image limits.

    Returns
    -------
    install : Callable[[Optional[Tuple[int, int, int]]], List[str]]
        Called with (width, height, layers), or None for a runtime without the function;
        returns the list the names of the asked limits go to.
    """
    lookup = device_module.tvm_ffi.get_global_func
    asked = []

    def install(limits):
        def fake(_index, what):
            asked.append(what)
            return dict(zip(("width", "height", "layers"), limits))[what]

        def get_global_func(name, allow_missing=False):
            if name == IMAGE_LIMIT_FUNC:
                return None if limits is None else fake
            return lookup(name, allow_missing=allow_missing)

        monkeypatch.setattr(device_module.tvm_ffi, "get_global_func", get_global_func)
        return asked

    return install


def texture_target(spatial=None, depth=None):
    """The Adreno texture target with an LLVM host, its image limits optionally replaced."""
    config = dict(tvm.target.Target(TEXTURE_TAG, host="llvm").export())
    if spatial is not None:
        config["texture_spatial_limit"] = spatial
    if depth is not None:
        config["texture_depth_limit"] = depth
    return tvm.target.Target(config)


def image_limits(target):
    """(texture_spatial_limit, texture_depth_limit) of ``target`` as ints."""
    return int(target.attrs["texture_spatial_limit"]), int(target.attrs["texture_depth_limit"])


def without_image_limits(target):
    """The exported config of ``target`` less its image limits (what must not change)."""
    config = dict(target.export())
    config.pop("texture_spatial_limit")
    config.pop("texture_depth_limit")
    return config


@pytest.mark.parametrize(
    "target_limits, device, expected",
    [
        # the tag's defaults (16384, 2048) over a device with smaller images
        ((None, None), (4096, 2048, 256), (2048, 256)),
        ((None, None), (8192, 16384, 4096), (8192, 2048)),
        # limits already below the device's are kept
        ((64, 8), (1 << 20, 1 << 20, 1 << 20), (64, 8)),
        ((1 << 20, 1 << 20), (4096, 4096, 512), (4096, 512)),
    ],
)
def test_limits_are_the_smaller_of_target_and_device(
    target_limits, device, expected, device_limits
):
    """Each limit becomes the smaller of the target's and the device's (the spatial one also
    the smaller image side); every other part of the target, its host included, is kept."""
    device_limits(device)
    base = texture_target(*target_limits)
    fitted = texture_target_for_device(tvm.opencl(0), base)
    assert image_limits(fitted) == expected
    assert without_image_limits(fitted) == without_image_limits(base)
    assert fitted.host is not None and fitted.host.kind.name == "llvm"
    assert "texture" in fitted.keys


@pytest.mark.parametrize(
    "target",
    [None, TEXTURE_TAG, {"kind": "opencl", "device": "adreno", "keys": ["texture", "gpu"]}],
    ids=["default", "tag", "dict"],
)
def test_target_given_as_tag_dict_or_default(target, device_limits):
    """The target may be a tag or a config dict; without one, the Adreno texture tag. A
    target that names no limits gets the device's."""
    device_limits((4096, 1024, 128))
    fitted = texture_target_for_device(tvm.opencl(0), target)
    assert "texture" in fitted.keys and fitted.kind.name == "opencl"
    assert image_limits(fitted) == (1024, 128)


@pytest.mark.parametrize("target", ["opencl", "llvm", tvm.target.Target("qcom/adreno-opencl")])
def test_target_without_textures_is_refused(target, device_limits):
    """A target without the ``texture`` key has no texture limits to fit: a ValueError that
    says so, raised before the device is asked."""
    asked = device_limits((4096, 4096, 256))
    with pytest.raises(ValueError, match="is not a texture target"):
        texture_target_for_device(tvm.opencl(0), target)
    assert not asked


@pytest.mark.parametrize(
    "dev, runtime_limits",
    [(tvm.opencl(0), None), (tvm.opencl(0), (0, 0, 0)), (tvm.cpu(0), (4096, 4096, 256))],
    ids=["no-runtime-function", "no-image-support", "not-opencl"],
)
def test_unreported_limits_keep_target_with_warning(dev, runtime_limits, device_limits):
    """A device that reports no limits (not OpenCL, no images, or a runtime without the
    function): the target unchanged, and a warning naming the device."""
    device_limits(runtime_limits)
    base = texture_target(spatial=4096, depth=512)
    with pytest.warns(UserWarning, match="does not report OpenCL image limits") as record:
        fitted = texture_target_for_device(dev, base)
    assert str(dev) in str(record[0].message)
    assert fitted.export() == base.export()


@I.ir_module
class SmallConv:
    """A 3x3 conv and ReLU whose NCHW4c activations are 8x8 images, its weights 3x3."""

    @R.function
    def main(  # pylint: disable=no-self-argument
        x: R.Tensor((1, 4, 8, 8), "float32"), weight: R.Tensor((4, 4, 3, 3), "float32")
    ):
        with R.dataflow():
            y = R.nn.relu(R.nn.conv2d(x, weight, padding=1))
            R.output(y)
        return y


def opencl_sources(module):
    """The OpenCL C sources of ``module`` and the modules it imports, recursively."""
    sources = [module.inspect_source()] if module.kind == "opencl" else []
    for imported in module.imports:
        sources += opencl_sources(imported)
    return sources


def uses_images(executable):
    """Whether a kernel of the compiled ``executable`` takes an image argument."""
    sources = opencl_sources(executable.mod)
    assert sources, "no OpenCL module in the executable"
    return any("image2d_array_t" in source for source in sources)


# No image of SmallConv in any texture scope fits 4x4 pixels and one layer.
TINY_DEVICE = (4, 4, 1)


def test_oversized_tensors_stay_in_buffers(device_limits):
    """With the tag's limits the conv's tensors go to images; with the limits of a device whose
    images are smaller than any of them, no kernel takes an image."""
    device_limits(TINY_DEVICE)
    base = texture_target()
    assert uses_images(tvm.compile(SmallConv, target=base))
    fitted = texture_target_for_device(tvm.opencl(0), base)
    assert image_limits(fitted) == (4, 1)
    assert not uses_images(tvm.compile(SmallConv, target=fitted))


def run_small_conv(executable, dev, inputs):
    """Run the compiled SmallConv on ``dev``; returns the output as numpy."""
    machine = tvm.relax.VirtualMachine(executable, dev)
    return machine["main"](*[tvm.runtime.tensor(value, dev) for value in inputs]).numpy()


@pytest.mark.requires_opencl
def test_buffer_fallback_computes_the_conv(device_limits):
    """The conv compiled for the tiny device's limits (buffers only) runs on the local device
    and matches the LLVM build."""
    device_limits(TINY_DEVICE)
    fitted = texture_target_for_device(tvm.opencl(0), texture_target())
    rng = np.random.default_rng()
    # |x| in [0.5, 1] with random signs: no zeros. The conv sums 36 products in float32: a
    # different order of the sum moves the result by far less than 1e-5 of the output scale.
    inputs = [
        (rng.uniform(0.5, 1.0, shape) * rng.choice([-1.0, 1.0], shape)).astype("float32")
        for shape in [(1, 4, 8, 8), (4, 4, 3, 3)]
    ]
    executable = tvm.compile(SmallConv, target=fitted)
    assert not uses_images(executable)
    expected = run_small_conv(tvm.compile(SmallConv, target="llvm"), tvm.cpu(0), inputs)
    actual = run_small_conv(executable, tvm.opencl(0), inputs)
    scale = max(1.0, float(np.abs(expected).max()))
    tvm.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-5 * scale)


@pytest.mark.requires_opencl
@requires_image_limit_func
def test_target_for_the_local_device():
    """For the local device and a target with larger limits: the device's own limits."""
    dev = tvm.opencl(0)
    width, height, layers = dev.texture_limits()
    fitted = texture_target_for_device(dev, texture_target(spatial=1 << 24, depth=1 << 24))
    assert image_limits(fitted) == (min(width, height), layers)


@pytest.mark.requires_opencl
@requires_image_limit_func
def test_device_that_does_not_exist_is_an_error():
    """A device index past the selected devices is the runtime's error naming it, not a
    target with made-up limits."""
    index = next(i for i in range(1, 64) if not tvm.opencl(i).exist)
    with pytest.raises(RuntimeError, match=f"OpenCL device {index} does not exist"):
        texture_target_for_device(tvm.opencl(index))


if __name__ == "__main__":
    tvm.testing.main()
