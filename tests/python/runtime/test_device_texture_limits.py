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
"""Tests of ``Device.texture_limits`` and ``Device.texture_spatial_limit``.

The limits are read through the global function ``runtime.opencl.image_limit`` of the OpenCL
runtime (locally, or from an RPC session's remote runtime).  The tests that need no device
replace that function with a stand-in; the others compare what the local OpenCL device reports
through TVM with what the OpenCL ICD loader reports for the same device.
"""

import ctypes
import ctypes.util
import importlib

import pytest

import tvm
import tvm.testing
from tvm import rpc

# ``tvm.runtime.device`` is the device constructor; the module of the Device class is needed.
device_module = importlib.import_module("tvm.runtime.device")

IMAGE_LIMIT_FUNC = "runtime.opencl.image_limit"

requires_image_limit_func = pytest.mark.skipif(
    tvm.get_global_func(IMAGE_LIMIT_FUNC, allow_missing=True) is None,
    reason=f"{IMAGE_LIMIT_FUNC} is not registered (the OpenCL runtime library of "
    "src/runtime/opencl is not loaded)",
)
requires_opencl_device = pytest.mark.skipif(
    not tvm.opencl(0).exist, reason="no OpenCL device on this machine"
)

# OpenCL constants of CL/cl.h, for the independent query through the ICD loader.
CL_DEVICE_TYPE_ALL = 0xFFFFFFFF
CL_DEVICE_IMAGE2D_MAX_WIDTH = 0x1011
CL_DEVICE_IMAGE2D_MAX_HEIGHT = 0x1012
CL_DEVICE_NAME = 0x102B
CL_DEVICE_IMAGE_MAX_ARRAY_SIZE = 0x1041


def opencl_image_limits_by_name():
    """Query every OpenCL device of the ICD loader for its image limits, without TVM.

    Returns
    -------
    limits : Dict[str, Tuple[int, int, int]] or None
        Device name -> (largest 2D image width, height, image array layers); None when no
        OpenCL library can be loaded.
    """
    lib = None
    for name in ("libOpenCL.so.1", ctypes.util.find_library("OpenCL")):
        if not name:
            continue
        try:
            lib = ctypes.CDLL(name)
            break
        except OSError:
            continue
    if lib is None:
        return None
    handle = ctypes.c_void_p
    size_out = ctypes.POINTER(ctypes.c_size_t)
    lib.clGetPlatformIDs.argtypes = [ctypes.c_uint32, ctypes.POINTER(handle), ctypes.c_void_p]
    lib.clGetDeviceIDs.argtypes = [
        handle,
        ctypes.c_uint64,
        ctypes.c_uint32,
        ctypes.POINTER(handle),
        ctypes.POINTER(ctypes.c_uint32),
    ]
    lib.clGetDeviceInfo.argtypes = [handle, ctypes.c_uint32, ctypes.c_size_t, handle, size_out]

    platforms = (handle * 16)()
    num_platforms = ctypes.c_uint32(0)
    if lib.clGetPlatformIDs(16, platforms, ctypes.byref(num_platforms)) != 0:
        return {}
    found = {}
    for platform in platforms[: num_platforms.value]:
        devices = (handle * 16)()
        num_devices = ctypes.c_uint32(0)
        if lib.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 16, devices, ctypes.byref(num_devices)):
            continue  # a platform without devices
        for device in devices[: num_devices.value]:
            name = ctypes.create_string_buffer(1024)
            lib.clGetDeviceInfo(device, CL_DEVICE_NAME, 1024, name, None)
            sizes = []
            for param in (
                CL_DEVICE_IMAGE2D_MAX_WIDTH,
                CL_DEVICE_IMAGE2D_MAX_HEIGHT,
                CL_DEVICE_IMAGE_MAX_ARRAY_SIZE,
            ):
                value = ctypes.c_size_t(0)
                lib.clGetDeviceInfo(device, param, ctypes.sizeof(value), ctypes.byref(value), None)
                sizes.append(value.value)
            found[name.value.decode()] = tuple(sizes)
    return found


@pytest.fixture(name="fake_image_limit")
def fixture_fake_image_limit(monkeypatch):
    """Replace the runtime's ``runtime.opencl.image_limit`` as ``Device`` looks it up.

    Returns
    -------
    install : Callable[[Optional[Tuple[int, int, int]]], List[Tuple[int, str]]]
        Called with (width, height, layers) to stand in for the runtime function, or with None
        to make it missing; returns the list its (device index, limit name) calls go to.
    """
    lookup = device_module.tvm_ffi.get_global_func
    calls = []

    def install(limits):
        def fake(index, what):
            calls.append((index, what))
            return dict(zip(("width", "height", "layers"), limits))[what]

        def get_global_func(name, allow_missing=False):
            if name == IMAGE_LIMIT_FUNC:
                return None if limits is None else fake
            return lookup(name, allow_missing=allow_missing)

        monkeypatch.setattr(device_module.tvm_ffi, "get_global_func", get_global_func)
        return calls

    return install


