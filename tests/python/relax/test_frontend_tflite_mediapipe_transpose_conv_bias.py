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
"""Tests of the TFLite frontend's import of MediaPipe's custom operator
Convolution2DTransposeBias: a transposed convolution with a bias, whose inputs are data (NHWC),
weight (OHWI) and bias, and whose custom options are the raw C struct
TfLiteTransposeConvParams (int32 padding, stride_width, stride_height) instead of a flexbuffer.

The models are one such operator, written with LiteRT's flatbuffer object API.  LiteRT's
interpreter does not know this custom operator (MediaPipe registers it in its own runtime), so
the expected answers come from a numpy transcription of MediaPipe's kernel: output size and
padding computed from the input size, bias first, then every input pixel scattered through the
kernel.  Where the model's stored output shape asks for more than that padding gives, the
import follows TFLite's builtin TRANSPOSE_CONV, which LiteRT does run.  Malformed models raise
errors that say what is wrong."""

from typing import Optional

import numpy as np
import pytest

import tvm
import tvm.testing

import tflite_testing as tfl  # pylint: disable=wrong-import-order

# TfLitePadding of TFLite's C API, the first field of TfLiteTransposeConvParams.
PADDING_SAME, PADDING_VALID = 1, 2


def _params(padding, stride_h, stride_w, *extra):
    """The bytes of a TfLiteTransposeConvParams struct, as MediaPipe's models store it.

    Parameters
    ----------
    padding : int
        PADDING_SAME or PADDING_VALID.
    stride_h, stride_w : int
        The strides; the struct holds the width's first.
    *extra : int
        Further int32 fields (newer TFLite versions append the fused activation).

    Returns
    -------
    bytes
        The little-endian int32 fields.
    """
    return np.array([padding, stride_w, stride_h, *extra], dtype="<i4").tobytes()


def _custom_model(
    data_shape,
    weight_ohwi,
    bias,
    output_shape,
    custom_options: Optional[bytes],
    custom_code=b"Convolution2DTransposeBias",
):
    """A TFLite flatbuffer with one custom operator y = custom_code(x, weight, bias).

    Parameters
    ----------
    data_shape : tuple of int
        NHWC shape of the input ``x``.
    weight_ohwi : np.ndarray
        The float32 weight, OHWI.
    bias : np.ndarray or None
        The float32 bias, one value per output channel; None leaves the input out.
    output_shape : tuple of int
        NHWC shape of ``y``.
    custom_options : Optional[bytes]
        The operator's custom options; None: none at all.
    custom_code : bytes
        The custom operator's name.

    Returns
    -------
    bytes
        The serialized model.
    """
    code = tfl.schema.OperatorCodeT()
    code.builtinCode = tfl.schema.BuiltinOperator.CUSTOM
    code.deprecatedBuiltinCode = tfl.schema.BuiltinOperator.CUSTOM
    code.customCode = custom_code
    code.version = 1
    # Buffer 0 is the empty one, by convention; constants follow it.
    buffers = [tfl.schema.BufferT(), tfl.buffer(weight_ohwi.astype("float32"))]
    tensors = [
        tfl.tensor("x", data_shape, 0),
        tfl.tensor("weight", weight_ohwi.shape, 1),
        tfl.tensor("y", output_shape, 0),
    ]
    inputs = [0, 1]
    if bias is not None:
        buffers.append(tfl.buffer(bias.astype("float32")))
        tensors.append(tfl.tensor("bias", bias.shape, 2))
        inputs.append(3)
    operator = tfl.schema.OperatorT()
    operator.opcodeIndex = 0
    operator.inputs, operator.outputs = inputs, [2]
    if custom_options is not None:  # None: the model has no custom options at all
        operator.customOptions = np.frombuffer(custom_options, dtype=np.uint8)
    graph = tfl.schema.SubGraphT()
    graph.tensors = tensors
    graph.inputs, graph.outputs, graph.operators = [0], [2], [operator]
    model = tfl.schema.ModelT()
    model.version = 3
    model.operatorCodes = [code]
    model.buffers = buffers
    model.subgraphs = [graph]
    return tfl.serialize(model)


