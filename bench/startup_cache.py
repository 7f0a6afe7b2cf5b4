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
"""Start-up benchmark of the OpenCL program cache: a ResNet-18-shaped network, fresh processes.

Builds the network once for the generic OpenCL target (exported next to --work-dir), then
runs N fresh processes per mode and measures load + first result (and the whole process):
  cold: empty TVM program cache and empty PoCL kernel cache
  warm: the TVM program cache filled by a previous process, PoCL kernel cache still empty
Prints the medians and the cold/warm ratio (the target on PoCL is >= 10x).

    python bench/startup_cache.py [--work-dir build/bench] [--repeat 3] [--image-size 112]
"""

import argparse
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

CHILD = r"""
import ctypes, json, os, sys, time
t0 = time.perf_counter()
import numpy as np
import tvm
if not tvm.runtime.enabled("opencl"):
    ctypes.CDLL(os.path.join(os.path.dirname(tvm.__file__), "lib", "libtvm_runtime_opencl.so"))
from tvm.runtime.vm import VirtualMachine
t1 = time.perf_counter()
lib = tvm.runtime.load_module(sys.argv[1])
dev = tvm.opencl(0)
vm = VirtualMachine(lib, dev)
size = int(sys.argv[2])
x = np.random.default_rng(0).random((1, 3, size, size), dtype="float32")
out = vm["main"](tvm.runtime.tensor(x, dev)).numpy()
t2 = time.perf_counter()
stats = tvm.get_global_func("runtime.opencl.program_cache_stats")()
print("RESULT " + json.dumps({"import_s": t1 - t0, "first_result_s": t2 - t1,
      "checksum": float(out.sum()), "stats": {k: int(v) for k, v in stats.items()}}))
"""


def build_model(path: pathlib.Path, image_size: int) -> None:
    """ResNet-18 layer structure (conv+bias+relu, basic blocks 2-2-2-2, 64..512 channels)."""
    import tvm  # pylint: disable=import-outside-toplevel
    from tvm.relax.frontend import nn  # pylint: disable=import-outside-toplevel

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            self.conv1 = nn.Conv2D(cin, cout, 3, stride=stride, padding=1, bias=True)
            self.conv2 = nn.Conv2D(cout, cout, 3, padding=1, bias=True)
            self.down = nn.Conv2D(cin, cout, 1, stride=stride, bias=True) if stride != 1 or cin != cout else None

        def forward(self, x):
            y = nn.relu(self.conv1(x))
            y = self.conv2(y)
            return nn.relu(y + (self.down(x) if self.down is not None else x))

    class ResNet18(nn.Module):
        def __init__(self):
            self.stem = nn.Conv2D(3, 64, 7, stride=2, padding=3, bias=True)
            chans = [(64, 64, 1), (64, 64, 1), (64, 128, 2), (128, 128, 1),
                     (128, 256, 2), (256, 256, 1), (256, 512, 2), (512, 512, 1)]
            self.blocks = nn.ModuleList([Block(*c) for c in chans])
            self.fc = nn.Linear(512, 1000)

        def forward(self, x):
            x = nn.relu(self.stem(x))
            for blk in self.blocks:
                x = blk(x)
            x = nn.op.sum(x, axis=[2, 3])  # global pooling (the scale folds into fc)
            return self.fc(x)

    mod, params = ResNet18().export_tvm(
        spec={"forward": {"x": nn.spec.Tensor((1, 3, image_size, image_size), "float32")}}
    )
    # Bind random weights as constants so the exported library is self-contained.
    import numpy as np  # pylint: disable=import-outside-toplevel
    from tvm import relax  # pylint: disable=import-outside-toplevel

    rng = np.random.default_rng(0)
    bound = {name: tvm.runtime.tensor((rng.random(p.shape, dtype="float32") - 0.5) * 0.1)
             for name, p in params}
    mod = relax.transform.BindParams("forward", bound)(mod)
    mod = relax.transform.RemoveUnusedParameters()(mod) if hasattr(relax.transform, "RemoveUnusedParameters") else mod
    fwd = mod["forward"]
    mod = tvm.IRModule({"main": fwd.with_attr("global_symbol", "main")})
    exe = tvm.compile(mod, target=tvm.target.Target("opencl", host="llvm"))
    exe.export_library(str(path))


def run_child(model: pathlib.Path, image_size: int, cache_dir: pathlib.Path) -> dict:
    with tempfile.TemporaryDirectory(prefix="pocl-") as pocl:
        env = dict(os.environ, TVM_OPENCL_CACHE_DIR=str(cache_dir), POCL_CACHE_DIR=pocl,
                   TVM_USE_RUNTIME_LIB="1")
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", CHILD, str(model), str(image_size)], env=env,
                              capture_output=True, text=True, check=False)
        total = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"child failed:\n{proc.stderr[-3000:]}")
    line = [l for l in proc.stdout.splitlines() if l.startswith("RESULT ")][-1]
    result = json.loads(line[len("RESULT "):])
    result["process_s"] = total
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work-dir", type=pathlib.Path, default=pathlib.Path("build/bench"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--image-size", type=int, default=112)
    parser.add_argument("--rebuild", action="store_true")
    args = parser.parse_args()
    args.work_dir.mkdir(parents=True, exist_ok=True)
    model = args.work_dir / f"resnet18_{args.image_size}_opencl.so"
    if args.rebuild or not model.is_file():
        t = time.perf_counter()
        build_model(model, args.image_size)
        print(f"built {model} in {time.perf_counter() - t:.1f} s")
    cold, warm = [], []
    for i in range(args.repeat):
        cache = args.work_dir / f"cache-{i}"
        shutil.rmtree(cache, ignore_errors=True)
        c = run_child(model, args.image_size, cache)
        w = run_child(model, args.image_size, cache)
        assert abs(c["checksum"] - w["checksum"]) <= 1e-3 * max(1.0, abs(c["checksum"])), (c, w)
        assert w["stats"]["misses"] == 0, w["stats"]
        cold.append(c)
        warm.append(w)
        print(f"run {i}: cold {c['first_result_s']:.2f} s ({c['stats']['stores']} programs stored), "
              f"warm {w['first_result_s']:.2f} s ({w['stats']['hits']} hits); "
              f"process {c['process_s']:.1f} s vs {w['process_s']:.1f} s")
    cold_s = statistics.median(r["first_result_s"] for r in cold)
    warm_s = statistics.median(r["first_result_s"] for r in warm)
    cold_p = statistics.median(r["process_s"] for r in cold)
    warm_p = statistics.median(r["process_s"] for r in warm)
    print(f"load + first result: cold {cold_s:.2f} s, warm {warm_s:.2f} s, ratio {cold_s / warm_s:.1f}x")
    print(f"whole process (incl. import tvm): cold {cold_p:.1f} s, warm {warm_p:.1f} s, "
          f"ratio {cold_p / warm_p:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