@pytest.mark.parametrize("kind", ["cpu", "cuda", "vulkan"])
def test_device_that_is_not_opencl_has_no_limits(kind, fake_image_limit):
    """Only OpenCL devices have image limits: the runtime function is not even asked."""
    calls = fake_image_limit((4096, 4096, 256))
    dev = tvm.runtime.device(kind, 0)
    assert dev.texture_limits() is None
    assert dev.texture_spatial_limit() is None
    assert not calls


@pytest.mark.parametrize(
    "limits, spatial",
    [((4096, 2048, 256), 2048), ((1024, 8192, 16), 1024), ((512, 512, 1), 512)],
)
def test_limits_are_the_runtime_values(limits, spatial, fake_image_limit):
    """The three values the runtime function returns for the device's index, in the order
    (width, height, layers); the spatial limit is the smaller side, an int (it used to be the
    driver version string of device attribute 12)."""
    calls = fake_image_limit(limits)
    dev = tvm.opencl(3)
    assert dev.texture_limits() == limits
    assert sorted(calls) == [(3, "height"), (3, "layers"), (3, "width")]
    result = dev.texture_spatial_limit()
    assert isinstance(result, int) and result == spatial


@pytest.mark.parametrize("limits", [None, (0, 0, 0), (4096, 0, 256), (4096, 4096, 0)])
def test_runtime_that_cannot_tell_gives_none(limits, fake_image_limit):
    """No runtime function (a runtime built without it), or a zero limit (a device without
    image support): None, not a partial or zero limit."""
    fake_image_limit(limits)
    dev = tvm.opencl(0)
    assert dev.texture_limits() is None
    assert dev.texture_spatial_limit() is None


class StubSession:
    """An RPC session stand-in whose remote runtime has ``functions``.

    Parameters
    ----------
    functions : Dict[str, Callable]
        The remote global functions by name; any other name is missing, as
        ``RPCSession.get_function`` says with an AttributeError.
    """

    def __init__(self, functions):
        self.functions = functions
        self.asked = []

    def get_function(self, name):
        """Look ``name`` up in the remote functions."""
        self.asked.append(name)
        if name not in self.functions:
            raise AttributeError(f"Module has no function '{name}'")
        return self.functions[name]


def remote_opencl_device(session, index):
    """An OpenCL device of the first RPC session, encoded as ``RPCSession.device`` does."""
    dev = tvm.runtime.device(
        tvm.opencl(0).dlpack_device_type() + device_module.RPC_SESS_MASK, index
    )
    dev._rpc_sess = session  # pylint: disable=protected-access
    return dev


def test_remote_device_asks_the_remote_runtime(fake_image_limit):
    """Over RPC the limits come from the session's runtime, not from this process's."""
    fake_image_limit((1, 1, 1))  # what this process would say
    remote_limits = {"width": 8192, "height": 4096, "layers": 512}
    session = StubSession({IMAGE_LIMIT_FUNC: lambda index, what: remote_limits[what] + index})
    dev = remote_opencl_device(session, 2)
    assert dev.texture_limits() == (8194, 4098, 514)
    assert session.asked == [IMAGE_LIMIT_FUNC]
    assert dev.texture_spatial_limit() == 4098


def test_remote_runtime_without_function_gives_none():
    """A remote runtime that predates the function: None rather than the AttributeError."""
    dev = remote_opencl_device(StubSession({}), 0)
    assert dev.texture_limits() is None
    assert dev.texture_spatial_limit() is None


@requires_opencl_device
@requires_image_limit_func
def test_local_device_reports_its_opencl_image_limits():
    """The limits of the local device are what OpenCL reports for it, positive; the spatial
    limit is the smaller side."""
    dev = tvm.opencl(0)
    limits = dev.texture_limits()
    assert limits is not None, f"{dev.device_name} reports no image limits"
    assert len(limits) == 3 and all(isinstance(v, int) and v > 0 for v in limits), limits
    assert dev.texture_spatial_limit() == min(limits[0], limits[1])

    reported = opencl_image_limits_by_name()
    if reported is None or dev.device_name not in reported:
        pytest.skip(f"the OpenCL ICD loader does not list {dev.device_name!r} (checked: {limits})")
    assert limits == reported[dev.device_name]


@requires_opencl_device
@requires_image_limit_func
def test_limits_through_an_rpc_session():
    """An RPC session's device reports the limits of the server's runtime: the same device."""
    session = rpc.LocalSession()
    remote = session.device("opencl", 0)
    assert remote.texture_limits() == tvm.opencl(0).texture_limits()
    assert remote.texture_spatial_limit() == tvm.opencl(0).texture_spatial_limit()


@requires_opencl_device
@requires_image_limit_func
def test_device_that_does_not_exist_is_an_error():
    """A device index past the selected devices raises the runtime's error, naming the index,
    rather than returning limits of another device."""
    index = next(i for i in range(1, 64) if not tvm.opencl(i).exist)
    with pytest.raises(RuntimeError, match=f"OpenCL device {index} does not exist"):
        tvm.opencl(index).texture_limits()


if __name__ == "__main__":
    tvm.testing.main()
