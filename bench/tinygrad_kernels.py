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
"""How many kernels tinygrad's JIT replays per call of an ONNX network (the peers' launches).

    DEV=CL IMAGE=0|2 python bench/tinygrad_kernels.py MODEL.onnx INPUT.npy

Runs the network as ``../shared/peers/tinygrad_bench.py`` does (``OnnxRunner`` under
``TinyJit``, four calls: the JIT captures on the second) and prints one JSON line: the calls of
the captured program that one replay runs, by the kind of call (``PROGRAM``: a kernel launch,
``COPY``: a buffer copy; a graph batch is opened and its calls counted). The count is a
property of the captured graph, not of the device's speed; run it in a venv with tinygrad
(tinygrad 0.14.0 for the committed ``bench/peers/*-tinygrad-kernels.csv``) and the ONNX files
of ``../shared/peers/gen_onnx.py``.
"""

import collections
import json
import os
import sys

import numpy as np


def replayed_calls(calls, kinds: collections.Counter) -> collections.Counter:
    """Count ``calls`` (a captured program's CALL UOps) by the op of what each calls; a graph
    batch (a ``CUSTOM_FUNCTION`` named ``graph``) counts the calls it holds."""
    from tinygrad.uop.ops import Ops  # pylint: disable=import-outside-toplevel,import-error

    for call in calls:
        func = call.src[0]
        if func.op is Ops.CUSTOM_FUNCTION and func.arg == "graph":
            replayed_calls(func.src[0].src, kinds)
        else:
            kinds[func.op.name] += 1
    return kinds


def main() -> int:
    """Capture the network's JIT and print its replayed calls as JSON."""
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[2].strip())
        return 2
    from importlib.metadata import version  # pylint: disable=import-outside-toplevel

    # pylint: disable=import-outside-toplevel,import-error
    from tinygrad import Device, Tensor, TinyJit
    from tinygrad.nn.onnx import OnnxRunner

    # pylint: enable=import-outside-toplevel,import-error

    runner = OnnxRunner(sys.argv[1])
    name, out_name = next(iter(runner.graph_inputs)), runner.graph_outputs[0]

    @TinyJit
    def run(inp):
        return runner({name: inp})[out_name].realize()

    image = Tensor(np.load(sys.argv[2]).astype(np.float32)).realize()
    for _ in range(4):
        run(image)
    device = Device[Device.DEFAULT]
    device.synchronize()
    kinds = replayed_calls(run.captured.linear.src, collections.Counter())
    print(
        json.dumps(
            {
                "model": os.path.basename(sys.argv[1]),
                "tinygrad": version("tinygrad"),
                "device": Device.DEFAULT,
                "device_name": getattr(device, "device_name", ""),
                "image": os.environ.get("IMAGE", "0"),
                "kernels": kinds.get("PROGRAM", 0),
                "calls": dict(kinds),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