def _builtin_model(data_shape, weight_ohwi, bias, output_shape, strides):
    """The same computation as TFLite's builtin TRANSPOSE_CONV with a fused bias, SAME padding.

    Parameters
    ----------
    data_shape : tuple of int
        NHWC shape of the input.
    weight_ohwi, bias : np.ndarray
        The float32 weight (OHWI) and bias.
    output_shape : tuple of int
        NHWC shape of the output, also the operator's output_shape input.
    strides : tuple of int
        (stride_h, stride_w).

    Returns
    -------
    bytes
        The serialized model.
    """
    code = tfl.schema.OperatorCodeT()
    code.builtinCode = tfl.schema.BuiltinOperator.TRANSPOSE_CONV
    code.deprecatedBuiltinCode = tfl.schema.BuiltinOperator.TRANSPOSE_CONV
    code.version = 3  # the version that takes a bias
    options = tfl.schema.TransposeConvOptionsT()
    options.padding = tfl.schema.Padding.SAME
    options.strideH, options.strideW = strides
    operator = tfl.schema.OperatorT()
    operator.opcodeIndex = 0
    operator.inputs, operator.outputs = [0, 1, 2, 4], [3]
    operator.builtinOptionsType = tfl.schema.BuiltinOptions.TransposeConvOptions
    operator.builtinOptions = options
    graph = tfl.schema.SubGraphT()
    graph.tensors = [
        tfl.tensor("output_shape", (4,), 1, tfl.schema.TensorType.INT32),
        tfl.tensor("weight", weight_ohwi.shape, 2),
        tfl.tensor("x", data_shape, 0),
        tfl.tensor("y", output_shape, 0),
        tfl.tensor("bias", bias.shape, 3),
    ]
    graph.inputs, graph.outputs, graph.operators = [2], [3], [operator]
    model = tfl.schema.ModelT()
    model.version = 3
    model.operatorCodes = [code]
    model.buffers = [
        tfl.schema.BufferT(),
        tfl.buffer(np.array(output_shape, dtype="int32")),
        tfl.buffer(weight_ohwi.astype("float32")),
        tfl.buffer(bias.astype("float32")),
    ]
    model.subgraphs = [graph]
    return tfl.serialize(model)


def _mediapipe_geometry(size, kernel, stride, padding):
    """Output size and leading padding of one spatial axis, as MediaPipe's kernel computes
    them from the input size (its Prepare and Eval).

    Parameters
    ----------
    size, kernel, stride : int
        Input size, kernel size and stride along the axis.
    padding : int
        PADDING_SAME or PADDING_VALID.

    Returns
    -------
    tuple of int
        (output size, padding before the first output pixel).
    """
    total = max(0, kernel - (size - 1) % stride - 1) if padding == PADDING_SAME else 0
    return stride * (size - 1) + kernel - total, total // 2


def _mediapipe_reference(data, weight_ohwi, bias, strides, padding):
    """Convolution2DTransposeBias in numpy: every input pixel, times the kernel, added onto the
    output window it reaches; what falls outside the output is dropped.

    Parameters
    ----------
    data : np.ndarray
        NHWC input.
    weight_ohwi : np.ndarray
        OHWI weight.
    bias : np.ndarray
        One value per output channel.
    strides : tuple of int
        (stride_h, stride_w).
    padding : int
        PADDING_SAME or PADDING_VALID.

    Returns
    -------
    np.ndarray
        The NHWC output, float64.
    """
    batch, height, width, _ = data.shape
    out_channels, kernel_h, kernel_w, _ = weight_ohwi.shape
    stride_h, stride_w = strides
    out_h, pad_top = _mediapipe_geometry(height, kernel_h, stride_h, padding)
    out_w, pad_left = _mediapipe_geometry(width, kernel_w, stride_w, padding)
    # Scatter into the unpadded output, then crop the padding off.
    full = np.zeros(
        (batch, (height - 1) * stride_h + kernel_h, (width - 1) * stride_w + kernel_w, out_channels)
    )
    for tap_y in range(kernel_h):
        for tap_x in range(kernel_w):
            contribution = np.einsum(
                "nhwi,oi->nhwo", data.astype("float64"), weight_ohwi[:, tap_y, tap_x, :]
            )
            full[
                :,
                tap_y : tap_y + (height - 1) * stride_h + 1 : stride_h,
                tap_x : tap_x + (width - 1) * stride_w + 1 : stride_w,
                :,
            ] += contribution
    return full[:, pad_top : pad_top + out_h, pad_left : pad_left + out_w, :] + bias


def _random_operands(data_shape, weight_shape):
    """Fresh random data, weight and bias for the given NHWC and OHWI shapes."""
    rng = np.random.default_rng()
    data = rng.uniform(-1.0, 1.0, size=data_shape).astype("float32")
    weight = rng.uniform(-1.0, 1.0, size=weight_shape).astype("float32")
    bias = rng.uniform(-1.0, 1.0, size=weight_shape[0]).astype("float32")
    return data, weight, bias


