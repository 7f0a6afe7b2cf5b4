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
"""Time tuning bundles on every RPC server a tracker holds for one or more device keys.

A device farm is a tracker and many RPC servers, each registered under the key of its device
kind (``adreno-740``, ``adreno-660``). A round starts one worker thread per server the tracker
lists for each key; each worker requests a session with the key (the tracker's own queue hands
out the servers) and times the candidates this module hands it as it frees up. All kinds are
timed at once, each into its own times: the times of one kind come from servers that report the
same device (a server that reports another is refused, one line), and each result names the
server that measured it.

Faults lose no work:

* a server that disconnects, or whose OpenCL context is lost, gives its candidate back to the
  others; its worker asks the tracker for a server again (``request_timeout``);
* a candidate that takes longer than ``candidate_timeout`` counts as a failure of that server,
  which is dropped from the round;
* a candidate that fails with an error is tried on the other servers of its kind; when it failed
  on every server of the round it is recorded as failed, once, with its error; so is one that
  two servers lost their session on (it likely crashes the device: it would take down every
  server in turn);
* the times of each kind are written to their checkpoint file as results arrive; a round
  started on the same file keeps every result there and times the rest.

Nothing waits without a bound: a request for a server ends after ``request_timeout`` seconds,
a candidate after ``candidate_timeout``; a kind whose servers are all gone ends its round with
the candidates left untimed, for a later round to resume.
"""

import dataclasses
import json
import os
import pathlib
import queue
import socket
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Set, Tuple, Union

import numpy as np

from . import device_measure

Path = Union[str, pathlib.Path]

#: Messages of the RPC channel when the server is gone (src/runtime/rpc/rpc_socket_impl.cc and
#: rpc_endpoint.cc): a receive on a reset connection, a send on a closed one, the shutdown code
#: (RPCCode 1) a dying server sends in place of a return value, a session its server expired.
_LOST_CONNECTION = (
    "SockChannel::Recv",
    "SockChannel::Send",
    "Connection reset",
    "Broken pipe",
    "code=kShutdown",
    "RPCCode::kReturn) is false: code=1",
    "RPCSessionTimeoutError",
)

#: How often the round looks at the clock when no worker reports (seconds).
_TICK = 0.25

#: A candidate during whose timing this many servers lost their session is recorded failed
#: instead of handed on: it likely crashes the server, and would take down every one in turn.
_MAX_LOSSES = 2


def _connection_lost(err: BaseException) -> bool:
    return isinstance(err, OSError) or any(mark in str(err) for mark in _LOST_CONNECTION)


def count_servers(host: str, port: int, key: str) -> int:
    """How many RPC servers are registered at the tracker under ``key`` (busy ones included)."""
    from tvm import rpc  # pylint: disable=import-outside-toplevel

    summary = rpc.connect_tracker(host, port).summary()
    return sum(1 for info in summary.get("server_info", []) if info.get("key") == f"server:{key}")


class _ServerRequest:
    """One request in the tracker's queue of a key, which gives up after a timeout.

    ``TrackerSession.request`` waits for a server without a bound and does not say which server
    it got; this sends the same ``REQUEST`` message on a connection of its own, so that the wait
    has a timeout, another thread can cancel it, and the session is known by its server's
    address. The tracker hands out servers in the order requests arrive, as it does for any
    client."""

    def __init__(self, host: str, port: int):
        self._address = (host, port)
        self._sock: Optional[socket.socket] = None
        self._cancelled = False
        self._lock = threading.Lock()

    def cancel(self) -> None:
        """End a wait in another thread (it raises ``TimeoutError``)."""
        with self._lock:
            self._cancelled = True
            if self._sock is not None:
                try:
                    self._sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def session(self, key: str, timeout: float, session_timeout: float):
        """A session with a server of ``key`` and that server's ``host:port``.

        Raises
        ------
        TimeoutError
            When no server of the key was free within ``timeout`` seconds, or on ``cancel``.
        """
        # pylint: disable=import-outside-toplevel
        import struct

        from tvm import rpc
        from tvm.rpc import base

        sock = socket.create_connection(self._address, timeout=timeout)
        with self._lock:
            if self._cancelled:
                sock.close()
                raise TimeoutError("cancelled")
            self._sock = sock
        try:
            sock.sendall(struct.pack("<i", base.RPC_TRACKER_MAGIC))
            if struct.unpack("<i", base.recvall(sock, 4))[0] != base.RPC_TRACKER_MAGIC:
                raise RuntimeError(f"{self._address[0]}:{self._address[1]} is not an RPC tracker")
            base.sendjson(sock, [base.TrackerCode.REQUEST, key, "", 1])
            reply = base.recvjson(sock)
        except (socket.timeout, OSError) as err:
            if self._cancelled or isinstance(err, socket.timeout):
                raise TimeoutError(f"no server of key {key!r} free within {timeout:g} s") from err
            raise
        finally:
            with self._lock:
                self._sock = None
            sock.close()
        if reply[0] != base.TrackerCode.SUCCESS:
            raise RuntimeError(f"the tracker refused the request for key {key!r}: {reply}")
        url, port, match_key = reply[1]
        return rpc.connect(url, port, match_key, session_timeout), f"{url}:{port}"


