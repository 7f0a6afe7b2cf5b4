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
"""Time the candidates of an Adreno tuning bundle on an OpenCL device (TVM runtime only).

This file needs ``tvm.runtime`` and numpy, nothing of the compiler: it is copied into a tuning
bundle and run where only the runtime is installed (a phone, a GPU box)::

    TVM_USE_RUNTIME_LIB=1 python3 device_measure.py --bundle DIR --out times.json

``DIR/manifest.json`` (written by ``tvm.s_tir.meta_schedule.adreno.build_candidates``) lists
every task: its library, its arguments (dtype, shape, memory scope) and the names of its
candidate functions. Each candidate is timed on the same arguments, texture-scoped ones
allocated as images (:func:`alloc_image_arguments`); ``times.json`` gets the device's name and
driver and, per candidate, the run times in seconds or the error that stopped it.

The same functions time candidates in this process (a local device) or on a device behind an
RPC tracker (the arguments are allocated on the remote device, the library loaded there).
"""

import argparse
import ctypes
import json
import os
import pathlib
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Sequence

import numpy as np

# Argument records: ["TENSOR", dtype, shape, scope], MetaSchedule's ``TensorInfo`` JSON with the
# buffer's memory scope appended (a texture kernel reads garbage from a plain buffer).
ArgSpec = Sequence[Any]
TIMES_FORMAT = "adreno-tuning-times/1"


def _random_host_array(rng: np.random.Generator, dtype: str, shape) -> np.ndarray:
    if dtype.startswith(("int", "uint")):
        return rng.integers(0, 8, size=shape).astype(dtype)
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(dtype)
    return rng.uniform(-1.0, 1.0, size=shape).astype(dtype)


def alloc_image_arguments(
    device, args_info: Sequence[ArgSpec], alloc_repeat: int = 1, seed: int = 0
) -> List[List[Any]]:
    """Allocate and fill the arguments of a kernel, texture-scoped ones as images.

    MetaSchedule's default allocator makes a plain buffer of every argument; a parameter of
    scope ``global.texture*`` is an ``image2d_array_t`` in the kernel, and reading a buffer
    through it gives garbage (or faults). This allocator has the signature of MetaSchedule's
    ``f_alloc_argument`` and reads an optional fourth field, the memory scope, of each record.

    Parameters
    ----------
    device : tvm.runtime.Device
        The device, local or remote (an RPC session's device).
    args_info : Sequence[ArgSpec]
        ``["TENSOR", dtype, shape]`` or ``["TENSOR", dtype, shape, scope]`` per argument.
    alloc_repeat : int
        How many independent sets of arguments to make.
    seed : int
        Seed of the random values (uniform in [-1, 1), small integers for integer types).

    Returns
    -------
    repeated_args : List[List[tvm.runtime.Tensor]]
        ``alloc_repeat`` lists of tensors, one per argument.
    """
    import tvm  # pylint: disable=import-outside-toplevel

    rng = np.random.default_rng(seed)
    repeated = []
    for _ in range(alloc_repeat):
        args = []
        for info in args_info:
            if info[0] != "TENSOR":
                raise ValueError(f"cannot allocate an argument of kind {info[0]!r}: {info}")
            dtype, shape = str(info[1]), tuple(int(v) for v in info[2])
            scope = str(info[3]) if len(info) > 3 else "global"
            arr = tvm.runtime.empty(
                shape, dtype, device, mem_scope=None if scope == "global" else scope
            )
            arr.copyfrom(_random_host_array(rng, dtype, shape))
            args.append(arr)
        repeated.append(args)
    return repeated


def device_identity(device) -> Dict[str, str]:
    """The name and driver version the OpenCL device reports (what a database is keyed by)."""
    return {"name": str(device.device_name or ""), "driver": str(device.driver_version or "")}


EVICT_FUNCTION = "meta_schedule.adreno.evict_device_cache"


