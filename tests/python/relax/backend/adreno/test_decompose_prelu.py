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
# pylint: disable=invalid-name,missing-docstring,no-self-argument,not-callable
"""Tests of DecomposePReLU: nn.prelu becomes maximum(x, 0) + alpha * minimum(x, 0)."""

import numpy as np

import tvm
import tvm.testing
from tvm import relax
from tvm.relax.backend.adreno.transform.decompose_prelu import DecomposePReLU
from tvm.script import ir as I
from tvm.script import relax as R


@I.ir_module
class NHWCPReLU:
    @R.function
    def main(
        x: R.Tensor((1, 6, 6, 8), "float32"), a: R.Tensor((8,), "float32")
    ) -> R.Tensor((1, 6, 6, 8), "float32"):
        with R.dataflow():
            y = R.nn.prelu(x, a, axis=3)
            R.output(y)
        return y


def test_slope_is_broadcast_along_the_prelu_axis():
    @I.ir_module
    class Expected:
        @R.function
        def main(
            x: R.Tensor((1, 6, 6, 8), "float32"), a: R.Tensor((8,), "float32")
        ) -> R.Tensor((1, 6, 6, 8), "float32"):
            with R.dataflow():
                alpha = R.reshape(a, R.shape([1, 1, 1, 8]))
                positive = R.maximum(x, R.const(0.0, "float32"))
                negative = R.minimum(x, R.const(0.0, "float32"))
                scaled = R.multiply(alpha, negative)
                y = R.add(positive, scaled)
                R.output(y)
            return y

    tvm.ir.assert_structural_equal(DecomposePReLU()(NHWCPReLU), Expected)


def test_nchw_prelu_of_float16_uses_a_float16_zero():
    @I.ir_module
    class Before:
        @R.function
        def main(
            x: R.Tensor((1, 8, 6, 6), "float16"), a: R.Tensor((8,), "float16")
        ) -> R.Tensor((1, 8, 6, 6), "float16"):
            with R.dataflow():
                y = R.nn.prelu(x, a, axis=1)
                R.output(y)
            return y

    @I.ir_module
    class Expected:
        @R.function
        def main(
            x: R.Tensor((1, 8, 6, 6), "float16"), a: R.Tensor((8,), "float16")
        ) -> R.Tensor((1, 8, 6, 6), "float16"):
            with R.dataflow():
                alpha = R.reshape(a, R.shape([1, 8, 1, 1]))
                positive = R.maximum(x, R.const(0.0, "float16"))
                negative = R.minimum(x, R.const(0.0, "float16"))
                scaled = R.multiply(alpha, negative)
                y = R.add(positive, scaled)
                R.output(y)
            return y

    tvm.ir.assert_structural_equal(DecomposePReLU()(Before), Expected)


def test_decomposed_prelu_gives_the_same_values():
    rng = np.random.default_rng()
    data = rng.uniform(-1.0, 1.0, size=(1, 6, 6, 8)).astype("float32")
    slope = rng.uniform(-0.5, 0.5, size=(8,)).astype("float32")

    def _run(mod):
        vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
        return vm["main"](tvm.runtime.tensor(data), tvm.runtime.tensor(slope)).numpy()

    expected = np.where(data > 0, data, data * slope)
    np.testing.assert_array_equal(_run(DecomposePReLU()(NHWCPReLU)), expected)
    np.testing.assert_array_equal(_run(NHWCPReLU), expected)


if __name__ == "__main__":
    tvm.testing.main()
