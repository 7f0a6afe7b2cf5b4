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
"""Import an ONNX model, compile it for Adreno textures, and compare with ONNX Runtime.

Run by tests/docs/test_examples.py on the host's OpenCL device.  The model is built in memory
with ``onnx.helper`` (conv, batch norm, relu, global average pool, gemm) so that nothing is
downloaded; a real model is loaded with ``onnx.load("model.onnx")`` instead.
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import tvm
from tvm import relax
from tvm.relax.frontend.onnx import from_onnx


def make_model() -> onnx.ModelProto:
    """A 1x3x64x64 image classifier head with random weights."""
    rng = np.random.default_rng(0)

    def const(name, shape, scale=0.2):
        return numpy_helper.from_array(rng.uniform(-scale, scale, shape).astype("float32"), name)

    inits = [
        const("w1", (16, 3, 3, 3)),
        const("b1", (16,)),
        const("gamma", (16,), 1.0),
        const("beta", (16,)),
        const("mean", (16,)),
        numpy_helper.from_array(rng.uniform(0.5, 1.5, (16,)).astype("float32"), "var"),
        const("w2", (32, 16, 3, 3)),
        const("fc_w", (10, 32)),
        const("fc_b", (10,)),
    ]
    nodes = [
        helper.make_node("Conv", ["image", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("BatchNormalization", ["c1", "gamma", "beta", "mean", "var"], ["bn"]),
        helper.make_node("Relu", ["bn"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("GlobalAveragePool", ["r2"], ["gap"]),
        helper.make_node("Flatten", ["gap"], ["flat"]),
        helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["logits"], transB=1),
    ]
    graph = helper.make_graph(
        nodes,
        "tiny_classifier",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 64, 64])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def main() -> int:
    model = make_model()
    image = np.random.default_rng(1).uniform(0, 1, (1, 3, 64, 64)).astype("float32")

    # [import-begin]
    # Fix the input shape (a dynamic shape keeps tensors out of textures), and keep the
    # weights as constants so that layout conversion and padding are folded at compile time.
    mod = from_onnx(model, shape_dict={"image": [1, 3, 64, 64]}, keep_params_in_input=False)

    target = tvm.target.Target("qcom/adreno-opencl-texture", host="llvm")
    executable = tvm.compile(mod, target=target)

    dev = tvm.opencl(0)
    vm = relax.VirtualMachine(executable, dev)
    logits = vm["main"](tvm.runtime.tensor(image, dev))
    # [import-end]
    logits = (
        logits[0]
        if isinstance(logits, (list, tuple)) or type(logits).__name__ == "Array"
        else logits
    )
    result = logits.numpy()

    import onnxruntime  # pylint: disable=import-outside-toplevel

    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    (expected,) = session.run(None, {"image": image})
    np.testing.assert_allclose(result, expected, rtol=1e-4, atol=1e-4)
    print(
        f"ok: ONNX model on {dev.device_name}, top-1 {int(result.argmax())}, "
        f"max abs error {np.abs(result - expected).max():.2e}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
