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
# pylint: disable=invalid-name,missing-docstring,no-self-argument
"""What the OpenCL runtime tests share: the model they compile (three kernels, an add, a row
sum and a multiply, over two 4x64 inputs) with its numpy reference, and a fresh Python process
to run a script in (a device selection or a cache happens once per process)."""

import os
import subprocess
import sys

from tvm.script import ir as I
from tvm.script import relax as R


@I.ir_module
class ElementwiseChain:  # pylint: disable=too-few-public-methods
    @R.function
    def main(x: R.Tensor((4, 64), "float32"), y: R.Tensor((4, 64), "float32")):
        with R.dataflow():
            z = R.add(x, y)
            s = R.sum(z, axis=1, keepdims=True)
            o = R.multiply(z, s)
            R.output(o)
        return o


def elementwise_chain_reference(x, y):
    """What ``ElementwiseChain`` computes, in numpy."""
    z = x + y
    return z * z.sum(axis=1, keepdims=True)


def run_python(args, env=None, cwd=None) -> subprocess.CompletedProcess:
    """Run ``python *args`` in a new process with ``os.environ`` updated by ``env`` (a None
    value removes the variable); assert that it exits with 0, showing the end of its stderr."""
    merged = dict(os.environ, **(env or {}))
    proc = subprocess.run(
        [sys.executable, *args],
        env={k: v for k, v in merged.items() if v is not None},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=cwd,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc
