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
"""Tune the Adreno schedules of a Relax model into a MetaSchedule database.

Three steps, so that the device needs only TVM's runtime:

1. :func:`build_candidates` (here, with the compiler): run the Adreno pipeline up to its
   schedule rules, extract the workloads as MetaSchedule does
   (:func:`~tvm.s_tir.meta_schedule.relax_integration.extract_tasks`), enumerate each
   workload's candidates (:func:`~.space.candidates`), compile them, one library per workload,
   and write a bundle: the libraries, ``manifest.json`` (what to time, argument scopes
   included), ``device_measure.py`` and ``pending.json`` (the traces, kept on this side).
2. Time the bundle on the device: :func:`measure_local` (an OpenCL device of this machine),
   :func:`measure_rpc` (a device behind a TVM RPC tracker: a phone), or ``device_measure.py``
   run where the bundle was carried (a machine without the compiler).
3. :func:`commit_times`: the times become tuning records of a MetaSchedule JSON database
   that records the device (:mod:`.database`).

A later compilation under the database (``with database: tvm.compile(...)``) takes the
fastest record of each workload it holds (``relax.transform.MetaScheduleApplyDatabase`` in
the Adreno pipeline) and the default rules for the rest. :func:`tune` runs the three steps.
"""

import json
import pathlib
import shutil
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

import numpy as np

import tvm
import tvm_ffi
from tvm import relax
from tvm.ir import IRModule
from tvm.target import Target

from ...dlight.adreno.config import RuleConfig
from ..arg_info import ArgInfo
from ..database import TuningRecord, Workload
from ..relax_integration import extract_tasks as _ms_extract_tasks
from . import device_measure, farm
from .database import DEVICE_FILE, create_database, read_device
from .space import candidates

_SCHEDULE_PASSES = ("ApplyDefaultSchedule", "MetaScheduleApplyDatabase")
Path = Union[str, pathlib.Path]


def _pass_name(pass_obj) -> str:
    return pass_obj.info.name


def _pre_schedule_passes(target: Target) -> List[tvm.transform.Pass]:
    passes = relax.pipeline.library_dispatch_passes(target)
    legalize = relax.pipeline.legalize_passes(target)
    cut = next(
        (i for i, p in enumerate(legalize) if _pass_name(p) in _SCHEDULE_PASSES), len(legalize)
    )
    return passes + legalize[:cut]


def schedule_rules(target: Target) -> List[Any]:
    """The dlight rules of the target's pipeline, in its order (its first ApplyDefaultSchedule)."""
    with target:
        for pass_obj in relax.pipeline.legalize_passes(target):
            if _pass_name(pass_obj) == "ApplyDefaultSchedule":
                return list(pass_obj.rules)
    raise ValueError(f"the Relax pipeline of {target} applies no dlight rules: nothing to tune")


def extract_tasks(mod: IRModule, target: Target) -> List[Any]:
    """The workloads of ``mod`` as the pipeline schedules them (MetaSchedule ExtractedTasks).

    Parameters
    ----------
    mod : IRModule
        The Relax model.
    target : Target
        The Adreno target.

    Returns
    -------
    tasks : List[tvm.s_tir.meta_schedule.ExtractedTask]
        One per distinct PrimFunc right before the schedule rules, weighted by its uses.
    """
    with target:
        lowered = tvm.transform.Sequential(_pre_schedule_passes(target))(mod)
    return list(_ms_extract_tasks(lowered, target))


def args_info_with_scopes(func: tvm.tirx.PrimFunc) -> Optional[List[List[Any]]]:
    """The argument records of ``func`` (scope included); None when a parameter is not a
    buffer of static shape."""
    specs = []
    for param in func.params:
        buf = param.ty
        if not isinstance(buf, tvm.tirx.buffer.BufferType):
            return None
        if not all(isinstance(dim, (int, tvm.tirx.IntImm)) for dim in buf.shape):
            return None
        scope = str(buf.storage_scope) or "global"
        specs.append(["TENSOR", str(buf.dtype), [int(d) for d in buf.shape], scope])
    return specs


def _with_host(target: Target) -> Target:
    return target if target.host is not None else Target(target, host="llvm")


def _compile(funcs: Dict[str, Any], target: Target):
    mod = IRModule(dict(funcs))
    return tvm.compile(mod, target=_with_host(target))


