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
"""Tuning on a device farm: a tracker and several RPC servers on 127.0.0.1.

Two OpenCL devices of this machine stand for two device kinds: PoCL (two servers under one
key) and Intel's CPU OpenCL (one server under another), each server a process of its own that
picks its device by ``TVM_OPENCL_DEVICE``. The tests tune a tiny conv network and check that
every candidate is timed once per kind and the work spread over a kind's servers, that each kind
gets a database of its own device that compiles the network right, that a candidate failing on
every server is recorded once, that an interrupted round resumes without timing anything again,
and that a server that stops answering or is killed in the middle of a round loses nothing.
Every process is stopped at the end of the module.
"""

import collections
import importlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
import pytest

import tvm
import tvm.testing
from tvm import relax, rpc
from tvm.s_tir.meta_schedule import adreno as msa
from tvm.script import ir as I
from tvm.script import relax as R

device_measure = importlib.import_module("tvm.s_tir.meta_schedule.adreno.device_measure")

POCL, INTEL = "farm-pocl", "farm-intel"
DEVICE_OF_KEY = {POCL: "portable", INTEL: "intel"}  # TVM_OPENCL_DEVICE of each key's servers
SERVERS_OF_KEY = {POCL: 2, INTEL: 1}
LOOPBACK = "127.0.0.1"
FAST = {"min_seconds": 1e-4, "repeat": 2, "request_timeout": 60.0, "candidate_timeout": 60.0}


@I.ir_module
class TinyConv:
    """1x8x8x8 input, 3x3 conv to 8 channels, ReLU: a conv and its layout transforms."""

    @R.function
    def main(  # pylint: disable=no-self-argument
        x: R.Tensor((1, 8, 8, 8), "float32"), weight: R.Tensor((8, 8, 3, 3), "float32")
    ):
        with R.dataflow():
            y = R.nn.relu(R.nn.conv2d(x, weight, padding=1))
            R.output(y)
        return y


def texture_target():
    """The Adreno texture target with an LLVM host (the servers run on this machine)."""
    return tvm.target.Target("qcom/adreno-opencl-texture", host="llvm")


def local_device_names():
    """Names of this process's OpenCL devices."""
    names = []
    for index in range(8):
        dev = tvm.opencl(index)
        if not dev.exist:
            break
        names.append(str(dev.device_name))
    return names


