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
"""Tests of ``tvm.s_tir.meta_schedule.adreno``: tuning the Adreno rules' knobs.

* the search space of a workload (its dlight rule under each knob combination): the default
  schedule first, candidates distinct, each trace replayable on the workload;
* the device-keyed JSON database: it records the device; one measured on another device is
  skipped with one warning line, a corrupt one refused with one error line (None either way:
  the default schedules);
* the Adreno pipeline under ``with database:`` (read when the pass runs): the database's
  choice reaches the module and the module keeps its ``vdevice`` global infos;
* on a local OpenCL device, a round trip (build, measure, commit, compile under the database)
  that computes what the LLVM build computes, and the cold-cache evictor.

The compile-only tests use a tiny conv (1x8x8x8 input, 3x3 conv to 8 channels, ReLU) and
times written by the test, so that the fastest candidate is known.
"""

import dataclasses
import importlib
import itertools
import json
import logging
import re

import numpy as np
import pytest

import tvm
import tvm.testing
import tvm_ffi
from tvm import relax, s_tir
from tvm.s_tir import dlight as dl
from tvm.s_tir import meta_schedule as ms
from tvm.s_tir.meta_schedule import adreno as msa
from tvm.script import ir as I
from tvm.script import relax as R

database_module = importlib.import_module("tvm.s_tir.meta_schedule.adreno.database")
device_measure = importlib.import_module("tvm.s_tir.meta_schedule.adreno.device_measure")
space_module = importlib.import_module("tvm.s_tir.meta_schedule.adreno.space")

requires_opencl_device = pytest.mark.skipif(
    not tvm.opencl(0).exist, reason="no OpenCL device on this machine"
)

TIMES_FORMAT = "adreno-tuning-times/1"
SOME_DEVICE = {"name": "Test GPU 100", "driver": "OpenCL 3.0 test 1.2"}
OTHER_DEVICE = {"name": "Adreno (TM) 740", "driver": "OpenCL 3.0 QUALCOMM build: 0762.16"}


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
    """The Adreno texture target with an LLVM host."""
    return tvm.target.Target("qcom/adreno-opencl-texture", host="llvm")


def conv_workload(target):
    """The conv workload of TinyConv as the tuner extracts it (an IRModule with ``main``)."""
    tasks = msa.extract_tasks(TinyConv, target)
    return next(task for task in tasks if "conv2d" in task.task_name).dispatched[0]


def random_inputs():
    """Fresh inputs of TinyConv: |value| in [0.5, 1] with random signs (no zeros)."""
    rng = np.random.default_rng()
    return [
        (rng.uniform(0.5, 1.0, shape) * rng.choice([-1.0, 1.0], shape)).astype("float32")
        for shape in [(1, 8, 8, 8), (8, 8, 3, 3)]
    ]


def run(executable, dev, inputs):
    """Run ``main`` of a compiled TinyConv on ``dev``; returns the output as numpy."""
    machine = relax.VirtualMachine(executable, dev)
    return machine["main"](*[tvm.runtime.tensor(value, dev) for value in inputs]).numpy()


def check_against_llvm(executable):
    """Run ``executable`` on the local OpenCL device and compare it with the LLVM build.

    The conv sums 72 products of magnitude <= 1 in float32: reordering them moves the result
    by far less than 1e-5 relative to the output scale, whatever the draw.
    """
    inputs = random_inputs()
    expected = run(tvm.compile(TinyConv, target="llvm"), tvm.cpu(0), inputs)
    actual = run(executable, tvm.opencl(0), inputs)
    scale = max(1.0, float(np.abs(expected).max()))
    tvm.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-5 * scale)


# ------------------------------------------------------------------------------------------
# The search space
# ------------------------------------------------------------------------------------------


