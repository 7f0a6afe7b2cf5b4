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
"""Where the Adreno reduction rule should switch from one thread per output to threads sharing
an output: time both schedules of texture reductions over 4..4096 elements.

Steps (the device step needs only TVM's runtime, so it runs on the GPU box):

  build   compile each workload twice per element count, once per schedule (forcing
          ``ReductionConfig.max_serial_elements``), export the libraries and ``cases.json``
  device  time the reduction kernel alone (its input in a texture, runtime.timer.opencl, median of
          ``--repeat`` samples of ``number`` launches), check its result, write a CSV
  report  print the side-by-side table of a CSV: both times, their ratio, the crossover

Workloads, all reading a packed ``NCHW4c`` texture:

  hw16   sum over H and W of [1, 16, H, W, 4] (16 output pixels, keepdims), H*W = n
  hw128  the same with 128 output pixels ([1, 128, H, W, 4])
  hw1024 the same with 1024 output pixels ([1, 1024, H, W, 4])
  c196   sum over the channels (both packed axes) of [1, n/4, 14, 14, 4]: 196 outputs

  python bench/reduction_threshold.py build --out build/reduce_bench/bundle
  python bench/reduction_threshold.py device --bundle DIR --out results.csv   # runtime only
  python bench/reduction_threshold.py report bench/results/<date>-<device>-reduction-threshold.csv
"""

import argparse
import csv
import ctypes
import json
import os
import pathlib
import sys

import module_tree

COUNTS = [4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]
STRATEGIES = {"serial": 10**9, "split": 0}
WORKLOADS = ("hw16", "hw128", "hw1024", "c196")
# Ratios within 5% of 1 count as a tie (launch-bound kernels of a few microseconds).
NOISE = 0.05


def _hw(n: int):
    """Split n (a power of two) into H x W with H <= W."""
    h = 1
    while h * h * 4 <= n:
        h *= 2
    return h, n // h


def shape_of(workload: str, n: int):
    """(input shape, reduced axes) of one case."""
    if workload == "hw16":
        return (1, 16) + _hw(n) + (4,), [2, 3]
    if workload == "hw128":
        return (1, 128) + _hw(n) + (4,), [2, 3]
    if workload == "hw1024":
        return (1, 1024) + _hw(n) + (4,), [2, 3]
    return (1, n // 4, 14, 14, 4), [1, 4]


def _module(shape, axes):
    from tvm import relax  # pylint: disable=import-outside-toplevel

    builder = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType(list(shape), "float32"))
    with builder.function("main", [x]):
        with builder.dataflow():
            y = builder.emit(relax.op.sum(x, axis=axes, keepdims=axes == [2, 3]))
            out = builder.emit_output(y)
        builder.emit_func_output(out)
    return builder.finalize()


def _reduction_call(mod, target):
    """(PrimFunc name, input scope) of the reduction after the target's legalization."""
    import tvm  # pylint: disable=import-outside-toplevel
    from tvm import relax  # pylint: disable=import-outside-toplevel

    with target:
        lowered = tvm.transform.Sequential(relax.pipeline.legalize_passes(target))(mod)
    call_tir = tvm.ir.Op.get("relax.call_tir")
    found = []

    def _visit(expr):
        if isinstance(expr, relax.Call) and expr.op.same_as(call_tir):
            name = expr.args[0].name_hint
            if "sum" in name:
                arg = expr.args[1].fields[0]
                vdev = arg.ty.vdevice
                found.append((name, "global" if vdev is None else str(vdev.memory_scope)))

    relax.analysis.post_order_visit(lowered["main"], _visit)
    assert len(found) == 1, found
    return found[0]


def cmd_build(args) -> int:
    """Compile every case with each schedule forced; export libraries and cases.json."""
    import tvm  # pylint: disable=import-outside-toplevel
    from tvm.s_tir.dlight.adreno import reduction  # pylint: disable=import-outside-toplevel

    out = args.out
    (out / "lib").mkdir(parents=True, exist_ok=True)
    target = tvm.target.Target("qcom/adreno-opencl-texture", host="llvm")
    original = reduction.ReductionConfig.from_target
    cases = []
    for workload in args.workloads.split(","):
        for n in COUNTS:
            shape, axes = shape_of(workload, n)
            for strategy, limit in STRATEGIES.items():
                config = reduction.ReductionConfig(max_serial_elements=limit)
                reduction.ReductionConfig.from_target = staticmethod(lambda _t, c=config: c)
                try:
                    mod = _module(shape, axes)
                    name, scope = _reduction_call(mod, target)
                    exe = tvm.compile(mod, target=target)
                finally:
                    reduction.ReductionConfig.from_target = original
                lib = f"{workload}_{n}_{strategy}.so"
                exe.export_library(str(out / "lib" / lib))
                src = "".join(m.inspect_source() for m in module_tree.opencl_modules(exe.mod))
                cases.append(
                    {
                        "workload": workload,
                        "n": n,
                        "strategy": strategy,
                        "lib": lib,
                        "func": name,
                        "shape": list(shape),
                        "axes": axes,
                        "scope": scope,
                        "local_memory": "__local" in src,
                    }
                )
                print(f"built {lib} ({name}, input {scope})", flush=True)
    (out / "cases.json").write_text(json.dumps(cases, indent=1), encoding="utf-8")
    (out / "bench").mkdir(exist_ok=True)
    for name in ("reduction_threshold.py", "module_tree.py"):
        source = pathlib.Path(__file__).with_name(name)
        (out / "bench" / name).write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    return 0


