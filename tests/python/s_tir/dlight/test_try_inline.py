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
"""Tests of dlight's try_inline: a reduction over unit-extent windows keeps its consumer.

normalize_prim_func drops reduction iterators of extent 1 (a 1x1 max pooling, an FPN's
stride-2 downsampling) and keeps the block's init, so reverse_compute_inline took the block
for a spatial one and folded the consumer into both the init and the update: a scale after
the pooling became ``init * s`` then ``max(acc, x) * s``, and gpu.Fallback gave garbage
for a negative ``s``.
"""

import numpy as np
import pytest

import tvm
import tvm.testing
from tvm import s_tir
from tvm.s_tir import dlight as dl
from tvm.s_tir.dlight.analysis import normalize_prim_func
from tvm.script import tirx as T

_LOWEST = T.float32(-3.4028234663852886e38)


@T.prim_func(s_tir=True)
def pool_1x1_then_scale(
    x: T.Buffer((1, 8, 6, 6), "float32"),
    s: T.Buffer((1,), "float32"),
    y: T.Buffer((1, 8, 3, 3), "float32"),
):
    T.func_attr({"tirx.noalias": True})
    pool = T.sblock_alloc_buffer((1, 8, 3, 3))
    for n, c, h, w, rh, rw in T.grid(1, 8, 3, 3, 1, 1):
        with T.sblock("pool"):
            vn, vc, vh, vw, vrh, vrw = T.axis.remap("SSSSRR", [n, c, h, w, rh, rw])
            with T.init():
                pool[vn, vc, vh, vw] = _LOWEST
            pool[vn, vc, vh, vw] = T.max(
                pool[vn, vc, vh, vw], x[vn, vc, vh * 2 + vrh, vw * 2 + vrw]
            )
    for n, c, h, w in T.grid(1, 8, 3, 3):
        with T.sblock("scale"):
            vn, vc, vh, vw = T.axis.remap("SSSS", [n, c, h, w])
            y[vn, vc, vh, vw] = pool[vn, vc, vh, vw] * s[0]


def test_consumer_is_not_inlined_into_a_unit_reduction():
    sch = s_tir.Schedule(pool_1x1_then_scale)
    blocks = normalize_prim_func(sch)
    pool = sch.get(sch.get_sblock("pool"))
    # The root: the unit reduction iterators are gone, the init is not.
    assert pool.init is not None
    assert all(iv.iter_type == tvm.tirx.IterVar.DataPar for iv in pool.iter_vars)
    remaining = dl.try_inline(sch, blocks)
    assert sorted(block.name for block in remaining) == ["pool", "scale"]
    init = sch.get(sch.get_sblock("pool")).init
    tvm.ir.assert_structural_equal(init.value, tvm.tirx.const(_LOWEST.value, "float32"))


@pytest.mark.skipif(not tvm.opencl(0).exist, reason="needs an OpenCL device")
def test_gpu_fallback_scales_a_unit_reduction_once():
    target = tvm.target.Target("opencl", host="llvm")
    mod = tvm.IRModule({"main": pool_1x1_then_scale})
    with target:
        mod = dl.ApplyDefaultSchedule(dl.gpu.Fallback())(mod)
    lib = tvm.compile(mod, target=target)
    rng = np.random.default_rng()
    x = rng.uniform(-1.0, 1.0, size=(1, 8, 6, 6)).astype("float32")
    # Negative, as in a min pooling written -max_pool(-x): the folded init, the lowest float
    # times s, is then the largest float and wins every max.
    s = -rng.uniform(0.5, 2.0, size=(1,)).astype("float32")
    device = tvm.opencl(0)
    y = tvm.runtime.tensor(np.zeros((1, 8, 3, 3), "float32"), device)
    lib["main"](tvm.runtime.tensor(x, device), tvm.runtime.tensor(s, device), y)
    np.testing.assert_allclose(y.numpy(), x[:, :, ::2, ::2] * s[0], rtol=1e-6)


if __name__ == "__main__":
    tvm.testing.main()
