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
"""Tune the bench models' Adreno schedules on a device that has only the TVM runtime.

The batch-from-artifacts path of ``tvm.s_tir.meta_schedule.adreno``:

  python bench/tune.py build [--models resnet50,mobilenetv2,...] [--max-candidates N]
        compile every candidate schedule of every workload (build/tune/bundle/candidates);
        a workload's walk of its space ends after --max-misses (256) combinations in a row
        that gave no new schedule;
        with --new-only, only the workloads the database (--database) does not hold yet;
        with --refine KNOB,..., only the default and the neighbours of each task's best in
        the database's summary.json that differ from it in those knobs (knobs added later)
  python bench/tune.py carry
        add a runtime-only TVM (as bench/run.py bundle) and pack build/tune/carry/tune.tar.gz
  bash bench/tune_box.sh
        on the device (GPU box): time the candidates -> $OUT/times.json
  python bench/tune.py collect --times DIR/times.json [--database bench/tuning/nvidia-h200]
        the times become tuning records of the device's MetaSchedule JSON database
  python bench/tune.py layers --times DIR/times.json [--conv CONV.csv] [--clbench CEIL.json]
        for a round of ``--models layers``: per conv task its default and best time, the best's
        share of the fp32 peak (--clbench: bench/clbench.py's JSON of the same call) and knobs,
        beside the untuned (a) and (c) kernels of bench/conv_schedules.py (--conv), as CSV
  python bench/tune.py migrate [--models ...] [--database bench/tuning/nvidia-h200]
        re-key the records of workloads whose PrimFunc changed only by the ``schedule_rule``
        block annotation (the series added it after the database was measured) or by the
        texture scope of a parameter (constants took the C++ first-fit scope until 7784bcf)

``python bench/run.py build --configs a,t`` then builds (a) untuned and (t) tuned side by side
(config ``t`` compiles under the database named by ``BENCH_TUNING_DB``).
"""

import argparse
import contextlib
import csv
import json
import pathlib
import shutil
import sys
import tarfile
import time

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

import tuning_db  # noqa: E402  pylint: disable=wrong-import-position

sys.path.insert(0, str(REPO / "tools"))
from adreno_ws.progress import Progress  # noqa: E402  pylint: disable=wrong-import-position

DEFAULT_MODELS = "resnet50,mobilenetv2,blazeface,palm_detection,layers"
DEFAULT_DATABASE = HERE / "tuning" / "nvidia-h200"


def cmd_build(args) -> int:
    """Compile the candidates of every workload of the models into one bundle."""
    import tvm  # pylint: disable=import-outside-toplevel

    import build_worker  # pylint: disable=import-outside-toplevel

    target = build_worker.texture_target()
    tuned = tuning_db.load(args.database, strict=True) if args.new_only else None
    configs = _refine_around_best(args.database, target, args.refine) if args.refine else None
    bundle = args.work / "bundle" / "candidates"
    shutil.rmtree(bundle, ignore_errors=True)
    start = time.perf_counter()
    with contextlib.ExitStack() as stack:
        if args.fuse_depthwise_pointwise:
            option = {"relax.adreno.fuse_depthwise_pointwise": True}
            stack.enter_context(tvm.transform.PassContext(config=option))
        _build_models(args, target, bundle, tuned, configs)
    manifest = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
    count = sum(len(task["candidates"]) for task in manifest["tasks"])
    print(
        f"[tune build] {len(manifest['tasks'])} workloads, {count} candidates in "
        f"{time.perf_counter() - start:.1f} s"
    )
    return 0


