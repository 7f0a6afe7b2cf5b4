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
"""The search space of an Adreno workload: its dlight rule under each knob combination.

The Adreno schedule rules take their knobs from a config dataclass
(:mod:`tvm.s_tir.dlight.adreno.config`), whose fields list the values a tuner may try. The
space of a PrimFunc is found as the pipeline finds its schedule: the first rule, in the
pipeline's order, that takes the function under its default knobs; then that rule is applied
once per combination of its knobs. Combinations that give the same scheduled function are
measured once; the default is always the first candidate.

:func:`refine` narrows a space to the neighbours of a chosen config (a second round that varies
only knobs added since a database was measured, around each workload's best).

:func:`space_generator` wraps the same enumeration as a MetaSchedule ``ScheduleFn``.
"""

import copy
import dataclasses
import random
from typing import Any, Callable, Dict, List, Optional, Sequence

import tvm_ffi

from tvm import s_tir, tirx
from tvm.ir import IRModule
from tvm.target import Target

from ...dlight import adreno as dla
from ...dlight.adreno.config import RuleConfig

#: The config class of each Adreno rule. A rule without an entry (or without a ``config``
#: attribute) is measured under its defaults only.
RULE_CONFIGS: Dict[type, type] = {
    dla.Conv2d: dla.Conv2dConfig,
    dla.DepthwisePointwiseConv2d: dla.DepthwisePointwiseConfig,
    dla.GroupConv2d: dla.GroupConv2dConfig,
    dla.Winograd: dla.WinogradConfig,
    dla.Reduction: dla.ReductionConfig,
    dla.VaryingWindowPool2D: dla.ReductionConfig,
    dla.LayoutTransform: dla.LayoutTransformConfig,
    dla.Fallback: dla.FallbackConfig,
}


@dataclasses.dataclass
class Candidate:
    """One schedule of a workload.

    Attributes
    ----------
    rule : str
        Class name of the rule that made it.
    config : Optional[RuleConfig]
        Its knobs (None: a rule without knobs).
    schedule : s_tir.Schedule
        The schedule; its trace replays on the workload.
    """

    rule: str
    config: Optional[RuleConfig]
    schedule: s_tir.Schedule

    def describe(self) -> Dict[str, Any]:
        """The rule and knobs as JSON-ready data."""
        knobs = dataclasses.asdict(self.config) if self.config is not None else {}
        return {"rule": self.rule, "knobs": knobs}


def knob_space(rule, target: Target) -> List[Optional[RuleConfig]]:
    """The configs to try for ``rule`` on ``target``, its default first ([None] without knobs)."""
    config_cls = RULE_CONFIGS.get(type(rule))
    if config_cls is None or not hasattr(rule, "config"):
        return [None]
    base = rule.config if rule.config is not None else config_cls.from_target(target)
    return base.space(target)


def refine(config: RuleConfig, target: Target, knobs: Sequence[str]) -> List[RuleConfig]:
    """``config``, then every config of its space that differs from it only in ``knobs``.

    Parameters
    ----------
    config : RuleConfig
        The config to start from (a workload's best so far).
    target : Target
        As for :meth:`~tvm.s_tir.dlight.adreno.config.RuleConfig.space`.
    knobs : Sequence[str]
        The knobs to vary; every other knob keeps the value ``config`` has.

    Returns
    -------
    configs : List[RuleConfig]
        Distinct configs, ``config`` first.
    """
    unknown = sorted(set(knobs) - set(config.choices()))
    if unknown:
        raise ValueError(f"{type(config).__name__} has no knob {', '.join(unknown)}")
    fixed = [name for name in config.choices() if name not in knobs]
    return [
        other
        for other in config.space(target)
        if all(getattr(other, name) == getattr(config, name) for name in fixed)
    ]


def _with_config(rule, config: Optional[RuleConfig]):
    if config is None:
        return rule
    tuned = copy.copy(rule)
    tuned.config = config
    return tuned


def _target_of(func: tirx.PrimFunc, target: Target) -> Target:
    # As dlight's ApplyDefaultSchedule: the function's own target when it carries one.
    return func.attrs["target"] if func.attrs and "target" in func.attrs else target


