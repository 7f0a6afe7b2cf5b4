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
"""Tests of dlight.adreno.LayoutTransform: layout transforms between NCHW, NHWC and NCHW4c
read and write vectors, static or symbolic; other workloads are declined."""

import pytest

import tvm
import tvm.testing
from tvm import relax, te, tirx, topi
from tvm.relax.transform.legalize_ops import adreno as legalize_adreno
from tvm.s_tir import dlight as dl

from adreno_schedule_testing import loops, thread_extents, vectorized_extents

TARGET = tvm.target.Target("qcom/adreno-opencl-texture")


def _legalized_transform(shape, index_map, dtype="float32", adreno=True):
    """The PrimFunc of an R.layout_transform legalized for Adreno (False: generically)."""
    x = relax.Var("x", relax.TensorType(shape, dtype))
    builder = relax.BlockBuilder()
    with builder.function("main", [x]):
        with builder.dataflow():
            out = builder.emit_output(relax.op.layout_transform(x, index_map=index_map))
        builder.emit_func_output(out)
    legalize = {"relax.layout_transform": legalize_adreno.layout_transform} if adreno else {}
    mod = relax.transform.LegalizeOps(legalize)(builder.get())
    (func,) = [f for _, f in mod.functions_items() if isinstance(f, tirx.PrimFunc)]
    return func


def _nchw_to_nchw4c(n, c, h, w):
    return (n, c // 4, h, w, c % 4)


def _nhwc_to_nchw4c(n, h, w, c):
    return (n, c // 4, h, w, c % 4)


def _schedule(func):
    sch = dl.adreno.LayoutTransform().apply(func, TARGET, False)
    return None if sch is None else sch.mod["main"]


def test_nchw_into_texture_writes_whole_pixels():
    """16 x 8 x 8 elements into 4 x 8 x 8 pixels: 256 threads per group, the pixel's 4 lanes
    staged and stored as one vector."""
    func = _schedule(_legalized_transform((1, 16, 8, 8), _nchw_to_nchw4c))
    assert thread_extents(func)["threadIdx.x"] == 256
    assert 4 in vectorized_extents(func)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_nhwc_into_texture_is_scheduled(dtype):
    """The channels are the innermost axis of both tensors (one loop for both vectors)."""
    func = _schedule(_legalized_transform((1, 8, 8, 16), _nhwc_to_nchw4c, dtype))
    assert thread_extents(func)["threadIdx.x"] == 256
    assert 4 in vectorized_extents(func)


def test_symbolic_width_is_scheduled():
    """A dynamic width: a fixed work group, the bound check of the last one from the split."""
    width = tirx.Var("w", "int64")
    func = _schedule(_legalized_transform((1, 16, 8, width), _nchw_to_nchw4c))
    threads = [
        loop
        for loop in loops(func)
        if loop.thread_binding is not None and loop.thread_binding.thread_tag == "threadIdx.x"
    ]
    assert [int(loop.extent) for loop in threads] == [256]


@pytest.mark.parametrize(
    "compute",
    [topi.nn.relu, lambda x: topi.sum(x, axis=[2, 3])],
    ids=["relu", "sum"],
)
def test_other_workloads_are_declined(compute):
    data = te.placeholder((1, 4, 8, 8, 4), "float32", name="x")
    assert _schedule(te.create_prim_func([data, compute(data)])) is None


def test_elementwise_block_named_like_a_layout_transform_is_declined():
    data = te.placeholder((1, 4, 8, 8, 4), "float32", name="x")
    relu = te.compute(data.shape, lambda *i: tvm.te.max(data(*i), 0.0), name="te_layout_transform")
    assert _schedule(te.create_prim_func([data, relu])) is None


def test_transform_without_the_annotation_is_declined():
    """The generic legalization makes the same block, named ``te_layout_transform``, without
    the ``schedule_rule`` annotation that the Adreno legalization puts on it."""
    func = _legalized_transform((1, 16, 8, 8), _nchw_to_nchw4c, adreno=False)
    assert _schedule(func) is None


def test_padding_transform_is_left_to_the_fallback():
    """6 channels into 2 pixels of 4: the pad lanes select the pad value, no annotation."""
    func = _legalized_transform((1, 6, 8, 8), _nchw_to_nchw4c)
    assert _schedule(func) is None


if __name__ == "__main__":
    tvm.testing.main()
