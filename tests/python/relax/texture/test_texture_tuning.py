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
"""MetaSchedule tuning of the Adreno rules (tvm.s_tir.meta_schedule.adreno).

A tuning round trip on the local OpenCL device writes a database; a second compilation under
it uses the tuned schedules (the kernels are the database's best candidates) and stays right;
the image argument allocator puts texture parameters in images; a database of another device
is skipped, a corrupt one refused, and the defaults are used.
"""

import functools
import json
import logging
import re
import time

import numpy as np
import pytest

import tvm
import tvm_ffi
from tvm import relax
from tvm.s_tir import dlight as dl
from tvm.s_tir.meta_schedule import adreno as msa

import texture_testing as tt


def _small_net(nb):
    """conv 3x3 -> relu -> conv 1x1 -> global mean: conv, fallback-free fused epilogues, a
    reduction and the layout transforms at the edges, all tunable."""
    x = nb.input((1, 8, 12, 12))
    y = nb.emit(relax.op.nn.relu(nb.conv2d(x, 16, kernel=3)))
    y = nb.conv2d(y, 16, kernel=1)
    return nb.emit(relax.op.mean(y, axis=[2, 3], keepdims=True))


def _kernels(ex):
    """Kernel name -> OpenCL source of that kernel's definition (not its declaration)."""
    src = tt.device_sources(ex)
    found = {}
    for match in re.finditer(r"__kernel void (\w+)\(", src):
        start = match.start()
        end = src.find("__kernel void", start + 1)
        text = src[start : end if end > 0 else len(src)]
        text = text[: text.rfind("}") + 1]  # without the next kernel's "// Function:" line
        if len(text) > len(found.get(match.group(1), "")):
            found[match.group(1)] = text
    return found


def _compile(mod, database=None):
    if database is None:
        return tt.build_texture(mod)
    with database:
        return tt.build_texture(mod)


def _check_numerics(ex, mod, rng, context):
    inputs = tt.random_inputs(mod, rng)
    actual = tt.run_vm(ex, tt.tvm_device(), inputs)
    tt.assert_close(actual, tt.reference(_small_net, inputs), "float32", context=context)


def _assert_kernels_from_database(ex, database, target):
    """Every workload the database holds is compiled from its best record."""
    built = _kernels(ex)
    checked = 0
    for task in msa.extract_tasks(tt.build_network(_small_net, "float32"), target):
        sch = database.query_schedule(task.dispatched[0], target, "main")
        if sch is None:
            continue
        func = sch.mod["main"].with_attr("global_symbol", task.task_name)
        lib = tvm.compile(tvm.IRModule({task.task_name: func}), target=target)
        for name, source in _kernels(lib).items():
            assert name in built, f"no kernel {name} in the tuned build: {sorted(built)}"
            assert built[name] == source, f"kernel {name} is not the database's schedule"
            checked += 1
    assert checked >= 2, f"only {checked} tuned kernels compared"


def test_space_default_first_distinct_replayable():
    """The candidates of each workload: the default schedule first (what the pipeline does
    untuned), all distinct, and each trace replays on the workload to the same function (what
    MetaScheduleApplyDatabase does with the best record)."""
    from tvm import s_tir  # pylint: disable=import-outside-toplevel

    target = tt.texture_target()
    rules = msa.schedule_rules(target)
    tasks = msa.extract_tasks(tt.build_network(_small_net, "float32"), target)
    seen_rules = set()
    for task in tasks:
        workload = task.dispatched[0]
        cands = msa.candidates(workload, target, rules, max_candidates=4)
        assert cands, f"no rule takes {task.task_name}"
        seen_rules.add(cands[0].rule)
        rule = next(r for r in rules if type(r).__name__ == cands[0].rule)
        default = rule.apply(workload["main"], target, False)
        tvm.ir.assert_structural_equal(cands[0].schedule.mod, default.mod)
        hashes = {tvm_ffi.structural_hash(c.schedule.mod) for c in cands}
        assert len(hashes) == len(cands), f"{task.task_name}: duplicate candidates"
        for cand in cands:
            replayed = s_tir.Schedule(workload)
            cand.schedule.trace.apply_to_schedule(replayed, remove_postproc=False)
            tvm.ir.assert_structural_equal(replayed.mod, cand.schedule.mod)
    assert seen_rules == {"Conv2d", "Reduction", "LayoutTransform"}, seen_rules


