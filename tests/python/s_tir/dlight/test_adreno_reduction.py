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
"""Tests of dlight.adreno.Reduction: one thread per output for short reductions, threads
sharing an output for long ones, pixels of packed tensors as vectors; the workloads of the
other Adreno rules are declined."""

import pytest
import tvm_ffi

import tvm
import tvm.testing
from tvm import s_tir, te, tirx, topi
from tvm.s_tir import dlight as dl
from tvm.relax.backend.adreno.transform import PackChannelArgReduce
from tvm.s_tir.dlight.adreno import ReductionConfig
from tvm.s_tir.dlight.adreno.reduction import reduces_one_tensor
from tvm.script import ir as I
from tvm.script import relax as R

from adreno_schedule_testing import PACKED, loops, prim_func_of, thread_extents, vectorized_extents

TARGET = tvm.target.Target("qcom/adreno-opencl-texture")


def _schedule(func, config=None):
    sch = dl.adreno.Reduction(config).apply(func, TARGET, False)
    return None if sch is None else sch.mod["main"]


def _max_pool(x):
    return topi.nn.pool2d(x, (3, 3), (1, 1), (1, 1), (1, 1, 1, 1), "max", layout="NCHW4c")


def test_short_window_is_one_thread_per_output_pixel():
    """A 3x3 window (9 elements): 4 x 8 x 8 output pixels on threads, 64 per work group, the
    4 lanes of a pixel as one vector in the accumulation and the store."""
    func = _schedule(prim_func_of(_max_pool))
    assert thread_extents(func) == {"blockIdx.x": 4, "threadIdx.x": 64}
    assert 4 in vectorized_extents(func)


def test_long_reduction_shares_an_output_between_threads():
    """Global average pooling reduces 64 elements per output: one work group per output pixel
    (4 of them), its 64 threads split the reduction."""
    func = _schedule(prim_func_of(lambda x: topi.nn.global_pool(x, "avg", layout="NCHW4c")))
    assert thread_extents(func) == {"blockIdx.x": 4, "threadIdx.x": 64}


@pytest.mark.parametrize("max_serial_elements, groups", [(64, 1), (8, 4)])
def test_switch_between_schedules_follows_the_config(max_serial_elements, groups):
    """64 reduced elements per output pixel, 4 pixels: serial (the 4 pixels on one work group)
    when the config allows 64, split (one work group per pixel) otherwise."""
    config = ReductionConfig(max_serial_elements=max_serial_elements)
    func = _schedule(prim_func_of(lambda x: topi.sum(x, axis=[2, 3])), config)
    assert thread_extents(func) == {"blockIdx.x": groups, "threadIdx.x": 64}


def test_config_is_bounded_by_the_target_thread_limit():
    small = tvm.target.Target(
        {
            "kind": "opencl",
            "device": "adreno",
            "keys": ["adreno", "opencl", "gpu", "texture"],
            "max_num_threads": 32,
        }
    )
    config = ReductionConfig.from_target(small)
    assert (config.serial_threads, config.split_threads) == (32, 32)


def test_packed_channel_argmax_is_scheduled():
    """The argmax of PackChannelArgReduce: a tuple reduction over both packed channel axes."""

    @I.ir_module
    class ArgmaxOverChannels:
        @R.function
        def main(x: R.Tensor((1, 2, 3, 3, 4), "float32")) -> R.Tensor((1, 3, 3), "int64"):
            with R.dataflow():
                nchw = R.layout_transform(x, index_map=lambda n, c, h, w, l: (n, c * 4 + l, h, w))
                y = R.argmax(nchw, axis=1)
                R.output(y)
            return y

    mod = PackChannelArgReduce()(ArgmaxOverChannels)
    (func,) = [f for _, f in mod.functions_items() if isinstance(f, tirx.PrimFunc)]
    # 9 outputs reducing 8 channels each: one thread per output
    assert thread_extents(_schedule(func)) == {"blockIdx.x": 1, "threadIdx.x": 64}


def test_stock_argmax_is_left_to_the_generic_rules():
    """topi.argmax reduces into an index and a value buffer, then copies the index out: the
    rule declines that form (its docstring says so) and the generic GPU rules after it take it."""
    func = prim_func_of(lambda x: topi.argmax(x, axis=1), shape=(1, 8, 6, 6))
    assert _schedule(func) is None
    rules = [dl.adreno.Reduction(), dl.gpu.GeneralReduction(), dl.gpu.Fallback()]
    with TARGET:
        scheduled = dl.ApplyDefaultSchedule(*rules)(tvm.IRModule({"main": func}))["main"]
    assert "threadIdx.x" in thread_extents(scheduled), scheduled.script()