# (NHWC input, OHWI weight, (stride_h, stride_w), padding).  The output shape is MediaPipe's.
_CASES = {
    # The upsampling layers of MediaPipe's segmentation models: kernel 2 or 4, stride 2.
    "same_k4_s2": ((1, 4, 4, 3), (5, 4, 4, 3), (2, 2), PADDING_SAME),
    "same_k2_s2_batch2": ((2, 3, 4, 4), (3, 2, 2, 4), (2, 2), PADDING_SAME),
    # Odd input sizes: MediaPipe's SAME output is then 2 * size - 1, one pixel cut off each side.
    "same_k3_s2_odd": ((1, 5, 3, 2), (4, 3, 3, 2), (2, 2), PADDING_SAME),
    # Unequal strides and kernel sides, so that an exchange of H and W shows.
    "same_k3x2_s2x1": ((1, 4, 5, 3), (6, 3, 2, 3), (2, 1), PADDING_SAME),
    "valid_k2x3_s3": ((1, 3, 3, 2), (4, 2, 3, 2), (3, 3), PADDING_VALID),
}


@pytest.mark.parametrize("case", list(_CASES), ids=list(_CASES))
def test_matches_mediapipe_kernel(case):
    """Output of the imported operator equals MediaPipe's kernel's, for SAME and VALID padding,
    odd input sizes, unequal strides and a kernel smaller than the stride."""
    data_shape, weight_shape, strides, padding = _CASES[case]
    data, weight, bias = _random_operands(data_shape, weight_shape)
    expected = _mediapipe_reference(data, weight, bias, strides, padding)
    model = _custom_model(data_shape, weight, bias, expected.shape, _params(padding, *strides))
    mod = tfl.import_model(model)
    tvm.testing.assert_allclose(tfl.run_on_cpu(mod, data), expected, rtol=1e-5, atol=1e-5)


def test_emitted_as_nchw_transpose_conv_plus_bias():
    """The operator becomes an NCHW/IOHW conv2d_transpose with SAME padding as TFLite places
    it (the odd pixel at the bottom/right), back to NHWC, plus the bias."""
    data, weight, bias = _random_operands((1, 4, 4, 3), (6, 3, 4, 3))
    # Stride 2, an 8x8 output: the 3-row kernel pads 1 row in all, the 4-column kernel 2.
    model = _custom_model(data.shape, weight, bias, (1, 8, 8, 6), _params(PADDING_SAME, 2, 2))
    mod = tfl.import_model(model)
    (conv,) = tfl.calls(mod, "relax.nn.conv2d_transpose")
    assert (conv.attrs.data_layout, conv.attrs.kernel_layout) == ("NCHW", "IOHW")
    assert conv.attrs.out_layout == "NCHW"
    assert [int(s) for s in conv.attrs.strides] == [2, 2]
    assert [int(p) for p in conv.attrs.padding] == [0, 1, 1, 1]  # top, left, bottom, right
    assert [int(p) for p in conv.attrs.output_padding] == [0, 0]
    assert [int(d) for d in conv.ty.shape] == [1, 6, 8, 8]
    (add,) = tfl.calls(mod, "relax.add")
    np.testing.assert_array_equal(add.args[1].value.numpy(), bias)
    assert [int(d) for d in mod["main"].ret_ty.shape] == [1, 8, 8, 6]


def test_output_padding_follows_stored_shape():
    """A 1x1 kernel with stride 2 and SAME padding cannot reach a stored output of twice the
    input: output_padding adds the missing last row and column (bias only), as TFLite's
    builtin TRANSPOSE_CONV with that output shape does (LiteRT runs that one)."""
    data, weight, bias = _random_operands((1, 4, 3, 2), (3, 1, 1, 2))
    output_shape = (1, 8, 6, 3)
    model = _custom_model(data.shape, weight, bias, output_shape, _params(PADDING_SAME, 2, 2))
    mod = tfl.import_model(model)
    (conv,) = tfl.calls(mod, "relax.nn.conv2d_transpose")
    assert [int(p) for p in conv.attrs.output_padding] == [1, 1]

    interpreter = tfl.interpreter_mod.Interpreter(
        model_content=_builtin_model(data.shape, weight, bias, output_shape, (2, 2)),
        experimental_op_resolver_type=tfl.interpreter_mod.OpResolverType.BUILTIN_REF,
    )
    interpreter.allocate_tensors()
    interpreter.set_tensor(interpreter.get_input_details()[0]["index"], data)
    interpreter.invoke()
    expected = interpreter.get_tensor(interpreter.get_output_details()[0]["index"])
    assert expected.shape == output_shape
    tvm.testing.assert_allclose(tfl.run_on_cpu(mod, data), expected, rtol=1e-5, atol=1e-5)


