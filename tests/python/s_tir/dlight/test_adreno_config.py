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
# pylint: disable=invalid-name,missing-docstring,no-self-argument,not-callable
"""Tests of dlight.adreno.config: the per-target knobs of the Adreno schedule rules.

``from_target`` bounds the work-group sizes by the target's ``max_num_threads``, every knob
declares its default among its choices with a reason, ``space`` enumerates the combinations a
target accepts with the given config first, and the fallback, layout transform, reduction and
pooling rules schedule with the config they are given (else the target's).
"""

import dataclasses
import math
from typing import ClassVar, Tuple

import pytest
import tvm_ffi

import tvm
import tvm.testing
from tvm import relax, s_tir, te, tirx, topi
from tvm.relax.transform.legalize_ops import adreno as legalize_adreno
from tvm.s_tir import dlight as dl
from tvm.s_tir.dlight.adreno import config as adreno_config
from tvm.s_tir.dlight.adreno.convolution import conv_tile
from tvm.script import tirx as T

ADRENO = tvm.target.Target("qcom/adreno-opencl-texture")

ALL_CONFIGS = [
    adreno_config.Conv2dConfig,
    adreno_config.GroupConv2dConfig,
    adreno_config.WinogradConfig,
    adreno_config.ReductionConfig,
    adreno_config.LayoutTransformConfig,
    adreno_config.FallbackConfig,
]


def _adreno_with_thread_limit(max_num_threads):
    """An Adreno texture target that allows ``max_num_threads`` threads per work group."""
    return tvm.target.Target(
        {
            "kind": "opencl",
            "device": "adreno",
            "keys": ["adreno", "opencl", "gpu", "texture"],
            "max_num_threads": max_num_threads,
        }
    )


def _thread_extents(func):
    """The extent of every thread-bound loop of ``func``, by thread tag."""
    extents = {}

    def visit(loop):
        if loop.thread_binding is not None:
            extents[str(loop.thread_binding.thread_tag)] = int(loop.extent)

    tvm_ffi.structural_walk(func, [(tirx.For, visit)], order="pre")
    return extents


@T.prim_func(s_tir=True)
def relu_on_textures(
    x: T.Buffer((1, 8, 8, 8, 4), "float32", scope="global.texture"),
    y: T.Buffer((1, 8, 8, 8, 4), "float32", scope="global.texture"),
):
    for n, c, h, w, lane in T.grid(1, 8, 8, 8, 4):
        with T.sblock("relu"):
            vn, vc, vh, vw, vl = T.axis.remap("SSSSS", [n, c, h, w, lane])
            y[vn, vc, vh, vw, vl] = T.max(x[vn, vc, vh, vw, vl], T.float32(0))


# 1 x 8 x 8 x 8 pixels of 4 lanes: one thread per pixel in the fallback schedule
RELU_PIXELS = 8 * 8 * 8


