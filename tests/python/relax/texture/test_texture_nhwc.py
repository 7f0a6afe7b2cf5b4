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
"""NHWC networks (what the TFLite frontend emits) on the Adreno texture target.

An ``NHWC`` / ``HWIO`` conv chain is converted to ``NCHW4c`` once at the input and back once at
the output; the bias, activation, residual add and pooling between the convolutions stay on
textures and fuse into the conv kernels. TFLite adds a conv's bias as a 1-D ``(C,)`` tensor:
``AlignBroadcastRank`` reshapes it to ``(1, 1, 1, C)`` so that ``ConvertLayout`` can block it
(otherwise every conv's result left its texture for the bias add, two layout transforms per
conv). Numerics match the float32 LLVM build on fresh random inputs.
"""

import numpy as np
import pytest

import tvm
from tvm import relax
from tvm.relax.backend.adreno.transform.align_broadcast_rank import AlignBroadcastRank

import texture_testing as tt


def _conv(nb, x, out_channels, kernel=3, stride=1, depthwise=False):
    """NHWC conv with a fresh HWIO weight (HWOI for depthwise, as TFLite emits), plus a 1-D
    bias; in float16_acc32 mode accumulate in float32 and cast back."""
    in_channels = int(x.ty.shape[3])
    if depthwise:
        w = nb.param("w", (kernel, kernel, in_channels, 1))
        layout, groups = "HWOI", in_channels
    else:
        w = nb.param("w", (kernel, kernel, in_channels, out_channels))
        layout, groups = "HWIO", 1
    acc32 = nb.mode == "float16_acc32"
    y = nb.emit(
        relax.op.nn.conv2d(
            x,
            w,
            strides=stride,
            padding=kernel // 2,
            groups=groups,
            data_layout="NHWC",
            kernel_layout=layout,
            out_dtype="float32" if acc32 else nb.dtype,
        )
    )
    if acc32:
        y = nb.emit(relax.op.astype(y, "float16"))
    return nb.emit(relax.op.add(y, nb.param("b", (int(y.ty.shape[3]),))))


def _chain(nb):
    """conv + bias + relu, residual add, max pool, conv + bias."""
    x = nb.input((1, 9, 9, 8))
    y = nb.emit(relax.op.nn.relu(_conv(nb, x, 8)))
    y = nb.emit(relax.op.add(y, x))
    y = nb.emit(relax.op.nn.max_pool2d(y, 2, strides=2, layout="NHWC"))
    return _conv(nb, y, 12)


def _residual(nb):
    """conv + bias + relu, residual add, conv + bias: the chain without pooling."""
    x = nb.input((1, 9, 9, 8))
    y = nb.emit(relax.op.nn.relu(_conv(nb, x, 8)))
    return _conv(nb, nb.emit(relax.op.add(y, x)), 12)


def _blaze_block(nb):
    """BlazeFace's unit: depthwise 5x5 + bias, pointwise 1x1 + bias, residual add, relu."""
    x = nb.input((1, 10, 10, 12))
    y = _conv(nb, x, 12, kernel=5, depthwise=True)
    y = _conv(nb, y, 12, kernel=1)
    return nb.emit(relax.op.nn.relu(nb.emit(relax.op.add(y, x))))


def _odd(nb):
    """Odd sizes, stride 2, and channel counts that are not multiples of 4 at the ends."""
    x = nb.input((1, 11, 7, 4))
    y = nb.emit(relax.op.nn.relu(_conv(nb, x, 8, stride=2)))
    y = nb.emit(relax.op.clip(_conv(nb, y, 8, kernel=3, depthwise=True), 0, 6))
    return _conv(nb, y, 6, kernel=1)


def _rgb_stem(nb):
    """An image model's first layers as TFLite gives them: 3 input channels, 5x5 stride 2."""
    x = nb.input((1, 16, 16, 3))
    y = nb.emit(relax.op.nn.relu(_conv(nb, x, 8, kernel=5, stride=2)))
    return _conv(nb, y, 8, kernel=3, depthwise=True)


