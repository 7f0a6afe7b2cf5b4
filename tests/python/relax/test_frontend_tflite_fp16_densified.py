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
"""Tests of the TFLite frontend on float16 weights stored sparse: the weight reaches its
consumer through DENSIFY then DEQUANTIZE (float16 to float32), and DENSIFY's output, which has
no buffer of its own, is the value DEQUANTIZE converts.

The models follow what TFLite's converter writes for sparse float16 weights: a constant float16
tensor with sparsity parameters (CSR, or CSR of blocks), DENSIFY, DEQUANTIZE, then CONV_2D or
FULLY_CONNECTED.  They are written with LiteRT's flatbuffer object API, and the expected
answers are LiteRT's interpreter's."""

import numpy as np
import pytest

import tvm
import tvm.testing
from tvm import relax

import tflite_testing as tfl  # pylint: disable=wrong-import-order


def _index_vector(values, vector_type):
    """A SparseIndexVector union member holding ``values``.

    Parameters
    ----------
    values : sequence of int
        The indices or segment boundaries.
    vector_type : str
        "Int32Vector", "Uint16Vector" or "Uint8Vector".

    Returns
    -------
    tuple
        (union type, union value) for a DimensionMetadataT field pair.
    """
    vector = getattr(tfl.schema, vector_type + "T")()
    vector.values = [int(v) for v in values]
    return getattr(tfl.schema.SparseIndexVector, vector_type), vector


def _dimension(dense_size=None, segments=None, indices=None):
    """A DimensionMetadataT: DENSE of ``dense_size``, or SPARSE_CSR of ``segments`` and
    ``indices`` (stored as int32 and uint8 vectors, as TFLite's converter picks the narrowest
    type that holds them)."""
    metadata = tfl.schema.DimensionMetadataT()
    if segments is None:
        metadata.format = tfl.schema.DimensionType.DENSE
        metadata.denseSize = dense_size
    else:
        metadata.format = tfl.schema.DimensionType.SPARSE_CSR
        metadata.arraySegmentsType, metadata.arraySegments = _index_vector(segments, "Int32Vector")
        metadata.arrayIndicesType, metadata.arrayIndices = _index_vector(indices, "Uint8Vector")
    return metadata