def _nchw_to_nchw4c_prim_func():
    """The legalized PrimFunc of an NCHW -> NCHW4c ``R.layout_transform`` of 8 x 32 x 8
    work items (channel blocks x rows x 4-column vectors): a multiple of every group size."""
    x = relax.Var("x", relax.TensorType((1, 32, 32, 32), "float32"))
    builder = relax.BlockBuilder()
    with builder.function("main", [x]):
        with builder.dataflow():
            out = builder.emit_output(
                relax.op.layout_transform(x, index_map=lambda n, c, h, w: (n, c // 4, h, w, c % 4))
            )
        builder.emit_func_output(out)
    legalize = {"relax.layout_transform": legalize_adreno.layout_transform}
    mod = relax.transform.LegalizeOps(legalize)(builder.get())
    (func,) = [f for _, f in mod.functions_items() if isinstance(f, tirx.PrimFunc)]
    return func


def _te_prim_func(shape, compute):
    """A PrimFunc of ``compute`` applied to one float32 placeholder of ``shape``."""
    data = te.placeholder(shape, "float32", name="x")
    return te.create_prim_func([data, compute(data)])


@pytest.mark.parametrize("config_class", ALL_CONFIGS, ids=lambda c: c.__name__)
def test_every_default_is_a_declared_choice_with_a_reason(config_class):
    choices = config_class.choices()
    fields = dataclasses.fields(config_class)
    assert set(choices) == {field.name for field in fields}
    for field in fields:
        assert field.default in choices[field.name], field.name
        assert config_class.why(field.name), field.name
    # the work-group sizes are knobs of the class
    assert set(config_class.THREAD_KNOBS) <= set(choices)


@pytest.mark.parametrize("config_class", ALL_CONFIGS, ids=lambda c: c.__name__)
def test_every_measured_default_says_on_which_device(config_class):
    """A default chosen by a measurement names the device it was measured on: most were
    measured on a desktop GPU, not on an Adreno device, and the reason must say so."""
    measured = ("measured", "slower", "faster", "took", " won", " lost", " us ")
    devices = ("desktop GPU", "Intel", "PoCL", "Adreno device")
    for field in dataclasses.fields(config_class):
        why = config_class.why(field.name)
        if any(word in why for word in measured):
            assert any(device in why for device in devices), (field.name, why)


@pytest.mark.parametrize("config_class", ALL_CONFIGS, ids=lambda c: c.__name__)
def test_from_target_of_the_adreno_tag_is_the_defaults(config_class):
    """The tag allows 256 threads, no default asks for more."""
    assert config_class.from_target(ADRENO) == config_class()


@pytest.mark.parametrize("config_class", ALL_CONFIGS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("max_num_threads", [32, 128])
def test_from_target_bounds_work_group_sizes_by_the_target(config_class, max_num_threads):
    """A lower max_num_threads bounds every work-group size knob and no other knob."""
    config = config_class.from_target(_adreno_with_thread_limit(max_num_threads))
    defaults = config_class()
    for field in dataclasses.fields(config_class):
        value, default = getattr(config, field.name), getattr(defaults, field.name)
        if field.name in config_class.THREAD_KNOBS:
            assert value == min(default, max_num_threads), field.name
        else:
            assert value == default, field.name


def test_from_target_without_a_thread_limit_assumes_256():
    target = tvm.target.Target("llvm")
    assert "max_num_threads" not in target.attrs
    assert adreno_config.FallbackConfig.from_target(target).threads == 256
    assert adreno_config.LayoutTransformConfig.from_target(target).threads == 256


def test_configs_are_frozen():
    config = adreno_config.FallbackConfig()
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.threads = 64


@pytest.mark.parametrize("config_class", ALL_CONFIGS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("max_num_threads", [128, 1024])
def test_space_holds_every_accepted_combination_once(config_class, max_num_threads):
    target = _adreno_with_thread_limit(max_num_threads)
    start = config_class.from_target(target)
    space = start.space(target)
    assert space[0] == start
    assert len(set(space)) == len(space)
    accepted = {
        name: [v for v in values if name not in config_class.THREAD_KNOBS or v <= max_num_threads]
        for name, values in config_class.choices().items()
    }
    # from_target's config is itself one of the combinations here (its sizes are choices)
    assert len(space) == math.prod(len(values) for values in accepted.values())
    for config in space:
        for name, values in accepted.items():
            assert getattr(config, name) in values, (config, name)


def test_space_stays_within_a_limit_below_every_choice():
    """With a thread limit below every choice, the space holds only the config's own size,
    which from_target bounded by the limit."""
    target = _adreno_with_thread_limit(32)
    space = adreno_config.FallbackConfig.from_target(target).space(target)
    assert [config.threads for config in space] == [32], space


def test_knob_adds_a_default_missing_from_its_choices():
    @dataclasses.dataclass(frozen=True)
    class ToyConfig(adreno_config.RuleConfig):
        THREAD_KNOBS: ClassVar[Tuple[str, ...]] = ("threads",)

        threads: int = adreno_config.knob(96, (32, 64), "a size between the choices")
        unroll: int = 2  # a fixed field, no knob

    assert ToyConfig.choices() == {"threads": (96, 32, 64), "unroll": (2,)}
    assert ToyConfig.why("threads") == "a size between the choices"
    assert ToyConfig.why("unroll") == ""
    # 96 is over the limit of 64 but the config the space starts from is always measured
    space = ToyConfig().space(_adreno_with_thread_limit(64))
    assert space == [ToyConfig(), ToyConfig(threads=32), ToyConfig(threads=64)]


def test_configs_are_exported_from_the_rule_package():
    """One class per rule: the package's names are the config module's classes."""
    for config_class in ALL_CONFIGS + [adreno_config.RuleConfig]:
        assert getattr(dl.adreno, config_class.__name__) is config_class
    assert dl.adreno.reduction.ReductionConfig is adreno_config.ReductionConfig


@pytest.mark.parametrize(
    "target, config, threads",
    [
        (ADRENO, None, 256),
        (_adreno_with_thread_limit(128), None, 128),
        (ADRENO, adreno_config.FallbackConfig(threads=64), 64),
        (_adreno_with_thread_limit(128), adreno_config.FallbackConfig(threads=64), 64),
    ],
    ids=["tag", "limit128", "tag-config64", "limit128-config64"],
)
def test_fallback_work_group_is_the_config_threads(target, config, threads):
    """One thread per pixel: the given config's threads, else the target's bound default."""
    with target:
        sch = dl.adreno.Fallback(config).apply(relu_on_textures, target, False)
    assert _thread_extents(sch.mod["main"]) == {
        "blockIdx.x": RELU_PIXELS // threads,
        "threadIdx.x": threads,
    }


@pytest.mark.parametrize(
    "target, threads",
    [(None, 256), (_adreno_with_thread_limit(128), 128)],
    ids=["no-target", "limit128"],
)
def test_fallback_schedule_default_reads_the_current_target(target, threads):
    """The static helper without a config takes the current target's knobs (256 without)."""
    sch = s_tir.Schedule(relu_on_textures)
    block = sch.get_sblock("relu")
    if target is None:
        dl.adreno.Fallback.schedule_default(sch, block)
    else:
        with target:
            dl.adreno.Fallback.schedule_default(sch, block)
    assert _thread_extents(sch.mod["main"])["threadIdx.x"] == threads


def _with_model(model, **attrs):
    return tvm.target.Target({"tag": "qcom/adreno-opencl-texture", "model": model, **attrs})


@pytest.mark.parametrize("model", sorted(adreno_config.DEVICES))
def test_each_model_gets_its_device_facts(model):
    facts = adreno_config.DEVICES[model]
    assert facts.source
    config = adreno_config.Conv2dConfig.from_target(_with_model(model))
    assert (config.compute_units, config.wave_size) == (facts.compute_units, facts.wave_size)
    # the device facts are not searched: every config of the space keeps them
    assert {(c.compute_units, c.wave_size) for c in config.space(_with_model(model))} == {
        (facts.compute_units, facts.wave_size)
    }


def test_adreno_defaults_and_unknown_models_get_the_adreno_facts():
    generic = adreno_config.DEVICES["adreno"]
    for target in (ADRENO, _with_model("adreno-9000")):
        facts = adreno_config.device_facts(target)
        assert (facts.compute_units, facts.wave_size) == (generic.compute_units, generic.wave_size)
    defaults = adreno_config.Conv2dConfig()
    assert (defaults.compute_units, defaults.wave_size) == (generic.compute_units, 64)


def test_the_targets_warp_size_is_the_wave():
    facts = adreno_config.device_facts(_with_model("adreno-740", thread_warp_size=128))
    assert (facts.compute_units, facts.wave_size) == (6, 128)
    assert adreno_config.Conv2dConfig.from_target(_with_model("adreno-740")).wave_size == 64


def test_device_facts_change_the_occupancy_decision():
    """A 1x1 conv to 64 channels (16 blocks) on 56x56 at the default tile of 2 blocks x 1
    column has 8 * 56 * 56 = 25088 work items: 130 waves per compute unit on the generic
    Adreno (3 units, waves of 64), above every threshold, so the tile stays; 5.9 on a device of
    132 units and waves of 32, below the first threshold (8), so the channel blocks are
    halved once (11.9 waves then, above the next threshold, 4)."""
    adreno = adreno_config.Conv2dConfig.from_target(ADRENO)
    hopper = dataclasses.replace(adreno, compute_units=132, wave_size=32)
    assert conv_tile(16, 56, 56, adreno, pointwise=True) == (2, 1)
    assert conv_tile(16, 56, 56, hopper, pointwise=True) == (1, 1)
    # the wave size alone moves it: waves of 1024 give 8.2 per unit (kept), of 2048 4.1 (halved)
    wide = dataclasses.replace(adreno, wave_size=1024)
    assert conv_tile(16, 56, 56, wide, pointwise=True) == (2, 1)
    wider = dataclasses.replace(adreno, wave_size=2048)
    assert conv_tile(16, 56, 56, wider, pointwise=True) == (1, 1)


@pytest.mark.parametrize(
    "target, config, threads",
    [
        (ADRENO, None, 256),
        (_adreno_with_thread_limit(128), None, 128),
        (ADRENO, adreno_config.LayoutTransformConfig(threads=64), 64),
    ],
    ids=["tag", "limit128", "tag-config64"],
)
def test_layout_transform_work_group_is_the_config_threads(target, config, threads):
    sch = dl.adreno.LayoutTransform(config=config).apply(_nchw_to_nchw4c_prim_func(), target, False)
    assert _thread_extents(sch.mod["main"])["threadIdx.x"] == threads


@pytest.mark.parametrize(
    "config, extents",
    [
        # 64 elements reduced per output pixel, 4 output pixels
        (
            adreno_config.ReductionConfig(max_serial_elements=1, split_threads=16),
            {"blockIdx.x": 4, "threadIdx.x": 16},
        ),
        (
            adreno_config.ReductionConfig(max_serial_elements=1 << 30, serial_threads=32),
            {"blockIdx.x": 1, "threadIdx.x": 32},
        ),
    ],
    ids=["split", "serial"],
)
def test_reduction_work_group_is_the_config_threads(config, extents):
    func = _te_prim_func((1, 4, 8, 8, 4), lambda x: topi.sum(x, axis=[2, 3]))
    sch = dl.adreno.Reduction(config).apply(func, ADRENO, False)
    assert _thread_extents(sch.mod["main"]) == extents


@pytest.mark.parametrize(
    "config, threads",
    [(None, 64), (adreno_config.ReductionConfig(serial_threads=32), 32)],
    ids=["default", "config32"],
)
def test_pool_work_group_is_the_config_serial_threads(config, threads):
    """7x7 to 3x3 adaptive pooling (per-output windows): 4 x 3 x 3 output pixels."""
    func = _te_prim_func(
        (1, 4, 7, 7, 4), lambda x: topi.nn.adaptive_pool(x, (3, 3), "avg", layout="NCHW4c")
    )
    sch = dl.adreno.VaryingWindowPool2D(config).apply(func, ADRENO, False)
    assert _thread_extents(sch.mod["main"]) == {
        "blockIdx.x": math.ceil(4 * 3 * 3 / threads),
        "threadIdx.x": threads,
    }


if __name__ == "__main__":
    tvm.testing.main()
