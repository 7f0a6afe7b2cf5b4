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
"""A tuning round on N RPC servers of one key against the same round on one server.

    OCL_ICD_VENDORS=.venv/etc/OpenCL/vendors-tvm .venv/bin/python bench/farm_speedup.py \
        --servers 1,2,4 --device portable --max-candidates 6

Starts a tracker on 127.0.0.1 and, per count N, N RPC servers under a key of their own (their
sessions on the OpenCL device ``--device`` names), builds the candidates of a small network
once and times them with ``measure_farm`` on each key in turn: a first round per key that fills
the driver's program cache, then ``--rounds`` rounds. Prints per N the median wall time of a
round, the speed-up against one server, how many candidates were in flight at once on average
(the time the workers spent in timing calls over the wall time: N when the servers time at the
same moment), the mean time of one candidate's timing call and the candidates each server
timed. Every process it started is stopped at the end.
"""

import argparse
import json
import os
import pathlib
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import tvm
from tvm import rpc
from tvm.s_tir.meta_schedule import adreno as msa
from tvm.s_tir.meta_schedule.adreno import device_measure
from tvm.script import ir as I
from tvm.script import relax as R

LOOPBACK = "127.0.0.1"


@I.ir_module
class Net:
    """Two convs and a mean: five workloads of a few candidates each."""

    @R.function
    def main(  # pylint: disable=no-self-argument
        x: R.Tensor((1, 8, 16, 16), "float32"),
        w1: R.Tensor((16, 8, 3, 3), "float32"),
        w2: R.Tensor((16, 16, 1, 1), "float32"),
    ):
        with R.dataflow():
            y = R.nn.relu(R.nn.conv2d(x, w1, padding=1))
            z = R.nn.conv2d(y, w2)
            out = R.mean(z, axis=[2, 3], keepdims=True)
            R.output(out)
        return out


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        return sock.getsockname()[1]


def _spawn(args, log_dir, name, env=None):
    with open(os.path.join(log_dir, f"{name}.log"), "wb") as log:
        return subprocess.Popen(  # pylint: disable=consider-using-with
            [sys.executable, "-m", *args],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env=env,
        )


def main() -> int:
    """Start the farm, build once, time a round per server count."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", default="1,2", help="server counts, comma-separated")
    parser.add_argument("--device", default="portable", help="TVM_OPENCL_DEVICE of the servers")
    parser.add_argument("--max-candidates", type=int, default=6)
    parser.add_argument("--min-ms", type=float, default=2.0, help="length of one sample")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per count (median)")
    parser.add_argument("--out", type=pathlib.Path, help="write the rows as JSON here")
    args = parser.parse_args()
    counts = [int(n) for n in args.servers.split(",")]
    work = pathlib.Path(tempfile.mkdtemp(prefix="farm-speedup-"))
    processes = []
    try:
        port = _free_port()
        processes.append(
            _spawn(
                [
                    "tvm.exec.rpc_tracker",
                    "--host",
                    LOOPBACK,
                    "--port",
                    str(port),
                    "--port-end",
                    str(port + 1),
                ],
                work,
                "tracker",
            )
        )
        env = dict(os.environ, TVM_OPENCL_DEVICE=args.device)
        for count in counts:
            for number in range(count):
                server_port = _free_port()
                processes.append(
                    _spawn(
                        [
                            "tvm.exec.rpc_server",
                            "--host",
                            LOOPBACK,
                            "--port",
                            str(server_port),
                            "--port-end",
                            str(server_port + 1),
                            "--tracker",
                            f"{LOOPBACK}:{port}",
                            "--key",
                            f"speed-{count}",
                        ],
                        work,
                        f"server-{count}-{number}",
                        env,
                    )
                )
        target = tvm.target.Target("qcom/adreno-opencl-texture", host="llvm")
        start = time.perf_counter()
        manifest = msa.build_candidates(
            Net, target, work / "bundle", max_candidates=args.max_candidates, log=lambda _: None
        )
        total = sum(len(task["candidates"]) for task in manifest["tasks"])
        print(
            f"built {total} candidates of {len(manifest['tasks'])} workloads in "
            f"{time.perf_counter() - start:.1f} s"
        )
        deadline = time.monotonic() + 180
        while True:
            try:
                have = [msa.count_servers(LOOPBACK, port, f"speed-{n}") for n in counts]
            except (OSError, RuntimeError):
                have = []
            if have == counts:
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"servers registered: {have}, expected {counts}")
            time.sleep(0.5)
        tracker = f"{LOOPBACK}:{port}"

        # Each candidate's timing call (in the worker threads of this process): when it ran.
        busy = []
        time_function = device_measure.time_function

        def timed_call(*call_args, **call_kwargs):
            begin = time.perf_counter()
            try:
                return time_function(*call_args, **call_kwargs)
            finally:
                busy.append((begin, time.perf_counter()))

        device_measure.time_function = timed_call

        def wait_until_free(key, count):
            # A server takes a moment after a session to register as free again; a round that
            # started before would find fewer servers.
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                queue = rpc.connect_tracker(LOOPBACK, port).summary()["queue_info"].get(key, {})
                if queue.get("free") == count:
                    return
                time.sleep(0.2)
            raise TimeoutError(f"the servers of {key} did not all become free")

        def one_round(key, folder):
            wait_until_free(key, int(key.split("-")[1]))
            busy.clear()
            start = time.perf_counter()
            times = msa.measure_farm(
                tracker,
                {key: work / "bundle"},
                folder,
                log=lambda _: None,
                min_seconds=args.min_ms * 1e-3,
                repeat=5,
            )[key]
            wall = time.perf_counter() - start
            # candidates in flight at once, on average over the round
            times["overlap"] = sum(end - begin for begin, end in busy) / wall
            times["candidate_ms"] = 1e3 * statistics.mean(end - begin for begin, end in busy)
            return wall, times

        # A first round on every server fills the OpenCL driver's program cache (PoCL keeps
        # compiled kernels on disk), which the later rounds then all find.
        for count in counts:
            one_round(f"speed-{count}", work / f"warm-{count}")
        rows = []
        for count in counts:
            key = f"speed-{count}"
            walls, overlaps, candidate_ms = [], [], []
            for number in range(args.rounds):
                seconds, times = one_round(key, work / f"{key}-{number}")
                walls.append(seconds)
                overlaps.append(times["overlap"])
                candidate_ms.append(times["candidate_ms"])
            timed = sum("run_secs" in r for r in times["results"].values())
            rows.append(
                {
                    "servers": count,
                    "seconds": round(statistics.median(walls), 3),
                    "rounds": [round(w, 3) for w in walls],
                    "overlap": round(statistics.median(overlaps), 2),
                    "candidate_ms": round(statistics.median(candidate_ms), 1),
                    "timed": timed,
                    "per_server": times["servers"],
                    "device": times["device"]["name"],
                }
            )
        base = rows[0]["seconds"] * rows[0]["servers"] / counts[0]
        for row in rows:
            row["speedup_vs_1"] = round(base / row["seconds"], 2)
            print(
                f"{row['servers']} servers: median {row['seconds']:.2f} s of {row['rounds']}, "
                f"{row['timed']} timed, speed-up {row['speedup_vs_1']:.2f}x, "
                f"{row['overlap']:.2f} candidates in flight on average, "
                f"{row['candidate_ms']:.0f} ms per candidate, "
                f"per server {sorted(row['per_server'].values())}"
            )
        if args.out:
            args.out.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    finally:
        for process in reversed(processes):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(10)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