def _sparsify(dense: np.ndarray, block: int = 1):
    """Encode ``dense`` as TFLite stores a sparse constant: every axis dense but the last,
    which is CSR; with ``block`` > 1, the last axis is cut into blocks of that many values and
    only blocks holding a non-zero are stored, whole (a fifth, dense, block level).

    Parameters
    ----------
    dense : np.ndarray
        The weight; its last axis must be a multiple of ``block`` and at most 255 blocks long.
    block : int
        Block length along the last axis.

    Returns
    -------
    tuple of (np.ndarray, tfl.schema.SparsityParametersT)
        The stored values, in traversal order, and the sparsity parameters.
    """
    rank = dense.ndim
    rows = dense.reshape(-1, dense.shape[-1] // block, block)
    kept = np.any(rows != 0, axis=2)  # (row, block column) pairs that are stored
    segments = np.concatenate([[0], np.cumsum(kept.sum(axis=1))])
    indices = np.nonzero(kept)[1]
    values = rows[kept].reshape(-1)
    sparsity = tfl.schema.SparsityParametersT()
    levels = [_dimension(dense_size=size) for size in dense.shape[:-1]]
    levels.append(_dimension(segments=segments, indices=indices))
    if block > 1:
        levels.append(_dimension(dense_size=block))
        sparsity.blockMap = [rank - 1]  # the block level splits the last original axis
    sparsity.traversalOrder = list(range(len(levels)))
    sparsity.dimMetadata = levels
    return values, sparsity


def _operator_code(builtin, version=1):
    """An OperatorCodeT of the builtin operator ``builtin`` (a BuiltinOperator name)."""
    code = tfl.schema.OperatorCodeT()
    code.builtinCode = code.deprecatedBuiltinCode = getattr(tfl.schema.BuiltinOperator, builtin)
    code.version = version
    return code


def _operator(opcode_index, inputs, outputs, options=None):
    """An OperatorT; ``options`` is (BuiltinOptions name, options object) or None."""
    operator = tfl.schema.OperatorT()
    operator.opcodeIndex = opcode_index
    operator.inputs, operator.outputs = list(inputs), list(outputs)
    if options is not None:
        operator.builtinOptionsType = getattr(tfl.schema.BuiltinOptions, options[0])
        operator.builtinOptions = options[1]
    return operator


def _densified_weight_model(data_shape, weight, bias, output_shape, consumer, block):
    """y = consumer(x, DEQUANTIZE(DENSIFY(weight)), DEQUANTIZE(bias)), weight and bias float16.

    Parameters
    ----------
    data_shape, output_shape : tuple of int
        Shapes of the input ``x`` and the output ``y``.
    weight : np.ndarray
        The float16 weight (OHWI for CONV_2D, OI for FULLY_CONNECTED), stored sparse.
    bias : np.ndarray
        The float16 bias, stored dense.
    consumer : str
        "CONV_2D" (SAME padding, stride 2 along H, 1 along W) or "FULLY_CONNECTED".
    block : int
        Block length of the sparse encoding along the weight's last axis (1: plain CSR).

    Returns
    -------
    bytes
        The serialized model.
    """
    values, sparsity = _sparsify(weight, block)
    float16 = tfl.schema.TensorType.FLOAT16
    tensors = [
        tfl.tensor("x", data_shape, 0),
        tfl.tensor("weight_sparse", weight.shape, 1, float16),
        tfl.tensor("weight_fp16", weight.shape, 0, float16),  # DENSIFY's output: no buffer
        tfl.tensor("weight", weight.shape, 0),
        tfl.tensor("bias_fp16", bias.shape, 2, float16),
        tfl.tensor("bias", bias.shape, 0),
        tfl.tensor("y", output_shape, 0),
    ]
    tensors[1].sparsity = sparsity
    if consumer == "CONV_2D":
        options = tfl.schema.Conv2DOptionsT()
        options.padding = tfl.schema.Padding.SAME
        options.strideH, options.strideW = 2, 1
        consumer_options = ("Conv2DOptions", options)
    else:
        consumer_options = ("FullyConnectedOptions", tfl.schema.FullyConnectedOptionsT())
    graph = tfl.schema.SubGraphT()
    graph.tensors = tensors
    graph.inputs, graph.outputs = [0], [6]
    graph.operators = [
        _operator(0, [1], [2]),
        _operator(1, [2], [3]),
        _operator(1, [4], [5]),
        _operator(2, [0, 3, 5], [6], consumer_options),
    ]
    model = tfl.schema.ModelT()
    model.version = 3
    # DEQUANTIZE from float16 came with version 3 of the operator.
    model.operatorCodes = [
        _operator_code("DENSIFY"),
        _operator_code("DEQUANTIZE", version=3),
        _operator_code(consumer),
    ]
    model.buffers = [tfl.schema.BufferT(), tfl.buffer(values), tfl.buffer(bias)]
    model.subgraphs = [graph]
    builder = tfl.flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def _sparse_float16(shape, block, rng):
    """A random float16 weight of ``shape`` with about half its blocks of ``block`` values
    along the last axis zero, so that the sparse encoding leaves values out."""
    weight = rng.uniform(-1.0, 1.0, size=shape)
    keep = rng.uniform(size=shape[:-1] + (shape[-1] // block, 1)) < 0.5
    weight = weight * np.repeat(keep, block, axis=-1).reshape(shape)
    return weight.astype("float16")


def _float16_constants(mod: tvm.IRModule):
    """The float16 constants that ``mod["main"]`` casts to float32, in post order."""
    constants = []

    def _visit(expr):
        if (
            isinstance(expr, relax.Call)
            and isinstance(expr.op, tvm.ir.Op)
            and expr.op.name == "relax.astype"
            and isinstance(expr.args[0], tvm.ir.expr.Constant)
            and expr.args[0].value.dtype == "float16"
        ):
            constants.append(expr.args[0].value.numpy())

    relax.analysis.post_order_visit(mod["main"], _visit)
    return constants


# consumer -> (input shape, weight shape, output shape)
_GRAPHS = {
    "CONV_2D": ((1, 6, 5, 8), (4, 3, 3, 8), (1, 3, 5, 4)),
    "FULLY_CONNECTED": ((2, 16), (6, 16), (2, 6)),
}


@pytest.mark.parametrize(
    "consumer, block",
    [("CONV_2D", 1), ("CONV_2D", 4), ("FULLY_CONNECTED", 1), ("FULLY_CONNECTED", 4)],
    ids=["conv2d-csr", "conv2d-block4", "dense-csr", "dense-block4"],
)
def test_densified_float16_weight_matches_litert(consumer, block):
    """The sparse float16 weight is imported as its dense value, cast to float32: the model
    computes LiteRT's answer, for a convolution and a fully connected layer, with and
    without blocks in the sparse encoding."""
    data_shape, weight_shape, output_shape = _GRAPHS[consumer]
    rng = np.random.default_rng()
    weight = _sparse_float16(weight_shape, block, rng)
    bias = rng.uniform(-1.0, 1.0, size=weight_shape[0]).astype("float16")
    model = _densified_weight_model(data_shape, weight, bias, output_shape, consumer, block)
    mod = tfl.import_model(model)

    # The dense weight and the bias are the only float16 constants, each cast to float32.
    constants = _float16_constants(mod)
    assert len(constants) == 2
    np.testing.assert_array_equal(constants[0], weight)
    np.testing.assert_array_equal(constants[1], bias)

    data = rng.uniform(-1.0, 1.0, size=data_shape).astype("float32")
    expected = tfl.litert_output(model, data, reference_kernels=False)
    assert expected.shape == output_shape
    tvm.testing.assert_allclose(tfl.run_on_cpu(mod, data), expected, rtol=1e-5, atol=1e-5)


if __name__ == "__main__":
    tvm.testing.main()
