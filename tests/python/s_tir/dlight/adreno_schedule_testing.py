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
"""Helpers of the dlight.adreno rule tests: fused conv2d PrimFuncs as the Adreno legalization
makes them, and the loops, thread extents, vector widths and block names of a scheduled one."""

import tvm_ffi

import tvm
from tvm import relax, te, tirx
from tvm.relax.transform.legalize_ops import adreno as legalize_adreno

#: A float32 NCHW4c tensor of 16 channels and 8x8 pixels.
PACKED = (1, 4, 8, 8, 4)


def prim_func_of(compute, shape=PACKED, dtype="float32"):
    """The PrimFunc of ``compute`` (one tensor or a list of them) applied to one
    placeholder ``x`` of ``shape``."""
    data = te.placeholder(shape, dtype, name="x")
    out = compute(data)
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    return te.create_prim_func([data, *outs])


def fused_prim_funcs(data, weight, groups=1, epilogue=None, shortcut=None):
    """The PrimFuncs of a legalized and fused NCHW4c conv2d (and its epilogue): ``epilogue``
    maps the conv result, ``shortcut`` maps the conv result and the input ``x`` (a residual)."""
    x = relax.Var("x", relax.TensorType(data, "float32"))
    kernel = relax.Var("w", relax.TensorType(weight, "float32"))
    builder = relax.BlockBuilder()
    with builder.function("main", [x, kernel]):
        with builder.dataflow():
            conv = builder.normalize(
                relax.op.nn.conv2d(
                    x,
                    kernel,
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
            if shortcut is not None:
                out = builder.emit(shortcut(out, x))
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


def depthwise_pointwise_prim_func(channels, pixels, out_channels, stride=1, data_scope=None):
    """The one PrimFunc of a depthwise 3x3 conv (ReLU6) and the 1x1 conv reading it, fused by
    ``FuseDepthwisePointwise``, its input in ``data_scope`` (as the texture pipeline's call
    sites give it; None: a buffer)."""
    # pylint: disable-next=import-outside-toplevel
    from tvm.relax.backend.adreno.transform import FuseDepthwisePointwise

    layouts = {"data_layout": "NCHW4c", "kernel_layout": "OIHW4o", "out_layout": "NCHW4c"}
    x = relax.Var("x", relax.TensorType((1, channels // 4, pixels, pixels, 4), "float32"))
    w_dw = relax.Var("w_dw", relax.TensorType((channels // 4, 1, 3, 3, 4), "float32"))
    w_pw = relax.Var("w_pw", relax.TensorType((out_channels // 4, channels, 1, 1, 4), "float32"))
    builder = relax.BlockBuilder()
    with builder.function("main", [x, w_dw, w_pw]):
        with builder.dataflow():
            depthwise = relax.op.nn.conv2d(x, w_dw, stride, 1, groups=channels, **layouts)
            act = builder.emit(relax.op.clip(builder.emit(depthwise), 0, 6))
            out = builder.emit_output(relax.op.nn.conv2d(act, w_pw, **layouts))
        builder.emit_func_output(out)
    with tvm.transform.PassContext(config={"relax.adreno.fuse_depthwise_pointwise": True}):
        mod = tvm.transform.Sequential(
            [
                relax.transform.LegalizeOps(
                    {"relax.nn.conv2d": legalize_adreno.conv2d_NCHWc_OIHWo}
                ),
                relax.transform.AnnotateTIROpPattern(),
                relax.transform.FuseOps(),
                FuseDepthwisePointwise(),
                relax.transform.FuseTIR(),
            ]
        )(builder.get())
    (func,) = [f for f in mod.functions.values() if isinstance(f, tirx.PrimFunc)]
    if data_scope is None:
        return func
    data = func.params[0]
    return func.specialize({data: tirx.decl_buffer(data.shape, data.dtype, "x", scope=data_scope)})


def without_schedule_rule(func):
    """``func`` with the ``schedule_rule`` annotation of every block removed: the same
    workload, block names included, without the contract that names its rule."""
    sch = tvm.s_tir.Schedule(func)
    for block in sch.get_child_blocks(sch.get_sblock("root")):
        if "schedule_rule" in sch.get(block).annotations:
            sch.unannotate(block, "schedule_rule")
    return sch.mod["main"]


def only(funcs):
    """The one PrimFunc of ``funcs``."""
    (func,) = funcs.values()
    return func


def loops(func):
    """Every loop of ``func``, outermost first."""
    found = []
    tvm_ffi.structural_walk(func, [(tirx.For, found.append)], order="pre")
    return found


def thread_extents(func):
    """Thread tag -> extent of the loops bound to threads."""
    return {
        str(loop.thread_binding.thread_tag): int(loop.extent)
        for loop in loops(func)
        if loop.thread_binding is not None
    }


def vectorized_extents(func):
    """Extents of the vectorized loops, outermost first."""
    return [int(loop.extent) for loop in loops(func) if loop.kind == tirx.ForKind.VECTORIZED]


def block_names(func):
    """Names of the blocks of ``func``."""
    names = []
    tvm_ffi.structural_walk(func, [(tvm.s_tir.SBlock, lambda b: names.append(b.name_hint))])
    return names


def alloc_scopes(func):
    """Memory scopes of the buffers that the blocks of ``func`` allocate."""
    scopes = set()
    tvm_ffi.structural_walk(
        func,
        [(tvm.s_tir.SBlock, lambda b: scopes.update(str(buf.scope()) for buf in b.alloc_buffers))],
    )
    return scopes
