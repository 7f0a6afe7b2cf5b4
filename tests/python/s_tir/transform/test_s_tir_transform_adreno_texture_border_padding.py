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
# pylint: disable=chained-comparison  # TVMScript guards are written term by term
"""Tests of TextureBorderPadding: which guard terms of a padded texture read it drops and which
it keeps, that the Adreno pipeline runs it only when asked, and the answers with it."""

import numpy as np
import pytest
import tvm_ffi

import tvm
import tvm.testing
from tvm import relax
from tvm.ir import Call, Op
from tvm.s_tir.backend.adreno.transform import TextureBorderPadding
from tvm.script import tirx as T

# A (1, 2, 6, 8, 4) texture is an image of 8 x 6 pixels and 2 layers: the read at (w - 1, h - 1)
# of the padded window is inside the image for 1 <= w < 9 and 1 <= h < 7.


def _apply(func):
    return TextureBorderPadding()(tvm.IRModule({"main": func}))["main"]


def test_inside_the_image_terms_are_dropped():
    @T.prim_func(private=True)
    def before(
        img: T.Buffer((1, 2, 6, 8, 4), "float32", scope="global.texture"),
        out: T.Buffer((80, 4), "float32"),
    ):
        for h, w in T.grid(8, 10):
            out[h * 10 + w, 0:4] = T.if_then_else(
                1 <= h and h < 7 and 1 <= w and w < 9,
                T.call_intrin(
                    "float32x4",
                    "tirx.texture2d_load",
                    img.data,
                    w - 1,
                    h - 1,
                    1,
                    128,
                    T.Ramp(0, 1, 4),
                ),
                T.Broadcast(T.float32(0), 4),
            )

    @T.prim_func(private=True)
    def expected(
        img: T.Buffer((1, 2, 6, 8, 4), "float32", scope="global.texture"),
        out: T.Buffer((80, 4), "float32"),
    ):
        for h, w in T.grid(8, 10):
            out[h * 10 + w, 0:4] = T.call_intrin(
                "float32x4", "tirx.texture2d_load", img.data, w - 1, h - 1, 1, 128, T.Ramp(0, 1, 4)
            )

    tvm.ir.assert_structural_equal(_apply(before), expected)


def test_other_terms_stay():
    """A term on the layer (an image array clamps its layer index) and one tighter than the
    image (w >= 2) stay; the bounds of the image go."""

    @T.prim_func(private=True)
    def before(
        img: T.Buffer((1, 2, 6, 8, 4), "float32", scope="global.texture"),
        out: T.Buffer((80, 4), "float32"),
        layer: T.int32,
    ):
        for h, w in T.grid(8, 10):
            out[h * 10 + w, 0:4] = T.if_then_else(
                2 <= w and layer < 2 and 1 <= h and h < 7,
                T.call_intrin(
                    "float32x4",
                    "tirx.texture2d_load",
                    img.data,
                    w - 1,
                    h - 1,
                    layer,
                    128,
                    T.Ramp(0, 1, 4),
                ),
                T.Broadcast(T.float32(0), 4),
            )

    @T.prim_func(private=True)
    def expected(
        img: T.Buffer((1, 2, 6, 8, 4), "float32", scope="global.texture"),
        out: T.Buffer((80, 4), "float32"),
        layer: T.int32,
    ):
        for h, w in T.grid(8, 10):
            out[h * 10 + w, 0:4] = T.if_then_else(
                2 <= w and layer < 2,
                T.call_intrin(
                    "float32x4",
                    "tirx.texture2d_load",
                    img.data,
                    w - 1,
                    h - 1,
                    layer,
                    128,
                    T.Ramp(0, 1, 4),
                ),
                T.Broadcast(T.float32(0), 4),
            )

    tvm.ir.assert_structural_equal(_apply(before), expected)


def test_a_nonzero_padding_value_is_kept():
    """The border is zero: a read padded with another value (a max pool's) keeps its guard."""

    @T.prim_func(private=True)
    def before(
        img: T.Buffer((1, 2, 6, 8, 4), "float32", scope="global.texture"),
        out: T.Buffer((80, 4), "float32"),
    ):
        for h, w in T.grid(8, 10):
            out[h * 10 + w, 0:4] = T.if_then_else(
                1 <= h and h < 7 and 1 <= w and w < 9,
                T.call_intrin(
                    "float32x4",
                    "tirx.texture2d_load",
                    img.data,
                    w - 1,
                    h - 1,
                    1,
                    128,
                    T.Ramp(0, 1, 4),
                ),
                T.Broadcast(T.float32(-3.0e38), 4),
            )

    tvm.ir.assert_structural_equal(_apply(before), before)


