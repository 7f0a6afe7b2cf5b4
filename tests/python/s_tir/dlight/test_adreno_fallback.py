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
"""Tests of dlight.adreno.Fallback: elementwise kernels writing textures keep the pixel axis
as a vector inside one thread, and schedule_inline_blocks inlines whole conv epilogues."""

import tvm
import tvm.testing
from tvm import relax, s_tir, te, topi
from tvm.s_tir import dlight as dl
from tvm.script import tirx as T

from adreno_schedule_testing import fused_prim_funcs, only, thread_extents, vectorized_extents

TARGET = tvm.target.Target("qcom/adreno-opencl-texture")


def _schedule(func):
    with TARGET:
        sch = dl.adreno.Fallback().apply(func, TARGET, False)
    return None if sch is None else sch.mod["main"]


@T.prim_func(s_tir=True)
def relu_on_textures(
    x: T.Buffer((1, 4, 8, 8, 4), "float32", scope="global.texture"),
    y: T.Buffer((1, 4, 8, 8, 4), "float32", scope="global.texture"),
):
    for n, c, h, w, lane in T.grid(1, 4, 8, 8, 4):
        with T.sblock("relu"):
            vn, vc, vh, vw, vl = T.axis.remap("SSSSS", [n, c, h, w, lane])
            y[vn, vc, vh, vw, vl] = T.max(x[vn, vc, vh, vw, vl], T.float32(0))


def test_texture_elementwise_keeps_the_pixel_a_vector():
    """One thread per pixel (4 x 8 x 8 of them, 256 per group): a scalar per thread would
    write one channel over the whole pixel."""
    func = _schedule(relu_on_textures)
    assert thread_extents(func) == {"blockIdx.x": 1, "threadIdx.x": 256}
    assert vectorized_extents(func) == [4]


def _rows(width: int):
    """A buffer block whose innermost output axis is ``width`` wide, like the NCHW
    intermediate of a fused kernel that writes a texture."""
    data = te.placeholder((1, 1, 9, width), "float32", name="x")
    return te.create_prim_func([data, topi.sqrt(data)])


def test_innermost_axis_is_vectorized_only_at_an_opencl_vector_width():
    """OpenCL C has vectors of 2, 3, 4, 8 and 16 lanes: a row of 9 stays a serial loop (as a
    vector, CodeGenOpenCL failed: "Cannot convert type float32x9 to OpenCL type")."""
    for width, vectorized in ((9, []), (8, [8])):
        sch = s_tir.Schedule(_rows(width))
        with TARGET:
            dl.adreno.Fallback.schedule_default(sch, sch.get_sblock("compute"))
        assert vectorized_extents(sch.mod["main"]) == vectorized, width
        tvm.compile(sch.mod, target=tvm.target.Target("opencl", host="llvm"))


def test_buffer_elementwise_is_left_to_the_generic_rules():
    data = te.placeholder((1, 4, 8, 8, 4), "float32", name="x")
    assert _schedule(te.create_prim_func([data, topi.nn.relu(data)])) is None


def _hard_swish(x):
    relu6 = relax.op.minimum(
        relax.op.maximum(relax.op.add(x, relax.const(3.0)), relax.const(0.0)), relax.const(6.0)
    )
    return relax.op.divide(relax.op.multiply(x, relu6), relax.const(6.0))


def test_epilogue_whose_input_has_two_consumers_is_inlined_whole():
    """Hard-swish x * relu6(x + 3) / 6 after a conv: the conv result feeds the add and the
    multiply. With the conv's result cached as the conv rules do, every epilogue block is
    inlined (the last one into the write-back), none is left for a schedule of its own."""
    func = only(fused_prim_funcs((1, 4, 8, 8, 4), (8, 16, 3, 3, 4), epilogue=_hard_swish))
    sch = s_tir.Schedule(func)
    blocks = sch.get_child_blocks(sch.get_sblock("root"))
    epilogue = [b for b in blocks if sch.get(b).name_hint.startswith("T_")]
    assert len(epilogue) == 5
    sch.cache_write(sch.get_sblock("conv2d_NCHWc_OIHWo"), 0, "local")
    assert not dl.adreno.Fallback.schedule_inline_blocks(sch, epilogue)
    remaining = {sch.get(b).name_hint for b in sch.get_child_blocks(sch.get_sblock("root"))}
    assert remaining == {
        "conv2d_data_pad",
        "conv2d_NCHWc_OIHWo",
        "conv2d_NCHWc_OIHWo_intermediate_local",
    }


def test_padding_read_by_an_elementwise_block_is_inlined():
    """A zero-channel pad of the input read by the residual add (not by the conv) is inlined
    into the add; the conv's own input padding is left for the conv rule."""

    def _shortcut(out, x):
        return relax.op.add(out, relax.op.nn.pad(x, [0, 0, 0, 4, 0, 0, 0, 0, 0, 0]))

    func = only(fused_prim_funcs((1, 4, 8, 8, 4), (8, 16, 3, 3, 4), shortcut=_shortcut))
    sch = s_tir.Schedule(func)
    blocks = sch.get_child_blocks(sch.get_sblock("root"))
    pads = [b for b in blocks if sch.get(b).name_hint in ("PadInput", "conv2d_data_pad")]
    assert len(pads) == 2
    remaining = dl.adreno.Fallback.schedule_inline_blocks(sch, pads)
    assert [sch.get(b).name_hint for b in remaining] == ["conv2d_data_pad"]


def test_data_padding_is_not_inlined_by_the_epilogue_helper():
    func = only(fused_prim_funcs((1, 4, 8, 8, 4), (8, 16, 3, 3, 4)))
    sch = s_tir.Schedule(func)
    pad = sch.get_sblock("conv2d_data_pad")
    (left,) = dl.adreno.Fallback.schedule_inline_blocks(sch, [pad])
    assert sch.get(left).name_hint == "conv2d_data_pad"


if __name__ == "__main__":
    tvm.testing.main()
