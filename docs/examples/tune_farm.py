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
"""Tune a small network on a device farm: every server of several device keys at once, one
tuning database per device kind.

Run by tests/docs/test_examples.py with ``--local-farm``: a tracker and three RPC servers on
this machine, two on PoCL under the key ``farm-pocl`` and one on Intel's CPU OpenCL runtime
under ``farm-intel`` (each server picks its device by ``TVM_OPENCL_DEVICE``). With phones:
``--tracker HOST:PORT --key adreno-740 --key adreno-660``.

    python docs/examples/tune_farm.py --local-farm
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

import tvm
from tvm.script import relax as R

LOOPBACK = "127.0.0.1"
LOCAL_KEYS = {"farm-pocl": ("portable", 2), "farm-intel": ("intel", 1)}


@tvm.script.ir_module
class Net:
    @R.function
    def main(
        x: R.Tensor((1, 8, 16, 16), "float32"),
        w1: R.Tensor((16, 8, 3, 3), "float32"),
        w2: R.Tensor((16, 16, 1, 1), "float32"),
    ):
        with R.dataflow():
            y = R.nn.relu(R.nn.conv2d(x, w1, padding=1))
            z = R.nn.conv2d(y, w2)
            R.output(z)
        return z


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def local_farm(log_dir: str):
    """A tracker and the servers of ``LOCAL_KEYS`` on 127.0.0.1, each process in a session of
    its own (stopping it stops the process serving its session too)."""
    from tvm.s_tir.meta_schedule import adreno as msa  # pylint: disable=import-outside-toplevel

    port = _free_port()
    commands = [
        ("tracker", ["tvm.exec.rpc_tracker", "--port", str(port), "--port-end", str(port + 1)], {})
    ]
    for key, (device, count) in LOCAL_KEYS.items():
        for number in range(count):
            server_port = _free_port()
            # [servers-begin]
            args = ["tvm.exec.rpc_server", "--tracker", f"{LOOPBACK}:{port}", "--key", key]
            env = {"TVM_OPENCL_DEVICE": device}  # which OpenCL device its sessions use
            # [servers-end]
            args += ["--port", str(server_port), "--port-end", str(server_port + 1)]
            commands.append((f"server-{key}-{number}", args, env))
    procs = []
    try:
        for name, args, env in commands:
            with open(os.path.join(log_dir, f"{name}.log"), "wb") as log:
                procs.append(
                    subprocess.Popen(  # pylint: disable=consider-using-with
                        [sys.executable, "-m", *args, "--host", LOOPBACK],
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        stdin=subprocess.DEVNULL,
                        start_new_session=True,
                        env=dict(os.environ, **env),
                    )
                )
        deadline = time.time() + 300  # every process imports tvm first (seconds each)
        wanted = {key: count for key, (_, count) in LOCAL_KEYS.items()}
        while True:
            with contextlib.suppress(OSError):
                socket.create_connection((LOOPBACK, port), timeout=1).close()
                have = {key: msa.count_servers(LOOPBACK, port, key) for key in wanted}
                if have == wanted:
                    break
            if time.time() > deadline:
                raise RuntimeError(f"the local farm did not register its servers ({log_dir})")
            time.sleep(0.5)
        yield f"{LOOPBACK}:{port}"
    finally:
        for proc in reversed(procs):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def main() -> int:
    """Tune on the farm, then compile under each kind's database."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tracker", help="host:port of the RPC tracker")
    parser.add_argument("--key", action="append", help="device key (repeat for several kinds)")
    parser.add_argument("--local-farm", action="store_true", help="start a farm on this machine")
    parser.add_argument("--trials", type=int, default=3, help="candidates per workload")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.local_farm:
            with local_farm(tmp) as tracker:
                return run(tracker, list(LOCAL_KEYS), args.trials, tmp)
        if not args.tracker or not args.key:
            parser.error("--tracker HOST:PORT and --key KEY (or --local-farm)")
        return run(args.tracker, args.key, args.trials, tmp)


def run(tracker: str, keys, trials: int, work_dir: str) -> int:
    """Tune ``Net`` on every server of ``keys``; compile under each database."""
    # [tune-begin]
    from tvm.s_tir.meta_schedule import adreno as msa

    target = tvm.target.Target("qcom/adreno-opencl-texture", host="llvm")
    databases = msa.tune_farm(
        Net,
        target,  # or {key: target} when the kinds need different targets
        tracker,  # "HOST:PORT"
        keys,  # ["adreno-740", "adreno-660"]: one database per key
        database_dir=os.path.join(work_dir, "tuning"),  # tuning/KEY/, keep it
        work_dir=os.path.join(work_dir, "tuning-work"),  # run again here to resume
        max_candidates=trials,
        min_seconds=1e-3,
    )
    # [tune-end]
    # tune_farm returns the databases it committed: a key whose candidates are not all timed
    # (no server of that kind, or the deadline) has none yet.
    untuned = [key for key in keys if key not in databases]
    for key in databases:
        with databases[key]:
            tvm.compile(Net, target=target)
        records = len(databases[key].get_all_tuning_records())
        print(f"{key}: {records} tuning records, compiled under the database")
    if untuned:
        print(
            f"not tuned yet: {', '.join(untuned)}; run again with servers of those keys to resume"
        )
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