def test_a_bound_of_another_width_is_kept():
    """The same guard around a read of a (1, 2, 6, 6, 4) texture (6 pixels wide): w < 9 is not
    its width and stays; the other terms go."""

    @T.prim_func(private=True)
    def before(
        img: T.Buffer((1, 2, 6, 6, 4), "float32", scope="global.texture"),
        out: T.Buffer((80, 4), "float32"),
    ):
        for h, w in T.grid(8, 10):
            out[h * 10 + w, 0:4] = T.if_then_else(
                1 <= h and h < 7 and 1 <= w and w < 9,
                T.call_intrin(
                    "float32x4",
                    "tirx.texture2d_load",
                    img.data,
                    w - 1,
                    h - 1,
                    1,
                    128,
                    T.Ramp(0, 1, 4),
                ),
                T.Broadcast(T.float32(0), 4),
            )

    @T.prim_func(private=True)
    def expected(
        img: T.Buffer((1, 2, 6, 6, 4), "float32", scope="global.texture"),
        out: T.Buffer((80, 4), "float32"),
    ):
        for h, w in T.grid(8, 10):
            out[h * 10 + w, 0:4] = T.if_then_else(
                w < 9,
                T.call_intrin(
                    "float32x4",
                    "tirx.texture2d_load",
                    img.data,
                    w - 1,
                    h - 1,
                    1,
                    128,
                    T.Ramp(0, 1, 4),
                ),
                T.Broadcast(T.float32(0), 4),
            )

    tvm.ir.assert_structural_equal(_apply(before), expected)


TEXTURE = tvm.target.Target("qcom/adreno-opencl-texture", host="llvm")
OPT_IN = {"opt_level": 3, "required_pass": ["TextureBorderPadding"]}


def _padded_convs():
    """A 3x3 conv and a 3x3 depthwise conv, both zero-padded by 1, on a 16-channel input."""
    data = relax.Var("data", relax.TensorType((1, 16, 12, 10), "float32"))
    weight = relax.Var("weight", relax.TensorType((16, 16, 3, 3), "float32"))
    depthwise = relax.Var("depthwise", relax.TensorType((16, 1, 3, 3), "float32"))
    builder = relax.BlockBuilder()
    with builder.function("main", [data, weight, depthwise]):
        with builder.dataflow():
            out = builder.emit(relax.op.nn.conv2d(data, weight, padding=1))
            out = builder.emit(relax.op.nn.conv2d(out, depthwise, padding=1, groups=16))
            out = builder.emit_output(out)
        builder.emit_func_output(out)
    return builder.get()


def _guarded_texture_reads(mod, **pass_context) -> int:
    """How many texture reads of the conv kernels are guarded after the TIR pipeline."""
    lowered = {}

    @tvm.instrument.pass_instrument
    class _Keep:  # the device functions before they are split from the host code
        def run_before_pass(self, mod, info):
            if info.name == "tirx.SplitHostDevice":
                lowered["mod"] = mod

    load, guard = Op.get("tirx.texture2d_load"), Op.get("prim.if_then_else")
    with tvm.transform.PassContext(**pass_context, instruments=[_Keep()]):
        tvm.compile(mod, target=TEXTURE)
    count = 0

    def _visit(call):
        nonlocal count
        inner = call.args[1] if call.op.same_as(guard) else None
        if isinstance(inner, Call) and inner.op.same_as(load):
            count += 1

    for gv, func in lowered["mod"].functions.items():
        if "conv2d" in gv.name_hint:
            tvm_ffi.structural_walk(func, [(Call, _visit)], order="post")
    return count


def test_the_pipeline_runs_it_only_when_asked():
    mod = _padded_convs()
    assert _guarded_texture_reads(mod, opt_level=3) > 0
    assert _guarded_texture_reads(mod, **OPT_IN) == 0


def _border_skip_reason():
    if not tvm.runtime.enabled("opencl") or not tvm.opencl(0).exist:
        return "no OpenCL device (OCL_ICD_VENDORS names the ICDs, TVM_OPENCL_DEVICE picks one)"
    platform = tvm.get_global_func("runtime.opencl.device_string", allow_missing=True)
    if platform is not None and platform(0, "platform") == "Intel(R) OpenCL":
        return (
            "Intel's CPU OpenCL runtime does not return the image border: it crashes on reads "
            "outside an image"
        )
    return None


def test_answers_with_the_border_equal_llvm():
    reason = _border_skip_reason()
    if reason is not None:
        pytest.skip(reason)
    mod = _padded_convs()
    rng = np.random.default_rng()
    inputs = [
        rng.standard_normal([int(d) for d in p.ty.shape]).astype("float32")
        for p in mod["main"].params
    ]
    dev = tvm.opencl(0)
    with tvm.transform.PassContext(**OPT_IN):
        texture = relax.VirtualMachine(tvm.compile(mod, target=TEXTURE), dev)
    reference = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
    out = texture["main"](*[tvm.runtime.tensor(a, dev) for a in inputs]).numpy()
    expected = reference["main"](*[tvm.runtime.tensor(a) for a in inputs]).numpy()
    scale = np.abs(expected).max()
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4 * scale)


if __name__ == "__main__":
    tvm.testing.main()
