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
"""Tests of the TFLite frontend's TRANSPOSE_CONV: the transposed convolution is emitted in NCHW
with an IOHW kernel, between transposes from and back to NHWC, so that it legalizes and builds.

Each model is a single TRANSPOSE_CONV operator (with or without its fused bias), written with
LiteRT's flatbuffer object API; the expected answers are those of LiteRT's interpreter."""

import numpy as np
import pytest

import tvm
import tvm.testing

import tflite_testing as tfl  # pylint: disable=wrong-import-order

_TENSOR_TYPES = {"float32": "FLOAT32", "int8": "INT8", "int32": "INT32"}


def _quantization(scale, zero_point, axis=0):
    """TFLite quantization parameters: real = scale * (stored - zero_point), along ``axis``.

    Parameters
    ----------
    scale : float or np.ndarray
        One scale, or one per slice along ``axis``.
    zero_point : int or np.ndarray
        The matching zero point(s).
    axis : int
        The quantized dimension, for per-channel parameters.

    Returns
    -------
    tfl.schema.QuantizationParametersT
        The parameters object.
    """
    params = tfl.schema.QuantizationParametersT()
    params.scale = [float(s) for s in np.atleast_1d(scale)]
    params.zeroPoint = [int(z) for z in np.atleast_1d(zero_point)]
    params.quantizedDimension = axis
    return params


def _transpose_conv_model(
    data_shape, weight_ohwi, output_shape, strides, padding, bias=None, quantization=None
):
    """A TFLite flatbuffer with one TRANSPOSE_CONV: y = transpose_conv(x, weight) [+ bias].

    Parameters
    ----------
    data_shape : tuple of int
        NHWC shape of the input ``x``; ``x`` and ``y`` have the weight's dtype.
    weight_ohwi : np.ndarray
        The constant weight in TFLite's OHWI layout, float32 or int8.
    output_shape : tuple of int
        NHWC shape of ``y``, also stored in the operator's output_shape input.
    strides : tuple of int
        (stride_h, stride_w).
    padding : str
        "SAME" or "VALID".
    bias : np.ndarray, optional
        A constant of one value per output channel (float32, or int32 for int8 models), fused
        into the operator.
    quantization : dict of str to tfl.schema.QuantizationParametersT, optional
        Quantization parameters of the tensors "x", "weight", "bias" and "y", for int8 models.

    Returns
    -------
    bytes
        The serialized model.
    """
    code = tfl.schema.OperatorCodeT()
    code.builtinCode = tfl.schema.BuiltinOperator.TRANSPOSE_CONV
    code.deprecatedBuiltinCode = tfl.schema.BuiltinOperator.TRANSPOSE_CONV
    code.version = 3 if bias is not None else 1  # the fused bias input came with version 3
    options = tfl.schema.TransposeConvOptionsT()
    options.padding = getattr(tfl.schema.Padding, padding)
    options.strideH, options.strideW = strides
    data_type = getattr(tfl.schema.TensorType, _TENSOR_TYPES[str(weight_ohwi.dtype)])
    # Buffer 0 is the empty one, by convention; constants follow it.
    buffers = [
        tfl.schema.BufferT(),
        tfl.buffer(np.array(output_shape, dtype="int32")),
        tfl.buffer(weight_ohwi),
    ]
    tensors = [
        tfl.tensor("output_shape", (4,), 1, tfl.schema.TensorType.INT32),
        tfl.tensor("weight", weight_ohwi.shape, 2, data_type),
        tfl.tensor("x", data_shape, 0, data_type),
        tfl.tensor("y", output_shape, 0, data_type),
    ]
    inputs = [0, 1, 2]
    if bias is not None:
        buffers.append(tfl.buffer(bias))
        bias_type = getattr(tfl.schema.TensorType, _TENSOR_TYPES[str(bias.dtype)])
        tensors.append(tfl.tensor("bias", bias.shape, 3, bias_type))
        inputs.append(4)
    for tensor in tensors:
        tensor.quantization = (quantization or {}).get(tensor.name)
    operator = tfl.schema.OperatorT()
    operator.opcodeIndex = 0
    operator.inputs, operator.outputs = inputs, [3]
    operator.builtinOptionsType = tfl.schema.BuiltinOptions.TransposeConvOptions
    operator.builtinOptions = options
    graph = tfl.schema.SubGraphT()
    graph.tensors = tensors
    graph.inputs, graph.outputs, graph.operators = [2], [3], [operator]
    model = tfl.schema.ModelT()
    model.version = 3
    model.operatorCodes = [code]
    model.buffers = buffers
    model.subgraphs = [graph]
    builder = tfl.flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def _shape(expr):
    """The static shape of ``expr``'s tensor type, as Python ints."""
    return [int(dim) for dim in expr.ty.shape]


# (NHWC input, OHWI weight, NHWC output, (stride_h, stride_w), padding).  Kernels are not square
# and strides differ between H and W, so that an exchange of the two axes shows.
_CASES = {
    "same_stride1": ((1, 5, 6, 3), (4, 3, 3, 3), (1, 5, 6, 4), (1, 1), "SAME"),
    "same_stride2": ((2, 4, 5, 3), (6, 3, 2, 3), (2, 8, 10, 6), (2, 2), "SAME"),
    "same_stride_2x1": ((1, 4, 5, 2), (3, 3, 3, 2), (1, 8, 5, 3), (2, 1), "SAME"),
    "valid_stride2": ((1, 3, 4, 4), (5, 3, 2, 4), (1, 7, 8, 5), (2, 2), "VALID"),
    "valid_stride_1x3": ((1, 4, 3, 2), (4, 2, 3, 2), (1, 5, 9, 4), (1, 3), "VALID"),
    # A kernel smaller than the stride: the padding alone cannot give the stored size.
    "same_kernel_below_stride": ((1, 4, 3, 2), (3, 1, 1, 2), (1, 8, 6, 3), (2, 2), "SAME"),
}


