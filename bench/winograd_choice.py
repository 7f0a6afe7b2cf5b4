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
"""Winograd or direct, per 3x3 stride-1 layer: the measurement behind ``winograd_tile``.

Host (needs the compiler):  python bench/winograd_choice.py build [--out DIR]
    compiles every 3x3, stride-1, groups-1 layer of ``models.LAYERS`` (ResNet-50's; MobileNetV2
    has none) for the texture target three times, Winograd mode ``off`` (direct), ``2`` and
    ``4`` (``legalize_ops.adreno.winograd_mode``), weights lifted as in ``build_worker``.
Device (runtime only, the bundle of ``run.py bundle`` on PYTHONPATH):
    python bench/winograd_choice.py run --bundle DIR --out DIR
    times ``main`` with ``runtime.timer.opencl`` (median of ``--repeat`` samples), checks each
    Winograd build against the direct one on the same inputs, writes ``winograd-choice.csv``.
"""

import argparse
import csv
import json
import pathlib
import sys

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
MODES = ("off", "2", "4")


def layers():
    import models  # pylint: disable=import-outside-toplevel

    return [l for l in models.LAYERS if l[2] == 3 and l[3] == 1 and l[4] == 1]


def cmd_build(args) -> int:
    """Compile every layer in every Winograd mode; libraries and metas go to ``args.out``."""
    import build_worker  # pylint: disable=import-outside-toplevel
    from tvm.relax.transform.legalize_ops import adreno  # pylint: disable=import-outside-toplevel

    for sub in ("lib", "meta", "refs", "weights"):
        (args.out / sub).mkdir(parents=True, exist_ok=True)
    for layer in layers():
        model = "layer:" + ",".join(str(v) for v in layer)
        for mode in MODES:
            with adreno.winograd_mode(mode):
                meta = build_worker.build(model, "a", args.out, tiny=False)
            if meta.get("ok"):
                lib = args.out / "lib" / meta["lib"]
                meta["lib"] = lib.name.replace("__a.so", f"__wg{mode}.so")
                lib.rename(args.out / "lib" / meta["lib"])
            meta["mode"] = mode
            name = f"{meta.get('stem', model)}__wg{mode}.json"
            (args.out / "meta" / name).write_text(json.dumps(meta, indent=1))
            print(f"[build] {model} mode={mode} ok={meta.get('ok')} {meta.get('error', '')}")
    (args.out / "build.json").write_text(json.dumps({"models": "winograd-choice"}))
    return 0


def cmd_run(args) -> int:
    """Time every built layer on the OpenCL device; writes ``winograd-choice.csv``."""
    import device_runner  # pylint: disable=import-outside-toplevel
    import inputs as bench_inputs  # pylint: disable=import-outside-toplevel

    tvm = device_runner.load_tvm()
    sess = device_runner.Session(tvm, rpc=False)
    metas = [json.loads(p.read_text()) for p in sorted((args.bundle / "meta").glob("*__wg*.json"))]
    metas = [m for m in metas if args.only in m["model"]]
    rows, direct = [], {}
    for meta in sorted(metas, key=lambda m: (m["model"], m["mode"] != "off", m["mode"])):
        row = {"device": sess.dev.device_name, "model": meta["model"], "mode": meta["mode"]}
        if not meta.get("ok"):
            rows.append(dict(row, status="compile_error", error=meta.get("error", "")))
            continue
        data = bench_inputs.make_inputs(meta["params"], meta["seed"])
        try:
            run = device_runner.ModelRun(sess, args.bundle, meta, data)
            out = run.run()[0].numpy()
            run.vm.set_input("main", run.x, *run.weights)
            timer = run.vm.time_evaluator(
                "invoke_stateful", sess.dev, number=20, repeat=args.repeat
            )
            samples = sorted(t * 1e3 for t in timer("main").results)
        except Exception as err:  # pylint: disable=broad-except
            rows.append(dict(row, status="run_error", error=device_runner.one_line(err)))
            continue
        if meta["mode"] == "off":
            direct[meta["model"]] = out
        ref = direct.get(meta["model"])
        rel = float(np.max(np.abs(out - ref)) / np.max(np.abs(ref))) if ref is not None else ""
        rows.append(
            dict(
                row,
                status="ok",
                median_ms=round(samples[len(samples) // 2], 4),
                min_ms=round(samples[0], 4),
                gflop=round(meta.get("gflop", 0), 4),
                rel_err_vs_direct=f"{rel:.3g}" if rel != "" else "",
                compile_s=round(meta.get("compile_s", 0), 2),
            )
        )
        print(rows[-1], flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    keys = []
    for row in rows:
        keys += [k for k in row if k not in keys]
    with open(args.out / "winograd-choice.csv", "w", newline="", encoding="utf-8") as out:
        writer = csv.DictWriter(out, fieldnames=keys)
        writer.writeheader()
        writer.writerows(rows)
    return 0


def main() -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    build = sub.add_parser("build")
    build.add_argument("--out", type=pathlib.Path, default=pathlib.Path("build/bench-wg/work"))
    run = sub.add_parser("run")
    run.add_argument("--bundle", type=pathlib.Path, required=True)
    run.add_argument("--out", type=pathlib.Path, required=True)
    run.add_argument("--repeat", type=int, default=30)
    run.add_argument("--only", default="", help="layers whose name contains this")
    args = parser.parse_args()
    return cmd_build(args) if args.cmd == "build" else cmd_run(args)


if __name__ == "__main__":
    sys.exit(main())