def _schedule_one(rule, func: tirx.PrimFunc, target: Target) -> Optional[s_tir.Schedule]:
    sch = rule.apply(func, target, False)
    if isinstance(sch, list):
        sch = sch[0] if sch else None
    return sch


def candidates(
    mod: IRModule,
    target: Target,
    rules: Sequence[Any],
    max_candidates: Optional[int] = None,
    seed: int = 0,
    configs: Optional[Callable[[Any], Optional[Sequence[RuleConfig]]]] = None,
    max_misses: Optional[int] = None,
) -> List[Candidate]:
    """The distinct schedules of the workload ``mod`` (one PrimFunc ``main``).

    Parameters
    ----------
    mod : IRModule
        The workload, as MetaSchedule extracts it.
    target : Target
        The target (a ``target`` attribute of the function takes precedence).
    rules : Sequence[Any]
        The dlight rules in the pipeline's order.
    max_candidates : Optional[int]
        Stop at the default and ``max_candidates - 1`` other distinct schedules, the knob
        combinations tried in a random order (None: every combination).
    seed : int
        Seed of that order.
    configs : Optional[Callable[[Any], Optional[Sequence[RuleConfig]]]]
        Given the rule that takes the workload, the configs to try instead of its whole knob
        space (the rule's default is still tried first); None from it, or no callable: the
        whole space.
    max_misses : Optional[int]
        Stop after this many knob combinations in a row gave no new schedule (a duplicate, or
        a combination the workload cannot take). Most combinations of a large space can
        collapse into a few schedules of one workload (a 1x1 conv ignores the kernel-window
        knobs, the occupancy guard merges tiles), and walking all of them costs a schedule
        each (None: walk the whole space).

    Returns
    -------
    candidates : List[Candidate]
        Empty when no rule takes the workload; else the default schedule first.
    """
    func = mod["main"]
    target = _target_of(func, target)
    for rule in rules:
        if _schedule_one(rule, func, target) is None:
            continue
        found: List[Candidate] = []
        seen = set()
        space = knob_space(rule, target)
        chosen = configs(rule) if configs is not None else None
        if chosen is not None:
            space = space[:1] + [c for c in chosen if c != space[0]]
        if max_candidates is not None:
            # the default, then the others in a seeded random order until enough are distinct
            rest = space[1:]
            random.Random(seed).shuffle(rest)
            space = space[:1] + rest
        misses = 0
        for config in space:
            if max_candidates is not None and len(found) >= max_candidates:
                break
            if max_misses is not None and misses >= max_misses:
                break
            try:
                sch = _schedule_one(_with_config(rule, config), func, target)
            except (s_tir.ScheduleError, tvm_ffi.Error, ValueError):
                sch = None  # a combination this workload cannot take (a split that fails)
            key = None if sch is None else tvm_ffi.structural_hash(sch.mod)
            if key is None or key in seen:
                misses += 1
                continue
            misses = 0
            seen.add(key)
            found.append(Candidate(type(rule).__name__, config, sch))
        return found
    return []


def space_generator(
    target: Target,
    rules: Sequence[Any],
    max_candidates: Optional[int] = None,
    max_misses: Optional[int] = None,
):
    """The enumerated space as a MetaSchedule ``ScheduleFn`` (for ``ms.tune_tasks``).

    Parameters
    ----------
    target : Target
        The target the rules schedule for.
    rules : Sequence[Any]
        The dlight rules in the pipeline's order.
    max_candidates : Optional[int]
        As in :func:`candidates`.
    max_misses : Optional[int]
        As in :func:`candidates`.

    Returns
    -------
    space : tvm.s_tir.meta_schedule.space_generator.ScheduleFn
        Returns every candidate schedule of a workload as a design space.
    """
    from ..space_generator import ScheduleFn  # pylint: disable=import-outside-toplevel

    def _spaces(sch: s_tir.Schedule) -> List[s_tir.Schedule]:
        found = candidates(sch.mod, target, rules, max_candidates, max_misses=max_misses)
        return [c.schedule for c in found]

    return ScheduleFn(_spaces, sch_rules=[], postprocs=[], mutator_probs={})