@dataclasses.dataclass
class FarmOptions:
    """How a round times and how long it waits.

    Attributes
    ----------
    min_seconds, repeat : float, int
        Length of one timing sample and samples per candidate (as
        :func:`~.device_measure.time_function`).
    request_timeout : float
        Seconds a worker waits for a server of its key before it leaves the round.
    candidate_timeout : float
        Seconds one candidate (its library's upload and load included) may take on a server;
        after that the server counts as hung and leaves the round.
    session_timeout : float
        The server ends a session after this many seconds (0: never); the worker then asks for a
        server again.
    deadline : Optional[float]
        A ``time.monotonic()`` value after which no candidate is started.
    """

    min_seconds: float = 2e-3
    repeat: int = 5
    request_timeout: float = 120.0
    candidate_timeout: float = 300.0
    session_timeout: float = 0.0
    deadline: Optional[float] = None


@dataclasses.dataclass
class _Candidate:
    func: str
    task: Dict[str, Any]


class _Worker(threading.Thread):
    """Holds a session with one server of a key and times what the round gives it.

    It reports to the round's event queue: ``("joined", worker, address, device)`` when it has
    a session, ``("result", worker, func, result, lost)`` per candidate, where ``lost`` says the
    session is over, and ``("left", worker, reason)`` when it gives up."""

    def __init__(self, kind: "_Kind", number: int, events: "queue.Queue"):
        super().__init__(name=f"adreno-farm-{kind.key}-{number}", daemon=True)
        self.kind = kind
        self.inbox: "queue.Queue" = queue.Queue()
        self.events = events
        self.address = ""
        self.request: Optional[_ServerRequest] = None
        self.stopped = False
        self.asked_at = time.monotonic()  # when it last asked the tracker for a server

    def stop(self) -> None:
        self.stopped = True
        self.inbox.put(None)
        request = self.request
        if request is not None:
            request.cancel()

    def run(self) -> None:
        options = self.kind.options
        while not self.stopped:
            self.asked_at = time.monotonic()
            self.request = _ServerRequest(*self.kind.tracker)
            try:
                session, self.address = self.request.session(
                    self.kind.key, options.request_timeout, options.session_timeout
                )
                device = session.cl(0)
                identity = device_measure.device_identity(device) if device.exist else None
            except Exception as err:  # pylint: disable=broad-except
                self.events.put(("left", self, device_measure._one_line(err)))
                return
            finally:
                self.request = None
            self.events.put(("joined", self, self.address, identity))
            if not self._serve(session, device):
                return

    def _serve(self, session, device) -> bool:
        """Time candidates on one session; False when the worker is done, True when the session
        is lost and the worker asks for a server again."""
        libs: Dict[str, Any] = {}
        args: Tuple[Optional[str], Any] = (None, None)
        while True:
            job: Optional[_Candidate] = self.inbox.get()
            if job is None:
                return False
            task = job.task
            try:
                if task["lib"] not in libs:
                    # Each library is uploaded once a session: writing over a file the server
                    # has loaded would change a mapped library under it.
                    session.upload(str(self.kind.bundle / "lib" / task["lib"]))
                    libs[task["lib"]] = session.load_module(task["lib"])
                if args[0] != task["lib"]:
                    args = (None, None)  # free the last task's arguments on the device first
                    values = device_measure.alloc_image_arguments(
                        device, task["args"], 1, seed=task["index"]
                    )[0]
                    args = (task["lib"], values)
                secs = device_measure.time_function(
                    libs[task["lib"]],
                    job.func,
                    device,
                    args[1],
                    self.kind.options.min_seconds,
                    self.kind.options.repeat,
                )
                self.events.put(("result", self, job.func, {"run_secs": secs}, False))
            except Exception as err:  # pylint: disable=broad-except
                lost = _connection_lost(err) or device_measure._context_lost(err)
                self.events.put(
                    ("result", self, job.func, {"error": device_measure._one_line(err)}, lost)
                )
                if lost:
                    return not self.stopped


