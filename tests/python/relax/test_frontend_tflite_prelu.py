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
"""Tests of the TFLite frontend's PRELU: a per-channel slope stays per channel; others as before.

The models are one PRELU operator written with LiteRT's flatbuffer object API, and the
answers are LiteRT's interpreter's."""

import numpy as np
import pytest

import tvm
import tvm.testing

import tflite_testing as tfl  # pylint: disable=wrong-import-order


def _prelu_model(data_shape, alpha: np.ndarray) -> bytes:
    """A TFLite flatbuffer: y = PRELU(x, alpha), alpha a constant."""
    code = tfl.schema.OperatorCodeT()
    code.builtinCode = tfl.schema.BuiltinOperator.PRELU
    code.deprecatedBuiltinCode = tfl.schema.BuiltinOperator.PRELU
    code.version = 1
    slopes = tfl.schema.BufferT()
    slopes.data = np.frombuffer(alpha.astype("<f4").tobytes(), dtype=np.uint8)
    operator = tfl.schema.OperatorT()
    operator.opcodeIndex = 0
    operator.inputs, operator.outputs = [0, 1], [2]
    graph = tfl.schema.SubGraphT()
    graph.tensors = [
        tfl.tensor("x", data_shape, 0),
        tfl.tensor("alpha", alpha.shape, 1),
        tfl.tensor("y", data_shape, 0),
    ]
    graph.inputs, graph.outputs, graph.operators = [0], [2], [operator]
    model = tfl.schema.ModelT()
    model.version = 3
    model.operatorCodes = [code]
    model.buffers = [tfl.schema.BufferT(), slopes]  # buffer 0 is the empty one, by convention
    model.subgraphs = [graph]
    builder = tfl.flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def _ops(mod: tvm.IRModule):
    return [call.op.name for call in tfl.calls(mod)]


@pytest.mark.parametrize("alpha_shape", [(1, 1, 8), (8,)])
def test_per_channel_slope_keeps_the_data_shape(alpha_shape):
    """One slope per channel: PReLU over the last axis of the 4-D data, with an 8-element
    slope: no reshape of the data, no slope tensor as large as the data."""
    rng = np.random.default_rng()
    alpha = rng.uniform(0.05, 0.5, size=alpha_shape).astype("float32")
    model = _prelu_model((1, 5, 6, 8), alpha)
    mod = tfl.import_model(model)
    (prelu,) = [call for call in tfl.calls(mod) if call.op.name == "relax.nn.prelu"]
    assert int(prelu.attrs.axis) == 3
    assert [int(d) for d in prelu.args[0].ty.shape] == [1, 5, 6, 8]
    assert [int(d) for d in prelu.args[1].ty.shape] == [8]
    assert "relax.broadcast_to" not in _ops(mod)
    data = rng.uniform(-1.0, 1.0, size=(1, 5, 6, 8)).astype("float32")
    tvm.testing.assert_allclose(
        tfl.run_on_cpu(mod, data),
        tfl.litert_output(model, data, reference_kernels=False),
        rtol=1e-6,
        atol=1e-7,
    )


def test_slope_over_several_axes_is_still_imported():
    """A slope that varies over H and W too keeps the element-wise form, with the same answer."""
    rng = np.random.default_rng()
    alpha = rng.uniform(0.05, 0.5, size=(5, 6, 8)).astype("float32")
    model = _prelu_model((1, 5, 6, 8), alpha)
    mod = tfl.import_model(model)
    assert "relax.broadcast_to" in _ops(mod)
    data = rng.uniform(-1.0, 1.0, size=(1, 5, 6, 8)).astype("float32")
    tvm.testing.assert_allclose(
        tfl.run_on_cpu(mod, data),
        tfl.litert_output(model, data, reference_kernels=False),
        rtol=1e-6,
        atol=1e-7,
    )


if __name__ == "__main__":
    tvm.testing.main()
