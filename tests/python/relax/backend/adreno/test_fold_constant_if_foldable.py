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
"""Tests of FoldConstantIfFoldable: it gives FoldConstant's module, and runs FoldConstant only
on a module with something to fold."""

import numpy as np
import pytest

import tvm
import tvm.testing
import tvm_ffi
from tvm import relax
from tvm.relax.backend.adreno.transform.fold_constant_if_foldable import FoldConstantIfFoldable
from tvm.script import ir as I
from tvm.script import relax as R


def _bound(mod, **params):
    """``mod`` with the parameters of ``main`` named in ``params`` bound to those arrays."""
    return relax.transform.BindParams("main", params)(mod)


@tvm.instrument.pass_instrument
class _PassNames:
    """Records the name of every pass run, nested passes included."""

    def __init__(self):
        self.names = []

    def run_before_pass(self, _mod, info):
        self.names.append(info.name)


def _fold_if_foldable(mod):
    """FoldConstantIfFoldable of ``mod``, and whether it ran FoldConstant."""
    record = _PassNames()
    with tvm.transform.PassContext(instruments=[record]):
        out = FoldConstantIfFoldable()(mod)
    return out, "FoldConstant" in record.names


@I.ir_module
class _WeightsAsParameters:
    @R.function
    def main(x: R.Tensor((1, 3, 4, 4), "float32"), w: R.Tensor((4, 3, 1, 1), "float32")):
        with R.dataflow():
            wt = R.layout_transform(w, index_map=lambda o, i, h, ww: (o // 4, i, h, ww, o % 4))
            y = R.nn.conv2d(x, w)
            z = R.add(y, R.const(1.0, "float32"))
            unused = R.multiply(x, x)  # pylint: disable=unused-variable
            R.output(z, wt)
        return z


def test_fold_constant_if_foldable_skips_a_module_of_parameters():
    # Every call takes a variable: FoldConstant would legalize each and fold nothing; only
    # the unused binding goes.
    out, ran = _fold_if_foldable(_WeightsAsParameters)
    assert not ran
    tvm.ir.assert_structural_equal(out, relax.transform.FoldConstant()(_WeightsAsParameters))
    assert "multiply" not in out.script()


@pytest.mark.parametrize(
    "case",
    ["bound_weight", "zeros", "constant_binding", "shape_binding"],
)
def test_fold_constant_if_foldable_is_fold_constant_where_something_folds(case):
    if case == "bound_weight":
        mod = _bound(
            _WeightsAsParameters,
            w=np.random.default_rng().standard_normal((4, 3, 1, 1)).astype("float32"),
        )
    elif case == "zeros":

        @I.ir_module
        class mod:
            @R.function
            def main(x: R.Tensor((2, 3), "float32")):
                with R.dataflow():
                    y = R.add(x, R.zeros((2, 3), "float32"))
                    R.output(y)
                return y

    elif case == "constant_binding":

        @I.ir_module
        class mod:
            @R.function
            def main(x: R.Tensor((2, 3), "float32")):
                with R.dataflow():
                    c = R.const(np.ones((2, 3), "float32"))
                    y = R.add(x, c)
                    R.output(y)
                return y

    else:

        @I.ir_module
        class mod:
            @R.function
            def main(x: R.Tensor((2, 3), "float32")):
                with R.dataflow():
                    s = R.shape([3, 2])
                    y = R.reshape(x, s)
                    R.output(y)
                return y

    out, ran = _fold_if_foldable(mod)
    assert ran
    expected = relax.transform.FoldConstant()(mod)
    assert not tvm_ffi.structural_equal(expected, mod)  # FoldConstant has work here
    tvm.ir.assert_structural_equal(out, expected)


if __name__ == "__main__":
    tvm.testing.main()