def _build_models(args, target, bundle: pathlib.Path, tuned, configs) -> None:
    """Add the candidates of every workload of ``args.models`` to ``bundle``, with the tasks
    walked so far out of every model's tasks, their rate and the time left
    (``adreno_ws.progress``)."""
    from tvm.s_tir.meta_schedule import adreno as msa  # pylint: disable=import-outside-toplevel

    import models  # pylint: disable=import-outside-toplevel
    import run  # pylint: disable=import-outside-toplevel

    loaded = []
    for name in run.model_list(args.models, args.tiny):
        mod, _, _ = models.get(name, tiny=args.tiny)
        mod["main"] = mod["main"].with_attr("num_input", 1)
        loaded.append((name, mod, len(msa.extract_tasks(mod, target))))
    progress = Progress("tune build", sum(count for _, _, count in loaded), "tasks")
    for name, mod, count in loaded:
        t, walked = time.perf_counter(), progress.done

        def log(line: str) -> None:
            # build_candidates says "built TASK: ..." once per task it compiled; it passes
            # over the others (held by --database, or with nothing to choose) silently.
            if line.startswith("built "):
                progress.step(line[len("built ") :])
            else:
                progress.echo(line)

        manifest = msa.build_candidates(
            mod,
            target,
            bundle,
            max_candidates=args.max_candidates,
            name=name,
            log=log,
            tuned=tuned,
            configs=configs,
            max_misses=args.max_misses or None,
        )
        progress.step(
            f"{name}: {len(manifest['tasks'])} tasks in the bundle so far "
            f"[{time.perf_counter() - t:.1f} s]",
            count=max(walked + count - progress.done, 0),
        )
    progress.close()


def _refine_around_best(database: pathlib.Path, target, knobs: str):
    """``configs`` for ``build_candidates``: per task, the configs that differ from its best
    in the database's ``summary.json`` only in ``knobs`` (comma-separated); none for a task
    the summary does not hold or whose rule changed."""
    from tvm.s_tir.meta_schedule import adreno as msa  # pylint: disable=import-outside-toplevel

    summary = database / "summary.json"
    try:
        best = {row["task"]: row for row in json.loads(summary.read_text(encoding="utf-8"))}
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise SystemExit(
            f"--refine needs the per-task best of {summary} (bench/tune.py collect writes it): "
            f"{type(err).__name__}: {err}"
        ) from err
    varied = knobs.split(",")
    # the rules whose configs have every knob to vary
    config_classes = {
        rule.__name__: config
        for rule, config in msa.RULE_CONFIGS.items()
        if set(varied) <= set(config.choices())
    }
    if not config_classes:
        knobs_of = {
            config.__name__: sorted(config.choices()) for config in msa.RULE_CONFIGS.values()
        }
        raise SystemExit(f"--refine {knobs}: no rule config has all these knobs: {knobs_of}")

    def configs(task_name, rule):
        row = best.get(task_name)
        if row is None or row["rule"] != type(rule).__name__ or row["rule"] not in config_classes:
            return []
        values = {k: tuple(v) if isinstance(v, list) else v for k, v in row["knobs"].items()}
        try:
            best_config = config_classes[row["rule"]](**values)
        except TypeError as err:  # a knob the config no longer has
            print(f"[tune build] {task_name}: left out, its best's knobs do not fit: {err}")
            return []
        return msa.refine(best_config, target, varied)

    return configs


def cmd_carry(args) -> int:
    """Pack the candidates with a runtime-only TVM into build/tune/carry/tune.tar.gz."""
    import run  # pylint: disable=import-outside-toplevel

    bundle = args.work / "bundle"
    shutil.rmtree(bundle / "site", ignore_errors=True)
    shutil.rmtree(bundle / "wheels", ignore_errors=True)
    run.copy_runtime(bundle, args.python)
    carry = args.work / "carry"
    shutil.rmtree(carry, ignore_errors=True)
    carry.mkdir(parents=True)
    with tarfile.open(carry / "tune.tar.gz", "w:gz", compresslevel=6) as tar:
        tar.add(bundle, arcname="bundle", filter=_without_host_files)
    packed = (carry / "tune.tar.gz").stat().st_size
    print(f"packed {carry / 'tune.tar.gz'}: {packed / 2**20:.1f} MiB")
    return 0 if packed < run.CARRY_LIMIT else 1


def _without_host_files(info: tarfile.TarInfo):
    # The traces (pending.json) stay here: the device needs only the libraries and manifest.
    return None if info.name.endswith("pending.json") else info


