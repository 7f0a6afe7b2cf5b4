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
"""Import a TFLite model, compile it for Adreno textures, and compare with the CPU build.

Run by tests/docs/test_examples.py when the ``tflite`` package and ``mediapipe==0.10.21`` are
installed (``ci/requirements-models*.txt``): the model is MediaPipe's BlazeFace face detector,
a 230 KB ``.tflite`` file inside the mediapipe wheel (read as a file; mediapipe itself is not
imported, so it can be installed without its dependencies).
"""

import importlib.util
import sys
from pathlib import Path

import numpy as np

import tvm
from tvm import relax


def blazeface_path() -> Path:
    spec = importlib.util.find_spec("mediapipe")
    if spec is None:
        raise SystemExit("pip install --no-deps mediapipe==0.10.21 (it ships the .tflite file)")
    root = Path(list(spec.submodule_search_locations)[0])
    return root / "modules" / "face_detection" / "face_detection_short_range.tflite"


def main() -> int:
    model_path = blazeface_path()

    # [import-begin]
    import tflite
    from tvm.relax.frontend.tflite import from_tflite

    tfl_model = tflite.Model.GetRootAsModel(model_path.read_bytes(), 0)
    mod = from_tflite(tfl_model)

    target = tvm.target.Target("qcom/adreno-opencl-texture", host="llvm")
    executable = tvm.compile(mod, target=target)
    # [import-end]

    image = np.random.default_rng(0).uniform(-1, 1, (1, 128, 128, 3)).astype("float32")
    dev = tvm.opencl(0)
    outputs = relax.VirtualMachine(executable, dev)["main"](tvm.runtime.tensor(image, dev))
    cpu = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
    expected = cpu["main"](tvm.runtime.tensor(image))
    for got, want in zip(outputs, expected):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-3, atol=1e-3)
    print(f"ok: BlazeFace (TFLite) on {dev.device_name}, {len(outputs)} outputs match the CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
