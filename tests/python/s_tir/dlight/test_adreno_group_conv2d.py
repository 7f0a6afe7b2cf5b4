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
"""Tests of dlight.adreno.GroupConv2d: depthwise NCHW4c convolutions as a streaming kernel
(4 channels x a few output rows and columns per item), group convolutions one output texel per
item, and the workloads of the other Adreno rules that it declines."""

import pytest

import tvm
import tvm.testing
from tvm import relax
from tvm.relax.transform.legalize_ops import adreno as legalize_adreno
from tvm.s_tir import dlight as dl

from adreno_schedule_testing import (
    block_names,
    fused_prim_funcs,
    only,
    thread_extents,
    vectorized_extents,
    without_schedule_rule,
)

TARGET = tvm.target.Target("qcom/adreno-opencl-texture")


def _schedule(func):
    sch = dl.adreno.GroupConv2d().apply(func, TARGET, False)
    return None if sch is None else sch.mod["main"]


def test_depthwise_conv_reads_whole_texels():
    """Channel multiplier 1: each output lane reads the same lane of the input, so the lane
    loop of the window is a vector, and so are the staged input column, the staged weights, the
    init and the store; the default 4 rows x 1 column per item make 4 x 2 x 8 items, one work
    group of 64 threads."""
    func = _schedule(only(fused_prim_funcs((1, 4, 8, 8, 4), (4, 1, 3, 3, 4), groups=16)))
    assert thread_extents(func) == {"blockIdx.x": 1, "threadIdx.x": 64}
    assert vectorized_extents(func) == [4, 4, 4, 4, 4]
    assert not [name for name in block_names(func) if name.endswith("pad")]


@pytest.mark.parametrize(
    "rows, columns, stage, window, items",
    [
        # One row: per kernel row (3 of them) the input row under 2 outputs, 2 + 5 - 1 pixels.
        (1, 2, 3, (1, 6), 4 * 8 * 3),
        # Stacked rows: per kernel column (5) the input column under 4 outputs, 4 + 3 - 1.
        (4, 1, 5, (6, 1), 4 * 2 * 6),
        (4, 2, 5, (6, 2), 4 * 2 * 3),
        # 3 rows do not divide the 8 output rows: 2 are taken.
        (3, 1, 5, (4, 1), 4 * 4 * 6),
    ],
)
def test_depthwise_window_slides_along_rows_or_down_columns(rows, columns, stage, window, items):
    """A 3x5 depthwise conv (8 x 6 outputs): an item of one output row stages the input row
    under its columns once per kernel row, an item of stacked rows the input column under its
    rows once per kernel column; the work items are the outputs over the item's tile."""
    config = dl.adreno.GroupConv2dConfig(rows=rows, columns=columns)
    func = only(fused_prim_funcs((1, 4, 8, 8, 4), (4, 1, 3, 5, 4), groups=16))
    sch = dl.adreno.GroupConv2d(config).apply(func, TARGET, False)
    staged = [sch.get(loop) for loop in sch.get_loops(sch.get_sblock("data_pad_local"))]
    assert int(staged[2].extent) == stage, "the loop the window is staged under"
    assert (int(staged[-3].extent), int(staged[-2].extent)) == window
    threads = min(items, config.threads)
    blocks = (items + threads - 1) // threads
    assert thread_extents(sch.mod["main"]) == {"blockIdx.x": blocks, "threadIdx.x": threads}


def test_group_conv_reads_lane_by_lane():
    """4 channels per group: the lanes of an output texel read different input texels, so only
    the init and the store are vectors."""
    func = _schedule(only(fused_prim_funcs((1, 4, 8, 8, 4), (4, 4, 3, 3, 4), groups=4)))
    assert thread_extents(func) == {"blockIdx.x": 4, "threadIdx.x": 64}
    assert vectorized_extents(func) == [4, 4]


def test_epilogue_is_inlined_into_the_texel_store():
    plain = only(fused_prim_funcs((1, 4, 8, 8, 4), (4, 1, 3, 3, 4), groups=16))
    fused = only(
        fused_prim_funcs((1, 4, 8, 8, 4), (4, 1, 3, 3, 4), groups=16, epilogue=relax.op.nn.relu)
    )
    epilogue = set(block_names(fused)) - set(block_names(plain))
    assert epilogue, "the fused function has no activation block"
    func = _schedule(fused)
    assert func is not None
    assert not epilogue & set(block_names(func))