def test_default_candidate_first_then_distinct():
    """The first candidate is the schedule the pipeline makes untuned (the rule under its
    default knobs); no two candidates are the same function; ``max_candidates`` bounds them."""
    target = texture_target()
    rules = msa.schedule_rules(target)
    workload = conv_workload(target)
    cands = msa.candidates(workload, target, rules, max_candidates=2)
    assert len(cands) == 2, [c.describe() for c in cands]
    assert cands[0].rule == "Conv2d"
    assert cands[0].config == dl.adreno.Conv2dConfig.from_target(target)
    conv_rule = next(rule for rule in rules if isinstance(rule, dl.adreno.Conv2d))
    untuned = conv_rule.apply(workload["main"], target, False)
    tvm.ir.assert_structural_equal(cands[0].schedule.mod, untuned.mod)
    hashes = {tvm_ffi.structural_hash(c.schedule.mod) for c in cands}
    assert len(hashes) == len(cands)
    assert len({c.config for c in cands}) == len(cands)
    # one candidate: the default alone
    (only,) = msa.candidates(workload, target, rules, max_candidates=1)
    tvm.ir.assert_structural_equal(only.schedule.mod, untuned.mod)


def test_candidate_traces_replay_on_the_workload():
    """What MetaSchedule does with a tuning record: the candidate's trace, applied to a fresh
    schedule of the workload, gives the candidate's function."""
    target = texture_target()
    workload = conv_workload(target)
    for cand in msa.candidates(workload, target, msa.schedule_rules(target), max_candidates=2):
        replayed = s_tir.Schedule(workload)
        cand.schedule.trace.apply_to_schedule(replayed, remove_postproc=False)
        tvm.ir.assert_structural_equal(replayed.mod, cand.schedule.mod)


def test_seeded_draw_is_reproducible():
    """The same seed draws the same candidates (a bundle can be rebuilt)."""
    target = texture_target()
    rules = msa.schedule_rules(target)
    workload = conv_workload(target)
    first = msa.candidates(workload, target, rules, max_candidates=2, seed=7)
    again = msa.candidates(workload, target, rules, max_candidates=2, seed=7)
    assert [c.config for c in first] == [c.config for c in again]


def test_walk_stops_after_a_run_of_misses(monkeypatch):
    """With ``max_misses`` the walk of the space ends after that many combinations in a row
    gave no new schedule: its candidates are the first ones of the whole walk, fewer of them,
    and fewer combinations were scheduled. (120 combinations spread over the conv's space
    stand for the whole, which takes minutes to walk.)"""
    target = texture_target()
    rules = msa.schedule_rules(target)
    workload = conv_workload(target)
    conv_rule = next(rule for rule in rules if isinstance(rule, dl.adreno.Conv2d))
    spread = msa.knob_space(conv_rule, target)[::50][:120]
    scheduled = []
    schedule_one = space_module._schedule_one

    def counting(rule, func, target):
        scheduled.append(getattr(rule, "config", None))
        return schedule_one(rule, func, target)

    monkeypatch.setattr(space_module, "_schedule_one", counting)
    whole = msa.candidates(workload, target, rules, configs=lambda _rule: spread)
    walked = len(scheduled)
    scheduled.clear()
    cut = msa.candidates(workload, target, rules, configs=lambda _rule: spread, max_misses=4)
    assert 1 < len(cut) < len(whole)
    assert [c.config for c in cut] == [c.config for c in whole[: len(cut)]]
    assert len(scheduled) < walked


def test_space_generator_ends_walks_after_misses(monkeypatch):
    """The ScheduleFn hands ``max_misses`` to the walk: its designs are the candidates of a
    walk cut short the same way."""
    target = texture_target()
    rules = msa.schedule_rules(target)
    workload = conv_workload(target)
    walks = []
    walk = space_module.candidates

    def recording(*args, **kwargs):
        walks.append(kwargs.get("max_misses"))
        return walk(*args, **kwargs)

    monkeypatch.setattr(space_module, "candidates", recording)
    generator = msa.space_generator(target, rules, max_candidates=8, max_misses=4)
    designs = generator.generate_design_space(workload)
    assert walks == [4]
    expected = walk(workload, target, rules, max_candidates=8, max_misses=4)
    assert len(designs) == len(expected) >= 1
    for design, cand in zip(designs, expected):
        tvm.ir.assert_structural_equal(design.mod, cand.schedule.mod)


