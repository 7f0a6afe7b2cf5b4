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
"""Steady-state wall clock of the bundle's networks under one runtime setting (runtime only).

Per model and configuration: the median over ``--rounds`` of the wall clock per call of
``--calls`` back-to-back calls of ``main`` between a device sync before and after
(``device_runner.wall_clock_ms``, the method of the peers' medians and of ``device_runner``'s
``median_ms`` and ``steady_wall_ms``).  The rounds interleave: every
network and configuration is loaded first, then each round times each of them once, in an
order that rotates from round to round, so that the box's drift over time falls on all of
them alike.  ``ratio_to_a`` is the median over the rounds of a configuration's time over (a)'s
of the same model in the same round (1 for (a) itself; empty without an (a) build).

Run it once per setting of the runtime's environment (each in a fresh process: the OpenCL
queue is made once) and compare the rows; ``--label`` names the setting in the CSV.

    python steady_wall.py --bundle B --label default [--only blazeface,palm]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import sys

import numpy as np

import device_runner
import inputs as bench_inputs


def load_runs(sess, bundle: pathlib.Path, only: str):
    """``{(model, config): ModelRun}`` of every compiled build of the bundle that ``only``
    selects (a comma-separated list of substrings of the model name; empty: all)."""
    runs = {}
    for path in sorted((bundle / "meta").glob("*.json")):
        meta = json.loads(path.read_text())
        if meta["config"] == "ref" or not meta.get("ok"):
            continue
        if only and not any(s in meta["model"] for s in only.split(",")):
            continue
        fixed = {}
        if meta.get("weights_file"):
            fixed = dict(np.load(bundle / "weights" / meta["weights_file"]))
        data = bench_inputs.make_inputs(meta["params"], meta["seed"], fixed)
        run = device_runner.ModelRun(sess, bundle, meta, data)
        for _ in range(3):
            run.run()
        runs[(meta["model"], meta["config"])] = run
    sess.dev.sync()
    return runs


def main() -> int:
    """Print one CSV row per network and configuration of the bundle."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", type=pathlib.Path, required=True)
    parser.add_argument("--label", required=True)
    parser.add_argument("--only", default="")
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--header", action="store_true")
    args = parser.parse_args()
    tvm = device_runner.load_tvm()
    sess = device_runner.Session(tvm, rpc=False)
    runs = load_runs(sess, args.bundle, args.only)
    keys = list(runs)
    times = {key: [] for key in keys}
    for round_index in range(args.rounds):
        shift = round_index % max(1, len(keys))
        for key in keys[shift:] + keys[:shift]:
            times[key].append(device_runner.wall_clock_ms(runs[key].run, sess.dev, args.calls))
    if args.header:
        print("label,model,config,steady_wall_ms,min_ms,max_ms,ratio_to_a")
    for model, config in keys:
        per_call = times[(model, config)]
        base = times.get((model, "a"))
        ratio = f"{statistics.median(t / b for t, b in zip(per_call, base)):.4f}" if base else ""
        print(
            f"{args.label},{model},{config},{statistics.median(per_call):.4f},"
            f"{min(per_call):.4f},{max(per_call):.4f},{ratio}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
