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
"""Small networks with the structure of the ones Adreno targets, random weights.

The shapes are reduced (32x32 input, narrow stages) so that a run on PoCL's two CPU cores
takes seconds; the op mix is the real one: a 7x7 stride-2 stem on 3 channels (not a multiple
of 4, so a buffer fallback), batch norm folded for inference, max pool, basic and bottleneck
residual blocks with projection shortcuts, depthwise convolutions and ReLU6 in inverted
residual blocks, global average pooling and a dense classifier.
"""

import pytest

from tvm import relax

import texture_testing as tt

INPUT = (1, 3, 32, 32)
CLASSES = 10


def _batch_norm(nb, x):
    channels = int(x.ty.shape[1])
    gamma = nb.param("g", (channels,))
    beta = nb.param("b", (channels,))
    mean = nb.param("b", (channels,))
    var = nb.param("g", (channels,))
    # training=False: inference batch norm with the given moving statistics (Relax's default,
    # training=True, normalizes with the batch's own statistics; the texture pipeline
    # decomposes for inference, so both sides must ask for inference).
    out = nb.emit(relax.op.nn.batch_norm(x, gamma, beta, mean, var, axis=1, training=False))
    return nb.emit(relax.TupleGetItem(out, 0))


def _conv_bn(nb, x, channels, kernel, stride=1, relu=True, groups=1):
    y = _batch_norm(nb, nb.conv2d(x, channels, kernel=kernel, stride=stride, groups=groups))
    return nb.emit(relax.op.nn.relu(y)) if relu else y


def _classifier(nb, x):
    pooled = nb.emit(relax.op.nn.adaptive_avg_pool2d(x, output_size=1))
    flat = nb.emit(relax.op.reshape(pooled, (1, int(x.ty.shape[1]))))
    return nb.emit(relax.op.add(nb.dense(flat, CLASSES), nb.param("b", (1, CLASSES))))


def _stem(nb, channels):
    x = _conv_bn(nb, nb.input(INPUT), channels, kernel=7, stride=2)
    return nb.emit(relax.op.nn.max_pool2d(x, pool_size=3, strides=2, padding=1))


def _basic_block(nb, x, channels, stride):
    shortcut = x
    if stride != 1 or int(x.ty.shape[1]) != channels:
        shortcut = _conv_bn(nb, x, channels, kernel=1, stride=stride, relu=False)
    y = _conv_bn(nb, x, channels, kernel=3, stride=stride)
    y = _conv_bn(nb, y, channels, kernel=3, relu=False)
    return nb.emit(relax.op.nn.relu(nb.emit(relax.op.add(y, shortcut))))


def _bottleneck(nb, x, width, stride):
    out_channels = width * 4
    shortcut = x
    if stride != 1 or int(x.ty.shape[1]) != out_channels:
        shortcut = _conv_bn(nb, x, out_channels, kernel=1, stride=stride, relu=False)
    y = _conv_bn(nb, x, width, kernel=1)
    y = _conv_bn(nb, y, width, kernel=3, stride=stride)
    y = _conv_bn(nb, y, out_channels, kernel=1, relu=False)
    return nb.emit(relax.op.nn.relu(nb.emit(relax.op.add(y, shortcut))))


def _resnet_small(nb):
    """ResNet-18-like: stem, an identity basic block (16 channels), a downsampling one (32)."""
    x = _stem(nb, 16)
    for channels, stride in ((16, 1), (32, 2)):
        x = _basic_block(nb, x, channels, stride)
    return _classifier(nb, x)


def _resnet50_style(nb):
    """ResNet-50-like: stem, two bottleneck blocks with projection shortcuts (width 8 -> 32
    channels, then width 16 -> 64 with stride 2)."""
    x = _stem(nb, 16)
    for width, stride in ((8, 1), (16, 2)):
        x = _bottleneck(nb, x, width, stride)
    return _classifier(nb, x)


def _relu6(nb, x):
    return nb.emit(relax.op.clip(x, 0, 6))


def _inverted_residual(nb, x, out_channels, stride, expand=4):
    in_channels = int(x.ty.shape[1])
    hidden = in_channels * expand
    y = _relu6(nb, _conv_bn(nb, x, hidden, kernel=1, relu=False))
    y = _relu6(nb, _conv_bn(nb, y, hidden, kernel=3, stride=stride, relu=False, groups=hidden))
    y = _conv_bn(nb, y, out_channels, kernel=1, relu=False)
    if stride == 1 and in_channels == out_channels:
        y = nb.emit(relax.op.add(y, x))
    return y


def _mobilenet_v2_style(nb):
    """MobileNetV2-like: 3x3 stride-2 stem, inverted residual blocks with depthwise 3x3."""
    x = _relu6(nb, _conv_bn(nb, nb.input(INPUT), 16, kernel=3, stride=2, relu=False))
    for channels, stride in ((16, 1), (24, 2)):
        x = _inverted_residual(nb, x, channels, stride)
    return _classifier(nb, _relu6(nb, _conv_bn(nb, x, 64, kernel=1, relu=False)))


CASES = {
    "resnet_small": tt.Case(_resnet_small, convs=5, conv_output_texture=True),
    "resnet50_style": tt.Case(_resnet50_style, convs=7, conv_output_texture=True),
    "mobilenet_v2_style": tt.Case(_mobilenet_v2_style, convs=6, conv_output_texture=True),
}


@pytest.mark.parametrize("case", list(CASES))
def test_texture(case, any_dtype_mode, rng):
    tt.check_case(CASES[case], any_dtype_mode, rng, name=case)