def test_knob_space_and_workloads_no_rule_takes():
    """A rule's knob space starts with its default config; a rule without knobs has only
    ``None``; a workload that no rule takes has no candidates."""
    target = texture_target()
    rules = msa.schedule_rules(target)
    conv_rule = next(rule for rule in rules if isinstance(rule, dl.adreno.Conv2d))
    space = msa.knob_space(conv_rule, target)
    assert space[0] == dl.adreno.Conv2dConfig.from_target(target)
    assert len(set(space)) == len(space) > 1
    assert msa.knob_space(object(), target) == [None]
    assert not msa.candidates(conv_workload(target), target, rules=[])


def test_space_generator_gives_the_candidates():
    """As a MetaSchedule ScheduleFn the space is the enumerated candidates, in their order.
    (The generator is called directly: a TuneContext would import every tensor intrinsic of
    TVM, which takes minutes, and adds nothing the ScheduleFn uses.)"""
    target = texture_target()
    rules = msa.schedule_rules(target)
    workload = conv_workload(target)
    generator = msa.space_generator(target, rules, max_candidates=2)
    assert isinstance(generator, ms.space_generator.ScheduleFn)
    designs = generator.generate_design_space(workload)
    expected = msa.candidates(workload, target, rules, max_candidates=2)
    assert len(designs) == len(expected) == 2
    for design, cand in zip(designs, expected):
        tvm.ir.assert_structural_equal(design.mod, cand.schedule.mod)


def test_refine_varies_only_the_named_knobs():
    """``refine`` keeps every knob but the named ones at the config's values and tries every
    combination of the named ones; an unknown knob is refused by name."""
    target = texture_target()
    best = dataclasses.replace(
        dl.adreno.Conv2dConfig.from_target(target), channel_blocks=4, columns=1, split_k=2
    )
    refined = msa.refine(best, target, ["unroll_window", "occupancy_waves"])
    assert refined[0] == best
    choices = dl.adreno.Conv2dConfig.choices()
    assert {(c.unroll_window, c.occupancy_waves) for c in refined} == set(
        itertools.product(choices["unroll_window"], choices["occupancy_waves"])
    )
    assert len(set(refined)) == len(refined)
    for config in refined:
        assert (
            dataclasses.replace(
                config, unroll_window=best.unroll_window, occupancy_waves=best.occupancy_waves
            )
            == best
        )
    with pytest.raises(ValueError, match="Conv2dConfig has no knob tile_depth"):
        msa.refine(best, target, ["unroll_window", "tile_depth"])


def test_candidates_from_given_configs():
    """Given configs replace the rule's space: the rule's default schedule is still first,
    the others are the given configs' schedules; no given config leaves the default alone."""
    target = texture_target()
    rules = msa.schedule_rules(target)
    workload = conv_workload(target)
    conv_rule = next(rule for rule in rules if isinstance(rule, dl.adreno.Conv2d))
    default = dl.adreno.Conv2dConfig.from_target(target)
    best = dataclasses.replace(default, channel_blocks=1, threads=64)
    given = msa.refine(best, target, ["unroll_window"])
    seen_rules = []

    def configs(rule):
        seen_rules.append(rule)
        return given

    cands = msa.candidates(workload, target, rules, configs=configs)
    assert seen_rules == [conv_rule]
    assert [c.config for c in cands] == [default, *given]
    untuned = conv_rule.apply(workload["main"], target, False)
    tvm.ir.assert_structural_equal(cands[0].schedule.mod, untuned.mod)
    for cand in cands[1:]:
        alone = msa.candidates(workload, target, rules, configs=lambda _r, c=cand.config: [c])
        tvm.ir.assert_structural_equal(alone[1].schedule.mod, cand.schedule.mod)
    (only,) = msa.candidates(workload, target, rules, configs=lambda _rule: [])
    assert only.config == default


