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
# pylint: disable=invalid-name
"""Transposed conv2d on the Adreno texture target.

``relax.nn.conv2d_transpose`` (``NCHW`` / ``IOHW``) is lowered to the channel-blocked
``conv2d_transpose_NCHWc`` compute: its input and output are textures, its weight a buffer, and
the bias, activation and residual add after it fuse into its kernel. Between two convolutions
nothing leaves the texture layout. Each case matches the float32 LLVM build of the same module
on fresh random inputs; shapes cover strides 1 to 3, output padding, odd and non-square sizes,
asymmetric padding and channel counts that are not multiples of 4.
"""

import re

import pytest

import tvm
from tvm import relax
from tvm.relax.transform.legalize_ops import adreno as legalize_adreno

import texture_testing as tt

# PrimFunc name of the lowered transposed convolution (fused ones start with "fused_").
CONV_T = "conv2d_transpose_NCHWc"


def _conv_t(nb, x, out_channels, kernel=3, stride=2, padding=1, output_padding=0, **attrs):
    """Emit conv2d_transpose with a fresh IOHW weight; in float16_acc32 mode accumulate in
    float32 and cast back, as NetBuilder.conv2d does."""
    groups = attrs.get("groups", 1)
    w = nb.param("w", (int(x.ty.shape[1]), out_channels // groups, kernel, kernel))
    acc32 = nb.mode == "float16_acc32"
    y = nb.emit(
        relax.op.nn.conv2d_transpose(
            x,
            w,
            strides=stride,
            padding=padding,
            output_padding=output_padding,
            out_dtype="float32" if acc32 else nb.dtype,
            **attrs,
        )
    )
    return nb.emit(relax.op.astype(y, "float16")) if acc32 else y


def _single(in_channels, out_channels, size, **kwargs):
    def fn(nb):
        height, width = size if isinstance(size, tuple) else (size, size)
        x = nb.input((1, in_channels, height, width))
        return _conv_t(nb, x, out_channels, **kwargs)

    return fn


def _epilogue(act):
    """conv -> conv_t + bias + act (+ residual) -> conv: the decoder step of a segmenter."""

    def fn(nb):
        x = nb.input((1, 8, 5, 5))
        y = nb.emit(relax.op.nn.relu(nb.bias(nb.conv2d(x, 8))))
        y = nb.bias(_conv_t(nb, y, 12, kernel=3, stride=2, padding=1, output_padding=1))
        if act == "relu":
            y = nb.emit(relax.op.nn.relu(y))
        elif act == "relu6":
            y = nb.emit(relax.op.clip(y, 0, 6))
        else:  # residual: a skip connection of the output's shape
            y = nb.emit(relax.op.add(nb.emit(relax.op.clip(y, -1, 1)), nb.input((1, 12, 10, 10))))
        return nb.conv2d(y, 8)

    return fn


def _tflite_style(nb):
    """What the TFLite frontend emits for a transposed conv after an NHWC conv: the result
    permuted to NCHW for ``conv2d_transpose`` (NCHW4c -> NHWC -> NCHW -> NCHW4c, folded away)."""
    x = nb.input((1, 6, 6, 8))
    w = nb.param("w", (3, 3, 8, 8))
    y = nb.emit(
        relax.op.nn.conv2d(
            x, w, padding=1, data_layout="NHWC", kernel_layout="HWIO", out_dtype="float32"
        )
        if nb.mode == "float16_acc32"
        else relax.op.nn.conv2d(
            x, w, padding=1, data_layout="NHWC", kernel_layout="HWIO", out_dtype=nb.dtype
        )
    )
    if nb.mode == "float16_acc32":
        y = nb.emit(relax.op.astype(y, "float16"))
    y = nb.emit(relax.op.permute_dims(nb.emit(relax.op.nn.relu(y)), [0, 3, 1, 2]))
    return nb.emit(relax.op.nn.relu(_conv_t(nb, y, 8, output_padding=1)))


CASES = {
    "stride1": _single(8, 8, 6, stride=1),
    "stride2_outpad1": _single(8, 4, 5, stride=2, output_padding=1),
    "stride2_kernel4": _single(4, 8, 7, kernel=4, stride=2),
    "stride2_nopad_odd": _single(4, 4, (7, 5), stride=2, padding=0),
    "stride3_asym_pad": _single(
        4, 4, 3, kernel=5, stride=3, padding=(2, 1, 0, 2), output_padding=2
    ),
    "channels_unaligned": _single(6, 10, 5, stride=2, output_padding=1),
    "channels_3_to_5": _single(3, 5, 4, kernel=2, stride=2, padding=0),
}
EPILOGUES = ["relu", "relu6", "residual"]
CHAINS = {f"conv_t+bias+{act}": _epilogue(act) for act in EPILOGUES}
CHAINS["tflite_nhwc_permute"] = _tflite_style


def _transforms_of_computed_tensors(lowered):
    """Layout-transform calls whose argument is computed in the graph, not a parameter."""
    main = lowered["main"]
    params = {p.name for p in main.params}
    call_tir = tvm.ir.Op.get("relax.call_tir")
    found = []

    def _visit(expr):
        if isinstance(expr, relax.Call) and expr.op.same_as(call_tir):
            if "layout_transform" in expr.args[0].name_hint:
                args = [a for a in expr.args[1].fields if isinstance(a, relax.Var)]
                if any(a.name not in params for a in args):
                    found.append(expr.args[0].name_hint)

    relax.analysis.post_order_visit(main, _visit)
    return found


def _transpose_calls(lowered):
    calls = [c for c in tt.texture_call_scopes(lowered) if CONV_T in c.func]
    assert len(calls) == 1, "expected one transposed conv kernel:\n  " + tt.describe_scopes(lowered)
    return calls[0]


@pytest.mark.parametrize("case", list(CASES))
def test_compile(case, compile_dtype_mode):
    """Input texture, weight buffer, one kernel that reads and writes images."""
    mod = tt.build_network(CASES[case], compile_dtype_mode)
    lowered, ex = tt.build_texture_with_scopes(mod)
    call = _transpose_calls(lowered)
    assert tt.is_texture(call.inputs[0]) and call.inputs[1] == "global", tt.describe_scopes(lowered)
    kernels = [k for n, k in tt.kernel_sources(ex).items() if CONV_T in n]
    assert len(kernels) == 1 and kernels[0].reads_image, sorted(tt.kernel_sources(ex))
    tt.assert_images_used_as_images(ex)


@pytest.mark.parametrize("chain", list(CHAINS))
def test_epilogue_fuses_and_neighbours_stay_on_textures(chain):
    """conv -> conv_t + bias + act (-> conv): the epilogue is inside the transposed conv's
    kernel, which reads a texture and (unless it gives the network's output) writes one whole
    texel per thread, and only the network's input and output change layout."""
    lowered, ex = tt.build_texture_with_scopes(tt.build_network(CHAINS[chain], "float32"))
    call = _transpose_calls(lowered)
    assert call.func.startswith("fused_"), tt.describe_scopes(lowered)
    assert tt.is_texture(call.inputs[0]), tt.describe_scopes(lowered)
    for conv in tt.conv2d_calls(lowered):
        assert tt.is_texture(conv.inputs[0]), tt.describe_scopes(lowered)
    # Parameters (input, weights, biases, skip input) are transformed into NCHW4c; the only
    # transform of a computed tensor is the one of the network's output.
    assert len(_transforms_of_computed_tensors(lowered)) == 1, tt.describe_scopes(lowered)
    kernel = [k for n, k in tt.kernel_sources(ex).items() if CONV_T in n][0]
    assert kernel.reads_image, kernel.name
    if chain != "tflite_nhwc_permute":  # there the transposed conv gives the network output
        assert tt.is_texture(call.outputs[0]), tt.describe_scopes(lowered)
        assert len(re.findall(r"\bwrite_image[fh]\s*\(", kernel.body)) == 1, kernel.body


@pytest.mark.requires_opencl
@pytest.mark.parametrize("case", list(CASES))
def test_numerics(case, dtype_mode, rng):
    tt.check_numerics(CASES[case], dtype_mode, rng, name=case)


@pytest.mark.requires_opencl
@pytest.mark.parametrize("chain", list(CHAINS))
def test_epilogue_numerics(chain, dtype_mode, rng):
    tt.check_numerics(CHAINS[chain], dtype_mode, rng, name=chain)


FALLBACKS = {
    "groups2": {"groups": 2},
    "dilation2": {"dilation": 2},
}


@pytest.mark.parametrize("attrs", list(FALLBACKS))
def test_unsupported_stays_on_buffers(attrs, rng):
    """Grouped or dilated transposed convs keep the generic buffer lowering, and still compute
    the right result."""
    fn = _single(8, 8, 5, stride=2, **FALLBACKS[attrs])
    mod = tt.build_network(fn, "float32")
    call = mod["main"].body.blocks[0].bindings[0].value
    assert not legalize_adreno.conv2d_transpose_supported(call)
    with pytest.raises(ValueError, match=r"has no Adreno texture lowering \(NCHW/IOHW"):
        legalize_adreno.conv2d_transpose_NCHWc(relax.BlockBuilder(), call)
    lowered, _ = tt.build_texture_with_scopes(mod)
    assert not [c for c in tt.texture_call_scopes(lowered) if CONV_T in c.func]
    tt.require_device("float32", done="compile-side checks passed")
    tt.check_numerics(fn, "float32", rng, name=attrs)