def _prelu_chain(nb):
    """MediaPipe's palm detector: conv + bias + PReLU (one slope per channel), twice."""
    x = nb.input((1, 12, 12, 8))
    y = nb.emit(relax.op.nn.prelu(_conv(nb, x, 8), nb.param("alpha", (8,)), axis=3))
    return nb.emit(relax.op.nn.prelu(_conv(nb, y, 8), nb.param("alpha", (8,)), axis=3))


def _pool_prelu(nb):
    """The palm detector's downsampling: max pool, residual add, PReLU, in one kernel."""
    x = nb.input((1, 12, 12, 8))
    y = _conv(nb, x, 8)
    pooled = nb.emit(relax.op.nn.max_pool2d(y, pool_size=2, strides=2, layout="NHWC"))
    z = nb.emit(relax.op.add(pooled, _conv(nb, pooled, 8, kernel=1)))
    return nb.emit(relax.op.nn.prelu(z, nb.param("alpha", (8,)), axis=3))


def _widen_channels(nb, x, extra):
    pads = [0, 0, 0, 0, 0, 0, 0, extra]
    return nb.emit(relax.op.nn.pad(x, pad_width=pads, pad_value=0.0))


def _blaze_widen(nb):
    """BlazeFace's units that widen the channels (12 -> 16): the shortcut gets zero channels,
    at stride 1 after the conv's input, at stride 2 after a max pooling."""
    x = nb.emit(relax.op.nn.relu(_conv(nb, nb.input((1, 8, 8, 4)), 12, kernel=3)))
    y = _conv(nb, _conv(nb, x, 12, kernel=3, depthwise=True), 16, kernel=1)
    x = nb.emit(relax.op.nn.relu(nb.emit(relax.op.add(y, _widen_channels(nb, x, 4)))))
    y = _conv(nb, _conv(nb, x, 16, kernel=3, stride=2, depthwise=True), 20, kernel=1)
    pooled = nb.emit(relax.op.nn.max_pool2d(x, pool_size=2, strides=2, layout="NHWC"))
    return nb.emit(relax.op.nn.relu(nb.emit(relax.op.add(y, _widen_channels(nb, pooled, 4)))))


def _blaze_partial(nb):
    """BlazeFace's 42-channel stage in small: 14 channels, not whole pixels, between a conv
    that widens 12 -> 14 and one that widens 14 -> 20 (conv and pooled shortcut)."""
    x = nb.emit(relax.op.nn.relu(_conv(nb, nb.input((1, 8, 8, 4)), 12, kernel=3)))
    y = _conv(nb, _conv(nb, x, 12, kernel=3, depthwise=True), 14, kernel=1)
    x = nb.emit(relax.op.nn.relu(nb.emit(relax.op.add(y, _widen_channels(nb, x, 2)))))
    y = _conv(nb, _conv(nb, x, 14, kernel=3, stride=2, depthwise=True), 20, kernel=1)
    pooled = nb.emit(relax.op.nn.max_pool2d(x, pool_size=2, strides=2, layout="NHWC"))
    return nb.emit(relax.op.nn.relu(nb.emit(relax.op.add(y, _widen_channels(nb, pooled, 6)))))


def _fpn_upsample(nb):
    """The palm detector's feature pyramid: a coarse map upsampled twice (bilinear, half-pixel
    centres), added to the finer map, PReLU."""
    coarse = _conv(nb, nb.input((1, 5, 6, 8)), 8)
    up = nb.emit(relax.op.image.resize2d(coarse, (10, 12), layout="NHWC", method="linear"))
    fine = _conv(nb, nb.input((1, 10, 12, 8)), 8)
    return nb.emit(relax.op.nn.prelu(nb.emit(relax.op.add(up, fine)), nb.param("a", (8,)), axis=3))