def test_build_with_given_configs_names_the_task(tmp_path):
    """``build_candidates(configs=)`` asks per task by its bundle name; the tasks it gives no
    config beside the default are left out of the bundle."""
    target = texture_target()
    asked = []

    def configs(task_name, rule):
        asked.append(task_name)
        if isinstance(rule, dl.adreno.Conv2d):
            return msa.refine(msa.knob_space(rule, target)[0], target, ["unroll_window"])
        return []

    manifest = msa.build_candidates(
        TinyConv, target, tmp_path / "bundle", name="tiny", log=lambda _line: None, configs=configs
    )
    assert asked and all(name.startswith("tiny/") for name in asked)
    (task,) = manifest["tasks"]
    assert task["name"] in asked and "conv2d" in task["name"]
    assert [cand["knobs"]["unroll_window"] for cand in task["candidates"]] == [False, True]


# ------------------------------------------------------------------------------------------
# The database
# ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module", name="bundle")
def fixture_bundle(tmp_path_factory):
    """TinyConv's candidates, two per workload, compiled into a bundle (once per module).

    Returns
    -------
    bundle : Tuple[pathlib.Path, Dict]
        The bundle folder and its manifest.
    """
    folder = tmp_path_factory.mktemp("adreno_tuning") / "bundle"
    manifest = msa.build_candidates(
        TinyConv, texture_target(), folder, max_candidates=2, log=lambda _line: None
    )
    return folder, manifest


def candidate_funcs(manifest):
    """The function names of every candidate in a bundle's manifest."""
    return [cand["func"] for task in manifest["tasks"] for cand in task["candidates"]]


def commit_second_fastest(bundle, database, device):
    """Commit times to ``database`` in which the second candidate of every task is fastest.

    Parameters
    ----------
    bundle : Tuple[pathlib.Path, Dict]
        The bundle fixture.
    database : pathlib.Path
        The database folder.
    device : Dict[str, str]
        The device identity the times are said to come from.
    """
    folder, manifest = bundle
    results = {}
    for task in manifest["tasks"]:
        for position, cand in enumerate(task["candidates"]):
            results[cand["func"]] = {"run_secs": [1e-4 if position == 1 else 3e-4]}
    msa.commit_times(
        folder, {"format": TIMES_FORMAT, "device": device, "results": results}, database
    )


def test_bundle_holds_the_texture_workloads(bundle):
    """The conv and the layout transforms of TinyConv are in the bundle, two candidates each,
    the default first, with the memory scope of every argument (the conv reads a texture)."""
    folder, manifest = bundle
    names = [task["name"] for task in manifest["tasks"]]
    assert any("conv2d" in name for name in names) and len(names) >= 2, names
    for task in manifest["tasks"]:
        assert len(task["candidates"]) == 2
        assert task["candidates"][0]["func"].endswith("_c000")
        assert (folder / "lib" / task["lib"]).is_file()
        assert all(len(arg) == 4 and arg[3].startswith("global") for arg in task["args"])
        if "conv2d" in task["name"]:
            scopes = [arg[3] for arg in task["args"]]
            assert any(scope.startswith("global.texture") for scope in scopes), task["args"]


def _build_with_broken(tmp_path, monkeypatch, broken):
    """``build_candidates`` of TinyConv where the candidates named in ``broken`` fail to
    compile; the manifest and the log lines."""
    tune = importlib.import_module("tvm.s_tir.meta_schedule.adreno.tune")
    real_compile = tune._compile

    def _compile(funcs, target):
        if broken & set(funcs):
            raise RuntimeError(f"cannot compile {sorted(broken & set(funcs))}")
        return real_compile(funcs, target)

    monkeypatch.setattr(tune, "_compile", _compile)
    lines = []
    manifest = msa.build_candidates(
        TinyConv, texture_target(), tmp_path / "bundle", max_candidates=2, log=lines.append
    )
    return manifest, lines


def test_candidate_that_does_not_compile_is_left_out(tmp_path, monkeypatch):
    """A candidate that fails its task's build is dropped with a line naming it; the task
    keeps its default, and the other tasks all their candidates."""
    manifest, lines = _build_with_broken(tmp_path, monkeypatch, {"t0000_c001"})
    first, *others = manifest["tasks"]
    assert [cand["func"] for cand in first["candidates"]] == ["t0000_c000"]
    assert any("candidate t0000_c001 does not compile" in line for line in lines), lines
    assert others and all(len(task["candidates"]) == 2 for task in others)