class _Kind:
    """The round of one device key: what is left to time, who times it, what came back."""

    def __init__(self, key, bundle, tracker, options, earlier, device, checkpoint, log):
        # pylint: disable=too-many-arguments
        self.key = key
        self.bundle = pathlib.Path(bundle)
        self.tracker = tracker
        self.options = options
        self.manifest = json.loads((self.bundle / "manifest.json").read_text(encoding="utf-8"))
        self.results: Dict[str, Any] = dict(earlier.get("results", {}))
        self.device: Optional[Dict[str, str]] = device
        self.checkpoint = checkpoint
        self.log = log
        self.tasks = {
            cand["func"]: task for task in self.manifest["tasks"] for cand in task["candidates"]
        }
        # candidates left, in the manifest's order, per task
        self.pending: Dict[int, List[str]] = {}
        for task in self.manifest["tasks"]:
            left = [c["func"] for c in task["candidates"] if c["func"] not in self.results]
            if left:
                self.pending[task["index"]] = left
        self.total = sum(len(funcs) for funcs in self.pending.values())
        # per candidate left, the servers it failed on and their errors
        self.failures: Dict[str, Dict[str, str]] = {
            func: dict(tried) for func, tried in earlier.get("failures", {}).items()
        }
        self.workers: List[_Worker] = []
        self.waiting: Set[_Worker] = set()  # workers that have not had a server yet
        self.live: Dict[_Worker, str] = {}  # workers that hold a session: their server
        self.busy: Dict[_Worker, Tuple[str, float]] = {}  # candidate and when it started
        self.current: Dict[_Worker, int] = {}  # the task each worker times
        self.counts: Dict[str, int] = {}
        self.done = 0
        self.start = time.monotonic()
        self.finished = self.total == 0

    # -- bookkeeping --------------------------------------------------------------------------

    def say(self, line: str) -> None:
        self.log(f"[{self.key}] {line}")

    def times(self) -> Dict[str, Any]:
        untimed = sorted(
            {self.tasks[f]["name"] for funcs in self.pending.values() for f in funcs}
            | {self.tasks[f]["name"] for f, _ in self.busy.values()}
        )
        servers: Dict[str, int] = {}
        for result in self.results.values():
            if "server" in result:
                servers[result["server"]] = servers.get(result["server"], 0) + 1
        return {
            "format": device_measure.TIMES_FORMAT,
            "device": self.device or {"name": "", "driver": ""},
            "evict_bytes": 0,
            "results": dict(self.results),
            "servers": servers,
            "failures": {
                func: tried for func, tried in self.failures.items() if func not in self.results
            },
            "untimed_tasks": untimed,
        }

    def save(self) -> None:
        """Write the checkpoint: every result and failure so far."""
        if self.checkpoint is not None:
            self.checkpoint(self.times())

    def record(self, func: str, result: Dict[str, Any]) -> None:
        self.results[func] = result
        self.done += 1
        self.save()
        task = self.tasks[func]
        if task["index"] not in self.pending and not any(
            f in [c["func"] for c in task["candidates"]] for f, _ in self.busy.values()
        ):
            self._task_line(task)

    def _task_line(self, task) -> None:
        timed = [self.results.get(c["func"], {}) for c in task["candidates"]]
        medians = [np.median(r["run_secs"]) for r in timed if "run_secs" in r]
        default = timed[0].get("run_secs")
        if medians and default:
            self.say(
                f"task {task['name']}: {len(task['candidates'])} candidates, default "
                f"{np.median(default) * 1e6:.1f} us, best {min(medians) * 1e6:.1f} us"
            )
        seconds = time.monotonic() - self.start
        rate = self.done / seconds if seconds > 0 else 0.0
        left = (
            f", about {(self.total - self.done) / rate:.0f} s left"
            if rate > 0 and self.done < self.total
            else ""
        )
        per_server = ", ".join(f"{addr} {n}" for addr, n in sorted(self.counts.items()))
        self.say(
            f"timed {self.done}/{self.total} candidates ({rate:.1f}/s{left}); "
            f"per server: {per_server}"
        )

    # -- handing out work ---------------------------------------------------------------------

    def next_for(self, worker: _Worker) -> Optional[_Candidate]:
        """The worker's next candidate: one more of the task it times (its library is loaded
        there), else one of the task the fewest workers time; never one its server failed."""
        address = self.live[worker]

        def takeable(index):
            return [
                f for f in self.pending.get(index, []) if address not in self.failures.get(f, {})
            ]

        index = self.current.get(worker)
        if index is None or not takeable(index):
            on_task = {}
            for other, task_index in self.current.items():
                if other in self.busy:
                    on_task[task_index] = on_task.get(task_index, 0) + 1
            choices = [i for i in self.pending if takeable(i)]
            if not choices:
                return None
            index = min(choices, key=lambda i: on_task.get(i, 0))
        func = takeable(index)[0]
        self.pending[index].remove(func)
        if not self.pending[index]:
            del self.pending[index]
        self.current[worker] = index
        return _Candidate(func, self.tasks[func])

    def give_back(self, func: str) -> None:
        index = self.tasks[func]["index"]
        funcs = self.pending.setdefault(index, [])
        order = [c["func"] for c in self.tasks[func]["candidates"]]
        funcs.append(func)
        funcs.sort(key=order.index)

    def dispatch(self) -> None:
        """Give every idle worker a candidate its server has not failed (none after the
        deadline), then record the candidates every server has failed."""
        started_ok = self.options.deadline is None or time.monotonic() < self.options.deadline
        for worker in list(self.live):
            if worker in self.busy:
                continue
            job = self.next_for(worker) if started_ok else None
            if job is None:
                continue
            self.busy[worker] = (job.func, time.monotonic())
            worker.inbox.put(job)
        self._settle_failures()

    def _settle_failures(self) -> None:
        """Record as failed each candidate left that every server of the round has failed."""
        if not self.live or self.waiting:
            return  # a worker is still waiting for its first server
        servers = set(self.live.values())
        failed = [
            func
            for funcs in self.pending.values()
            for func in funcs
            if servers <= set(self.failures.get(func, {}))
        ]
        for func in failed:
            index = self.tasks[func]["index"]
            self.pending[index].remove(func)
            if not self.pending[index]:
                del self.pending[index]
            tried = self.failures[func]
            errors = sorted(set(tried.values()))
            self.say(
                f"{func} of {self.tasks[func]['name']} failed on every server "
                f"({len(tried)}): {'; '.join(errors)}"
            )
            self.record(func, {"error": errors[-1], "failed_on": sorted(tried)})

    # -- events -------------------------------------------------------------------------------

    def on_joined(self, worker: _Worker, address: str, identity) -> None:
        """A worker has a session: it joins the round, or is refused when its server has no
        OpenCL device or another device than the kind's."""
        self.waiting.discard(worker)
        if identity is None:
            self.say(f"{address} has no OpenCL device: left out of the round")
            worker.stop()
            return
        if self.device is None:
            self.device = identity
        elif identity != self.device:
            self.say(
                f"{address} reports {identity['name']!r} (driver {identity['driver']!r}), the "
                f"kind's times are of {self.device['name']!r} (driver {self.device['driver']!r}): "
                "left out; register it under a key of its own"
            )
            worker.stop()
            return
        self.live[worker] = address
        self.say(f"{address} joined ({identity['name']}, {len(self.live)} servers)")

    def on_result(self, worker: _Worker, func: str, result, lost: bool) -> None:
        """A candidate's time is recorded; an error gives the candidate back to the others."""
        if worker.stopped:
            return  # timed out: its candidate went back to the others
        self.busy.pop(worker, None)
        address = self.live.get(worker, worker.address)
        if lost:
            self.live.pop(worker, None)
            self.current.pop(worker, None)
        if "run_secs" in result:
            self.counts[address] = self.counts.get(address, 0) + 1
            self.record(func, dict(result, server=address))
            return
        what = "lost its session" if lost else "failed"
        if "RPCSessionTimeoutError" not in result["error"]:
            # a session the server expired (session_timeout) says nothing of the candidate
            tried = self.failures.setdefault(func, {})
            tried[address] = result["error"]
            losses = sum(any(m in e for m in _LOST_CONNECTION) for e in tried.values())
            if lost and losses >= _MAX_LOSSES:
                self.say(
                    f"{address} {what} on {func} ({result['error']}), the {losses}th server to "
                    "lose its session on it: recorded failed (it may crash the device)"
                )
                self.record(func, {"error": result["error"], "failed_on": sorted(tried)})
                return
            self.save()
        self.give_back(func)
        self.say(f"{address} {what} on {func} ({result['error']}); it goes back to the others")

    def on_left(self, worker: _Worker, reason: str) -> None:
        self.waiting.discard(worker)
        self.live.pop(worker, None)
        self.current.pop(worker, None)
        if not worker.stopped:
            self.say(f"a worker left the round: {reason}")

    def check_timeouts(self) -> None:
        """Drop the servers whose candidate has run past ``candidate_timeout``, and the workers
        that have had no session for longer than ``request_timeout`` and ``candidate_timeout``
        together (a server that accepts a connection and then never answers)."""
        now = time.monotonic()
        patience = self.options.request_timeout + self.options.candidate_timeout
        for worker in self.workers:
            if worker in self.live or worker.stopped or not worker.is_alive():
                continue
            if now - worker.asked_at > patience:
                worker.stop()  # its thread waits on the server; it is not waited for
                self.waiting.discard(worker)
                self.say(f"a worker had no session within {patience:g} s: left out")
        for worker, (func, started) in list(self.busy.items()):
            if now - started > self.options.candidate_timeout:
                address = self.live.pop(worker, worker.address)
                self.busy.pop(worker)
                self.current.pop(worker, None)
                worker.stop()  # its thread waits on the server; it is not waited for
                error = f"no result within {self.options.candidate_timeout:g} s"
                self.failures.setdefault(func, {})[address] = error
                self.save()
                self.give_back(func)
                self.say(f"{address} timed out on {func}: left out; it goes back to the others")

    def check_finished(self) -> None:
        """End the kind's round when nothing is left, or nothing can be timed any more."""
        if self.finished:
            return
        past_deadline = (
            self.options.deadline is not None and time.monotonic() >= self.options.deadline
        )
        no_worker = not any(w.is_alive() and not w.stopped for w in self.workers)
        if self.busy or (self.pending and not no_worker and not past_deadline):
            return
        self.finished = True
        for worker in self.workers:
            worker.stop()
        left = sum(len(funcs) for funcs in self.pending.values())
        seconds = time.monotonic() - self.start
        if left:
            self.say(
                f"stopped with {left} of {self.total} candidates untimed after {seconds:.1f} s "
                "(no server left, or the deadline); run again to resume"
            )
        else:
            per_server = ", ".join(f"{addr} {n}" for addr, n in sorted(self.counts.items()))
            self.say(
                f"done: {self.done} candidates in {seconds:.1f} s on {len(self.counts)} "
                f"servers ({per_server})"
            )