def _channel_max_of_four_columns(x):
    """The maximum over the channels of an NCHW4c tensor 4 pixels wide, into (1, H, W)."""
    blocks = te.reduce_axis((0, x.shape[1]), name="k1")
    lanes = te.reduce_axis((0, x.shape[4]), name="k4")
    return te.compute(
        (x.shape[0], x.shape[2], x.shape[3]),
        lambda n, h, w: te.max(x[n, blocks, h, w, lanes], axis=[blocks, lanes]),
        name="channel_max",
    )


def test_four_columns_read_as_the_width_are_not_pixel_lanes():
    """The output's innermost axis has 4 columns, but each is read as the width of the input
    image, not as a lane of its pixel: vectorized over the width, the texture lowering left
    the column variable undefined ("variables (ax2,) are used, but are not passed in")."""
    func = _schedule(prim_func_of(_channel_max_of_four_columns, shape=(1, 2, 32, 4, 4)))
    assert thread_extents(func) == {"blockIdx.x": 2, "threadIdx.x": 64}  # 32 x 4 outputs
    assert vectorized_extents(func) == []


def test_adaptive_pool_with_varying_windows_is_declined():
    """7x7 to 3x3: each output has its own window, a nested block
    (dl.adreno.VaryingWindowPool2D's)."""
    func = prim_func_of(
        lambda x: topi.nn.adaptive_pool(x, (3, 3), "avg", layout="NCHW4c"), shape=(1, 4, 7, 7, 4)
    )
    assert _schedule(func) is None


def test_contraction_is_declined():
    """Two operands in the reduction (a conv, a matmul): not a reduction of one tensor."""
    a = te.placeholder((16, 32), "float32", name="a")
    b = te.placeholder((32, 8), "float32", name="b")
    func = te.create_prim_func([a, b, topi.matmul(a, b)])
    assert not reduces_one_tensor(func)
    assert _schedule(func) is None


def test_reductions_of_one_tensor_are_recognised_by_structure():
    """The contract the memory scope annotation asks about: sums, means and poolings."""
    assert reduces_one_tensor(prim_func_of(_max_pool))
    assert reduces_one_tensor(prim_func_of(lambda x: topi.sum(x, axis=[2, 3], keepdims=True)))
    assert reduces_one_tensor(prim_func_of(lambda x: topi.nn.global_pool(x, "avg", "NCHW4c")))
    assert not reduces_one_tensor(prim_func_of(topi.nn.relu))


def test_layout_transform_and_elementwise_are_declined():
    assert _schedule(prim_func_of(lambda x: topi.layout_transform(x, "NCHW4c", "NCHW"))) is None
    assert _schedule(prim_func_of(topi.nn.relu)) is None


def test_pooling_with_a_prelu_epilogue_is_one_kernel():
    """PReLU after a pooling reads the pooled value twice (maximum(p, 0) + a * minimum(p, 0)):
    its blocks are inlined forwards into the last one, which is stored per pixel as before."""
    data = te.placeholder(PACKED, "float32", name="x")
    slope = te.placeholder((1, 4, 1, 1, 4), "float32", name="alpha")
    pooled = topi.nn.pool2d(data, (2, 2), (2, 2), (1, 1), (0, 0, 0, 0), "max", layout="NCHW4c")
    zero = tirx.const(0.0, "float32")
    out = topi.add(topi.maximum(pooled, zero), topi.multiply(slope, topi.minimum(pooled, zero)))
    func = _schedule(te.create_prim_func([data, slope, out]))
    assert func is not None
    # 4 x 4 x 4 output pixels on one work group, lanes as vectors
    assert thread_extents(func) == {"blockIdx.x": 1, "threadIdx.x": 64}
    assert 4 in vectorized_extents(func)
    names = [
        block.name_hint
        for block in _sblocks(func)
        if block.name_hint not in ("root", "pool_max_init", "pool_max_update")
    ]
    assert len(names) == 1, names  # the epilogue, every other elementwise block inlined


def _nhwc_pool_then_channel_pad(x):
    """MediaPipe's detectors: a 2x2 max pooling, then zero channels for a residual add."""
    pooled = topi.nn.pool2d(x, (2, 2), (2, 2), (1, 1), (0, 0, 0, 0), "max", layout="NHWC")
    return topi.nn.pad(pooled, [0, 0, 0, 0], [0, 0, 0, 8])