def test_fourth_field_without_activation_is_accepted():
    """Newer TfLiteTransposeConvParams end with the fused activation; kNone (0) is accepted
    and changes nothing."""
    data, weight, bias = _random_operands((1, 4, 4, 3), (5, 4, 4, 3))
    expected = _mediapipe_reference(data, weight, bias, (2, 2), PADDING_SAME)
    model = _custom_model(data.shape, weight, bias, expected.shape, _params(PADDING_SAME, 2, 2, 0))
    tvm.testing.assert_allclose(
        tfl.run_on_cpu(tfl.import_model(model), data), expected, rtol=1e-5, atol=1e-5
    )


@pytest.mark.parametrize(
    "custom_options, error, message",
    [
        pytest.param(
            np.array([PADDING_SAME, 2], dtype="<i4").tobytes(),
            tvm.error.OpAttributeInvalid,
            r"must hold TfLiteTransposeConvParams \(int32 padding, stride_width, "
            r"stride_height\), got 8 bytes",
            id="two_fields",
        ),
        pytest.param(
            None,
            tvm.error.OpAttributeInvalid,
            r"must hold TfLiteTransposeConvParams .* got 0 bytes",
            id="absent",
        ),
        pytest.param(
            _params(PADDING_SAME, 2, 2)[:10],
            tvm.error.OpAttributeInvalid,
            r"must hold TfLiteTransposeConvParams .* got 10 bytes",
            id="not_whole_int32",
        ),
        pytest.param(
            _params(0, 2, 2),
            tvm.error.OpAttributeInvalid,
            r"unknown padding 0 \(1 SAME, 2 VALID\)",
            id="unknown_padding",
        ),
        pytest.param(
            _params(PADDING_SAME, 2, 2, 1),
            tvm.error.OpAttributeUnImplemented,
            r"Convolution2DTransposeBias with fused activation 1",
            id="fused_relu",
        ),
    ],
)
def test_malformed_custom_options_are_reported(custom_options, error, message):
    """Custom options that are absent, too short for the struct or not whole int32 values,
    an unknown padding kind and a fused activation each raise an error naming the problem."""
    _, weight, bias = _random_operands((1, 4, 4, 3), (5, 4, 4, 3))
    model = _custom_model((1, 4, 4, 3), weight, bias, (1, 8, 8, 5), custom_options)
    with pytest.raises(error, match=message):
        tfl.import_model(model)


def test_inconsistent_models_are_reported():
    """Missing bias, weight channels that do not match the data, and an output size no
    padding or output_padding can give each raise an error naming the problem."""
    _, weight, bias = _random_operands((1, 4, 4, 3), (5, 4, 4, 3))
    options = _params(PADDING_SAME, 2, 2)
    with pytest.raises(tvm.error.OpAttributeInvalid, match=r"expects 3 inputs .* got 2 and 1"):
        tfl.import_model(_custom_model((1, 4, 4, 3), weight, None, (1, 8, 8, 5), options))
    with pytest.raises(tvm.error.OpAttributeInvalid, match=r"does not fit input channels 2"):
        tfl.import_model(_custom_model((1, 4, 4, 2), weight, bias, (1, 8, 8, 5), options))
    with pytest.raises(
        tvm.error.OpAttributeInvalid,
        match=r"output size 11 cannot come from input 4, kernel 4, stride 2",
    ):
        tfl.import_model(_custom_model((1, 4, 4, 3), weight, bias, (1, 11, 8, 5), options))


def test_unsupported_custom_op_is_named():
    """A custom operator without a converter is reported by name, with the list of those that
    have one."""
    _, weight, bias = _random_operands((1, 4, 4, 3), (5, 4, 4, 3))
    model = _custom_model(
        (1, 4, 4, 3),
        weight,
        bias,
        (1, 8, 8, 5),
        _params(PADDING_SAME, 2, 2),
        custom_code=b"MaxUnpooling2D",
    )
    with pytest.raises(
        NotImplementedError,
        match=r"Custom operator 'MaxUnpooling2D' is not supported; supported custom operators: "
        r".*Convolution2DTransposeBias",
    ):
        tfl.import_model(model)


if __name__ == "__main__":
    tvm.testing.main()
