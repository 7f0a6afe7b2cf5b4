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
"""ONNX frontend: an Identity of a shape (Paddle2ONNX exports put one between Shape and the
Slice that reads it, as in PP-OCRv6) passes the shape on, as every shape op does."""

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper

import tvm
import tvm.testing
from tvm import relax
from tvm.relax.frontend.onnx import from_onnx


def _reshape_by_identity_of_shape():
    """x of shape (1, 3, 8, 4) reshaped to (1, 3, 32): the target is the first two entries of
    Shape(x), passed through Identity, joined with -1."""
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Identity", ["shape"], ["same"]),
        helper.make_node("Slice", ["same", "starts", "ends"], ["head"]),
        helper.make_node("Concat", ["head", "rest"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["y"]),
    ]
    constants = [
        helper.make_tensor("starts", TensorProto.INT64, [1], [0]),
        helper.make_tensor("ends", TensorProto.INT64, [1], [2]),
        helper.make_tensor("rest", TensorProto.INT64, [1], [-1]),
    ]
    graph = helper.make_graph(
        nodes,
        "identity_of_shape",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 32])],
        initializer=constants,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_identity_of_shape_feeds_reshape_target():
    model = _reshape_by_identity_of_shape()
    mod = from_onnx(model)
    machine = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
    x = np.random.default_rng().uniform(-1.0, 1.0, size=(1, 3, 8, 4)).astype("float32")
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    expected = session.run(None, {"x": x})[0]
    actual = machine["main"](tvm.runtime.tensor(x)).numpy()
    assert actual.shape == (1, 3, 32)
    tvm.testing.assert_allclose(actual, expected, rtol=0, atol=0)


if __name__ == "__main__":
    tvm.testing.main()