def _upsample_nearest(nb):
    """TFLite's nearest-neighbour upsampling (asymmetric coordinates, floor) between convs."""
    y = _conv(nb, nb.input((1, 5, 7, 8)), 8)
    up = nb.emit(
        relax.op.image.resize2d(
            y,
            (10, 14),
            layout="NHWC",
            method="nearest_neighbor",
            coordinate_transformation_mode="asymmetric",
            rounding_method="floor",
        )
    )
    return _conv(nb, up, 8)


NETS = {
    "fpn_upsample": _fpn_upsample,
    "upsample_nearest": _upsample_nearest,
    "chain": _chain,
    "blaze_widen": _blaze_widen,
    "blaze_partial": _blaze_partial,
    "prelu_chain": _prelu_chain,
    "pool_prelu": _pool_prelu,
    "residual": _residual,
    "blaze_block": _blaze_block,
    "odd": _odd,
    "rgb_stem": _rgb_stem,
}


def _layout_transforms(lowered):
    """Layout-transform calls as (PrimFunc name, argument): those out of the blocked 5-D layout
    and those of the input ``x0``."""
    call_tir = tvm.ir.Op.get("relax.call_tir")
    unblocking, of_input = [], []

    def _visit(expr):
        if isinstance(expr, relax.Call) and expr.op.same_as(call_tir):
            name = expr.args[0].name_hint
            if "layout_transform" in name:
                arg = expr.args[1].fields[0]
                if len(arg.ty.shape) == 5:
                    unblocking.append(name)
                if isinstance(arg, relax.Var) and arg.name == "x0":
                    of_input.append(name)

    relax.analysis.post_order_visit(lowered["main"], _visit)
    return unblocking, of_input


@pytest.mark.parametrize(
    "net", ["chain", "residual", "blaze_block", "blaze_widen", "prelu_chain", "upsample_nearest"]
)
def test_one_transform_in_one_out(net, compile_dtype_mode):
    """The input is transformed into NCHW4c once, only the output out of it, and every other
    kernel (a resize too) reads a texture."""
    mod = tt.build_network(NETS[net], compile_dtype_mode)
    lowered, ex = tt.build_texture_with_scopes(mod)
    unblocking, of_input = _layout_transforms(lowered)
    assert len(unblocking) == 1 and len(of_input) == 1, tt.describe_scopes(lowered)
    kernels = [c for c in tt.texture_call_scopes(lowered) if "layout_transform" not in c.func]
    assert all(tt.is_texture(c.inputs[0]) for c in kernels), tt.describe_scopes(lowered)
    # The bias add of every conv is inside the conv's kernel.
    convs = tt.conv2d_calls(lowered)
    assert convs and all("add" in c.func for c in convs), tt.describe_scopes(lowered)
    tt.assert_kernels_use_images(ex)


def test_partial_channel_stage_stays_on_textures(compile_dtype_mode):
    """14 channels are held as 16 whose last two are zero: the convs, the residual adds with
    their widened shortcuts and the pooling read and write textures, and no slice back to 14
    channels is left. Only the pads and re-layouts of the weights and biases run on buffers
    (parameters here; a model's constant weights fold at compile time)."""
    lowered, ex = tt.build_texture_with_scopes(tt.build_network(_blaze_partial, compile_dtype_mode))
    calls = tt.texture_call_scopes(lowered)
    compute = [c for c in calls if "conv2d" in c.func or "pool" in c.func]
    assert len(compute) == 6, tt.describe_scopes(lowered)
    assert all(tt.is_texture(c.inputs[0]) for c in compute), tt.describe_scopes(lowered)
    assert all(tt.is_texture(c.outputs[0]) for c in compute[:-1]), tt.describe_scopes(lowered)
    assert not [c.func for c in calls if "strided_slice" in c.func], tt.describe_scopes(lowered)
    tt.assert_kernels_use_images(ex)


