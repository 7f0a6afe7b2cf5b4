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
"""Tests of KeepTrainingBatchNorm: a training-mode batch norm becomes an inference-mode one of
the batch's statistics, and keeps its meaning through DecomposeOpsForInference."""

import numpy as np

import tvm
import tvm.testing
from tvm import relax
from tvm.relax.backend.adreno.transform.keep_training_batch_norm import KeepTrainingBatchNorm
from tvm.script import ir as I
from tvm.script import relax as R

_BN_OUT = R.Tuple(
    R.Tensor((2, 3, 4, 4), "float32"), R.Tensor((3,), "float32"), R.Tensor((3,), "float32")
)


def _batch_norm_module(training: bool):
    @I.ir_module
    class Module:
        @R.function
        def main(
            x: R.Tensor((2, 3, 4, 4), "float32"),
            g: R.Tensor((3,), "float32"),
            b: R.Tensor((3,), "float32"),
            m: R.Tensor((3,), "float32"),
            v: R.Tensor((3,), "float32"),
        ) -> _BN_OUT:
            with R.dataflow():
                y = R.nn.batch_norm(x, g, b, m, v, axis=1, momentum=0.25, training=training)
                R.output(y)
            return y

    return Module


def test_training_batch_norm_uses_the_batch_statistics():
    @I.ir_module
    class Expected:
        @R.function
        def main(
            x: R.Tensor((2, 3, 4, 4), "float32"),
            g: R.Tensor((3,), "float32"),
            b: R.Tensor((3,), "float32"),
            m: R.Tensor((3,), "float32"),
            v: R.Tensor((3,), "float32"),
        ) -> _BN_OUT:
            with R.dataflow():
                mean = R.mean(x, axis=[0, 2, 3])
                var = R.variance(x, axis=[0, 2, 3])
                bn = R.nn.batch_norm(x, g, b, mean, var, axis=1, momentum=0.25, training=False)
                out = bn[0]
                kept_mean = R.multiply(m, R.const(0.75, "float32"))
                new_mean = R.add(kept_mean, R.multiply(mean, R.const(0.25, "float32")))
                kept_var = R.multiply(v, R.const(0.75, "float32"))
                new_var = R.add(kept_var, R.multiply(var, R.const(0.25, "float32")))
                y = (out, new_mean, new_var)
                R.output(y)
            return y

    after = KeepTrainingBatchNorm()(_batch_norm_module(training=True))
    tvm.ir.assert_structural_equal(after, Expected)


def test_inference_batch_norm_is_unchanged():
    before = _batch_norm_module(training=False)
    tvm.ir.assert_structural_equal(KeepTrainingBatchNorm()(before), before)


def _run(mod, args):
    vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
    return [out.numpy() for out in vm["main"](*[tvm.runtime.tensor(a) for a in args])]


def test_decomposed_for_inference_it_computes_the_training_batch_norm():
    """LLVM: the default legalization of the training-mode call (topi) against the rewrite
    followed by DecomposeOpsForInference, which alone would use the moving statistics."""
    rng = np.random.default_rng()
    args = [rng.normal(1.5, 2.0, (2, 3, 4, 4)).astype("float32")]
    args += [rng.uniform(0.5, 2.0, 3).astype("float32") for _ in range(4)]
    before = _batch_norm_module(training=True)
    desired = _run(before, args)
    rewritten = relax.transform.DecomposeOpsForInference()(KeepTrainingBatchNorm()(before))
    for actual, expected in zip(_run(rewritten, args), desired):
        np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-5)
    unguarded = _run(relax.transform.DecomposeOpsForInference()(before), args)
    assert not np.allclose(unguarded[0], desired[0], rtol=1e-3, atol=1e-3)


if __name__ == "__main__":
    tvm.testing.main()
