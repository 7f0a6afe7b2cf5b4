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
"""Texture modules on a device reached over TVM RPC.

With ``TVM_TRACKER_HOST``, ``TVM_TRACKER_PORT`` and ``RPC_DEVICE_KEY`` set, the tests use the
device registered under that key (see rpc_testing.py for the target host and the NDK).
Otherwise they start a tracker and an RPC server on loopback, the server using this machine's
OpenCL device, so the whole path (export_library, upload, remote load, remote OpenCL run) is
tested on any machine with an OpenCL device.
"""

import numpy as np
import pytest

import tvm

import rpc_testing
import texture_testing as tt


def _conv_net(nb):
    """conv2d 3x3 -> bias -> relu -> conv2d 3x3: the first result stays in a texture."""
    x = nb.input((1, 8, 16, 16))
    y = nb.emit(tvm.relax.op.nn.relu(nb.bias(nb.conv2d(x, 16))))
    return nb.conv2d(y, 8)


def _build_for_device(mod: tvm.IRModule):
    """Build for the texture target with the device's host (RPC_TARGET_HOST)."""
    target = tvm.target.Target(tt.TEXTURE_TARGET_TAG, host=rpc_testing.target_host())
    if tt.build_mode().plain:
        return tvm.compile(mod, target=target)
    return tvm.compile(
        mod, target=target, tir_pipeline=tt._WORKAROUND_TIR_PIPELINE  # pylint: disable=W0212
    )


def _skip_without_local_device():
    info = tt.opencl_device()
    if not info.available:
        pytest.skip(f"no tracker in the environment and no local OpenCL device: {info.reason}")


@pytest.fixture(scope="module")
def local_rpc():
    """A loopback tracker, started only when the environment names no tracker."""
    if rpc_testing.tracker_from_env() is not None:
        yield None
        return
    _skip_without_local_device()
    local = rpc_testing.LocalRpc()
    try:
        yield local
    finally:
        local.close()


@pytest.fixture(scope="module")
def device_address(local_rpc):
    address = rpc_testing.tracker_from_env()
    if address is not None:
        return address
    local_rpc.start_server(rpc_testing.LOCAL_KEY)
    return local_rpc.address(rpc_testing.LOCAL_KEY)


@pytest.fixture(scope="module")
def remote(device_address):
    session = rpc_testing.RemoteDevice(device_address)
    exists, name = session.describe()
    if not exists:
        pytest.skip(f"{device_address}: the remote end has no OpenCL device")
    print(f"remote OpenCL device: {name} ({device_address})")
    yield session
    session.close()


def test_conv2d_texture_over_rpc(remote, rng):
    """Exported, uploaded, loaded and run remotely, a conv2d texture module gives the LLVM
    reference's answer (float32 tolerances of texture_testing)."""
    mod = tt.build_network(_conv_net, "float32")
    executable = _build_for_device(mod)
    tt.assert_kernels_use_images(executable)
    remote_module = remote.load(executable, "conv2d_texture.so")
    inputs = tt.random_inputs(mod, rng)
    actual = remote.run(remote_module, inputs)
    desired = tt.reference(_conv_net, inputs)
    tt.assert_close(actual, desired, "float32", context=f"conv2d over RPC ({remote.address})")


def test_lost_connection_is_reported(local_rpc, rng):
    """Killing the RPC server in the middle of a session makes the next remote call fail with
    an error that names the device and the operation, not a bare socket error."""
    if local_rpc is None:
        pytest.skip("the server of a tracker-registered device is not ours to kill")
    key = rpc_testing.LOCAL_KEY + "-killed"
    server = local_rpc.start_server(key)
    session = rpc_testing.RemoteDevice(local_rpc.address(key))
    try:
        mod = tt.build_network(_conv_net, "float32")
        remote_module = session.load(_build_for_device(mod), "conv2d_texture.so")
        inputs = tt.random_inputs(mod, rng)
        assert len(session.run(remote_module, inputs)) == 1  # the session works

        server.terminate()  # kills the server process and the child serving this session

        with pytest.raises(rpc_testing.RpcConnectionLost) as info:
            session.run(remote_module, inputs)
        message = str(info.value)
        assert f"lost the RPC connection to device key {key!r}" in message
        assert f"tracker 127.0.0.1:{local_rpc.tracker.port}" in message
        assert "while running main" in message
        assert "the server closed the session" in message
        # The RPC channel's own error stays attached as the cause.
        cause = info.value.__cause__
        assert isinstance(cause, tvm.error.InternalError), repr(cause)
        assert any(m in str(cause) for m in rpc_testing.LOST_CONNECTION_MARKERS), str(cause)
    finally:
        session.close()


def test_env_tracker_needs_all_three_variables(monkeypatch):
    """A partly configured remote device is an error that says what is missing."""
    monkeypatch.setenv(rpc_testing.ENV_HOST, "tracker.example")
    monkeypatch.delenv(rpc_testing.ENV_PORT, raising=False)
    monkeypatch.delenv(rpc_testing.ENV_KEY, raising=False)
    with pytest.raises(ValueError, match="TVM_TRACKER_PORT, RPC_DEVICE_KEY not"):
        rpc_testing.tracker_from_env()
    monkeypatch.setenv(rpc_testing.ENV_PORT, "9190")
    monkeypatch.setenv(rpc_testing.ENV_KEY, "adreno-740")
    address = rpc_testing.tracker_from_env()
    assert (address.host, address.port, address.key, address.local) == (
        "tracker.example",
        9190,
        "adreno-740",
        False,
    )
