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
"""Running texture modules on a device behind a TVM RPC tracker.

Where the device is
  ``TVM_TRACKER_HOST``, ``TVM_TRACKER_PORT``, ``RPC_DEVICE_KEY``: a tracker and the key under
  which the device's RPC server registered (``python -m tvm.exec.rpc_server --tracker=HOST:PORT
  --key=KEY`` on the device).  All three or none.
  ``RPC_TARGET_HOST``: the host part of the target for that device (default ``llvm``, right for
  a server on this machine; ``llvm -mtriple=aarch64-linux-android`` for a phone).
  ``TVM_NDK_CC``: when set, modules are linked with ``tvm.support.ndk.create_shared`` (Android).

Without the variables, ``LocalRpc`` starts a tracker and an RPC server on loopback; the server
runs in its own process and uses this machine's OpenCL device.

``RemoteDevice`` uploads an executable, loads it remotely and runs ``main`` on the remote
OpenCL device; when the server goes away in the middle of a session, its calls raise
``RpcConnectionLost`` naming the device, the tracker and what was being done, instead of
the socket error of the RPC channel.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import tempfile
import time
from typing import List, Optional, Sequence, Tuple

import numpy as np

import tvm
from tvm import relax, rpc
from tvm.rpc.tracker import Tracker

ENV_HOST, ENV_PORT, ENV_KEY = "TVM_TRACKER_HOST", "TVM_TRACKER_PORT", "RPC_DEVICE_KEY"
LOCAL_KEY = "texture-tests-local"
LOOPBACK = "127.0.0.1"

# Messages of the RPC channel when the other end is gone (src/runtime/rpc/rpc_socket_impl.cc,
# rpc_endpoint.cc): a recv on a reset connection, a send on a closed one, the shutdown code a
# dying server sends in place of a return value, a session the server expired.
LOST_CONNECTION_MARKERS = (
    "SockChannel::Recv",
    "SockChannel::Send",
    "Connection reset",
    "Broken pipe",
    "code=kShutdown",
    "RPCSessionTimeoutError",
)


class RpcConnectionLost(RuntimeError):
    """The RPC server of the device went away during a session."""


@dataclasses.dataclass(frozen=True)
class TrackerAddress:
    host: str
    port: int
    key: str
    local: bool  # started by LocalRpc on loopback

    def __str__(self):
        return f"device key {self.key!r} at tracker {self.host}:{self.port}"


def tracker_from_env() -> Optional[TrackerAddress]:
    """The tracker named by the environment, None when none is named."""
    values = {name: os.environ.get(name, "").strip() for name in (ENV_HOST, ENV_PORT, ENV_KEY)}
    given = [name for name, value in values.items() if value]
    if not given:
        return None
    missing = [name for name, value in values.items() if not value]
    if missing:
        raise ValueError(
            f"{', '.join(given)} set but {', '.join(missing)} not: set all three of "
            f"{ENV_HOST}, {ENV_PORT}, {ENV_KEY} (or none, to use a loopback server)"
        )
    return TrackerAddress(values[ENV_HOST], int(values[ENV_PORT]), values[ENV_KEY], local=False)


def wait_for_key(host: str, port: int, key: str, timeout: float = 60.0) -> None:
    """Wait until a server has registered ``key`` with the tracker."""
    deadline = time.monotonic() + timeout
    summary = {}
    while time.monotonic() < deadline:
        summary = rpc.connect_tracker(host, port).summary()
        if any(
            entry.get("key", "").endswith(":" + key) for entry in summary.get("server_info", [])
        ):
            return
        time.sleep(0.2)
    raise TimeoutError(f"no RPC server registered key {key!r} at {host}:{port}: {summary}")


class LocalRpc:
    """A tracker and RPC servers on loopback, in their own processes (``tvm.rpc.Server`` runs
    in a worker process and serves each session in a child of it)."""

    def __init__(self):
        self.tracker = Tracker(host=LOOPBACK, port=9190, port_end=9290, silent=True)
        self.servers: List[rpc.Server] = []

    def start_server(self, key: str) -> rpc.Server:
        server = rpc.Server(
            host=LOOPBACK,
            port=9300,
            port_end=9400,
            tracker_addr=(LOOPBACK, self.tracker.port),
            key=key,
            silent=True,
        )
        self.servers.append(server)
        wait_for_key(LOOPBACK, self.tracker.port, key)
        return server

    def address(self, key: str) -> TrackerAddress:
        return TrackerAddress(LOOPBACK, self.tracker.port, key, local=True)

    def close(self) -> None:
        # Servers first: a server whose tracker vanished logs reconnection errors.
        for server in self.servers:
            server.terminate()
        self.servers = []
        self.tracker.terminate()


def target_host() -> str:
    return os.environ.get("RPC_TARGET_HOST", "llvm")


def export(executable, directory: str, name: str) -> str:
    """Export an executable as a shared library for the device; returns its path."""
    path = os.path.join(directory, name)
    if os.environ.get("TVM_NDK_CC"):
        from tvm.support import ndk  # pylint: disable=import-outside-toplevel

        executable.export_library(path, fcompile=ndk.create_shared)
    else:
        executable.export_library(path)
    return path


class RemoteDevice:
    """One RPC session with the device and its OpenCL device 0."""

    def __init__(self, address: TrackerAddress, session_timeout: float = 600.0):
        self.address = address
        tracker = rpc.connect_tracker(address.host, address.port)
        self.session = tracker.request(address.key, priority=1, session_timeout=session_timeout)
        self.device = self.session.cl(0)
        self._workdir = tempfile.TemporaryDirectory(prefix="texture-rpc-")

    @contextlib.contextmanager
    def _call(self, what: str):
        try:
            yield
        except Exception as err:  # pylint: disable=broad-except
            message = str(err)
            if not any(marker in message for marker in LOST_CONNECTION_MARKERS):
                raise
            cause = message.strip().splitlines()[-1]
            raise RpcConnectionLost(
                f"lost the RPC connection to {self.address} while {what}: the server closed "
                f"the session ({cause})"
            ) from err

    def describe(self) -> Tuple[bool, str]:
        """(exists, device name) of the remote OpenCL device."""
        with self._call("querying the remote OpenCL device"):
            exists = bool(self.device.exist)
            return exists, (self.device.device_name if exists else "")

    def load(self, executable, name: str = "texture_module.so"):
        """Export, upload and load an executable remotely; returns the remote module.

        Each load of a session gets a file name of its own: uploading over a library the server
        has already loaded rewrites a mapped file, and the serving process dies with SIGSEGV at
        the next load (a test body that runs twice in one session, as the seed sweep does)."""
        self._loads = getattr(self, "_loads", 0) + 1
        if self._loads > 1:
            stem, dot, ext = name.rpartition(".")
            name = f"{stem}-{self._loads}{dot}{ext}" if dot else f"{name}-{self._loads}"
        path = export(executable, self._workdir.name, name)
        with self._call(f"uploading {name}"):
            self.session.upload(path)
        with self._call(f"loading {name}"):
            return self.session.load_module(name)

    def run(self, remote_module, inputs: Sequence[np.ndarray]) -> List[np.ndarray]:
        """Run ``main`` of a loaded executable on the remote OpenCL device."""
        with self._call("running main"):
            vm = relax.VirtualMachine(remote_module, self.device)
            args = [tvm.runtime.tensor(a, self.device) for a in inputs]
            result = vm["main"](*args)
            if hasattr(result, "numpy"):
                return [result.numpy()]
            return [r.numpy() for r in result]

    def close(self) -> None:
        self._workdir.cleanup()
