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

import numpy as np
import pytest
import tvm_ffi

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


def _oihw_to_oihw4o(o, i, h, w):
    return (o // 4, i, h, w, o % 4)


def _schedule(func):
    sch = dl.adreno.LayoutTransform().apply(func, TARGET, False)
    return None if sch is None else sch.mod["main"]


def _is_true(predicate):
    return isinstance(predicate, tirx.IntImm) and predicate.value == 1


def _bound_checks(func):
    """The predicates of the blocks of ``func`` that are not constant true."""
    found = []
    tvm_ffi.structural_walk(
        func,
        [
            (
                tvm.s_tir.SBlockRealize,
                lambda r: None if _is_true(r.predicate) else found.append(r),
            )
        ],
    )
    return found


def test_nchw_into_texture_writes_whole_pixels():
    """16 x 32 x 32 elements into 4 x 32 x 32 pixels: groups of 256 threads, each thread
    reading 4 columns of each of 4 channels and storing 4 pixels of 4 lanes as vectors."""
    func = _schedule(_legalized_transform((1, 16, 32, 32), _nchw_to_nchw4c))
    assert thread_extents(func) == {"blockIdx.x": 4, "threadIdx.x": 256}
    assert 4 in vectorized_extents(func)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_nhwc_into_texture_is_scheduled(dtype):
    """The channels are the innermost axis of both tensors (one loop for both vectors)."""
    func = _schedule(_legalized_transform((1, 8, 8, 16), _nhwc_to_nchw4c, dtype))
    assert thread_extents(func)["threadIdx.x"] == 256
    assert 4 in vectorized_extents(func)


@pytest.mark.parametrize(
    "shape, group",
    [
        ((32, 3, 3, 3), 216),  # 8 x 3 x 3 x 3 pixels: one group of them all
        ((32, 4, 3, 3), 144),  # 288 pixels: two groups of 144
        ((64, 5, 3, 3), 240),  # 720 pixels: three groups of 240
    ],
)
def test_weight_transform_groups_divide_the_pixels(shape, group):
    """Work groups that divide the output pixels: no bound check in the kernel."""
    func = _schedule(_legalized_transform(shape, _oihw_to_oihw4o))
    assert thread_extents(func)["threadIdx.x"] == group
    assert not _bound_checks(func)


def test_pixels_without_a_divisor_keep_the_bound_check():
    """263 pixels (a prime): groups of 256, the last one checked."""
    func = _schedule(_legalized_transform((1, 4, 263, 1), _nchw_to_nchw4c))
    assert thread_extents(func)["threadIdx.x"] == 256
    assert _bound_checks(func)


@pytest.mark.skipif(not tvm.opencl(0).exist, reason="needs an OpenCL device")
@pytest.mark.parametrize("shape", [(32, 4, 3, 3), (4, 1, 263, 1)], ids=["divided", "checked"])
def test_scheduled_transform_matches_numpy(shape):
    """Whole groups and a checked last group move every element where the index map says."""
    func = _schedule(_legalized_transform(shape, _oihw_to_oihw4o))
    func = func.with_attr("global_symbol", "main")
    lib = tvm.compile(tvm.IRModule({"main": func}), target=tvm.target.Target("opencl", "llvm"))
    device = tvm.opencl(0)
    data = np.random.uniform(-1, 1, shape).astype("float32")
    expected = data.reshape(shape[0] // 4, 4, *shape[1:]).transpose(0, 2, 3, 4, 1)
    out = tvm.runtime.empty(expected.shape, "float32", device)
    lib["main"](tvm.runtime.tensor(data, device), out)
    np.testing.assert_array_equal(out.numpy(), expected)


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