def register_cache_evictor(device, nbytes: int) -> str:
    """Register :data:`EVICT_FUNCTION`, a device-to-device copy of ``nbytes``.

    Timed back to back, a kernel finds its weights and inputs in the device's cache, which it
    does not in a network: the layers before it have moved other data through the cache. Copying
    more bytes than the cache holds between launches evicts them, so that the time is that of a
    cold kernel. The function takes (and ignores) the timed kernel's arguments, as the
    ``f_preproc`` of ``time_evaluator`` does. The copy runs in this process: it serves a local
    device, not an RPC session's.

    Parameters
    ----------
    device : tvm.runtime.Device
        A device of this process.
    nbytes : int
        Bytes to move through the cache (a few times its size: ``CL_DEVICE_GLOBAL_MEM_CACHE_SIZE``
        is the L2; a phone's system cache sits behind it).

    Returns
    -------
    name : str
        The registered global function's name.
    """
    import tvm  # pylint: disable=import-outside-toplevel

    if nbytes <= 0:
        raise ValueError(f"cache eviction needs a positive size in bytes, got {nbytes}")
    source = tvm.runtime.empty((nbytes,), "uint8", device)
    target = tvm.runtime.empty((nbytes,), "uint8", device)

    def _evict(*_kernel_args):
        source.copyto(target)

    tvm.register_global_func(EVICT_FUNCTION, _evict, override=True)
    return EVICT_FUNCTION


def time_function(  # pylint: disable=too-many-arguments
    module, name: str, device, args, min_seconds: float, repeat: int, evict: str = ""
) -> List[float]:
    """Run times (seconds per launch) of ``module[name]`` on ``args``, by the device timer of
    ``time_evaluator``.

    With warm caches (``evict`` empty), ``repeat`` samples, each the mean of enough launches to
    last ``min_seconds``. With ``evict`` (a global function's name, see
    :func:`register_cache_evictor`), ``4 * repeat`` samples of one launch each, the function
    called before every one."""
    if evict:
        result = module.time_evaluator(name, device, number=1, repeat=4 * repeat, f_preproc=evict)
        return [float(v) for v in result(*args).results]
    probe = module.time_evaluator(name, device, number=3, repeat=1)(*args)
    number = max(1, min(10000, int(min_seconds / max(probe.mean, 1e-7))))
    result = module.time_evaluator(name, device, number=number, repeat=repeat)(*args)
    return [float(v) for v in result.results]


def _one_line(err: BaseException) -> str:
    lines = [line.strip() for line in str(err).strip().splitlines() if line.strip()]
    return f"{type(err).__name__}: {lines[-1] if lines else ''}"[:300]