def test_space_generator_is_the_enumerated_space():
    """As a MetaSchedule ScheduleFn (for ms.tune_tasks), the space is the same candidates
    (both walks end after 64 knob combinations in a row gave nothing new)."""
    from tvm.s_tir import meta_schedule as ms  # pylint: disable=import-outside-toplevel

    target = tt.texture_target()
    rules = msa.schedule_rules(target)
    task = next(
        t
        for t in msa.extract_tasks(tt.build_network(_small_net, "float32"), target)
        if "conv2d" in t.task_name
    )
    workload = task.dispatched[0]
    context = ms.TuneContext(
        workload,
        target=target,
        space_generator=msa.space_generator(target, rules, max_candidates=3, max_misses=64),
        task_name=task.task_name,
        num_threads=1,
    )
    designs = context.generate_design_space()
    expected = msa.candidates(workload, target, rules, max_candidates=3, max_misses=64)
    assert len(designs) == len(expected) >= 2
    for design, cand in zip(designs, expected):
        tvm.ir.assert_structural_equal(design.mod, cand.schedule.mod)


@pytest.fixture(scope="module", name="small_bundle")
def fixture_small_bundle(tmp_path_factory):
    """The small net and a bundle of 2 candidates per workload (compiled once per module)."""
    bundle = tmp_path_factory.mktemp("tuning") / "bundle"
    mod = tt.build_network(_small_net, "float32")
    manifest = msa.build_candidates(
        mod, tt.texture_target(), bundle, max_candidates=2, log=lambda _: None
    )
    return mod, bundle, manifest


def _commit(small_bundle, path, device):
    """Commit times that make every task's second candidate the fastest. (The measured path
    is test_tuning_round_trip; these times are chosen so that the choice is known.)"""
    mod, bundle, manifest = small_bundle
    times = {"format": "adreno-tuning-times/1", "device": device, "results": {}}
    for task in manifest["tasks"]:
        for i, cand in enumerate(task["candidates"]):
            times["results"][cand["func"]] = {"run_secs": [2e-3 if i == 0 else 1e-3]}
    msa.commit_times(bundle, times, path)
    return mod, manifest


def _this_device():
    if tt.device_skip_reason() is not None:
        return {"name": "no OpenCL device here", "driver": ""}
    return msa.database.device_of(tt.tvm_device())


def test_tuning_round_trip(tmp_path, rng):
    """Tune a small conv network with 3 trials per workload on the local device, then compile
    it again under the database: the tuned kernels are the database's best, the numbers right."""
    tt.require_device()
    target = tt.texture_target()
    mod = tt.build_network(_small_net, "float32")
    db_dir = tmp_path / "db"
    # short samples: the test checks the round trip, not the speed
    measure = functools.partial(msa.measure_local, min_seconds=2e-4, repeat=2, log=lambda _: None)
    database = msa.tune(
        mod, target, db_dir, tmp_path / "work", measure, max_candidates=3, log=lambda _: None
    )
    records = database.get_all_tuning_records()
    assert len(records) >= 6, f"{len(records)} records"
    assert all(r.run_secs and float(r.run_secs[0]) > 0 for r in records)
    recorded = msa.read_device(db_dir)
    assert recorded["name"] == str(tt.tvm_device().device_name)
    summary = json.loads((db_dir / "summary.json").read_text())
    assert {row["rule"] for row in summary} >= {"Conv2d", "Reduction"}, summary

    loaded = msa.load_database(db_dir, device=tt.tvm_device())
    assert loaded is not None
    ex = _compile(mod, loaded)
    _assert_kernels_from_database(ex, loaded, target)
    _check_numerics(ex, mod, rng, "tuned small network")


def test_database_choice_reaches_the_kernels(tmp_path, rng, small_bundle):
    """Records that make a non-default candidate the fastest: the compilation under the
    database takes that candidate (its kernel differs from the default's) and stays right."""
    tt.require_device()
    target = tt.texture_target()
    mod, manifest = _commit(small_bundle, tmp_path / "db", _this_device())
    database = msa.load_database(tmp_path / "db", device=tt.tvm_device())
    ex = _compile(mod, database)
    tuned, default = _kernels(ex), _kernels(_compile(mod))
    assert sorted(tuned) == sorted(default)
    changed = [name for name in tuned if tuned[name] != default[name]]
    assert len(changed) >= len(manifest["tasks"]) - 1, (changed, len(manifest["tasks"]))
    _assert_kernels_from_database(ex, database, target)
    _check_numerics(ex, mod, rng, "database-chosen schedules")


