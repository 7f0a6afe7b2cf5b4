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
"""Export a compiled model as a shared library and run it through TVM RPC.

For a phone (not run by the tests: needs the Android NDK, adb and a device)::

    export TVM_NDK_CC=$NDK/toolchains/llvm/prebuilt/linux-x86_64/bin/aarch64-linux-android28-clang
    python docs/examples/export_and_rpc.py --android --tracker 127.0.0.1:9190 --key android

On this machine (run by tests/docs/test_examples.py): ``--local-rpc`` starts an RPC tracker and
an RPC server on 127.0.0.1, the server offering the host's OpenCL device under the key
``local-opencl``, and the model runs through them exactly as it would on a phone::

    python docs/examples/export_and_rpc.py --local-rpc
"""

import argparse
import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import tvm
from tvm import relax, rpc
from tvm.script import relax as R


@tvm.script.ir_module
class Net:  # pylint: disable=too-few-public-methods
    """Two 3x3 convolutions with a relu between them."""

    @R.function
    def main(
        x: R.Tensor((1, 8, 32, 32), "float32"),
        w1: R.Tensor((16, 8, 3, 3), "float32"),
        w2: R.Tensor((16, 16, 3, 3), "float32"),
    ):
        with R.dataflow():
            y = R.nn.relu(R.nn.conv2d(x, w1, padding=1))
            z = R.nn.conv2d(y, w2, padding=1)
            R.output(z)
        return z


def export(android: bool, path: str) -> str:
    """Compile ``Net`` for Adreno textures and write it as a shared library at ``path``."""
    if android:
        # 64-bit Android host code; the OpenCL kernels are the same for every host.
        host = {"kind": "llvm", "mtriple": "aarch64-linux-android"}
    else:
        host = "llvm"
    target = tvm.target.Target("qcom/adreno-opencl-texture", host=host)
    executable = tvm.compile(Net, target=target)
    if android:
        from tvm.support import ndk  # pylint: disable=import-outside-toplevel

        # ndk.create_shared links with the compiler named by TVM_NDK_CC.
        executable.export_library(path, fcompile=ndk.create_shared)
    else:
        executable.export_library(path)
    return path


def run_remote(lib_path: str, tracker: str, key: str, inputs):
    """Upload the library to a device registered with ``tracker`` under ``key`` and run it."""
    host, port = tracker.rsplit(":", 1)
    remote = rpc.connect_tracker(host, int(port)).request(key, priority=0, session_timeout=600)
    remote.upload(lib_path)
    lib = remote.load_module(os.path.basename(lib_path))
    dev = remote.cl(0)
    vm = relax.VirtualMachine(lib, dev)
    out = vm["main"](*[tvm.runtime.tensor(a, dev) for a in inputs])
    # Time the whole model on the device: 10 runs after one warm-up run.
    timer = vm.time_evaluator("main", dev, number=10, repeat=1, min_repeat_ms=0)
    mean_ms = timer(*[tvm.runtime.tensor(a, dev) for a in inputs]).mean * 1e3
    return out.numpy(), mean_ms


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def local_rpc(key: str, log_dir: str):
    """A tracker and a server on 127.0.0.1 (what a phone runs, here on the host).

    Each runs in a session of its own, so that stopping it also stops the worker process the
    RPC server starts; their output goes to files in ``log_dir``."""
    port = _free_port()
    commands = {
        "tracker": [
            "tvm.exec.rpc_tracker",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--port-end",
            str(port + 1),
        ],
        "server": [
            "tvm.exec.rpc_server",
            "--host",
            "127.0.0.1",
            "--port",
            str(_free_port()),
            "--port-end",
            "65000",
            "--tracker",
            f"127.0.0.1:{port}",
            "--key",
            key,
            "--no-fork",
        ],
    }
    procs = {}
    try:
        for name, args in commands.items():
            with open(os.path.join(log_dir, f"{name}.log"), "wb") as log:
                procs[name] = subprocess.Popen(
                    [sys.executable, "-m", *args],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,
                )
        deadline = time.time() + 300  # both processes import tvm first (seconds each)
        while True:
            try:
                if key in rpc.connect_tracker("127.0.0.1", port).text_summary():
                    break
            except (RuntimeError, OSError):
                pass  # the tracker is not listening yet
            dead = [name for name, proc in procs.items() if proc.poll() is not None]
            if dead:
                log = open(os.path.join(log_dir, f"{dead[0]}.log"), encoding="utf-8").read()
                raise RuntimeError(f"the RPC {dead[0]} exited:\n{log[-2000:]}")
            if time.time() > deadline:
                raise RuntimeError("the local RPC server did not register with the tracker")
            time.sleep(1)
        yield f"127.0.0.1:{port}"
    finally:
        for proc in reversed(list(procs.values())):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--android", action="store_true", help="cross-compile with the NDK")
    parser.add_argument("--tracker", help="host:port of the RPC tracker")
    parser.add_argument("--key", default="android", help="device key at the tracker")
    parser.add_argument("--local-rpc", action="store_true", help="start a local tracker+server")
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    inputs = [
        rng.uniform(-1, 1, [int(d) for d in p.ty.shape]).astype("float32")
        for p in Net["main"].params
    ]
    ref_vm = relax.VirtualMachine(tvm.compile(Net, target="llvm"), tvm.cpu())
    expected = ref_vm["main"](*[tvm.runtime.tensor(a) for a in inputs]).numpy()

    with tempfile.TemporaryDirectory() as tmp:
        lib_path = export(args.android, os.path.join(tmp, "net.so"))
        print(f"exported {Path(lib_path).name} ({os.path.getsize(lib_path)} bytes)")

        if not args.android:
            # [load-begin]
            lib = tvm.runtime.load_module(lib_path)
            vm = relax.VirtualMachine(lib, tvm.opencl(0))
            # [load-end]
            out = vm["main"](*[tvm.runtime.tensor(a, tvm.opencl(0)) for a in inputs]).numpy()
            np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)
            print("ok: loaded library on the local OpenCL device")

        if args.local_rpc:
            args.key = "local-opencl"
            with local_rpc(args.key, tmp) as tracker:
                out, mean_ms = run_remote(lib_path, tracker, args.key, inputs)
        elif args.tracker:
            out, mean_ms = run_remote(lib_path, args.tracker, args.key, inputs)
        else:
            return 0
        np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)
        print(f"ok: through RPC, {mean_ms:.2f} ms per run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
