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
"""Reductions after a texture conv2d: sum, mean, max, min, argmax, argmin over the channel
axis and over the spatial axes, with and without keepdims.

Each case must compile (the channel reductions with keepdims used to fail with "Could not
parse mapping as sum of iterators"), keep the conv2d on textures, and match the float32 LLVM
build on fresh random inputs.  The Adreno reduction rule picks one thread per output for short
reductions and threads sharing an output for long ones; ``test_element_count_switch`` checks
which schedule each side of the threshold gets.
"""

import os
import time

import numpy as np
import pytest

import tvm
from tvm import relax
from tvm import te
from tvm.s_tir.dlight.adreno import Reduction, ReductionConfig

import texture_testing as tt

N, C, H, W = 1, 16, 10, 10


def _conv(nb, shape=(N, C, H, W)):
    return nb.conv2d(nb.input(shape), C, kernel=3)


def _reduce(op, axis, keepdims):
    def _fn(nb):
        return nb.emit(op(_conv(nb), axis=axis, keepdims=keepdims))

    return _fn


def _arg_reduce(op, axis, keepdims):
    def _fn(nb):
        return nb.emit(op(_conv(nb), axis=axis, keepdims=keepdims))

    return _fn


CASES = {}
for _name, _op in [
    ("sum", relax.op.sum),
    ("mean", relax.op.mean),
    ("max", relax.op.max),
    ("min", relax.op.min),
]:
    for _axes_name, _axes in [("c", [1]), ("hw", [2, 3]), ("chw", [1, 2, 3])]:
        for _keep in (False, True):
            CASES[f"{_name}_{_axes_name}{'_keep' if _keep else ''}"] = tt.Case(
                _reduce(_op, _axes, _keep)
            )
for _name, _op in [("argmax", relax.op.argmax), ("argmin", relax.op.argmin)]:
    for _keep in (False, True):
        CASES[f"{_name}_c{'_keep' if _keep else ''}"] = tt.Case(_arg_reduce(_op, 1, _keep))


@pytest.mark.parametrize("case", list(CASES))
def test_compile(case, compile_dtype_mode):
    tt.check_compile(CASES[case], compile_dtype_mode)


@pytest.mark.requires_opencl
@pytest.mark.parametrize("case", list(CASES))
def test_numerics(case, dtype_mode, rng):
    if dtype_mode != "float32" and case.startswith("arg"):
        pytest.skip("argmax/argmin of float16 ties are not comparable with the float32 reference")
    tt.check_numerics(CASES[case].fn, dtype_mode, rng, name=case)


def _global_pool(hw):
    def _fn(nb):
        y = _conv(nb, (1, 16, hw[0], hw[1]))
        return nb.emit(relax.op.nn.adaptive_avg_pool2d(y, output_size=1))

    return _fn


def _pool_kernel(ex):
    kernels = tt.kernel_sources(ex)
    pools = [k for name, k in kernels.items() if "adaptive_avg_pool2d" in name]
    assert len(pools) == 1, sorted(kernels)
    return pools[0]


@pytest.mark.parametrize(
    "hw,shared",
    [
        # 7 x 7 = 49 reduced elements per output: at most the threshold, one thread each.
        ((7, 7), False),
        # 8 x 8 = 64: above it, the threads of a work group share each output.
        ((8, 8), True),
    ],
)
def test_element_count_switch(hw, shared):
    assert hw[0] * hw[1] <= ReductionConfig().max_serial_elements or shared
    mod = tt.build_network(_global_pool(hw), "float32")
    lowered = tt.lower_to_scopes(mod)
    tt.assert_scopes(
        lowered,
        {"adaptive_avg_pool2d": (["global.texture"], ["global"])},
    )
    kernel = _pool_kernel(tt.build_texture(mod))
    assert kernel.reads_image, kernel.body
    uses_local_memory = "__local" in kernel.body and "barrier(" in kernel.body
    assert uses_local_memory == shared, kernel.body


@pytest.mark.requires_opencl
@pytest.mark.parametrize("hw", [(7, 7), (8, 8), (16, 16)])
def test_element_count_switch_numerics(hw, dtype_mode, rng):
    tt.check_numerics(_global_pool(hw), dtype_mode, rng, name=f"global_avg_pool{hw}")


def test_rule_ignores_contractions():
    """A matmul has one reduction block reading two tensors: not a reduction of one tensor."""
    a = te.placeholder((8, 16), name="a")
    b = te.placeholder((16, 8), name="b")
    k = te.reduce_axis((0, 16), name="k")
    c = te.compute((8, 8), lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="c")
    func = te.create_prim_func([a, b, c])
    assert Reduction().apply(func, tt.texture_target(), False) is None


def test_rule_takes_channel_sum():
    x = te.placeholder((1, 4, 6, 6, 4), name="x")
    r1 = te.reduce_axis((0, 4), name="r1")
    r2 = te.reduce_axis((0, 4), name="r2")
    y = te.compute((1, 6, 6), lambda n, h, w: te.sum(x[n, r1, h, w, r2], axis=[r1, r2]), name="y")
    func = te.create_prim_func([x, y])
    assert Reduction().apply(func, tt.texture_target(), False) is not None


@pytest.mark.requires_opencl
@pytest.mark.skipif(
    os.environ.get("TEXTURE_TESTS_MEASURE") != "1", reason="timing run: TEXTURE_TESTS_MEASURE=1"
)
@pytest.mark.parametrize("hw", [(4, 4), (6, 6), (7, 7), (8, 8), (12, 12), (16, 16), (32, 32)])
def test_threshold_timing(hw, monkeypatch):
    """Time the serial and the shared schedule of a global average pool from a texture, to
    place ReductionConfig.max_serial_elements (prints one row of the table)."""
    from tvm.s_tir.dlight.adreno import reduction  # pylint: disable=import-outside-toplevel

    def _fn(nb):
        y = nb.conv2d(nb.input((1, 64, hw[0], hw[1])), 64, kernel=1)
        return nb.emit(relax.op.nn.adaptive_avg_pool2d(y, output_size=1))

    times = {}
    for name, limit in (("serial", 10**9), ("shared", 0)):
        config = ReductionConfig(max_serial_elements=limit)
        monkeypatch.setattr(
            reduction.ReductionConfig, "from_target", staticmethod(lambda t: config)
        )
        mod = tt.build_network(_fn, "float32")
        ex = tt.build_texture(mod)
        dev = tt.tvm_device()
        vm = tvm.relax.VirtualMachine(ex, dev)
        args = [tvm.runtime.tensor(a, dev) for a in tt.random_inputs(mod, np.random.default_rng(0))]
        vm["main"](*args)
        dev.sync()
        samples = []
        for _ in range(15):
            start = time.perf_counter()
            vm["main"](*args)
            dev.sync()
            samples.append(time.perf_counter() - start)
        times[name] = float(np.median(samples)) * 1e3
    print(
        f"reduced={hw[0] * hw[1]} serial_ms={times['serial']:.3f} shared_ms={times['shared']:.3f}"
    )