def test_rgb_first_layer_runs_on_textures(compile_dtype_mode):
    """3 input channels are padded to a pixel of 4 (PadConvChannels reads the NHWC/HWIO
    layouts), so the first conv reads and writes textures like the rest."""
    lowered, ex = tt.build_texture_with_scopes(tt.build_network(_rgb_stem, compile_dtype_mode))
    tt.assert_conv2d_uses_texture(lowered, min_convs=2)
    tt.assert_conv2d_output_texture(lowered)
    tt.assert_kernels_use_images(ex)


def test_input_read_twice_is_transformed_once():
    """The input feeds the first conv and the residual add: one transform serves both."""
    lowered = tt.lower_to_scopes(tt.build_network(_chain, "float32"))
    _, of_input = _layout_transforms(lowered)
    assert len(of_input) == 1, tt.describe_scopes(lowered)


@pytest.mark.requires_opencl
@pytest.mark.parametrize("net", list(NETS))
def test_numerics(net, dtype_mode, rng):
    tt.check_numerics(NETS[net], dtype_mode, rng, name=net)


def _bias_add_module(bias_shape, layout="NHWC"):
    """conv2d (8 channels, 4x4) followed by ``add`` of an operand of ``bias_shape``."""
    nhwc = layout == "NHWC"
    x_shape, w_shape = ((1, 4, 4, 8), (1, 1, 8, 8)) if nhwc else ((1, 8, 4, 4), (8, 8, 1, 1))
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType(x_shape, "float32"))
    w = relax.Var("w", relax.TensorType(w_shape, "float32"))
    b = relax.Var("b", relax.TensorType(bias_shape, "float32"))
    kernel_layout = "HWIO" if layout == "NHWC" else "OIHW"
    with bb.function("main", [x, w, b]):
        with bb.dataflow():
            y = bb.emit(relax.op.nn.conv2d(x, w, data_layout=layout, kernel_layout=kernel_layout))
            out = bb.emit_output(relax.op.add(y, b))
        bb.emit_func_output(out)
    return bb.get()


def _add_operand_shapes(mod):
    shapes = []
    add = tvm.ir.Op.get("relax.add")

    def _visit(expr):
        if isinstance(expr, relax.Call) and expr.op.same_as(add):
            shapes.append([tuple(int(d) for d in a.ty.shape) for a in expr.args])

    relax.analysis.post_order_visit(mod["main"], _visit)
    return shapes


@pytest.mark.parametrize(
    "layout, bias_shape, expected",
    [
        ("NHWC", (8,), (1, 1, 1, 8)),  # TFLite's conv bias
        ("NCHW", (8, 1, 1), (1, 8, 1, 1)),
        ("NCHW", (4,), (4,)),  # broadcasts over the channels: left alone
        ("NHWC", (4, 1, 8), (4, 1, 8)),  # not per channel: left alone
        ("NHWC", (1,), ()),  # one element: a scalar
        ("NHWC", (), ()),  # a scalar broadcasts in any layout: left alone
        ("NHWC", (1, 1, 1, 8), (1, 1, 1, 8)),  # equal ranks: nothing to do
    ],
)
def test_align_broadcast_rank(layout, bias_shape, expected, rng):
    """A per-channel operand of a conv's result gains leading unit axes, others stay, and the
    result is unchanged (LLVM)."""
    mod = _bias_add_module(bias_shape, layout)
    aligned = AlignBroadcastRank()(mod)
    full = (1, 4, 4, 8) if layout == "NHWC" else (1, 8, 4, 4)
    assert _add_operand_shapes(aligned) == [[full, expected]]
    inputs = [rng.uniform(-1, 1, [int(d) for d in p.ty.shape]) for p in mod["main"].params]
    inputs = [tvm.runtime.tensor(np.asarray(a, "float32")) for a in inputs]
    results = []
    for module in (mod, aligned):
        vm = relax.VirtualMachine(tt.build_llvm(module), tvm.cpu())
        results.append(vm["main"](*inputs).numpy())
    np.testing.assert_array_equal(results[1], results[0])
