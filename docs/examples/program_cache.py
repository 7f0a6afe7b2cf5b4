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
"""Show the OpenCL program cache at work: a cold process builds every kernel, a warm one
loads the binaries from the cache.

Run by tests/docs/test_examples.py on the host's OpenCL device:

    python docs/examples/program_cache.py

Each "process" below is a fresh Python interpreter that loads an exported model and runs it
once, with ``TVM_OPENCL_CACHE_DIR`` pointing at a temporary folder.
"""

import json
import os
import subprocess
import sys
import tempfile
import textwrap

import tvm
from tvm.script import relax as R

CHILD = textwrap.dedent("""
    import json, sys, time
    import numpy as np
    import tvm
    from tvm import relax

    start = time.perf_counter()
    # [child-begin]
    dev = tvm.opencl(0)
    vm = relax.VirtualMachine(tvm.runtime.load_module(sys.argv[1]), dev)
    x = tvm.runtime.tensor(np.ones((1, 8, 32, 32), "float32"), dev)
    w = tvm.runtime.tensor(np.ones((16, 8, 3, 3), "float32"), dev)
    vm["main"](x, w)
    dev.sync()  # programs built from source are written to the cache at a sync
    stats = tvm.get_global_func("runtime.opencl.program_cache_stats")()
    # [child-end]
    seconds = time.perf_counter() - start
    print(json.dumps({**{k: int(v) for k, v in stats.items()}, "seconds": seconds}))
    """)


@tvm.script.ir_module
class Net:  # pylint: disable=too-few-public-methods
    @R.function
    def main(x: R.Tensor((1, 8, 32, 32), "float32"), w: R.Tensor((16, 8, 3, 3), "float32")):
        with R.dataflow():
            y = R.nn.relu(R.nn.conv2d(x, w, padding=1))
            R.output(y)
        return y


def run_child(lib: str, env: dict) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, lib], env=env, check=True, capture_output=True, text=True
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> int:
    target = tvm.target.Target("qcom/adreno-opencl-texture", host="llvm")
    with tempfile.TemporaryDirectory() as tmp:
        lib = os.path.join(tmp, "net.so")
        tvm.compile(Net, target=target).export_library(lib)

        # [env-begin]
        env = dict(os.environ)
        env["TVM_OPENCL_CACHE_DIR"] = os.path.join(tmp, "tvm-opencl-cache")
        env.pop("TVM_OPENCL_CACHE", None)  # "0", "off" or "false" turn the cache off
        # [env-end]
        # PoCL keeps its own kernel cache too: give it a fresh folder so "cold" is cold.
        env["POCL_CACHE_DIR"] = os.path.join(tmp, "pocl-cache")

        cold = run_child(lib, env)
        warm = run_child(lib, env)
        print(f"cold process: {cold}")
        print(f"warm process: {warm}")
        assert cold["enabled"] == 1 and cold["misses"] > 0 and cold["stores"] == cold["misses"]
        assert warm["hits"] == cold["misses"] and warm["misses"] == 0, warm
        entries = os.listdir(env["TVM_OPENCL_CACHE_DIR"])
        print(
            f"ok: {len(entries)} cache entries; warm run {warm['seconds']:.2f} s "
            f"vs cold {cold['seconds']:.2f} s (including import and load)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