def test_measure_over_rpc(tmp_path, small_bundle, rng):
    """The bundle timed on the OpenCL device of an RPC server (a loopback tracker and server:
    the path a phone takes) gives every candidate a time and the server's device identity;
    the database from those times compiles a right model."""
    import rpc_testing  # pylint: disable=import-outside-toplevel

    tt.require_device()
    mod, bundle, manifest = small_bundle
    local = rpc_testing.LocalRpc()
    try:
        local.start_server(rpc_testing.LOCAL_KEY)
        address = local.address(rpc_testing.LOCAL_KEY)
        times = msa.measure_rpc(
            bundle, address.host, address.port, address.key, min_seconds=2e-4, repeat=2
        )
    finally:
        local.close()
    funcs = [c["func"] for task in manifest["tasks"] for c in task["candidates"]]
    assert sorted(times["results"]) == sorted(funcs)
    errors = {f: r["error"] for f, r in times["results"].items() if "error" in r}
    assert not errors, errors
    assert times["device"] == msa.database.device_of(tt.tvm_device())
    msa.commit_times(bundle, times, tmp_path / "db")
    database = msa.load_database(tmp_path / "db", device=tt.tvm_device())
    assert len(database.get_all_tuning_records()) == len(funcs)
    _check_numerics(_compile(mod, database), mod, rng, "tuned over RPC")


def test_cold_cache_timing(small_bundle):
    """With ``evict_bytes`` every timed launch follows one device copy of that size (the
    runtime's counters see exactly one per sample), every candidate gets 4x the samples, and
    the evictor copies what it is given. RPC refuses the option, with the reason."""
    tt.require_device()
    _, bundle, manifest = small_bundle
    dev = tt.tvm_device()
    counters = tvm.get_global_func("runtime.opencl.counters")
    reset = tvm.get_global_func("runtime.opencl.reset_counters")
    reset()
    times = msa.measure_local(
        bundle, dev, min_seconds=2e-4, repeat=2, log=lambda _: None, evict_bytes=1 << 20
    )
    funcs = [c["func"] for task in manifest["tasks"] for c in task["candidates"]]
    assert times["evict_bytes"] == 1 << 20
    samples = [times["results"][f]["run_secs"] for f in funcs]
    assert all(len(s) == 8 and min(s) > 0 for s in samples), samples
    assert int(counters()["device_copies"]) == 8 * len(funcs), counters()

    name = msa.device_measure.register_cache_evictor(dev, 4096)
    source = tvm.runtime.tensor(np.random.default_rng(3).integers(0, 255, 4096, "uint8"), dev)
    reset()
    tvm.get_global_func(name)(source)
    assert int(counters()["device_copies"]) == 1
    with pytest.raises(ValueError, match="positive size"):
        msa.device_measure.register_cache_evictor(dev, 0)
    with pytest.raises(ValueError, match="time warm over RPC"):
        msa.measure_rpc(bundle, "127.0.0.1", 9190, "none", evict_bytes=1)


def test_timing_stops_at_its_deadline_and_resumes(small_bundle):
    """Past the deadline no task is timed and each is listed; a resumed run keeps the tasks
    of the earlier times as they are (not timed again), times the rest, checkpoints after
    each, and refuses earlier times of another cache-eviction setting."""
    tt.require_device()
    _, bundle, manifest = small_bundle
    dev = tt.tvm_device()
    quiet = {"min_seconds": 2e-4, "repeat": 2, "log": lambda _: None}
    names = [task["name"] for task in manifest["tasks"]]
    stopped = msa.measure_local(bundle, dev, deadline=time.monotonic(), **quiet)
    assert stopped["untimed_tasks"] == names and not stopped["results"], stopped

    first = manifest["tasks"][0]
    earlier = dict(stopped, results={c["func"]: {"run_secs": [1.0]} for c in first["candidates"]})
    saved = []
    resumed = msa.measure_local(bundle, dev, resume=earlier, checkpoint=saved.append, **quiet)
    assert resumed["untimed_tasks"] == []
    funcs = [c["func"] for task in manifest["tasks"] for c in task["candidates"]]
    assert sorted(resumed["results"]) == sorted(funcs)
    for cand in first["candidates"]:
        assert resumed["results"][cand["func"]] == {"run_secs": [1.0]}
    others = [f for f in funcs if f not in earlier["results"]]
    assert all(resumed["results"][f]["run_secs"][0] < 1.0 for f in others)
    assert len(saved) == len(names) - 1
    with pytest.raises(ValueError, match="cannot resume"):
        msa.measure_local(bundle, dev, resume=earlier, evict_bytes=1 << 20, **quiet)