def _compile_candidates(funcs: Dict[str, Any], target: Target, log):
    """One library of the candidates that compile, and those candidates: all of them in one
    build, or, when one fails the batch, the ones that compile on their own. No library (None)
    when the first candidate, the default, is not among them: the task is then left out."""
    try:
        return _compile(funcs, target), funcs
    except Exception:  # pylint: disable=broad-except
        pass
    kept = {}
    for name, func in funcs.items():
        try:
            _compile({name: func}, target)
            kept[name] = func
        except Exception as err:  # pylint: disable=broad-except
            log(f"  candidate {name} does not compile: {device_measure._one_line(err)}")
    default = next(iter(funcs))
    return (_compile(kept, target) if default in kept else None), kept


def _candidate_name(task: int, candidate: int) -> str:
    return f"t{task:04d}_c{candidate:03d}"


def build_candidates(
    mod: IRModule,
    target: Target,
    bundle: Path,
    max_candidates: Optional[int] = None,
    seed: int = 0,
    name: str = "model",
    log: Callable[[str], None] = print,
    tuned: Optional[Any] = None,
    configs: Optional[Callable[[str, Any], Optional[Sequence[RuleConfig]]]] = None,
    max_misses: Optional[int] = None,
) -> Dict[str, Any]:
    """Compile every candidate schedule of every workload of ``mod`` into a bundle.

    Parameters
    ----------
    mod : IRModule
        The Relax model.
    target : Target
        The Adreno target (``host`` defaults to ``llvm``).
    bundle : Path
        Folder to write; an existing bundle there is extended (several models in one bundle).
    max_candidates : Optional[int]
        Candidates per workload, the default included (None: the whole space).
    seed : int
        Seed of the draw when the space is larger than ``max_candidates``.
    name : str
        Model name, prefixed to the task names.
    log : Callable[[str], None]
        Where progress lines go.
    tuned : Optional[tvm.s_tir.meta_schedule.Database]
        A database whose workloads are left out, to tune only what it does not hold yet
        (a model whose fusion changed, a new model).
    configs : Optional[Callable[[str, Any], Optional[Sequence[RuleConfig]]]]
        Given a task's name (``name/task``) and the rule that takes it, the configs to try
        instead of the rule's whole space (:func:`~.space.refine` narrows one); the default
        is still tried first, and a task with no other config is left out.
    max_misses : Optional[int]
        Stop a workload's walk of its space after this many knob combinations in a row gave no
        new schedule (:func:`~.space.candidates`; None: walk the whole space).

    Returns
    -------
    manifest : Dict[str, Any]
        The bundle's ``manifest.json`` after this model was added.
    """
    folder = pathlib.Path(bundle)
    (folder / "lib").mkdir(parents=True, exist_ok=True)
    manifest = _read_json(folder / "manifest.json", {"target": str(target), "tasks": []})
    pending = _read_json(folder / "pending.json", {"workloads": [], "candidates": {}})
    rules = schedule_rules(target)
    known = {wl[0] for wl in pending["workloads"]}
    for task in extract_tasks(mod, target):
        workload_mod = task.dispatched[0]
        args = args_info_with_scopes(workload_mod["main"])
        workload = Workload(workload_mod)
        workload_json = workload.as_json()
        if args is None or workload_json[0] in known:
            continue  # symbolic shapes (generic GPU rules), or a workload already in the bundle
        if tuned is not None and tuned.has_workload(workload_mod):
            continue
        task_name = f"{name}/{task.task_name}"
        cands = candidates(
            workload_mod,
            target,
            rules,
            max_candidates,
            seed + len(known),
            configs=(
                (lambda rule, task_name=task_name: configs(task_name, rule)) if configs else None
            ),
            max_misses=max_misses,
        )
        if len(cands) < 2:
            continue  # nothing to choose: the default is used without a record
        index = len(manifest["tasks"])
        start = time.perf_counter()
        lib, funcs = _compile_candidates(
            {
                _candidate_name(index, i): c.schedule.mod["main"].with_attr(
                    "global_symbol", _candidate_name(index, i)
                )
                for i, c in enumerate(cands)
            },
            target,
            log,
        )
        if lib is None:
            continue  # the default itself does not compile: the pipeline reports it
        lib_name = f"task_{index:04d}.so"
        lib.export_library(str(folder / "lib" / lib_name))
        known.add(workload_json[0])
        entries = _add_pending(pending, workload, workload_json, cands, funcs, index, target)
        manifest["tasks"].append(
            {
                "index": index,
                "name": task_name,
                "weight": int(task.weight),
                "lib": lib_name,
                "args": args,
                "candidates": entries,
            }
        )
        log(
            f"built {task_name}: {len(entries)} candidates ({cands[0].rule}) in "
            f"{time.perf_counter() - start:.1f} s"
        )
    shutil.copy2(device_measure.__file__, folder / "device_measure.py")
    _write_json(folder / "manifest.json", manifest)
    _write_json(folder / "pending.json", pending)
    return manifest