def _warm_up(bundle, case, dev, seconds: float):
    """Launch one kernel for ``seconds``, so that the GPU clocks are up before timing."""
    import time  # pylint: disable=import-outside-toplevel
    import tvm  # pylint: disable=import-outside-toplevel

    lib = tvm.runtime.load_module(str(bundle / "lib" / case["lib"]))
    func = module_tree.function_holder(lib, case["func"])[case["func"]]
    x = tvm.runtime.empty(tuple(case["shape"]), "float32", dev, mem_scope=case["scope"])
    shape = list(case["shape"])
    for axis in case["axes"]:
        shape[axis] = 1
    y = tvm.runtime.empty(
        tuple(shape) if case["axes"] == [2, 3] else tuple(shape[:1] + shape[2:4]), "float32", dev
    )
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        for _ in range(100):
            func(x, y)
        dev.sync()


def cmd_device(args) -> int:
    """Time every case of a bundle on the OpenCL device (TVM runtime only)."""
    import numpy as np  # pylint: disable=import-outside-toplevel
    import tvm  # pylint: disable=import-outside-toplevel

    if not tvm.runtime.enabled("opencl"):
        lib = os.path.join(os.path.dirname(tvm.__file__), "lib", "libtvm_runtime_opencl.so")
        ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)
    dev = tvm.opencl(0)
    device = dev.device_name
    cases = json.loads((args.bundle / "cases.json").read_text(encoding="utf-8"))
    rng = np.random.default_rng(20261130)
    rows = []
    _warm_up(args.bundle, cases[0], dev, args.warmup)
    for case in cases:
        shape, axes = tuple(case["shape"]), tuple(case["axes"])
        keep = list(axes) == [2, 3]
        x = rng.uniform(-1.0, 1.0, size=shape).astype("float32")
        want = x.sum(axis=axes, keepdims=keep)
        row = {"device": device, **{k: case[k] for k in ("workload", "n", "strategy")}}
        try:
            lib = tvm.runtime.load_module(str(args.bundle / "lib" / case["lib"]))
            holder = module_tree.function_holder(lib, case["func"])
            x_dev = tvm.runtime.empty(shape, "float32", dev, mem_scope=case["scope"])
            x_dev.copyfrom(x)
            y_dev = tvm.runtime.empty(want.shape, "float32", dev)
            holder[case["func"]](x_dev, y_dev)
            err = float(np.abs(y_dev.numpy() - want).max())
            probe = holder.time_evaluator(case["func"], dev, number=5, repeat=3)(x_dev, y_dev)
            number = max(1, min(1000, int(2e-3 / max(probe.mean, 1e-7))))
            res = holder.time_evaluator(case["func"], dev, number=number, repeat=args.repeat)(
                x_dev, y_dev
            )
            row.update(
                median_us=round(float(np.median(res.results)) * 1e6, 3),
                min_us=round(float(np.min(res.results)) * 1e6, 3),
                number=number,
                max_abs_err=f"{err:.2e}",
                status="ok" if err <= 1e-4 * max(1.0, float(np.abs(want).max())) else "wrong",
            )
        except Exception as err:  # pylint: disable=broad-except
            row.update(status="error", error=str(err).strip().splitlines()[-1][:200])
        rows.append(row)
        print(row, flush=True)
    fields = [
        "device",
        "workload",
        "n",
        "strategy",
        "median_us",
        "min_us",
        "number",
        "max_abs_err",
        "status",
        "error",
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        for row in rows:
            writer.writerow(row)
    return 0


def cmd_report(args) -> int:
    """Print serial and split times side by side, their ratio and the crossover."""
    with open(args.csv, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    times = {}
    for row in rows:
        if row["status"] == "ok":
            times[(row["workload"], int(row["n"]), row["strategy"])] = float(row["median_us"])
    print(f"device: {rows[0]['device'] if rows else '?'}")
    for workload in sorted({r["workload"] for r in rows}):
        print(f"\n{workload}: median kernel time (us), serial / split (> 1: split is faster)")
        print(f"{'n':>6} {'serial':>10} {'split':>10} {'ratio':>7}")
        crossover = None
        for n in COUNTS:
            serial = times.get((workload, n, "serial"))
            split = times.get((workload, n, "split"))
            if serial is None or split is None:
                continue
            ratio = serial / split
            if ratio > 1.0 + NOISE and crossover is None:
                crossover = n
            elif ratio < 1.0 - NOISE:
                crossover = None
            print(f"{n:>6} {serial:>10.2f} {split:>10.2f} {ratio:>7.2f}")
        if crossover:
            print(f"split faster by > {NOISE:.0%} from n = {crossover} on, never slower by more")
        else:
            print(f"split never stays faster by > {NOISE:.0%}")
    return 0


def main() -> int:
    """Parse the command line and run one step."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="step", required=True)
    build = sub.add_parser("build")
    build.add_argument("--out", type=pathlib.Path, required=True)
    build.add_argument("--workloads", default=",".join(WORKLOADS))
    device = sub.add_parser("device")
    device.add_argument("--bundle", type=pathlib.Path, required=True)
    device.add_argument("--out", type=pathlib.Path, required=True)
    device.add_argument("--repeat", type=int, default=9)
    device.add_argument("--warmup", type=float, default=2.0, help="seconds of warm-up launches")
    report = sub.add_parser("report")
    report.add_argument("csv", type=pathlib.Path)
    args = parser.parse_args()
    return {"build": cmd_build, "device": cmd_device, "report": cmd_report}[args.step](args)


if __name__ == "__main__":
    sys.exit(main())