def measure_bundle(
    manifest: Dict[str, Any],
    load_library: Callable[[str], Any],
    device,
    min_seconds: float = 2e-3,
    repeat: int = 5,
    log: Callable[[str], None] = print,
    evict_bytes: int = 0,
    resume: Optional[Dict[str, Any]] = None,
    deadline: Optional[float] = None,
    checkpoint: Optional[Callable[[Dict[str, Any]], None]] = None,
) -> Dict[str, Any]:
    """Time every candidate of a tuning bundle.

    Parameters
    ----------
    manifest : Dict[str, Any]
        The bundle's ``manifest.json``.
    load_library : Callable[[str], Any]
        Loads a library of the bundle by its file name (locally, or uploaded over RPC).
    device : tvm.runtime.Device
        The OpenCL device to time on.
    min_seconds : float
        Length of one timing sample.
    repeat : int
        Samples per candidate.
    log : Callable[[str], None]
        Where progress lines go: after each task, the candidates timed so far of those this
        run times, their rate and the time left at that rate.
    evict_bytes : int
        When positive, every launch is timed cold: this many bytes are copied through the
        device's cache before it (:func:`register_cache_evictor`; a local device only).
    resume : Optional[Dict[str, Any]]
        Times of an earlier, unfinished run on the same device and with the same
        ``evict_bytes``: its tasks are kept and not timed again.
    deadline : Optional[float]
        A ``time.monotonic()`` value; no task is started after it (the ones left are listed as
        not timed, and a later run can resume).
    checkpoint : Optional[Callable[[Dict[str, Any]], None]]
        Called with the times so far after every task (to save them: a run stopped from
        outside then loses one task at most).

    Returns
    -------
    times : Dict[str, Any]
        ``{"format", "device": {"name", "driver"}, "evict_bytes", "results": {func:
        {"run_secs"} or {"error"}}, "untimed_tasks"}``.
    """
    times = {
        "format": TIMES_FORMAT,
        "device": device_identity(device),
        "evict_bytes": int(evict_bytes),
    }
    if resume is not None:
        earlier = {key: resume.get(key) for key in ("format", "device", "evict_bytes")}
        if earlier != {key: times[key] for key in earlier}:
            raise ValueError(
                f"cannot resume times of {earlier} as {times}: time the bundle anew "
                "(another device, format or cache eviction)"
            )
    evict = register_cache_evictor(device, evict_bytes) if evict_bytes > 0 else ""
    results: Dict[str, Any] = dict(resume["results"]) if resume is not None else {}
    times["results"] = results
    untimed, lost = [], None
    total = sum(
        1
        for task in manifest["tasks"]
        for cand in task["candidates"]
        if cand["func"] not in results
    )
    start, done = time.monotonic(), 0
    for task in manifest["tasks"]:
        if all(cand["func"] in results for cand in task["candidates"]):
            continue
        if lost is not None or (deadline is not None and time.monotonic() > deadline):
            untimed.append(task["name"])
            continue
        done_before = sum(1 for cand in task["candidates"] if cand["func"] in results)
        lost = _time_task(task, load_library, device, (min_seconds, repeat, evict), results, log)
        if lost is not None:
            untimed.append(task["name"])  # its candidates after the fault are not timed
        done += sum(1 for cand in task["candidates"] if cand["func"] in results) - done_before
        log(_progress(done, total, time.monotonic() - start))
        if checkpoint is not None:
            checkpoint(dict(times, untimed_tasks=[]))
    if lost is not None:
        log(
            f"the OpenCL context is lost after {lost}: {len(untimed)} tasks not timed; run "
            "again with the same output to resume after it"
        )
    elif untimed:
        log(
            f"time budget spent: {len(untimed)} of {len(manifest['tasks'])} tasks not timed; "
            "run again with the same output to resume"
        )
    return dict(times, untimed_tasks=untimed)


def _progress(done: int, total: int, seconds: float) -> str:
    """``timed 12/40 candidates (3.0/s, about 9 s left)``: the run's progress after a task."""
    rate = done / seconds if seconds > 0 else 0.0
    left = f", about {(total - done) / rate:.0f} s left" if rate > 0 and done < total else ""
    return f"timed {done}/{total} candidates ({rate:.1f}/s{left})"


#: Errors after which the device's context is unusable (a kernel faulted): every later command
#: would fail as well, so timing stops and a new process resumes after the faulting candidate.
_CONTEXT_LOST = ("CL_INVALID_COMMAND_QUEUE", "CL_OUT_OF_RESOURCES")


def _context_lost(err: BaseException) -> bool:
    return any(code in str(err) for code in _CONTEXT_LOST)