def _add_pending(
    pending, workload, workload_json, cands, funcs, index: int, target: Target
) -> List[Dict]:
    """Add the workload (``workload_json`` is its JSON) and the tuning record of each compiled
    candidate to ``pending`` (they become database records once timed); the candidates'
    manifest entries."""
    pending["workloads"].append(workload_json)
    args_info = ArgInfo.from_prim_func(workload.mod["main"])
    entries = []
    for i, cand in enumerate(cands):
        func_name = _candidate_name(index, i)
        if func_name not in funcs:
            continue
        record = TuningRecord(cand.schedule.trace, workload, None, target, args_info)
        pending["candidates"][func_name] = {
            "workload": len(pending["workloads"]) - 1,
            "record": record.as_json(),
        }
        entries.append({"func": func_name, **cand.describe()})
    return entries


def _read_json(path: pathlib.Path, default):
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else default


def _write_json(path: pathlib.Path, data) -> None:
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def measure_local(bundle: Path, device=None, **kwargs) -> Dict[str, Any]:
    """Time a bundle on an OpenCL device of this machine (default ``tvm.opencl(0)``);
    ``kwargs`` go to :func:`~.device_measure.measure_bundle`."""
    folder = pathlib.Path(bundle)
    manifest = _read_json(folder / "manifest.json", None)
    dev = device if device is not None else tvm.opencl(0)
    return device_measure.measure_bundle(
        manifest, lambda lib: tvm.runtime.load_module(str(folder / "lib" / lib)), dev, **kwargs
    )


def measure_rpc(
    bundle: Path, host: str, port: int, key: str, session_timeout: float = 0.0, **kwargs
) -> Dict[str, Any]:
    """Time a bundle on the OpenCL devices of every RPC server registered at a tracker under
    ``key``, one worker per server (:mod:`.farm`).

    Parameters
    ----------
    bundle : Path
        The bundle folder.
    host, port, key : str, int, str
        The tracker and the device key the servers registered with
        (``python -m tvm.exec.rpc_server --tracker=HOST:PORT --key=KEY`` on each device).
    session_timeout : float
        Seconds a server keeps one session (0: no limit); an expired session's worker asks the
        tracker for a server again.
    kwargs
        ``min_seconds``, ``repeat``, ``log``, ``resume``, ``checkpoint``, ``deadline`` as
        :func:`~.device_measure.measure_bundle` takes them, and the waits of
        :class:`~.farm.FarmOptions` (``request_timeout``, ``candidate_timeout``).

    Returns
    -------
    times : Dict[str, Any]
        As :func:`~.device_measure.measure_bundle`, with the devices' name and driver; each
        result names the ``server`` (``host:port``) that timed it.
    """
    if kwargs.pop("evict_bytes", 0) > 0:
        raise ValueError(
            "evict_bytes: cold-cache timing registers its evictor in the timing process, which "
            "over RPC is the server; time warm over RPC, or run device_measure.py on the device"
        )
    return farm.measure_key(bundle, host, port, key, session_timeout=session_timeout, **kwargs)