def run_round(kinds: List[_Kind]) -> None:
    """Time every kind's candidates at once; returns when every kind has finished."""
    events: "queue.Queue" = queue.Queue()
    for kind in kinds:
        if kind.finished:
            kind.say("nothing left to time")
            continue
        host, port = kind.tracker
        servers = count_servers(host, port, kind.key)
        kind.say(f"{kind.total} candidates to time on {servers} servers")
        for number in range(max(servers, 1)):
            worker = _Worker(kind, number, events)
            kind.workers.append(worker)
            kind.waiting.add(worker)
            worker.start()
    owner = {worker: kind for kind in kinds for worker in kind.workers}
    try:
        while not all(kind.finished for kind in kinds):
            try:
                event = events.get(timeout=_TICK)
            except queue.Empty:
                event = None
            if event is not None:
                kind = owner[event[1]]
                if not kind.finished:
                    getattr(kind, "on_" + event[0])(*event[1:])
            for kind in kinds:
                if not kind.finished:
                    kind.check_timeouts()
                    kind.dispatch()
                    kind.check_finished()
    finally:
        for kind in kinds:
            for worker in kind.workers:
                worker.stop()
        # Let the workers close their sessions (a hung one is not waited for).
        ends = time.monotonic() + 5.0
        for kind in kinds:
            for worker in kind.workers:
                worker.join(max(0.0, ends - time.monotonic()))