def test_direct_conv_is_declined():
    """The direct conv has the same 5-D ``out += a * b`` shape, but names dl.adreno.Conv2d."""
    assert _schedule(only(fused_prim_funcs((1, 4, 8, 8, 4), (8, 16, 3, 3, 4)))) is None


@pytest.mark.parametrize(
    "weight, groups",
    [((4, 1, 3, 3, 4), 16), ((4, 4, 3, 3, 4), 4)],
    ids=["depthwise", "group"],
)
def test_conv_without_its_schedule_rule_is_declined(weight, groups):
    func = only(fused_prim_funcs((1, 4, 8, 8, 4), weight, groups=groups))
    assert _schedule(func) is not None
    assert _schedule(without_schedule_rule(func)) is None


def _transposed_conv():
    """The conv PrimFunc of a legalized stride-2 transposed conv, 8 to 8 channels."""
    x = relax.Var("x", relax.TensorType((1, 8, 5, 5), "float32"))
    w = relax.Var("w", relax.TensorType((8, 8, 3, 3), "float32"))
    builder = relax.BlockBuilder()
    with builder.function("main", [x, w]):
        conv = relax.op.nn.conv2d_transpose(x, w, strides=2, padding=1, output_padding=1)
        builder.emit_func_output(builder.emit(conv))
    mod = relax.transform.LegalizeOps(
        {"relax.nn.conv2d_transpose": legalize_adreno.conv2d_transpose_NCHWc}
    )(builder.get())
    return mod["conv2d_transpose_NCHWc"]


def test_transposed_conv_is_taken_by_its_schedule_rule():
    """The transposed conv is this rule's by its annotation, and only by it."""
    func = _transposed_conv()
    assert thread_extents(_schedule(func))["threadIdx.x"] == 64
    assert _schedule(without_schedule_rule(func)) is None


def test_winograd_batched_product_is_declined():
    """The product of transformed tiles reads its data tiles for every output channel."""
    funcs = fused_prim_funcs((1, 128, 8, 8, 4), (128, 512, 3, 3, 4))
    (product,) = [f for name, f in funcs.items() if "batched_product" in name]
    assert _schedule(product) is None


def test_other_winograd_stages_are_declined():
    funcs = fused_prim_funcs((1, 128, 8, 8, 4), (128, 512, 3, 3, 4))
    for name, func in funcs.items():
        if "batched_product" not in name:
            assert _schedule(func) is None, name


@pytest.mark.parametrize(
    "compute",
    [
        lambda x: tvm.topi.sum(x, axis=[2, 3]),
        lambda x: tvm.topi.nn.pool2d(
            x, (3, 3), (1, 1), (1, 1), (1, 1, 1, 1), "max", layout="NCHW4c"
        ),
    ],
    ids=["sum", "max_pool"],
)
def test_reductions_are_declined(compute):
    data = tvm.te.placeholder((1, 4, 8, 8, 4), "float32", name="x")
    func = tvm.te.create_prim_func([data, compute(data)])
    assert _schedule(func) is None


def test_schedule_of_takes_a_prim_func_or_a_schedule_on_adreno_only():
    """The rules' shared preamble: a PrimFunc gets a new schedule of itself, a schedule is
    worked on as it is, and a target that is not Adreno gets None."""
    data = tvm.te.placeholder((1, 4, 8, 8, 4), "float32", name="x")
    func = tvm.te.create_prim_func([data, tvm.topi.nn.relu(data)])
    rule = dl.adreno.GroupConv2d()
    sch = rule.schedule_of(func, TARGET)
    tvm.ir.assert_structural_equal(sch.mod["main"], func)
    assert rule.schedule_of(sch, TARGET) is sch
    assert rule.schedule_of(func, tvm.target.Target("cuda")) is None
    assert rule.apply(func, tvm.target.Target("cuda"), False) is None


if __name__ == "__main__":
    tvm.testing.main()
