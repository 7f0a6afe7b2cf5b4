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
"""Tests of dlight.adreno.SymbolicShapeFallback: PrimFuncs with symbolic shapes get the generic
GPU schedules, static ones are left to the Adreno rules."""

import pytest

import tvm
import tvm.testing
from tvm import te, tirx, topi
from tvm.s_tir import dlight as dl

TARGET = tvm.target.Target("qcom/adreno-opencl-texture")


def _prim_func(compute, shape):
    data = te.placeholder(shape, "float32", name="x")
    return te.create_prim_func([data, compute(data)])


def _symbolic_shape():
    return (1, 16, tirx.Var("h", "int64"), tirx.Var("w", "int64"))


@pytest.mark.parametrize(
    "compute, generic",
    [
        (topi.nn.relu, dl.gpu.Fallback),
        (lambda x: topi.sum(x, axis=[2, 3]), dl.gpu.Fallback),
    ],
    ids=["relu", "sum"],
)
def test_symbolic_shape_gets_the_generic_schedule(compute, generic):
    func = _prim_func(compute, _symbolic_shape())
    with TARGET:
        ours = dl.adreno.SymbolicShapeFallback().apply(func, TARGET, False)
        expected = generic().apply(func, TARGET, False)
    assert ours is not None and expected is not None
    tvm.ir.assert_structural_equal(ours.mod, expected.mod)


@pytest.mark.parametrize(
    "compute",
    [topi.nn.relu, lambda x: topi.sum(x, axis=[2, 3])],
    ids=["relu", "sum"],
)
def test_static_shapes_are_declined(compute):
    func = _prim_func(compute, (1, 16, 8, 8))
    assert dl.adreno.SymbolicShapeFallback().apply(func, TARGET, False) is None


def test_texture_rules_are_not_applied_to_other_targets():
    func = _prim_func(topi.nn.relu, _symbolic_shape())
    cuda = tvm.target.Target("cuda")
    assert dl.adreno.SymbolicShapeFallback().apply(func, cuda, False) is None


if __name__ == "__main__":
    tvm.testing.main()