def commit_times(bundle: Path, times: Dict[str, Any], database: Path) -> List[Dict[str, Any]]:
    """Write the measured candidates of a bundle as tuning records of a database.

    Parameters
    ----------
    bundle : Path
        The bundle the times are of (its ``pending.json`` holds the traces).
    times : Dict[str, Any]
        What ``device_measure`` returned or wrote.
    database : Path
        The database folder (created; one of another device is refused).

    Returns
    -------
    summary : List[Dict[str, Any]]
        Per task: its name, the default's median time (us) in these times, the fastest
        median of every round committed to the database (these times and the earlier rows
        of its ``summary.json``) with that candidate's rule and knobs, and how many
        candidates those rounds measured; for times of a farm (:func:`measure_rpc`,
        :func:`tune_farm`) also how many each server timed and the server of the fastest.
        Also written to ``summary.json``.
    """
    folder = pathlib.Path(bundle)
    if times.get("format") != device_measure.TIMES_FORMAT:
        raise ValueError(f"not the times of a tuning bundle (format {times.get('format')!r})")
    manifest = _read_json(folder / "manifest.json", None)
    pending = _read_json(folder / "pending.json", None)
    records_db = create_database(database, times["device"], target=manifest["target"])
    workloads = [Workload.from_json(w) for w in pending["workloads"]]
    committed = {}
    summary = _read_json(pathlib.Path(database) / "summary.json", [])
    for task in manifest["tasks"]:
        medians: Dict[str, float] = {}
        servers: Dict[str, int] = {}
        for cand in task["candidates"]:
            result = times["results"].get(cand["func"], {})
            if "run_secs" not in result:
                continue
            entry = pending["candidates"][cand["func"]]
            index = entry["workload"]
            if index not in committed:
                committed[index] = records_db.commit_workload(workloads[index].mod)
            record = TuningRecord.from_json(entry["record"], workloads[index])
            records_db.commit_tuning_record(
                TuningRecord(
                    record.trace,
                    committed[index],
                    [float(v) for v in result["run_secs"]],
                    record.target,
                    record.args_info,
                )
            )
            medians[cand["func"]] = float(np.median(result["run_secs"]))
            if "server" in result:
                servers[result["server"]] = servers.get(result["server"], 0) + 1
        if not medians:
            continue
        best = min(medians, key=medians.get)
        default = task["candidates"][0]["func"]
        chosen = next(c for c in task["candidates"] if c["func"] == best)
        row = {
            "task": task["name"],
            "weight": task["weight"],
            "candidates": len(medians),
            "default_us": round(medians[default] * 1e6, 2) if default in medians else None,
            "best_us": round(medians[best] * 1e6, 2),
            "rule": chosen["rule"],
            "knobs": chosen["knobs"],
        }
        if servers:
            # Timed on a farm: which servers of the device kind timed the task's candidates.
            row["servers"] = servers
            row["best_server"] = times["results"][best]["server"]
        earlier = next((r for r in summary if r["task"] == task["name"]), None)
        if earlier is not None:
            # An earlier round's records stay in the database, and a compile takes the fastest
            # of all rounds: so does the summary.
            row["candidates"] += earlier["candidates"]
            for server, count in earlier.get("servers", {}).items():
                row.setdefault("servers", {})[server] = row["servers"].get(server, 0) + count
            if earlier["best_us"] < row["best_us"]:
                row.update(best_us=earlier["best_us"], knobs=earlier["knobs"])
                row.pop("best_server", None)
                if "best_server" in earlier:
                    row["best_server"] = earlier["best_server"]
            summary.remove(earlier)
        summary.append(row)
    _write_json(pathlib.Path(database) / "summary.json", summary)
    return summary


def tune(
    mod: IRModule,
    target: Target,
    database: Path,
    work_dir: Path,
    measure: Optional[Callable[[Path], Dict[str, Any]]] = None,
    max_candidates: Optional[int] = None,
    log: Callable[[str], None] = print,
):
    """Tune ``mod`` for ``target``: build, measure, commit (see the module docstring).

    Parameters
    ----------
    mod : IRModule
        The Relax model.
    target : Target
        The Adreno target.
    database : Path
        The database folder the records go to.
    work_dir : Path
        Folder for the bundle (replaced).
    measure : Optional[Callable[[Path], Dict[str, Any]]]
        Times a bundle: :func:`measure_local` (the default) or
        ``functools.partial(measure_rpc, host=..., port=..., key=...)``.
    max_candidates : Optional[int]
        Candidates per workload (the number of trials), the default schedule included.
    log : Callable[[str], None]
        Where progress lines go.

    Returns
    -------
    database : tvm.s_tir.meta_schedule.database.JSONDatabase
        The database, ready for ``with database:``.
    """
    bundle = pathlib.Path(work_dir) / "bundle"
    shutil.rmtree(bundle, ignore_errors=True)
    build_candidates(mod, target, bundle, max_candidates=max_candidates, log=log)
    times = (measure or measure_local)(bundle)
    commit_times(bundle, times, database)
    return create_database(database, times["device"], target=str(target))


