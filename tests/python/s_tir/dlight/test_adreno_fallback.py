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

import tvm_ffi

import tvm
import tvm.testing
from tvm import relax, s_tir, te, tirx, topi
from tvm.relax.transform.legalize_ops import adreno as legalize_adreno
from tvm.s_tir import dlight as dl
from tvm.script import tirx as T

TARGET = tvm.target.Target("qcom/adreno-opencl-texture")


def _fused_prim_funcs(data, weight, groups=1, epilogue=None):
    """The PrimFuncs of a legalized and fused NCHW4c conv2d (and its epilogue)."""
    x = relax.Var("x", relax.TensorType(data, "float32"))
    w = relax.Var("w", relax.TensorType(weight, "float32"))
    builder = relax.BlockBuilder()
    with builder.function("main", [x, w]):
        with builder.dataflow():
            conv = builder.normalize(
                relax.op.nn.conv2d(
                    x,
                    w,
                    padding=[1, 1],
                    groups=groups,
                    data_layout="NCHW4c",
                    kernel_layout="OIHW4o",
                    out_layout="NCHW4c",
                )
            )
            # ty_args as AnnotateCustomMemoryScope leaves them
            out = builder.emit(relax.Call(conv.op, conv.args, conv.attrs, [conv.ty]))
            if epilogue is not None:
                out = builder.emit(epilogue(out))
            out = builder.emit_output(out)
        builder.emit_func_output(out)
    seq = tvm.transform.Sequential(
        [
            relax.transform.LegalizeOps({"relax.nn.conv2d": legalize_adreno.conv2d_NCHWc_OIHWo}),
            relax.transform.AnnotateTIROpPattern(),
            relax.transform.FuseOps(),
            relax.transform.FuseTIR(),
        ]
    )
    mod = seq(builder.get())
    return {gv.name_hint: f for gv, f in mod.functions_items() if isinstance(f, tirx.PrimFunc)}


def _only(funcs):
    (func,) = funcs.values()
    return func


def _loops(func):
    loops = []
    tvm_ffi.structural_walk(func, [(tirx.For, loops.append)], order="pre")
    return loops


def _thread_extents(func):
    return {
        str(loop.thread_binding.thread_tag): int(loop.extent)
        for loop in _loops(func)
        if loop.thread_binding is not None
    }


def _vectorized_extents(func):
    return [int(loop.extent) for loop in _loops(func) if loop.kind == tirx.ForKind.VECTORIZED]


def _block_names(func):
    names = []
    tvm_ffi.structural_walk(func, [(tvm.s_tir.SBlock, lambda b: names.append(b.name_hint))])
    return names


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
    assert _thread_extents(func) == {"blockIdx.x": 1, "threadIdx.x": 256}
    assert _vectorized_extents(func) == [4]


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
    func = _only(_fused_prim_funcs((1, 4, 8, 8, 4), (8, 16, 3, 3, 4), epilogue=_hard_swish))
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


def test_data_padding_is_not_inlined_by_the_epilogue_helper():
    func = _only(_fused_prim_funcs((1, 4, 8, 8, 4), (8, 16, 3, 3, 4)))
    sch = s_tir.Schedule(func)
    pad = sch.get_sblock("conv2d_data_pad")
    (left,) = dl.adreno.Fallback.schedule_inline_blocks(sch, [pad])
    assert sch.get(left).name_hint == "conv2d_data_pad"


if __name__ == "__main__":
    tvm.testing.main()