def cmd_collect(args) -> int:
    """Commit the device's times into the database; print the per-task summary."""
    from tvm.s_tir.meta_schedule import adreno as msa  # pylint: disable=import-outside-toplevel

    times = json.loads(args.times.read_text(encoding="utf-8"))
    with tuning_db.updating(args.database) as folder:
        summary = msa.commit_times(args.work / "bundle" / "candidates", times, folder)
    faster = [row for row in summary if row["default_us"] and row["best_us"] < row["default_us"]]
    total_default = sum(row["weight"] * (row["default_us"] or 0) for row in summary)
    total_best = sum(row["weight"] * row["best_us"] for row in summary if row["default_us"])
    print(
        f"{len(summary)} workloads on {times['device']['name']} (driver "
        f"{times['device']['driver']}): {len(faster)} faster than the default; weighted kernel "
        f"time {total_default:.0f} us -> {total_best:.0f} us"
    )
    return 0


LAYER_COLUMNS = (
    "layer",
    "task",
    "candidates",
    "timed",
    "default_us",
    "best_us",
    "best_gflops",
    "best_pct_peak",
    "sweep_a_us",
    "sweep_c_us",
    "best_knobs",
)
#: Knobs that describe the device rather than the schedule: left out of the layer table.
DEVICE_KNOBS = ("compute_units", "wave_size", "split_k_min_steps", "unroll_window_limit")


def cmd_layers(args) -> int:
    """Print the per-layer table of a timed round of ``--models layers`` as CSV."""
    import statistics  # pylint: disable=import-outside-toplevel

    import conv_schedules  # pylint: disable=import-outside-toplevel

    if args.times is None:
        raise SystemExit("layers: --times names the round's times.json (tune_box.sh writes it)")
    try:
        manifest = json.loads((args.work / "bundle" / "candidates" / "manifest.json").read_text())
        results = json.loads(args.times.read_text(encoding="utf-8"))["results"]
        peak = json.loads(args.clbench.read_text())["peak_gflops"] if args.clbench else None
    except (OSError, ValueError, KeyError) as err:
        raise SystemExit(
            f"layers: cannot read the round (--work {args.work}, --times, --clbench): "
            f"{type(err).__name__}: {err}"
        ) from err
    sweep = {}
    if args.conv:
        with args.conv.open(newline="", encoding="utf-8") as rows:
            for row in csv.DictReader(rows):
                if row["status"] == "ok" and row["label"] in ("a", "c"):
                    sweep[(row["layer"], row["label"])] = row["kernel_us"]
    out = csv.writer(sys.stdout)
    out.writerow(LAYER_COLUMNS)
    for task in manifest["tasks"]:
        layer, func = task["name"][len("layer:") :].split("/", 1)
        if "conv2d" not in func:  # the layout transforms around the conv
            continue
        timed = {
            cand["func"]: statistics.median(results[cand["func"]]["run_secs"]) * 1e6
            for cand in task["candidates"]
            if "run_secs" in results.get(cand["func"], {})
        }
        if not timed:
            continue
        best = min(timed, key=timed.get)
        knobs = next(c["knobs"] for c in task["candidates"] if c["func"] == best) or {}
        # A Winograd stage does only part of the layer's work: no share of the peak for it.
        gflops = None
        if "winograd" not in func:
            spec = tuple(int(v) for v in layer.split(","))
            gflops = conv_schedules.layer_flop(spec) / timed[best] / 1e3
        default = timed.get(task["candidates"][0]["func"])
        out.writerow(
            [
                layer,
                func,
                len(task["candidates"]),
                len(timed),
                f"{default:.2f}" if default is not None else "",
                f"{timed[best]:.2f}",
                f"{gflops:.0f}" if gflops else "",
                f"{100 * gflops / peak:.1f}" if gflops and peak else "",
                sweep.get((layer, "a"), ""),
                sweep.get((layer, "c"), ""),
                json.dumps(
                    {k: v for k, v in knobs.items() if k not in DEVICE_KNOBS},
                    separators=(",", ":"),
                ),
            ]
        )
    return 0