def test_task_with_an_uncompilable_default_left_out(tmp_path, monkeypatch):
    """Without its default schedule a task has nothing to fall back on: it is not bundled
    (the next task takes its index, and here fails the same way)."""
    manifest, lines = _build_with_broken(tmp_path, monkeypatch, {"t0000_c000"})
    assert manifest["tasks"] == []
    assert any("candidate t0000_c000 does not compile" in line for line in lines), lines


def test_database_records_its_device(tmp_path, bundle):
    """The database folder names the device its times come from and holds a record of every
    timed candidate; it loads for that device, and for a caller that names none."""
    database = tmp_path / "db"
    commit_second_fastest(bundle, database, SOME_DEVICE)
    assert msa.read_device(database) == SOME_DEVICE
    loaded = msa.load_database(database, device=SOME_DEVICE)
    assert loaded is not None
    assert len(loaded.get_all_tuning_records()) == len(candidate_funcs(bundle[1]))
    assert msa.load_database(database) is not None
    summary = json.loads((database / "summary.json").read_text(encoding="utf-8"))
    assert all(row["best_us"] < row["default_us"] for row in summary), summary


def _commit_round(bundle, database, seconds):
    """Commit times of every candidate of the bundle: ``seconds[i]`` for the i-th of a task."""
    folder, manifest = bundle
    results = {
        cand["func"]: {"run_secs": [seconds[i]]}
        for task in manifest["tasks"]
        for i, cand in enumerate(task["candidates"])
    }
    return msa.commit_times(
        folder, {"format": TIMES_FORMAT, "device": SOME_DEVICE, "results": results}, database
    )


def test_summary_keeps_the_fastest_round(tmp_path, bundle):
    """A later round that times the candidates slower leaves each task's best (time and
    knobs) at the earlier round's, as a compile under the database would pick it; a faster
    round takes over. The default's time is the latest round's; the candidates add up."""
    _, manifest = bundle
    database = tmp_path / "db"
    first = _commit_round(bundle, database, [3e-4, 1e-4])
    slower = _commit_round(bundle, database, [6e-4, 5e-4])
    faster = _commit_round(bundle, database, [2e-5, 9e-5])
    # as summary.json holds them (tuples become lists)
    knobs = json.loads(
        json.dumps({t["name"]: [c["knobs"] for c in t["candidates"]] for t in manifest["tasks"]})
    )
    for rows in (first, slower, faster):
        assert sorted(row["task"] for row in rows) == sorted(knobs)
    for row in first:
        assert (row["default_us"], row["best_us"], row["candidates"]) == (300.0, 100.0, 2)
        assert row["knobs"] == knobs[row["task"]][1]
    for row in slower:
        assert (row["default_us"], row["best_us"], row["candidates"]) == (600.0, 100.0, 4)
        assert row["knobs"] == knobs[row["task"]][1]
    for row in faster:
        assert (row["default_us"], row["best_us"], row["candidates"]) == (20.0, 20.0, 6)
        assert row["knobs"] == knobs[row["task"]][0]
    saved = json.loads((database / "summary.json").read_text(encoding="utf-8"))
    assert saved == faster


def test_workloads_the_database_holds_are_skipped(tmp_path, bundle):
    """With ``tuned``, a second build leaves out the workloads the database holds: only the
    task that was not timed is built again, with its candidates."""
    folder, manifest = bundle
    first, *others = manifest["tasks"]
    assert others, "TinyConv has more than one workload"
    results = {cand["func"]: {"run_secs": [1e-4]} for cand in first["candidates"]}
    database = tmp_path / "db"
    msa.commit_times(
        folder, {"format": TIMES_FORMAT, "device": SOME_DEVICE, "results": results}, database
    )
    tuned = msa.load_database(database, device=SOME_DEVICE)
    again = msa.build_candidates(
        TinyConv,
        texture_target(),
        tmp_path / "again",
        max_candidates=2,
        log=lambda _line: None,
        tuned=tuned,
    )
    assert [task["name"] for task in again["tasks"]] == [task["name"] for task in others]
    assert all(len(task["candidates"]) == 2 for task in again["tasks"])


