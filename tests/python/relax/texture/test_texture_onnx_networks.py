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
"""Full-depth ResNet-50 and MobileNetV2 (ONNX, random weights) on textures against ONNX Runtime.

The graphs are written with ``onnx.helper`` here (no download): every layer of the published
architectures, batch 1, float32, inference batch norm as separate nodes, at a reduced image size
so that a CPU OpenCL device runs them in seconds. Weights are drawn fresh for every run.
"""

import numpy as np
import pytest

import tvm
from tvm import relax
from tvm.relax.frontend.onnx import from_onnx

import texture_testing as tt

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper  # pylint: disable=wrong-import-position

TEXTURE_TARGET = tvm.target.Target("qcom/adreno-opencl-texture", host="llvm")
IMAGE = (1, 3, 64, 64)


class _Graph:
    """Collects ONNX nodes and random initializers."""

    def __init__(self, rng):
        self.rng = rng
        self.nodes, self.inits = [], []
        self.count = 0

    def _name(self, kind):
        self.count += 1
        return f"{kind}{self.count}"

    def _init(self, kind, array):
        name = self._name(kind)
        self.inits.append(helper.make_tensor(name, TensorProto.FLOAT, array.shape, array.ravel()))
        return name

    def node(self, op, inputs, **attrs):
        out = self._name(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    def conv_bn(self, x, cin, cout, k, stride=1, groups=1, act="relu"):
        fan_in = cin // groups * k * k
        w = self.rng.normal(0.0, np.sqrt(2.0 / fan_in), (cout, cin // groups, k, k))
        y = self.node(
            "Conv",
            [x, self._init("w", w.astype("float32"))],
            kernel_shape=[k, k],
            strides=[stride, stride],
            pads=[k // 2] * 4,
            group=groups,
        )
        bn = [
            self.rng.uniform(0.5, 1.0, cout),  # scale
            self.rng.uniform(-0.1, 0.1, cout),  # bias
            self.rng.uniform(-0.1, 0.1, cout),  # mean
            self.rng.uniform(0.5, 1.5, cout),  # var
        ]
        y = self.node(
            "BatchNormalization", [y] + [self._init("bn", v.astype("float32")) for v in bn]
        )
        if act == "relu":
            return self.node("Relu", [y])
        if act == "relu6":
            zero, six = (self._init("c", np.array(v, "float32")) for v in (0.0, 6.0))
            return self.node("Clip", [y, zero, six])
        return y

    def head(self, x, channels, classes=1000):
        y = self.node("Flatten", [self.node("GlobalAveragePool", [x])])
        w = self.rng.normal(0.0, np.sqrt(1.0 / channels), (classes, channels)).astype("float32")
        b = self.rng.uniform(-0.1, 0.1, classes).astype("float32")
        return self.node("Gemm", [y, self._init("fc", w), self._init("fcb", b)], transB=1)

    def model(self, out, classes=1000):
        graph = helper.make_graph(
            self.nodes,
            "net",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, IMAGE)],
            [helper.make_tensor_value_info(out, TensorProto.FLOAT, (1, classes))],
            self.inits,
        )
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def resnet50(rng):
    """ResNet-50 v1.5: bottlenecks [3, 4, 6, 3], stride in the 3x3 conv, projection shortcuts."""
    g = _Graph(rng)
    x = g.conv_bn("x", 3, 64, 7, stride=2)
    x = g.node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 64
    for stage, (width, blocks) in enumerate(zip([64, 128, 256, 512], [3, 4, 6, 3])):
        for block in range(blocks):
            stride = 2 if stage > 0 and block == 0 else 1
            y = g.conv_bn(x, cin, width, 1)
            y = g.conv_bn(y, width, width, 3, stride=stride)
            y = g.conv_bn(y, width, width * 4, 1, act=None)
            short = g.conv_bn(x, cin, width * 4, 1, stride, act=None) if block == 0 else x
            x = g.node("Relu", [g.node("Add", [y, short])])
            cin = width * 4
    return g.model(g.head(x, cin))


def mobilenetv2(rng):
    """MobileNetV2 (width 1.0): inverted residuals with ReLU6, depthwise 3x3 convs."""
    g = _Graph(rng)
    x = g.conv_bn("x", 3, 32, 3, stride=2, act="relu6")
    cin = 32
    settings = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2)]
    settings += [(6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]
    for expand, cout, repeats, first_stride in settings:
        for i in range(repeats):
            stride = first_stride if i == 0 else 1
            hidden = cin * expand
            y = g.conv_bn(x, cin, hidden, 1, act="relu6") if expand != 1 else x
            y = g.conv_bn(y, hidden, hidden, 3, stride=stride, groups=hidden, act="relu6")
            y = g.conv_bn(y, hidden, cout, 1, act=None)
            x = g.node("Add", [x, y]) if stride == 1 and cin == cout else y
            cin = cout
    x = g.conv_bn(x, cin, 1280, 1, act="relu6")
    return g.model(g.head(x, 1280))


@pytest.mark.slow
@pytest.mark.requires_opencl
@pytest.mark.parametrize("network", [resnet50, mobilenetv2], ids=["resnet50", "mobilenetv2"])
def test_network_matches_onnxruntime(network, rng):
    model = network(rng)
    image = rng.uniform(-1.0, 1.0, IMAGE).astype("float32")
    (expected,) = ort.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    ).run(None, {"x": image})

    mod = from_onnx(model, keep_params_in_input=False)
    dev = tt.tvm_device()
    vm = relax.VirtualMachine(tvm.compile(mod, target=TEXTURE_TARGET), dev)
    actual = vm["main"](tvm.runtime.tensor(image, dev)).numpy()

    scale = float(np.abs(expected).max())
    np.testing.assert_allclose(actual, expected, rtol=1e-3, atol=1e-4 * scale)
    # The class ranking is what a user sees: the top-5 must agree, except between classes
    # whose reference logits are closer than the tolerance (either order is then right).
    tol = 1e-3 * scale
    top = np.argsort(-actual[0])[:5]
    logits = expected[0][top]
    assert logits.min() >= np.sort(expected[0])[-5] - tol, (top, np.argsort(-expected[0])[:5])
    assert all(np.diff(logits) <= tol), (top, np.argsort(-expected[0])[:5])