def _first_fit_scope(shape) -> str:
    """The scope upstream's C++ ``AnnotateCustomMemoryScope`` gave a packed 5-D tensor: the
    first of ``-weight``, ``-nhwc``, ``texture`` whose image fits (strict limits, the tag's
    16384 pixels a side and 2048 layers).  Until workspace 7784bcf constants kept it."""
    spatial, depth = 16384, 2048
    outer, blocks, height, width = (int(d) for d in shape[:4])
    if outer < spatial and blocks * height * width < spatial:
        return "global.texture-weight"
    if outer < depth and blocks < spatial and height * width < spatial:
        return "global.texture-nhwc"
    return "global.texture"


def _scope_variants(mod):
    """``mod`` (one PrimFunc) with the texture parameters whose scope the C++ first fit chose
    otherwise set to that scope, every subset of them (the constants among them had it)."""
    import itertools  # pylint: disable=import-outside-toplevel

    import tvm  # pylint: disable=import-outside-toplevel

    func = mod["main"]
    changes = []
    for param in func.params:
        shape = getattr(param, "shape", None)  # tensor parameters carry their buffer
        if shape is None or len(shape) != 5 or not str(param.scope()).startswith("global.texture"):
            continue
        earlier = _first_fit_scope(shape)
        if earlier != str(param.scope()):
            changes.append((param, earlier))
    for count in range(1, len(changes) + 1):
        for subset in itertools.combinations(changes, count):
            swap = {
                param: tvm.tirx.decl_buffer(param.shape, param.dtype, param.name, scope=earlier)
                for param, earlier in subset
            }
            yield tvm.IRModule({"main": func.specialize(swap)})


def _earlier_key(database, func_mod, tuned_target=None):
    """The workload of ``database`` that ``func_mod`` was before a change its schedules do
    not depend on: without the ``schedule_rule`` annotation, with the texture scopes the
    C++ first fit gave its parameters, or compiled for ``tuned_target`` (the target the
    database was tuned for, when the target now differs in an attribute such as its
    ``model``: a PrimFunc carries its target); None when the database holds none of them."""
    unannotated, annotated = _without_schedule_rule(func_mod)
    forms = [func_mod, unannotated] if annotated else [func_mod]
    if tuned_target is not None:
        forms += [_retargeted(form, tuned_target) for form in list(forms)]
    for form in forms:
        if form is not func_mod and database.has_workload(form):
            return form
        for variant in _scope_variants(form):
            if database.has_workload(variant):
                return variant
    return None


def _retargeted(mod, target):
    """``mod`` (one PrimFunc) with its ``target`` attribute set to ``target``."""
    import tvm  # pylint: disable=import-outside-toplevel

    gvar, func = list(mod.functions_items())[0]
    if func.attrs is None or "target" not in func.attrs:
        return mod
    return tvm.IRModule({gvar: func.with_attr("target", target)})


def _without_schedule_rule(mod):
    """``mod`` (one PrimFunc) without the ``schedule_rule`` annotation of its blocks, and
    whether it had any."""
    from tvm import s_tir  # pylint: disable=import-outside-toplevel

    sch = s_tir.Schedule(mod)
    found = False
    pending = [sch.get_sblock("root")]
    while pending:
        for child in sch.get_child_blocks(pending.pop()):
            if "schedule_rule" in sch.get(child).annotations:
                sch.unannotate(child, "schedule_rule")
                found = True
            pending.append(child)
    return sch.mod, found


def cmd_migrate(args) -> int:
    """Copy the records of each workload to the workload it became, when only its blocks'
    ``schedule_rule`` annotation, a parameter's texture scope or the target's attributes
    changed (``_earlier_key``).

    A trace names blocks, not annotations or scopes, so it replays on the new PrimFunc; each
    copied trace is replayed before it is committed, and the old records stay (the file only
    grows).
    """
    from tvm.s_tir.meta_schedule import adreno as msa  # pylint: disable=import-outside-toplevel

    import build_worker  # pylint: disable=import-outside-toplevel

    target = build_worker.texture_target()
    with tuning_db.updating(args.database) as folder:
        counts = _migrate(args, target, msa.load_database(folder, strict=True))
    print(
        f"[tune migrate] {args.database}: {counts['held']} workloads already held, "
        f"{counts['migrated']} re-keyed ({counts['records']} records, {counts['no replay']} "
        f"traces that do not replay left out), {counts['not tuned']} never tuned"
    )
    return 0


