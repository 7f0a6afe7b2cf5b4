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
# pylint: disable=invalid-name,missing-docstring
"""Tests of tvm.relax.utils.get_static_shape."""

import pytest

import tvm
import tvm.testing
from tvm import relax, tirx
from tvm.relax.utils import get_static_shape


@pytest.mark.parametrize("shape", [(1, 3, 8, 8), (5,), ()])
def test_static_tensor(shape):
    ty = relax.TensorType(shape, "float32")
    assert get_static_shape(ty) == list(shape)
    assert all(isinstance(dim, int) for dim in get_static_shape(ty))


def test_symbolic_dimension():
    n = tirx.Var("n", "int64")
    assert get_static_shape(relax.TensorType((n, 4), "float32")) is None
    assert get_static_shape(relax.TensorType((n * 2, 4), "float32")) is None


def test_unknown_shape():
    assert get_static_shape(relax.TensorType(ndim=2, dtype="float32")) is None
    assert get_static_shape(relax.TensorType(dtype="float32")) is None
    shape_var = relax.Var("s", relax.ShapeType(ndim=2))
    assert get_static_shape(relax.TensorType(shape_var, "float32")) is None


@pytest.mark.parametrize(
    "ty",
    [
        relax.TupleType([relax.TensorType((1,), "float32")]),
        relax.ShapeType([1, 2]),
        tvm.ir.PrimType("int64"),
        relax.ObjectType(),
    ],
)
def test_not_a_tensor(ty):
    assert get_static_shape(ty) is None


def test_type_of_an_expression():
    x = relax.Var("x", relax.TensorType((2, 3), "float16"))
    bb = relax.BlockBuilder()
    assert get_static_shape(bb.normalize(relax.op.permute_dims(x)).ty) == [3, 2]


if __name__ == "__main__":
    tvm.testing.main()