def _sblocks(func):
    blocks = []
    tvm_ffi.structural_walk(func, [(s_tir.SBlock, blocks.append)], order="pre")
    return blocks


def _alloc_buffers(func):
    buffers = []
    tvm_ffi.structural_walk(
        func, [(s_tir.SBlock, lambda block: buffers.extend(block.alloc_buffers))], order="pre"
    )
    return buffers


def _thread_var(func):
    (loop,) = [
        lp
        for lp in loops(func)
        if lp.thread_binding is not None and lp.thread_binding.thread_tag == "threadIdx.x"
    ]
    return loop.loop_var


def _blocks_under_threads(func):
    """Names of the blocks nested in the threadIdx.x loop, with their predicates."""
    found = {}

    def visit_loop(loop):
        if loop.thread_binding is not None and loop.thread_binding.thread_tag == "threadIdx.x":
            tvm_ffi.structural_walk(
                loop.body,
                [(s_tir.SBlockRealize, lambda r: found.update({r.block.name_hint: r.predicate}))],
                order="pre",
            )

    tvm_ffi.structural_walk(func, [(tirx.For, visit_loop)], order="pre")
    return found


def test_pad_after_a_short_pooling_runs_at_the_pad_outputs():
    """The pad covers more outputs than the pooling (4 x 4 x 16 against 4 x 4 x 8): one thread
    per padded output, the pooling computed in the thread, guarded off for the zero channels,
    and no threads sharing a window (the generic rules reduced 4 elements with 256 threads)."""
    func = _schedule(prim_func_of(_nhwc_pool_then_channel_pad, shape=(1, 8, 8, 8)))
    assert func is not None
    assert thread_extents(func) == {"blockIdx.x": 4, "threadIdx.x": 64}
    blocks = _blocks_under_threads(func)
    assert {"pool_max_init", "pool_max_update", "PadInput"} <= set(blocks), blocks
    for name in ("pool_max_init", "pool_max_update"):
        # only the threads of the 8 pooled channels of each 16 pool
        assert tvm_ffi.structural_equal(
            blocks[name], tirx.LT(tirx.FloorMod(_thread_var(func), 16), 8)
        ), blocks[name]
    pooled = [
        buf for buf in _alloc_buffers(func) if buf.name.startswith("pool_max")
    ]  # the pooled values stay in registers
    assert [buf.scope() for buf in pooled] == ["local"], pooled


def test_channel_pad_of_packed_pixels_after_a_pooling_stores_whole_pixels():
    """BlazeFace's shortcut in NCHW4c: a pooling, one more block of zero channels, a residual
    add and a ReLU. One thread per padded output pixel (2 x 4 x 4), its 4 lanes pooled and
    stored as one vector, the pooling guarded off for the zero block, one block left after
    the pooling (the pad and add inlined)."""
    data = te.placeholder(PACKED, "float32", name="x")
    residual = te.placeholder((1, 5, 4, 4, 4), "float32", name="r")
    pooled = topi.nn.pool2d(data, (2, 2), (2, 2), (1, 1), (0, 0, 0, 0), "max", layout="NCHW4c")
    wide = topi.nn.pad(pooled, [0, 0, 0, 0, 0], [0, 1, 0, 0, 0])
    out = topi.nn.relu(topi.add(wide, residual))
    func = _schedule(te.create_prim_func([data, residual, out]))
    assert func is not None
    assert thread_extents(func) == {"blockIdx.x": 2, "threadIdx.x": 64}
    assert vectorized_extents(func).count(4) == 3, vectorized_extents(func)  # init, update, store
    blocks = _blocks_under_threads(func)
    (group,) = [
        lp.loop_var
        for lp in loops(func)
        if lp.thread_binding is not None and lp.thread_binding.thread_tag == "blockIdx.x"
    ]
    for name in ("pool_max_init", "pool_max_update"):
        # the 64 pooled pixels fill the first work group; the second holds the zero block
        assert tvm_ffi.structural_equal(blocks[name], tirx.LT(group, 1)), blocks[name]
    assert set(blocks) - {"pool_max_init", "pool_max_update"} == {"compute"}, blocks


def test_long_reduction_before_another_domain_is_declined():
    """A mean over 64 elements broadcast back over the input: every output would recompute it."""

    def _mean_then_broadcast(x):
        return topi.multiply(x, topi.sum(x, axis=[1, 2], keepdims=True))

    assert _schedule(prim_func_of(_mean_then_broadcast, shape=(1, 8, 8, 8))) is None


if __name__ == "__main__":
    tvm.testing.main()
