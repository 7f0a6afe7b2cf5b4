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
"""Tests of dlight.adreno.VaryingWindowPool2D: pooling whose window changes from output to
output (adaptive pooling that does not divide the input), and the workloads of the other rules
it declines."""

import pytest

import tvm
import tvm.testing
from tvm import topi
from tvm.s_tir import dlight as dl

from adreno_schedule_testing import prim_func_of, thread_extents, vectorized_extents

TARGET = tvm.target.Target("qcom/adreno-opencl-texture")


def _schedule(func):
    sch = dl.adreno.VaryingWindowPool2D().apply(func, TARGET, False)
    return None if sch is None else sch.mod["main"]


def _adaptive(kind, shape=(1, 4, 7, 7, 4), layout="NCHW4c"):
    return prim_func_of(lambda x: topi.nn.adaptive_pool(x, (3, 3), kind, layout=layout), shape)


@pytest.mark.parametrize("kind", ["avg", "max"])
def test_varying_windows_are_one_thread_per_output_pixel(kind):
    """7x7 to 3x3: 4 x 3 x 3 output pixels on threads, the 4 lanes a vector in the window
    reduction and in the store."""
    func = _schedule(_adaptive(kind))
    assert thread_extents(func) == {"blockIdx.x": 1, "threadIdx.x": 64}
    assert vectorized_extents(func) == [4, 4]


def test_unpacked_varying_windows_have_no_lane_vector():
    func = _schedule(_adaptive("avg", shape=(1, 16, 7, 7), layout="NCHW"))
    assert thread_extents(func) == {"blockIdx.x": 3, "threadIdx.x": 64}
    assert vectorized_extents(func) == []


def test_value_read_twice_after_the_window_is_inlined_forwards():
    """A PReLU after the pooling reads the pooled value twice, so it cannot be inlined
    backwards; it is inlined forwards into its reader, which stays the one epilogue, and the
    pooling keeps one thread per output pixel with the lanes a vector."""

    def prelu_after_pool(x):
        pooled = topi.nn.adaptive_pool(x, (3, 3), "max", layout="NCHW4c")
        negative = topi.multiply(topi.minimum(pooled, 0.0), 0.25)
        return topi.add(topi.maximum(pooled, 0.0), negative)

    func = _schedule(prim_func_of(prelu_after_pool, (1, 4, 7, 7, 4)))
    assert func is not None
    assert thread_extents(func) == {"blockIdx.x": 1, "threadIdx.x": 64}
    assert vectorized_extents(func) == [4, 4]


@pytest.mark.parametrize(
    "compute",
    [
        lambda x: topi.nn.global_pool(x, "avg", layout="NCHW4c"),
        lambda x: topi.nn.adaptive_pool(x, (4, 4), "avg", layout="NCHW4c"),
        lambda x: topi.nn.pool2d(x, (3, 3), (1, 1), (1, 1), (1, 1, 1, 1), "max", layout="NCHW4c"),
        lambda x: topi.sum(x, axis=[1, 4]),
    ],
    ids=["global_pool", "adaptive_dividing", "max_pool", "sum"],
)
def test_fixed_window_reductions_are_declined(compute):
    """One window for every output: dl.adreno.Reduction's workloads."""
    assert _schedule(prim_func_of(compute)) is None


def test_elementwise_and_layout_transform_are_declined():
    assert _schedule(prim_func_of(topi.nn.relu)) is None
    assert _schedule(prim_func_of(lambda x: topi.layout_transform(x, "NCHW4c", "NCHW"))) is None


if __name__ == "__main__":
    tvm.testing.main()