def _time_task(task, load_library, device, timing, results, log) -> Optional[str]:
    """Time the candidates of one task that ``results`` does not hold yet into it; ``timing``
    is (min_seconds, repeat, evict) as :func:`time_function` takes them. Returns the candidate
    after which the context was lost, else None."""
    min_seconds, repeat, evict = timing
    pending = [cand for cand in task["candidates"] if cand["func"] not in results]
    try:
        lib = load_library(task["lib"])
        args = alloc_image_arguments(device, task["args"], 1, seed=task["index"])[0]
    except Exception as err:  # pylint: disable=broad-except
        if _context_lost(err):
            return f"loading {task['name']} ({_one_line(err)})"
        for cand in pending:
            results[cand["func"]] = {"error": "load: " + _one_line(err)}
        log(f"task {task['name']}: {_one_line(err)}")
        return None
    for cand in pending:
        try:
            secs = time_function(lib, cand["func"], device, args, min_seconds, repeat, evict)
            results[cand["func"]] = {"run_secs": secs}
        except Exception as err:  # pylint: disable=broad-except
            results[cand["func"]] = {"error": _one_line(err)}
            if _context_lost(err):
                return f"{cand['func']} of {task['name']} ({_one_line(err)})"
    timed = [results[cand["func"]] for cand in task["candidates"]]
    medians = [np.median(r["run_secs"]) for r in timed if "run_secs" in r]
    best = min(medians) if medians else None
    default = results.get(task["candidates"][0]["func"], {}).get("run_secs")
    if default and best:
        log(
            f"task {task['name']}: {len(task['candidates'])} candidates, default "
            f"{np.median(default) * 1e6:.1f} us, best {best * 1e6:.1f} us"
        )
    return None


def _load_opencl_runtime(tvm) -> None:
    """With ``TVM_USE_RUNTIME_LIB=1`` no backend registers itself: load the OpenCL one."""
    if tvm.runtime.enabled("opencl"):
        return
    lib = os.path.join(os.path.dirname(tvm.__file__), "lib", "libtvm_runtime_opencl.so")
    ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)


def _select_device(tvm):
    """OpenCL device ``TVM_OPENCL_DEVICE`` names (a substring of its name), else device 0."""
    wanted = os.environ.get("TVM_OPENCL_DEVICE", "").lower()
    for index in range(16):
        dev = tvm.opencl(index)
        if not dev.exist:
            break
        if not wanted or wanted in str(dev.device_name).lower():
            return dev
    return tvm.opencl(0)


def main() -> int:
    """Command line: time the candidates of a bundle on this machine's OpenCL device."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", type=pathlib.Path, required=True)
    parser.add_argument("--out", type=pathlib.Path, required=True)
    parser.add_argument("--min-ms", type=float, default=2.0, help="length of one sample")
    parser.add_argument("--repeat", type=int, default=5, help="samples per candidate")
    parser.add_argument(
        "--budget-s",
        type=float,
        default=0.0,
        help="start no task after this many seconds (0: no budget); --resume continues",
    )
    parser.add_argument(
        "--resume", action="store_true", help="keep the tasks already timed in --out"
    )
    parser.add_argument(
        "--evict-mb",
        type=float,
        default=0.0,
        help="time each launch cold: copy this many MiB through the device cache before it",
    )
    args = parser.parse_args()
    import tvm  # pylint: disable=import-outside-toplevel

    _load_opencl_runtime(tvm)
    dev = _select_device(tvm)
    manifest = json.loads((args.bundle / "manifest.json").read_text(encoding="utf-8"))
    resume = None
    if args.resume and args.out.is_file():
        resume = json.loads(args.out.read_text(encoding="utf-8"))
    start = time.monotonic()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    times = measure_bundle(
        manifest,
        lambda name: tvm.runtime.load_module(str(args.bundle / "lib" / name)),
        dev,
        min_seconds=args.min_ms * 1e-3,
        repeat=args.repeat,
        evict_bytes=int(args.evict_mb * 2**20),
        resume=resume,
        deadline=start + args.budget_s if args.budget_s > 0 else None,
        checkpoint=lambda partial: _write_times(args.out, partial),
    )
    times["seconds"] = round(time.monotonic() - start, 1)
    _write_times(args.out, times)
    print(f"timed {len(times['results'])} candidates on {times['device']} in {times['seconds']} s")
    return 0


def _write_times(path: pathlib.Path, times: Dict[str, Any]) -> None:
    """Replace ``path`` with ``times`` in one rename (a run stopped meanwhile leaves a whole
    file)."""
    partial = path.with_suffix(path.suffix + ".tmp")
    partial.write_text(json.dumps(times, indent=1), encoding="utf-8")
    os.replace(partial, path)


if __name__ == "__main__":
    sys.exit(main())