def test_database_of_another_device_is_skipped(tmp_path, bundle, caplog):
    """Loaded for another device: None and one warning line that names both devices; strict
    raises instead; adding this device's times to that folder is refused."""
    database = tmp_path / "db"
    commit_second_fastest(bundle, database, OTHER_DEVICE)
    with caplog.at_level(logging.WARNING, logger=database_module.logger.name):
        assert msa.load_database(database, device=SOME_DEVICE) is None
    messages = [record.getMessage() for record in caplog.records]
    assert len(messages) == 1 and "\n" not in messages[0], messages
    assert caplog.records[0].levelno == logging.WARNING
    for part in ("skipped", OTHER_DEVICE["name"], SOME_DEVICE["name"], "default schedules"):
        assert part in messages[0], messages[0]
    with pytest.raises(msa.TuningDatabaseError, match="skipped: measured on 'Adreno"):
        msa.load_database(database, device=SOME_DEVICE, strict=True)
    with pytest.raises(msa.TuningDatabaseError, match="use another folder"):
        msa.create_database(database, SOME_DEVICE)
    with pytest.raises(msa.TuningDatabaseError, match="use another folder"):
        commit_second_fastest(bundle, database, SOME_DEVICE)
    assert msa.read_device(database) == OTHER_DEVICE