def write_times(path: Path, times: Dict[str, Any]) -> None:
    """Replace ``path`` with ``times`` in one rename (a stop meanwhile leaves a whole file)."""
    path = pathlib.Path(path)
    partial = path.with_suffix(path.suffix + ".tmp")
    partial.write_text(json.dumps(times, indent=1), encoding="utf-8")
    os.replace(partial, path)


def _tracker_address(tracker: str) -> Tuple[str, int]:
    host, _, port = str(tracker).rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"tracker {tracker!r}: give it as HOST:PORT (127.0.0.1:9190)")
    return host, int(port)


def times_file(times_dir: Path, key: str) -> pathlib.Path:
    """The checkpoint file of a key's times in ``times_dir``."""
    if not key or any(c in key for c in "/\\:") or key.startswith("."):
        raise ValueError(f"device key {key!r}: use letters, digits, '-' and '_' (adreno-740)")
    return pathlib.Path(times_dir) / f"times-{key}.json"


def measure_farm(
    tracker: str,
    bundles: Dict[str, Path],
    times_dir: Path,
    devices: Optional[Dict[str, Dict[str, str]]] = None,
    log: Callable[[str], None] = print,
    **options,
) -> Dict[str, Dict[str, Any]]:
    """Time bundles on every server of their device keys, all keys at once.

    Parameters
    ----------
    tracker : str
        ``HOST:PORT`` of the RPC tracker.
    bundles : Dict[str, Path]
        Per device key, the bundle to time on its servers (keys of one target share one).
    times_dir : Path
        Folder of the checkpoints, ``times-KEY.json``, written as results arrive; the results
        a file there holds already are kept and not timed again.
    devices : Optional[Dict[str, Dict[str, str]]]
        Per key, the device its servers must report (that of an existing database); by default
        the first server of the key decides.
    log : Callable[[str], None]
        Where progress lines go, each prefixed with ``[KEY]``.
    options
        :class:`FarmOptions` fields.

    Returns
    -------
    times : Dict[str, Dict[str, Any]]
        Per key, what :func:`~.device_measure.measure_bundle` returns, each result with the
        ``server`` that measured it, and ``servers``: the candidates each server timed.
    """
    host, port = _tracker_address(tracker)
    folder = pathlib.Path(times_dir)
    folder.mkdir(parents=True, exist_ok=True)
    settings = FarmOptions(**options)
    kinds = []
    for key, bundle in bundles.items():
        path = times_file(folder, key)
        earlier = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
        device = (devices or {}).get(key)
        if earlier is not None:
            if earlier.get("format") != device_measure.TIMES_FORMAT:
                raise ValueError(f"{path}: not the times of a tuning bundle; remove it")
        if earlier is not None and earlier["device"].get("name"):
            if device is not None and earlier["device"] != device:
                raise ValueError(
                    f"{path} holds times of {earlier['device']}, the key's database is of "
                    f"{device}: remove it or use another database"
                )
            device = earlier["device"]
            log(f"[{key}] resuming {path}: {len(earlier['results'])} candidates kept")

        def checkpoint(times, path=path):
            write_times(path, times)

        kinds.append(
            _Kind(
                key,
                bundle,
                (host, port),
                settings,
                earlier or {},
                device,
                checkpoint,
                log,
            )
        )
    run_round(kinds)
    result = {}
    for kind in kinds:
        times = kind.times()
        write_times(times_file(folder, kind.key), times)
        result[kind.key] = times
    return result


def measure_key(
    bundle: Path,
    host: str,
    port: int,
    key: str,
    resume: Optional[Dict[str, Any]] = None,
    checkpoint: Optional[Callable[[Dict[str, Any]], None]] = None,
    log: Callable[[str], None] = print,
    **options,
) -> Dict[str, Any]:
    """Time one bundle on every server of one key (:func:`measure_farm` for one key, with the
    checkpoint a callable and the earlier times a dict, as ``measure_bundle`` takes them)."""
    device = None
    if resume is not None:
        if resume.get("format") != device_measure.TIMES_FORMAT or resume.get("evict_bytes", 0):
            raise ValueError(
                "cannot resume these times over RPC: time the bundle anew (another format, or "
                "timed cold)"
            )
        device = resume["device"]
    kind = _Kind(
        key,
        bundle,
        (host, int(port)),
        FarmOptions(**options),
        resume or {},
        device,
        checkpoint,
        log,
    )
    run_round([kind])
    return kind.times()