def tune_farm(
    mod: IRModule,
    target: Union[Target, Dict[str, Target]],
    tracker: str,
    keys: Sequence[str],
    database_dir: Path,
    work_dir: Path,
    max_candidates: Optional[int] = None,
    seed: int = 0,
    log: Callable[[str], None] = print,
    **options,
) -> Dict[str, Any]:
    """Tune ``mod`` on a device farm: every server of every key at once, one database per key.

    The candidates are built once per target (keys of one target share a bundle), timed on
    all the servers the tracker holds for each key (:func:`~.farm.measure_farm`), and each key's
    times are committed to its own database, ``database_dir/KEY``, which records the device
    its servers report (a folder of another device is refused). The round's state lives in
    ``work_dir``: run the same call again after an interruption and it builds nothing again,
    keeps what was timed and times the rest; a key is committed once, when all of its
    candidates have a time or an error.

    Parameters
    ----------
    mod : IRModule
        The Relax model.
    target : Union[Target, Dict[str, Target]]
        The Adreno target of every key, or one per key.
    tracker : str
        ``HOST:PORT`` of the RPC tracker.
    keys : Sequence[str]
        The device keys to tune for (one per device kind: ``adreno-740``, ``adreno-660``).
    database_dir : Path
        Folder of the databases, one sub-folder per key.
    work_dir : Path
        Folder of the bundles and the checkpoints (kept; another model's are replaced).
    max_candidates : Optional[int]
        Candidates per workload, the default included.
    seed : int
        Seed of the candidates' draw.
    log : Callable[[str], None]
        Where progress lines go.
    options
        :class:`~.farm.FarmOptions` fields (timing and the waits).

    Returns
    -------
    databases : Dict[str, tvm.s_tir.meta_schedule.database.JSONDatabase]
        The database of every key committed (a key left with untimed candidates is not).
    """
    keys = list(keys)
    if not keys or len(set(keys)) != len(keys):
        raise ValueError(f"device keys {keys}: give each device kind's key once")
    if isinstance(target, dict):
        missing = [key for key in keys if key not in target]
        if missing:
            raise ValueError(f"no target for the device keys {missing}: give one per key")
        targets = {key: Target(target[key]) for key in keys}
    else:
        targets = {key: Target(target) for key in keys}
    work = pathlib.Path(work_dir)
    databases = pathlib.Path(database_dir)
    work.mkdir(parents=True, exist_ok=True)
    fingerprint = {
        "model": f"{tvm_ffi.structural_hash(mod):x}",
        "targets": {key: str(t) for key, t in targets.items()},
        "max_candidates": max_candidates,
        "seed": seed,
    }
    state = _read_json(work / "farm.json", None)
    if state is None or state.get("fingerprint") != fingerprint:
        if state is not None:
            log(f"{work} holds a round of another model or settings: starting afresh")
        for old in list(work.glob("bundle-*")) + list(work.glob("times-*.json")):
            if old.is_dir():
                shutil.rmtree(old)
            else:
                old.unlink()
        state = {"fingerprint": fingerprint, "committed": []}
        _write_json(work / "farm.json", state)
    by_target: Dict[str, List[str]] = {}
    for key in keys:
        by_target.setdefault(str(targets[key]), []).append(key)
    bundles = {}
    for number, group in enumerate(by_target.values()):
        folder = work / f"bundle-{number}"
        if not (folder / "manifest.json").is_file():
            shutil.rmtree(folder, ignore_errors=True)  # a build that was interrupted
            build_candidates(mod, targets[group[0]], folder, max_candidates, seed, log=log)
        bundles.update({key: folder for key in group})
    todo = {key: bundles[key] for key in keys if key not in state["committed"]}
    devices = {
        key: read_device(databases / key)
        for key in todo
        if (databases / key / DEVICE_FILE).is_file()
    }
    times = (
        farm.measure_farm(tracker, todo, work, devices=devices, log=log, **options) if todo else {}
    )
    for key, key_times in times.items():
        if key_times["untimed_tasks"] or not key_times["device"]["name"]:
            log(f"[{key}] not committed: candidates left untimed; run again to resume")
            continue
        summary = commit_times(bundles[key], key_times, databases / key)
        state["committed"].append(key)
        _write_json(work / "farm.json", state)
        log(
            f"[{key}] committed {len(key_times['results'])} results of {len(summary)} tasks to "
            f"{databases / key}"
        )
    return {
        key: create_database(
            databases / key, read_device(databases / key), target=str(targets[key])
        )
        for key in keys
        if key in state["committed"]
    }