def damage_records(database):
    """Cut the first record of the tuning records file (one JSON value a line) in half."""
    path = database / "database_tuning_record.json"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[0] = lines[0][: len(lines[0]) // 2]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def damage_workloads(database):
    """Replace the workloads file with text that is not JSON."""
    (database / "database_workload.json").write_text("{not json\n", encoding="utf-8")


def remove_device_record(database):
    """Delete the device record."""
    (database / "device.json").unlink()


def damage_device_record(database):
    """Make the device record a JSON file of another format."""
    (database / "device.json").write_text(json.dumps({"format": "other/2"}), encoding="utf-8")


@pytest.mark.parametrize(
    "damage, reason",
    [
        (damage_records, "is corrupt"),
        (damage_workloads, "is corrupt"),
        (remove_device_record, "not a tuning database device record"),
        (damage_device_record, "not a tuning database device record"),
    ],
    ids=["records", "workloads", "no-device-record", "device-record"],
)
def test_corrupt_database_is_refused(tmp_path, bundle, caplog, damage, reason):
    """A damaged database: None and one error line that names the folder and says that the
    default schedules are used; strict raises TuningDatabaseError."""
    database = tmp_path / "db"
    commit_second_fastest(bundle, database, SOME_DEVICE)
    damage(database)
    with caplog.at_level(logging.ERROR, logger=database_module.logger.name):
        assert msa.load_database(database, device=SOME_DEVICE) is None
    messages = [record.getMessage() for record in caplog.records]
    assert len(messages) == 1 and "\n" not in messages[0], messages
    assert caplog.records[0].levelno == logging.ERROR
    assert str(database) in messages[0] and reason in messages[0], messages[0]
    assert messages[0].endswith("using the default schedules"), messages[0]
    with pytest.raises(msa.TuningDatabaseError, match=reason):
        msa.load_database(database, device=SOME_DEVICE, strict=True)


def test_missing_database_is_refused(tmp_path, caplog):
    """A folder that does not exist: None and one error line, as for a corrupt one."""
    with caplog.at_level(logging.ERROR, logger=database_module.logger.name):
        assert msa.load_database(tmp_path / "nowhere", device=SOME_DEVICE) is None
    messages = [record.getMessage() for record in caplog.records]
    assert len(messages) == 1 and "not a tuning database device record" in messages[0]


def test_times_of_another_format_are_refused(tmp_path, bundle):
    """commit_times takes only what the bundle's timer writes."""
    with pytest.raises(ValueError, match="not the times of a tuning bundle"):
        msa.commit_times(bundle[0], {"format": "other", "results": {}}, tmp_path / "db")


# ------------------------------------------------------------------------------------------
# The pipeline under a database
# ------------------------------------------------------------------------------------------


def legalize_pass_names(target):
    """Names of the Relax legalize passes of ``target`` (the Adreno pipeline's)."""
    with target:
        return [p.info.name for p in relax.pipeline.legalize_passes(target)]


def test_pipeline_reads_the_database_when_it_runs(tmp_path, bundle):
    """A pipeline made outside any database applies the one current when it runs (as TVM's
    own pipelines take it), before the dlight rules; without one the pass changes nothing."""
    target = texture_target()
    names = legalize_pass_names(target)
    assert names.index("MetaScheduleApplyDatabase") < names.index("ApplyDefaultSchedule")
    commit_second_fastest(bundle, tmp_path / "db", SOME_DEVICE)
    database = msa.load_database(tmp_path / "db", device=SOME_DEVICE)
    pipeline = relax.backend.adreno.get_default_pipeline(target)
    runs = {}
    for label in ("without", "with"):
        watch = ModuleAround("MetaScheduleApplyDatabase")
        with tvm.transform.PassContext(instruments=[watch]):
            if label == "with":
                with database:
                    pipeline(TinyConv)
            else:
                pipeline(TinyConv)
        runs[label] = watch
    tvm.ir.assert_structural_equal(runs["without"].after, runs["without"].before)
    assert not tvm_ffi.structural_equal(runs["with"].after, runs["with"].before)


@tvm.instrument.pass_instrument
class ModuleAround:
    """Keep the module before and after the first run of the pass named ``pass_name``."""

    def __init__(self, pass_name):
        self.pass_name = pass_name
        self.before = None
        self.after = None

    def run_before_pass(self, mod, info):
        """Keep the input of the pass's first run."""
        if info.name == self.pass_name and self.before is None:
            self.before = mod

    def run_after_pass(self, mod, info):
        """Keep the output of the pass's first run."""
        if info.name == self.pass_name and self.after is None:
            self.after = mod


def compile_watching(target, pass_name, database=None):
    """Compile TinyConv (under ``database`` when given), watching the pass ``pass_name``.

    Returns
    -------
    result : Tuple[relax.VMExecutable, ModuleAround]
        The executable and the modules around the pass.
    """
    watch = ModuleAround(pass_name)
    with tvm.transform.PassContext(instruments=[watch]):
        if database is None:
            executable = tvm.compile(TinyConv, target=target)
        else:
            with database:
                executable = tvm.compile(TinyConv, target=target)
    assert watch.after is not None, f"{pass_name} did not run"
    return executable, watch


def as_scheduled(func):
    """``func`` with the attributes a function of the compiled module has once scheduled."""
    if "global_symbol" in func.attrs:
        func = func.without_attr("global_symbol")
    return func.with_attr("tirx.is_scheduled", True)


def test_database_choice_reaches_the_module(tmp_path, bundle):
    """Under a database whose fastest candidates are not the defaults, the scheduled module
    holds the database's schedule of every workload it has, which differs from the untuned
    one; the module keeps the vdevice list its texture tensors refer to."""
    target = texture_target()
    commit_second_fastest(bundle, tmp_path / "db", SOME_DEVICE)
    database = msa.load_database(tmp_path / "db", device=SOME_DEVICE)
    _, untuned = compile_watching(target, "ApplyDefaultSchedule")
    _, tuned = compile_watching(target, "ApplyDefaultSchedule", database)
    _, applied = compile_watching(target, "MetaScheduleApplyDatabase", database)
    assert "vdevice" in applied.before.global_infos
    tvm.ir.assert_structural_equal(applied.after.global_infos, applied.before.global_infos)

    tuned_names = []
    for task in msa.extract_tasks(TinyConv, target):
        best = database.query_schedule(task.dispatched[0], target, "main")
        if best is None:
            continue
        tuned_names.append(task.task_name)
        expected = as_scheduled(best.mod["main"])
        tvm.ir.assert_structural_equal(tuned.after[task.task_name], expected)
        assert not tvm_ffi.structural_equal(untuned.after[task.task_name], expected)
    assert len(tuned_names) == len(bundle[1]["tasks"]), tuned_names


@requires_opencl_device
def test_database_choice_computes_the_conv(tmp_path, bundle):
    """TinyConv compiled with the non-default candidates of the database runs on the local
    device and matches the LLVM build."""
    commit_second_fastest(bundle, tmp_path / "db", SOME_DEVICE)
    database = msa.load_database(tmp_path / "db", device=SOME_DEVICE)
    with database:
        executable = tvm.compile(TinyConv, target=texture_target())
    check_against_llvm(executable)


# ------------------------------------------------------------------------------------------
# On the local device
# ------------------------------------------------------------------------------------------


@requires_opencl_device
def test_round_trip_on_the_local_device(tmp_path, bundle):
    """Measure the bundle on the local device with short samples, commit the times, compile
    under the database: a time for every candidate, the device recorded, the right answer."""
    dev = tvm.opencl(0)
    folder, manifest = bundle
    lines = []
    times = msa.measure_local(folder, dev, min_seconds=1e-4, repeat=2, log=lines.append)
    assert times["device"] == database_module.device_of(dev)
    # One progress line per task, counting up to every candidate of the bundle.
    total = len(candidate_funcs(manifest))
    progress = [re.match(r"timed (\d+)/(\d+) candidates \(", line) for line in lines]
    counts = [int(m.group(1)) for m in progress if m and int(m.group(2)) == total]
    assert len(counts) == len(manifest["tasks"]) and counts[-1] == total, lines
    assert counts == sorted(counts), lines
    assert times["device"]["name"] == dev.device_name
    assert sorted(times["results"]) == sorted(candidate_funcs(manifest))
    for func, result in times["results"].items():
        assert "error" not in result, (func, result)
        assert len(result["run_secs"]) == 2 and min(result["run_secs"]) > 0, (func, result)

    summary = msa.commit_times(folder, times, tmp_path / "db")
    assert len(summary) == len(manifest["tasks"])
    assert all(0 < row["best_us"] <= row["default_us"] for row in summary), summary
    database = msa.load_database(tmp_path / "db", device=dev)
    assert database is not None
    assert len(database.get_all_tuning_records()) == len(candidate_funcs(manifest))
    with database:
        executable = tvm.compile(TinyConv, target=texture_target())
    check_against_llvm(executable)


@pytest.mark.parametrize("nbytes", [0, -4096])
def test_cache_evictor_needs_a_positive_size(nbytes):
    """The cold-cache evictor refuses a size that evicts nothing, before allocating."""
    with pytest.raises(ValueError, match="positive size in bytes"):
        device_measure.register_cache_evictor(tvm.opencl(0), nbytes)


def test_cold_timing_is_refused_over_rpc(tmp_path):
    """Over RPC the evictor would run in the wrong process: refused before the bundle is read
    or a tracker is asked."""
    with pytest.raises(ValueError, match="time warm over RPC"):
        msa.measure_rpc(tmp_path / "bundle", "127.0.0.1", 9, "no-such-key", evict_bytes=1 << 20)


@requires_opencl_device
@pytest.mark.skipif(
    tvm.get_global_func("runtime.opencl.counters", allow_missing=True) is None,
    reason="runtime.opencl.counters is not registered (the OpenCL runtime library of "
    "src/runtime/opencl is not loaded)",
)
def test_cache_evictor_copies_once_per_call():
    """Each call of the registered evictor is one device-to-device copy, whatever arguments
    (those of the timed kernel) it is given."""
    dev = tvm.opencl(0)
    name = device_measure.register_cache_evictor(dev, 1 << 16)
    evict = tvm.get_global_func(name)
    counters = tvm.get_global_func("runtime.opencl.counters")
    kernel_arg = tvm.runtime.tensor(np.ones(16, "float32"), dev)
    before = int(counters()["device_copies"])
    for _ in range(3):
        evict(kernel_arg)
    dev.sync()
    assert int(counters()["device_copies"]) - before == 3


if __name__ == "__main__":
    tvm.testing.main()
