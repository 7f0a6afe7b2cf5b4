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
"""What one kernel launch costs through TVM, beside ``launch_cost.py``'s plain OpenCL.

The same small kernel (16384 work items, one add) launched ``--launches`` times per call:

- ``vm``: a Relax function of that many ``call_tir`` in a chain, run by the VM;
- ``packed``: the kernel's host function called from Python (one FFI call per launch).

Wall clock per launch (``time.perf_counter`` around ``--calls`` calls and one sync), median
of ``--rounds`` rounds. Compare with ``launch_cost.py --launches N --iters 0`` (plain queue) in
the same process setting: the difference is what TVM's host side adds to the driver's cost.

Host (needs the compiler), then the device (runtime only, the bundle's TVM on PYTHONPATH):

    python bench/launch_cost_tvm.py build --lib build/launch/chain.so [--launches 200]
    python bench/launch_cost_tvm.py device --lib build/launch/chain.so [--launches 200]
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import sys
import time

import numpy as np

ITEMS = 16384
GROUP = 128


def build(out: pathlib.Path, launches: int) -> None:
    """Compile the chain for the generic OpenCL target and export it to ``out``."""
    # pylint: disable=import-outside-toplevel
    import tvm
    from tvm import relax, te

    data = te.placeholder((ITEMS,), "float32", name="x")
    add_one = te.create_prim_func([data, te.compute((ITEMS,), lambda i: data[i] + 1.0)])
    sch = tvm.s_tir.Schedule(add_one)
    (loop,) = sch.get_loops(sch.get_sblock("compute"))
    group, lane = sch.split(loop, [None, GROUP])
    sch.bind(group, "blockIdx.x")
    sch.bind(lane, "threadIdx.x")
    builder = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((ITEMS,), "float32"))
    func = (
        sch.mod["main"].with_attr("global_symbol", "add_one").with_attr("tirx.is_scheduled", True)
    )
    kernel = builder.add_func(func, "add_one")
    with builder.function("main", [x]):
        with builder.dataflow():
            value = x
            for _ in range(launches):
                value = builder.emit(
                    relax.call_tir(kernel, [value], relax.TensorType((ITEMS,), "float32"))
                )
            out_var = builder.emit_output(value)
        builder.emit_func_output(out_var)
    out.parent.mkdir(parents=True, exist_ok=True)
    tvm.compile(builder.get(), target=tvm.target.Target("opencl", host="llvm")).export_library(
        str(out)
    )
    print(f"built {out}: {launches} launches per call")


def _per_launch(run, sync, calls: int, launches: int, rounds: int) -> list:
    walls = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            run()
        sync()
        walls.append((time.perf_counter() - start) / calls / launches * 1e6)
    return walls


def device(lib_path: pathlib.Path, launches: int, calls: int, rounds: int) -> None:
    """Print ``path,us_per_launch,min_us,max_us`` for the VM chain and the direct calls."""
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    import device_runner  # pylint: disable=import-outside-toplevel

    tvm = device_runner.load_tvm()
    from tvm.runtime.vm import VirtualMachine  # pylint: disable=import-outside-toplevel

    dev = tvm.opencl(0)
    lib = tvm.runtime.load_module(str(lib_path))
    machine = VirtualMachine(lib, dev)
    x = tvm.runtime.tensor(np.random.uniform(-1, 1, ITEMS).astype("float32"), dev)
    np.testing.assert_allclose(machine["main"](x).numpy(), x.numpy() + launches, rtol=1e-5)
    kernel = lib.get_function("add_one", query_imports=True)
    y = tvm.runtime.empty((ITEMS,), "float32", dev)
    print("path,us_per_launch,min_us,max_us")
    for name, run, per_call in (
        ("vm", lambda: machine["main"](x), launches),
        ("packed", lambda: kernel(x, y), 1),
    ):
        run()
        dev.sync()
        walls = _per_launch(run, dev.sync, calls * launches // per_call, per_call, rounds)
        print(f"{name},{statistics.median(walls):.2f},{min(walls):.2f},{max(walls):.2f}")


def main() -> int:
    """Build the chain, or time it (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=["build", "device"])
    parser.add_argument(
        "--lib",
        type=pathlib.Path,
        default=pathlib.Path("build/launch/chain.so"),
        help="the chain's library: written by build, timed by device",
    )
    parser.add_argument("--launches", type=int, default=200)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    if args.step == "build":
        build(args.lib, args.launches)
    else:
        device(args.lib, args.launches, args.calls, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