def _tuned_target(folder):
    """The target a database was tuned for (its ``device.json``), or None when it names none."""
    import tvm  # pylint: disable=import-outside-toplevel

    meta = pathlib.Path(folder) / "device.json"
    if not meta.is_file():
        return None
    text = json.loads(meta.read_text(encoding="utf-8")).get("target")
    return tvm.target.Target(text) if text else None


def _migrate(args, target, database) -> dict:
    """The loop of :func:`cmd_migrate` over ``database`` (a plain, writable copy)."""
    from tvm import s_tir  # pylint: disable=import-outside-toplevel
    from tvm.s_tir.meta_schedule import adreno as msa  # pylint: disable=import-outside-toplevel
    from tvm.s_tir.meta_schedule.database import (  # pylint: disable=import-outside-toplevel
        TuningRecord,
    )

    import models  # pylint: disable=import-outside-toplevel
    import run  # pylint: disable=import-outside-toplevel

    counts = {"held": 0, "migrated": 0, "records": 0, "not tuned": 0, "no replay": 0}
    tuned_target = _tuned_target(args.database)
    for name in run.model_list(args.models, args.tiny):
        mod, _, _ = models.get(name, tiny=args.tiny)
        mod["main"] = mod["main"].with_attr("num_input", 1)
        for task in msa.extract_tasks(mod, target):
            func_mod = task.dispatched[0]
            if database.has_workload(func_mod):
                counts["held"] += 1
                continue
            old_mod = _earlier_key(database, func_mod, tuned_target)
            if old_mod is None:
                counts["not tuned"] += 1
                continue
            old = database.commit_workload(old_mod)
            records = database.get_top_k(old, args.records)
            new = None
            for record in records:
                try:
                    record.trace.apply_to_schedule(s_tir.Schedule(func_mod), remove_postproc=False)
                except Exception:  # pylint: disable=broad-except
                    counts["no replay"] += 1
                    continue
                new = new or database.commit_workload(func_mod)
                database.commit_tuning_record(
                    TuningRecord(
                        record.trace, new, record.run_secs, record.target, record.args_info
                    )
                )
                counts["records"] += 1
            counts["migrated"] += new is not None
    return counts


def main() -> int:
    """Parse the command line and run one step."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=["build", "carry", "collect", "migrate", "layers"])
    parser.add_argument("--models", default=DEFAULT_MODELS)
    parser.add_argument("--tiny", action="store_true")
    parser.add_argument("--max-candidates", type=int, default=None)
    parser.add_argument(
        "--max-misses",
        type=int,
        default=256,
        help="build: end a workload's walk of its space after this many knob combinations in a "
        "row gave no new schedule (0: walk it all)",
    )
    parser.add_argument(
        "--new-only", action="store_true", help="build: leave out what --database holds"
    )
    parser.add_argument(
        "--refine", default="", help="build: vary only these knobs around each task's best"
    )
    parser.add_argument(
        "--fuse-depthwise-pointwise",
        action="store_true",
        help="build: the networks' workloads with relax.adreno.fuse_depthwise_pointwise on",
    )
    parser.add_argument("--work", type=pathlib.Path, default=REPO / "build" / "tune")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--times", type=pathlib.Path)
    parser.add_argument("--database", type=pathlib.Path, default=DEFAULT_DATABASE)
    parser.add_argument("--records", type=int, default=3, help="migrate: best records kept")
    parser.add_argument("--conv", type=pathlib.Path, help="layers: conv_schedules.py's CSV")
    parser.add_argument("--clbench", type=pathlib.Path, help="layers: clbench.py's JSON")
    args = parser.parse_args()
    steps = {
        "build": cmd_build,
        "carry": cmd_carry,
        "collect": cmd_collect,
        "migrate": cmd_migrate,
        "layers": cmd_layers,
    }
    return steps[args.step](args)


if __name__ == "__main__":
    sys.exit(main())