@pytest.mark.parametrize("with_bias", [False, True], ids=["no_bias", "bias"])
@pytest.mark.parametrize("case", list(_CASES), ids=list(_CASES))
def test_transpose_conv_matches_litert(case, with_bias):
    """The imported module builds for llvm (an NHWC conv2d_transpose would be left unlowered)
    and computes LiteRT's answer, for SAME and VALID padding and for unequal strides."""
    data_shape, weight_shape, output_shape, strides, padding = _CASES[case]
    rng = np.random.default_rng()
    weight = rng.uniform(-1.0, 1.0, size=weight_shape).astype("float32")
    bias = rng.uniform(-1.0, 1.0, size=weight_shape[0]).astype("float32") if with_bias else None
    model = _transpose_conv_model(data_shape, weight, output_shape, strides, padding, bias)
    mod = tfl.import_model(model)
    data = rng.uniform(-1.0, 1.0, size=data_shape).astype("float32")
    expected = tfl.litert_output(model, data)
    assert expected.shape == output_shape
    tvm.testing.assert_allclose(tfl.run_on_cpu(mod, data), expected, rtol=1e-5, atol=1e-5)


def test_quantized_transpose_conv_matches_litert():
    """An int8 TRANSPOSE_CONV with per-channel weight scales and an int32 bias goes through
    the same NCHW transposed convolution on dequantized values; its answer is LiteRT's to
    within one quantization step (LiteRT requantizes in fixed point, the import in float)."""
    data_shape, weight_shape, output_shape = (1, 4, 5, 3), (6, 3, 3, 3), (1, 8, 10, 6)
    rng = np.random.default_rng()
    data_scale, data_zero_point = 0.02, 3
    weight_scales = rng.uniform(0.005, 0.01, size=6)
    weight = rng.integers(-127, 128, size=weight_shape, dtype="int8")
    # TFLite's int8 bias is in units of data_scale * weight_scale, with no zero point.
    bias = rng.integers(-2000, 2000, size=6, dtype="int32")
    quantization = {
        "x": _quantization(data_scale, data_zero_point),
        "weight": _quantization(weight_scales, np.zeros(6), axis=0),
        "bias": _quantization(data_scale * weight_scales, np.zeros(6), axis=0),
        "y": _quantization(0.1, -2),
    }
    model = _transpose_conv_model(
        data_shape, weight, output_shape, (2, 2), "SAME", bias, quantization=quantization
    )
    mod = tfl.import_model(model)
    (conv,) = tfl.calls(mod, "relax.nn.conv2d_transpose")
    assert (conv.attrs.data_layout, conv.attrs.kernel_layout) == ("NCHW", "IOHW")
    data = rng.integers(-128, 128, size=data_shape, dtype="int8")
    expected = tfl.litert_output(model, data).astype("int32")
    tvm.testing.assert_allclose(tfl.run_on_cpu(mod, data).astype("int32"), expected, rtol=0, atol=1)


def test_unreachable_output_size_is_refused():
    """A stored output size that no output padding below the stride reaches is refused with
    the sizes named, not imported with another shape."""
    weight = np.random.default_rng().uniform(-1.0, 1.0, size=(3, 3, 3, 2)).astype("float32")
    model = _transpose_conv_model((1, 4, 4, 2), weight, (1, 12, 8, 3), (2, 2), "VALID", None)
    with pytest.raises(tvm.error.OpAttributeInvalid, match="output size 12 cannot come from"):
        tfl.import_model(model)


def test_transpose_conv_is_emitted_in_nchw():
    """The conv2d_transpose call reads NCHW data and an IOHW kernel and writes NCHW; the
    function keeps TFLite's NHWC input and output, through two permute_dims."""
    data_shape, weight_shape, output_shape = (1, 4, 5, 3), (6, 3, 2, 3), (1, 8, 10, 6)
    rng = np.random.default_rng()
    weight = rng.uniform(-1.0, 1.0, size=weight_shape).astype("float32")
    bias = rng.uniform(-1.0, 1.0, size=6).astype("float32")
    mod = tfl.import_model(
        _transpose_conv_model(data_shape, weight, output_shape, (2, 2), "SAME", bias)
    )

    (conv,) = tfl.calls(mod, "relax.nn.conv2d_transpose")
    assert conv.attrs.data_layout == "NCHW"
    assert conv.attrs.kernel_layout == "IOHW"
    assert conv.attrs.out_layout == "NCHW"
    assert [int(s) for s in conv.attrs.strides] == [2, 2]
    assert _shape(conv.args[0]) == [1, 3, 4, 5]
    # TFLite's OHWI weight becomes a constant already in IOHW: no transpose of it at run time.
    assert isinstance(conv.args[1], tvm.ir.expr.Constant)
    np.testing.assert_array_equal(conv.args[1].value.numpy(), weight.transpose(3, 0, 1, 2))
    assert _shape(conv) == [1, 6, 8, 10]

    axes = [[int(a) for a in call.attrs.axes] for call in tfl.calls(mod, "relax.permute_dims")]
    assert axes == [[0, 3, 1, 2], [0, 2, 3, 1]]
    assert _shape(mod["main"].params[0]) == list(data_shape)
    assert [int(d) for d in mod["main"].ret_ty.shape] == list(output_shape)


if __name__ == "__main__":
    tvm.testing.main()