def test_timing_stops_when_the_context_is_lost(small_bundle):
    """A command error that leaves the OpenCL context unusable (a faulted kernel) ends the
    run: the tasks after it are listed untimed and not recorded as errors, so a resumed run in
    a new process times them."""
    tt.require_device()
    _, bundle, manifest = small_bundle
    dev = tt.tvm_device()
    names = [task["name"] for task in manifest["tasks"]]
    loaded = []

    def faulting_loader(lib):
        loaded.append(lib)
        if len(loaded) == 2:
            raise RuntimeError("OpenCL error CL_INVALID_COMMAND_QUEUE (-36) in clFinish")
        return tvm.runtime.load_module(str(bundle / "lib" / lib))

    lines = []
    stopped = msa.device_measure.measure_bundle(
        json.loads((bundle / "manifest.json").read_text()),
        faulting_loader,
        dev,
        min_seconds=2e-4,
        repeat=2,
        log=lines.append,
    )
    assert stopped["untimed_tasks"] == names[1:], stopped["untimed_tasks"]
    first = {c["func"] for c in manifest["tasks"][0]["candidates"]}
    assert set(stopped["results"]) == first
    assert "context is lost after loading" in lines[-1], lines
    resumed = msa.measure_local(bundle, dev, resume=stopped, min_seconds=2e-4, repeat=2)
    assert not resumed["untimed_tasks"]
    assert all("run_secs" in r for r in resumed["results"].values()), resumed["results"]


def test_image_argument_allocator():
    """Texture-scoped arguments are allocated as images, filled with the seeded values, and a
    texture kernel launched on them computes right. (On plain buffers, what MetaSchedule's
    default allocator makes, the same kernel passes a buffer where it reads an image: on
    PoCL the process dies, so that side is not run here.)"""
    tt.require_device()
    dev = tt.tvm_device()
    specs = [
        ["TENSOR", "float32", [1, 2, 5, 7, 4], "global.texture"],
        ["TENSOR", "float32", [3, 6, 4], "global.texture-weight"],
        ["TENSOR", "float32", [2, 9], "global"],
    ]
    (args,) = msa.alloc_image_arguments(dev, specs, 1, seed=7)
    host = np.random.default_rng(7)
    for arr, spec in zip(args, specs):
        want = host.uniform(-1.0, 1.0, size=spec[2]).astype("float32")
        np.testing.assert_array_equal(arr.numpy(), want)
    # A texture kernel (an elementwise op reading and writing images):
    # its arguments allocated by the allocator; the result checked against numpy.
    target = tt.texture_target()
    func = _texture_copy_func()
    rule = dl.adreno.Fallback()
    sch = rule.apply(func, target, False)
    assert sch is not None
    lib = tvm.compile(sch.mod, target=target)
    specs = msa.args_info_with_scopes(func)
    assert [s[3] for s in specs] == ["global.texture", "global.texture"], specs
    (args,) = msa.alloc_image_arguments(dev, specs, 1, seed=3)
    lib["main"](*args)
    np.testing.assert_allclose(args[1].numpy(), np.maximum(args[0].numpy(), 0) * 2, rtol=1e-6)


def _texture_copy_func():
    from tvm.script import tirx as T  # pylint: disable=import-outside-toplevel

    @T.prim_func(s_tir=True)
    def main(
        a: T.Buffer((1, 2, 5, 7, 4), "float32", scope="global.texture"),
        b: T.Buffer((1, 2, 5, 7, 4), "float32", scope="global.texture"),
    ):
        T.func_attr({"tirx.noalias": True})
        for n, c, h, w, v in T.grid(1, 2, 5, 7, 4):
            with T.sblock("relu2"):
                vn, vc, vh, vw, vv = T.axis.remap("SSSSS", [n, c, h, w, v])
                b[vn, vc, vh, vw, vv] = T.max(a[vn, vc, vh, vw, vv], T.float32(0)) * T.float32(2)

    return main


def test_database_of_another_device_is_skipped(tmp_path, caplog, rng, small_bundle):
    """A database measured on another device: one warning line, None, default kernels."""
    tt.require_device()
    other = {"name": "Adreno (TM) 740", "driver": "OpenCL 3.0 QUALCOMM build: 0762.16"}
    mod, _ = _commit(small_bundle, tmp_path / "db", other)
    with caplog.at_level(logging.WARNING, logger="tvm.s_tir.meta_schedule.adreno.database"):
        assert msa.load_database(tmp_path / "db", device=tt.tvm_device()) is None
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1 and "\n" not in lines[0], lines
    assert "skipped" in lines[0] and "Adreno (TM) 740" in lines[0], lines[0]
    assert "using the default schedules" in lines[0]
    with pytest.raises(msa.TuningDatabaseError, match="measured on 'Adreno"):
        msa.load_database(tmp_path / "db", device=tt.tvm_device(), strict=True)
    # the same database is accepted for the device it names
    assert msa.load_database(tmp_path / "db", device=other) is not None
    # and adding this device's times to it is refused
    with pytest.raises(msa.TuningDatabaseError, match="use another folder"):
        msa.create_database(tmp_path / "db", tt.tvm_device())
    ex = tt.build_texture(mod)
    _check_numerics(ex, mod, rng, "defaults after a skipped database")


