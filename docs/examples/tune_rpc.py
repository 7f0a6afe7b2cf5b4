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
"""Tune a small network's texture schedules on a device behind a TVM RPC tracker, then compile
it under the tuning database and check its answer.

Run by tests/docs/test_examples.py with ``--local-rpc`` (a tracker and a server on this
machine, using its OpenCL device); with a phone: ``--tracker HOST:PORT --key KEY``.

    python docs/examples/tune_rpc.py --local-rpc
"""

import argparse
import functools
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

import tvm
from tvm import relax
from tvm.script import relax as R

sys.path.insert(0, str(Path(__file__).resolve().parent))
from export_and_rpc import local_rpc  # noqa: E402  pylint: disable=wrong-import-position


@tvm.script.ir_module
class Net:
    @R.function
    def main(
        x: R.Tensor((1, 8, 16, 16), "float32"),
        w1: R.Tensor((16, 8, 3, 3), "float32"),
        w2: R.Tensor((16, 16, 1, 1), "float32"),
    ):
        with R.dataflow():
            y = R.nn.relu(R.nn.conv2d(x, w1, padding=1))
            z = R.nn.conv2d(y, w2)
            out = R.mean(z, axis=[2, 3], keepdims=True)
            R.output(out)
        return out


def main() -> int:
    """Tune over RPC, compile under the database, compare with LLVM."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tracker", help="host:port of the RPC tracker")
    parser.add_argument("--key", default="android", help="device key at the tracker")
    parser.add_argument("--local-rpc", action="store_true", help="start a local tracker+server")
    parser.add_argument("--trials", type=int, default=3, help="candidates per workload")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.local_rpc:
            with local_rpc("local-opencl", tmp) as tracker:
                return run(Net, tracker, "local-opencl", args.trials, tmp)
        if not args.tracker:
            parser.error("--tracker HOST:PORT (or --local-rpc)")
        return run(Net, args.tracker, args.key, args.trials, tmp)


def run(mod, tracker: str, key: str, trials: int, work_dir: str) -> int:
    """Tune ``mod`` on the device at ``tracker``/``key``, then check the tuned build."""
    host, port = tracker.rsplit(":", 1)
    # [tune-begin]
    from tvm.s_tir.meta_schedule import adreno as msa

    target = tvm.target.Target("qcom/adreno-opencl-texture", host="llvm")
    measure = functools.partial(msa.measure_rpc, host=host, port=int(port), key=key)
    database = msa.tune(
        mod,
        target,
        database=os.path.join(work_dir, "tuning-db"),  # keep this folder: it is the log
        work_dir=os.path.join(work_dir, "tuning-work"),
        measure=measure,
        max_candidates=trials,
    )
    # [tune-end]
    # [apply-begin]
    # Later (another process, the same device): the database applies when it is current.
    database = msa.load_database(os.path.join(work_dir, "tuning-db"), device=None)
    with database:
        executable = tvm.compile(mod, target=target)
    # [apply-end]
    rng = np.random.default_rng(0)
    inputs = [
        rng.uniform(-1, 1, [int(d) for d in p.ty.shape]).astype("float32")
        for p in mod["main"].params
    ]
    ref = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
    expected = ref["main"](*[tvm.runtime.tensor(a) for a in inputs]).numpy()
    if key == "local-opencl":
        dev = tvm.opencl(0)
        vm = relax.VirtualMachine(executable, dev)
        out = vm["main"](*[tvm.runtime.tensor(a, dev) for a in inputs]).numpy()
        np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)
    records = len(database.get_all_tuning_records())
    print(f"ok: {records} tuning records, the tuned build is right")
    return 0


if __name__ == "__main__":
    sys.exit(main())