def free_port():
    """A TCP port of the loopback that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        return sock.getsockname()[1]


class Farm:
    """A tracker and RPC servers on the loopback, each process in a session of its own (so that
    stopping one stops the process serving its session too)."""

    def __init__(self, log_dir):
        self.log_dir = log_dir
        self.port = free_port()
        self.processes = []
        self.servers = collections.defaultdict(list)  # key -> [(address, process)]
        self._spawn(
            "tracker",
            ["tvm.exec.rpc_tracker", "--host", LOOPBACK, "--port", str(self.port)],
            {"--port-end": str(self.port + 1)},
        )

    @property
    def tracker(self):
        return f"{LOOPBACK}:{self.port}"

    def _spawn(self, name, args, options, env=None):
        command = [sys.executable, "-m", *args]
        for option, value in options.items():
            command += [option, value]
        with open(os.path.join(self.log_dir, f"{name}.log"), "wb") as log:
            process = subprocess.Popen(  # pylint: disable=consider-using-with
                command,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                env=env,
            )
        self.processes.append(process)
        return process

    def add_server(self, key, device):
        """Start a server of ``key`` whose sessions use the OpenCL device named ``device``."""
        port = free_port()
        env = dict(os.environ, TVM_OPENCL_DEVICE=device)
        name = f"server-{key}-{len(self.servers[key])}"
        options = {"--port": str(port), "--port-end": str(port + 1), "--tracker": self.tracker}
        process = self._spawn(
            name, ["tvm.exec.rpc_server", "--host", LOOPBACK, "--key", key], options, env
        )
        self.servers[key].append((f"{LOOPBACK}:{port}", process))

    def wait_for(self, counts, timeout=120.0):
        """Wait until the tracker lists ``counts[key]`` servers of every key."""
        deadline = time.monotonic() + timeout
        while True:  # the tracker's port first: a client retries a closed port only every 5 s
            try:
                socket.create_connection((LOOPBACK, self.port), timeout=1.0).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        while True:
            try:
                have = {key: msa.count_servers(LOOPBACK, self.port, key) for key in counts}
            except (OSError, RuntimeError):
                have = {}
            if have == counts:
                return
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"the farm has {have} servers, not {counts} (logs: {self.log_dir})"
                )
            time.sleep(0.5)

    def signal(self, address, signum):
        """Send ``signum`` to the server at ``address`` and the process serving its session."""
        for servers in self.servers.values():
            for server_address, process in servers:
                if server_address == address:
                    os.killpg(process.pid, signum)
                    if signum == signal.SIGKILL:
                        process.wait(10)
                    return
        raise KeyError(address)

    def close(self):
        for process in reversed(self.processes):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(10)


@pytest.fixture(scope="module", name="farm")
def fixture_farm():
    """The loopback farm: two PoCL servers under one key, an Intel CPU one under another."""
    if not local_device_names():
        pytest.skip("no OpenCL device on this machine")
    log_dir = tempfile.mkdtemp(prefix="adreno-farm-")
    farm = Farm(log_dir)
    try:
        for key, count in SERVERS_OF_KEY.items():
            for _ in range(count):
                farm.add_server(key, DEVICE_OF_KEY[key])
        farm.wait_for(SERVERS_OF_KEY)
        yield farm
    finally:
        farm.close()
        shutil.rmtree(log_dir, ignore_errors=True)


@pytest.fixture(scope="module", name="bundle")
def fixture_bundle(tmp_path_factory):
    """TinyConv's candidates, two per workload, and a third of the first task that its
    library does not hold (it fails on every server)."""
    folder = tmp_path_factory.mktemp("farm") / "bundle"
    manifest = msa.build_candidates(
        TinyConv, texture_target(), folder, max_candidates=2, log=lambda _line: None
    )
    first = manifest["tasks"][0]
    first["candidates"].append(dict(first["candidates"][-1], func="t0000_missing"))
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return folder, manifest


@pytest.fixture(name="timings")
def fixture_timings(monkeypatch):
    """Every call of ``time_function`` of this process: (device key, server, candidate)."""
    calls = []
    real = device_measure.time_function
    lock = threading.Lock()

    def recording(module, name, *args, **kwargs):
        worker = threading.current_thread()
        with lock:
            calls.append((worker.kind.key, worker.address, name))
        return real(module, name, *args, **kwargs)

    monkeypatch.setattr(device_measure, "time_function", recording)
    return calls


def server_device(farm, key):
    """The device a server of ``key`` reports, through a session of its own."""
    session = rpc.connect_tracker(LOOPBACK, farm.port).request(key, session_timeout=60)
    return device_measure.device_identity(session.cl(0))


def run_on_server(farm, key, executable, inputs, tmp_path):
    """Run ``main`` of ``executable`` on a server of ``key``; the output as numpy."""
    path = str(tmp_path / f"net-{key}.so")
    executable.export_library(path)
    session = rpc.connect_tracker(LOOPBACK, farm.port).request(key, session_timeout=60)
    session.upload(path)
    dev = session.cl(0)
    machine = relax.VirtualMachine(session.load_module(os.path.basename(path)), dev)
    return machine["main"](*[tvm.runtime.tensor(value, dev) for value in inputs]).numpy()


def candidates_of(manifest):
    return [cand["func"] for task in manifest["tasks"] for cand in task["candidates"]]


def test_round_on_two_kinds(farm, tmp_path, timings, monkeypatch):
    """``tune_farm`` over two keys: one build, every candidate timed once per kind, the PoCL
    ones spread over both PoCL servers; one database per kind, of the device its servers
    report, that compiles TinyConv to what LLVM computes on that kind. Run again, the round
    times and commits nothing more."""
    # Each PoCL server's first candidate waits until the other's has started: the round must
    # time on both at once (one that timed on one server at a time would break the barrier).
    recording = device_measure.time_function
    barrier = threading.Barrier(SERVERS_OF_KEY[POCL], timeout=60)
    started = set()

    def on_both_pocl_servers_at_once(module, name, *args, **kwargs):
        worker = threading.current_thread()
        if worker.kind.key == POCL and worker.address not in started:
            started.add(worker.address)
            barrier.wait()
        return recording(module, name, *args, **kwargs)

    monkeypatch.setattr(device_measure, "time_function", on_both_pocl_servers_at_once)
    lines = []
    databases = msa.tune_farm(
        TinyConv,
        texture_target(),
        farm.tracker,
        [POCL, INTEL],
        tmp_path / "db",
        tmp_path / "work",
        max_candidates=2,
        log=lines.append,
        **FAST,
    )
    assert sorted(databases) == sorted([POCL, INTEL])
    assert len(list((tmp_path / "work").glob("bundle-*"))) == 1  # one target: built once
    manifest = json.loads((tmp_path / "work/bundle-0/manifest.json").read_text(encoding="utf-8"))
    funcs = candidates_of(manifest)
    per_kind = collections.Counter((key, func) for key, _, func in timings)
    assert per_kind == {(key, func): 1 for key in (POCL, INTEL) for func in funcs}, per_kind
    pocl_servers = {address for key, address, _ in timings if key == POCL}
    assert pocl_servers == {address for address, _ in farm.servers[POCL]}, lines

    rng = np.random.default_rng()
    inputs = [rng.uniform(-1, 1, shape).astype("float32") for shape in [(1, 8, 8, 8), (8, 8, 3, 3)]]
    expected = relax.VirtualMachine(tvm.compile(TinyConv, target="llvm"), tvm.cpu())["main"](
        *[tvm.runtime.tensor(value) for value in inputs]
    ).numpy()
    for key, database in databases.items():
        device = server_device(farm, key)
        assert msa.read_device(tmp_path / "db" / key) == device
        assert len(database.get_all_tuning_records()) == len(funcs)
        summary = json.loads((tmp_path / "db" / key / "summary.json").read_text(encoding="utf-8"))
        servers = collections.Counter()
        for row in summary:
            servers.update(row["servers"])
            assert row["best_server"] in row["servers"]
        assert sum(servers.values()) == len(funcs)
        assert set(servers) == {address for address, _ in farm.servers[key]}
        with database:
            executable = tvm.compile(TinyConv, target=texture_target())
        actual = run_on_server(farm, key, executable, inputs, tmp_path)
        tvm.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-5)
    assert msa.read_device(tmp_path / "db" / POCL) != msa.read_device(tmp_path / "db" / INTEL)
    for key in (POCL, INTEL):
        assert any(line.startswith(f"[{key}] done: {len(funcs)} candidates") for line in lines)
        assert any(line.startswith(f"[{key}] timed ") and "per server: " in line for line in lines)

    timings.clear()
    again = msa.tune_farm(
        TinyConv,
        texture_target(),
        farm.tracker,
        [POCL, INTEL],
        tmp_path / "db",
        tmp_path / "work",
        max_candidates=2,
        log=lines.append,
        **FAST,
    )
    assert not timings
    assert {key: len(db.get_all_tuning_records()) for key, db in again.items()} == {
        POCL: len(funcs),
        INTEL: len(funcs),
    }


def test_server_of_another_device_is_left_out(farm, bundle, tmp_path):
    """Servers that report another device than the key's database holds are left out of the
    round with a line that says so; nothing is timed, the round ends at once."""
    other = {"name": "Adreno (TM) 740", "driver": "OpenCL 3.0 QUALCOMM build: 0762.16"}
    lines = []
    times = msa.measure_farm(
        farm.tracker, {INTEL: bundle[0]}, tmp_path, devices={INTEL: other}, log=lines.append, **FAST
    )[INTEL]
    assert times["results"] == {} and times["device"] == other
    assert len(times["untimed_tasks"]) == len(bundle[1]["tasks"])
    (refused,) = [line for line in lines if "left out" in line]
    assert refused.startswith(f"[{INTEL}] {farm.servers[INTEL][0][0]} reports ")
    assert "register it under a key of its own" in refused


def test_failing_candidate_and_interrupted_round(farm, bundle, tmp_path, timings):
    """A round stopped after its first task (Ctrl-C) keeps what it timed in its checkpoint;
    the next round on that file times only the rest. The candidate the library lacks is tried
    once on each PoCL server that the checkpoint does not name, and recorded failed once, with
    its error."""
    folder, manifest = bundle
    lines = []

    def interrupt_after_a_task(line):
        lines.append(line)
        if line.startswith(f"[{POCL}] timed "):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        msa.measure_farm(farm.tracker, {POCL: folder}, tmp_path, log=interrupt_after_a_task, **FAST)
    saved = json.loads((tmp_path / f"times-{POCL}.json").read_text(encoding="utf-8"))
    kept = saved["results"]
    assert kept and len(kept) < len(candidates_of(manifest)), kept
    timings.clear()

    times = msa.measure_farm(farm.tracker, {POCL: folder}, tmp_path, log=lines.append, **FAST)[POCL]
    assert not {func for _, _, func in timings} & set(kept)
    for func, result in kept.items():
        assert times["results"][func] == result
    assert sorted(times["results"]) == sorted(candidates_of(manifest))
    assert times["untimed_tasks"] == []
    missing = times["results"]["t0000_missing"]
    assert "t0000_missing" in missing["error"] and "run_secs" not in missing, missing
    assert missing["failed_on"] == sorted(address for address, _ in farm.servers[POCL])
    # The servers it failed on before the interrupt are in the checkpoint: the next round tries
    # it only on the others, once each (a try whose failure the interrupt cut off is made again).
    carried = set(saved["failures"].get("t0000_missing", {}))
    second = [address for _, address, func in timings if func == "t0000_missing"]
    assert len(second) == len(set(second)) and not carried & set(second), (carried, second)
    if "t0000_missing" not in kept:
        assert sorted(carried | set(second)) == missing["failed_on"]
    assert sum("t0000_missing" in line and "failed on every server" in line for line in lines) == 1
    for func in candidates_of(manifest):
        if func != "t0000_missing":
            assert len(times["results"][func]["run_secs"]) == 2


class StandInWorker:  # pylint: disable=too-few-public-methods
    """What a round reads of a worker, for a round driven by the test."""

    def __init__(self, address):
        self.address = address
        self.stopped = False


def test_candidate_that_downs_servers_fails(bundle):
    """A candidate during which two servers lost their session is recorded failed, with the
    servers it took down, instead of being handed to a third: it may crash every server. One
    loss only hands it on. (The round is driven by the test: no server is harmed.)"""
    farm_module = importlib.import_module("tvm.s_tir.meta_schedule.adreno.farm")
    folder, manifest = bundle
    lines, saved = [], []
    kind = farm_module._Kind(  # pylint: disable=protected-access
        POCL, folder, (LOOPBACK, 9), farm_module.FarmOptions(), {}, None, saved.append, lines.append
    )
    device = {"name": "Test GPU 100", "driver": "1.0"}
    workers = [StandInWorker(f"{LOOPBACK}:{port}") for port in (9301, 9302, 9303)]
    for worker in workers:
        kind.on_joined(worker, worker.address, device)
    func = manifest["tasks"][1]["candidates"][1]["func"]
    lost = {"error": "InternalError: Socket SockChannel::Recv Error:Connection reset by peer"}

    def hand_out(worker):  # what dispatch does
        kind.pending[1].remove(func)
        kind.busy[worker] = (func, time.monotonic())

    hand_out(workers[0])
    kind.on_result(workers[0], func, lost, True)
    assert func not in kind.results and func in kind.pending[1]
    assert saved[-1]["failures"] == {func: {workers[0].address: lost["error"]}}
    hand_out(workers[1])
    kind.on_result(workers[1], func, lost, True)
    assert kind.results[func] == {
        "error": lost["error"],
        "failed_on": sorted(w.address for w in workers[:2]),
    }
    assert func not in kind.pending.get(1, [])
    assert saved[-1]["results"][func] == kind.results[func]
    assert "recorded failed (it may crash the device)" in lines[-1], lines


def test_server_that_hangs_is_dropped(farm, bundle, tmp_path, monkeypatch):
    """A PoCL server stopped (SIGSTOP) while it times its first candidate gives no answer: after
    ``candidate_timeout`` it is dropped from the round and the other server times that candidate
    and the rest. The round ends within the timeout and the waits after it; the server is
    resumed (SIGCONT) afterwards."""
    folder, manifest = bundle
    real = device_measure.time_function
    frozen = []

    def freeze_first(module, name, *args, **kwargs):
        worker = threading.current_thread()
        if not frozen:
            frozen.append((worker.address, name))
            farm.signal(worker.address, signal.SIGSTOP)
        return real(module, name, *args, **kwargs)

    monkeypatch.setattr(device_measure, "time_function", freeze_first)
    lines = []
    options = {**FAST, "candidate_timeout": 10.0}
    started = time.monotonic()
    try:
        times = msa.measure_farm(
            farm.tracker, {POCL: folder}, tmp_path, log=lines.append, **options
        )[POCL]
        seconds = time.monotonic() - started
    finally:
        if frozen:
            farm.signal(frozen[0][0], signal.SIGCONT)
    ((hung, first),) = frozen
    (other,) = {address for address, _ in farm.servers[POCL]} - {hung}
    assert seconds < options["candidate_timeout"] + 30, seconds
    assert sorted(times["results"]) == sorted(candidates_of(manifest))
    assert times["results"][first]["server"] == other
    assert any(f"{hung} timed out on {first}" in line for line in lines), "\n".join(lines)
    assert times["results"]["t0000_missing"]["failed_on"] == [other]


def test_server_killed_mid_round(farm, bundle, tmp_path, monkeypatch):
    """One PoCL server is killed while it times its first candidate: the candidate goes back
    to the other server, which finishes the round; every candidate has one result, the ones
    timed after the kill all by the survivor. (Kills a server: the module's last test.)"""
    folder, manifest = bundle
    real = device_measure.time_function
    killed = []

    def kill_first(module, name, *args, **kwargs):
        worker = threading.current_thread()
        if not killed:
            killed.append((worker.address, name))
            farm.signal(worker.address, signal.SIGKILL)
        return real(module, name, *args, **kwargs)

    monkeypatch.setattr(device_measure, "time_function", kill_first)
    lines = []
    started = time.monotonic()
    times = msa.measure_farm(farm.tracker, {POCL: folder}, tmp_path, log=lines.append, **FAST)[POCL]
    assert time.monotonic() - started < FAST["request_timeout"]
    ((dead, first),) = killed
    (survivor,) = {address for address, _ in farm.servers[POCL]} - {dead}
    assert sorted(times["results"]) == sorted(candidates_of(manifest))
    assert times["results"][first]["server"] == survivor
    assert "run_secs" in times["results"][first]
    for func, result in times["results"].items():
        if func != "t0000_missing":
            assert result["server"] == survivor, (func, result)
    assert any(f"{dead} lost its session on {first}" in line for line in lines), "\n".join(lines)


if __name__ == "__main__":
    tvm.testing.main()