@pytest.mark.parametrize(
    "damage",
    ["records", "workloads", "device"],
)
def test_corrupt_database_is_refused(tmp_path, caplog, damage, small_bundle, rng):
    """A damaged file: one error line naming the folder, None (defaults); strict raises;
    the model compiled without it is right."""
    device = _this_device()
    mod, _ = _commit(small_bundle, tmp_path / "db", device)
    file = {
        "records": "database_tuning_record.json",
        "workloads": "database_workload.json",
        "device": "device.json",
    }[damage]
    text = (tmp_path / "db" / file).read_text()
    (tmp_path / "db" / file).write_text(text[: len(text) // 2] + "}{ not json")
    with caplog.at_level(logging.ERROR, logger="tvm.s_tir.meta_schedule.adreno.database"):
        assert msa.load_database(tmp_path / "db", device=device) is None
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1 and "\n" not in lines[0], lines
    assert str(tmp_path / "db") in lines[0] and "using the default schedules" in lines[0]
    assert ("corrupt" in lines[0]) or ("not a tuning database" in lines[0]), lines[0]
    with pytest.raises(msa.TuningDatabaseError):
        msa.load_database(tmp_path / "db", device=device, strict=True)
    tt.require_device(done="the refusal was checked")
    _check_numerics(tt.build_texture(mod), mod, rng, "defaults after a corrupt database")


# ----------------------------------------------------------------------------------------
# The rules of reductions, pooling, layout transforms and the fallback at their knob extremes
# ----------------------------------------------------------------------------------------


def _rules_net(nb):
    """Every workload kind of the four rules: layout transforms at the edges, max pooling and
    reductions over space and channels (Reduction), adaptive pooling 7 -> 3 (VaryingWindowPool2D), a
    channel concat of two textures (Fallback)."""
    x = nb.input((1, 8, 14, 14))
    y = nb.emit(relax.op.nn.relu(nb.conv2d(x, 16, kernel=3)))
    pooled = nb.emit(relax.op.nn.max_pool2d(y, pool_size=3, strides=2, padding=1))
    z = nb.conv2d(pooled, 16, kernel=1)
    adaptive = nb.emit(relax.op.nn.adaptive_avg_pool2d(z, output_size=3))
    channel_sum = nb.emit(relax.op.sum(z, axis=[1], keepdims=True))
    spatial_mean = nb.emit(relax.op.mean(z, axis=[2, 3], keepdims=True))
    joined = nb.emit(relax.op.concat([z, pooled], axis=1))
    return [adaptive, channel_sum, spatial_mean, nb.conv2d(joined, 8, kernel=1)]


_CONFIGS = (
    dl.adreno.ReductionConfig,
    dl.adreno.LayoutTransformConfig,
    dl.adreno.FallbackConfig,
)
_RULES = (
    dl.adreno.Reduction,
    dl.adreno.VaryingWindowPool2D,
    dl.adreno.LayoutTransform,
    dl.adreno.Fallback,
)


@pytest.mark.parametrize("pick", [min, max], ids=["min", "max"])
def test_rules_at_knob_extremes(monkeypatch, rng, pick):
    """Reduction, VaryingWindowPool2D, LayoutTransform and Fallback with every knob at its
    smallest (then largest) choice: each rule schedules its workloads and the network computes
    right."""
    target = tt.texture_target()
    forced = {cls: tt.config_at_extreme(cls, target, pick) for cls in _CONFIGS}
    tt.force_configs(monkeypatch, forced.values())
    taken = tt.count_schedules(monkeypatch, _RULES)
    mod = tt.build_network(_rules_net, "float32")
    ex = tt.build_texture(mod)
    assert set(taken) == {r.__name__ for r in _RULES}, taken
    tt.require_device(done=f"compiled with {sorted(forced.values(), key=str)}")
    inputs = tt.random_inputs(mod, rng)
    actual = tt.run_vm(ex, tt.tvm_device(), inputs)
    tt.assert_close(actual, tt.reference(_rules_net, inputs), "float32", context=str(forced))
