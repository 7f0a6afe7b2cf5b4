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
"""Import a PyTorch model through ``torch.export``, compile it for Adreno textures, and
compare with PyTorch.

Run by tests/docs/test_examples.py on the host's OpenCL device when ``torch`` is installed.
"""

import sys

import numpy as np
import torch
from torch import nn

import tvm
from tvm import relax
from tvm.relax.frontend.torch import from_exported_program


class Block(nn.Module):
    """A MobileNet-style block: pointwise expand, depthwise 3x3, pointwise project."""

    def __init__(self):
        super().__init__()
        self.expand = nn.Conv2d(8, 32, 1)
        self.depthwise = nn.Conv2d(32, 32, 3, padding=1, groups=32)
        self.project = nn.Conv2d(32, 8, 1)

    def forward(self, x):
        y = torch.relu(self.expand(x))
        y = torch.relu(self.depthwise(y))
        return x + self.project(y)


def main() -> int:
    torch.manual_seed(0)
    model = Block().eval()
    example = torch.rand(1, 8, 32, 32)

    # [import-begin]
    with torch.no_grad():
        exported = torch.export.export(model, (example,))
    # Weights become constants of the Relax module (not function parameters).
    mod = from_exported_program(exported, keep_params_as_input=False)

    target = tvm.target.Target("qcom/adreno-opencl-texture", host="llvm")
    executable = tvm.compile(mod, target=target)
    vm = relax.VirtualMachine(executable, tvm.opencl(0))
    out = vm["main"](tvm.runtime.tensor(example.numpy(), tvm.opencl(0)))
    # [import-end]
    result = (out[0] if type(out).__name__ == "Array" or isinstance(out, tuple) else out).numpy()
    with torch.no_grad():
        expected = model(example).numpy()
    np.testing.assert_allclose(result, expected, rtol=1e-4, atol=1e-4)
    print(f"ok: PyTorch model, max abs error {np.abs(result - expected).max():.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
