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
"""Random small networks through the texture pipeline, against the same network on LLVM.

Each graph is drawn from a seed of its own: an input of 1 to 64 channels and 2 to 32 pixels a
side, then 1 to 5 operators from the mix of mobile vision models (convolutions of every kernel
size, stride, padding, dilation and grouping, depthwise and transposed convolutions, pooling,
activations, residual and broadcast arithmetic with per-channel, one-channel and one-element
operands, concatenation, split, channel slices, resizing, channel reductions, softmax). A
draw the shape cannot take is skipped. Inputs and weights are fresh per run (``rng``).

The graph seeds are fixed, so CI runs the same structures every time; to explore, draw more:
``TEXTURE_RANDOM_GRAPHS=N`` (default 24) graphs from ``TEXTURE_RANDOM_GRAPHS_BASE`` (default
0). A failure names its graph seed and operators; replay it with ``-k "graph_<seed>"`` and
those two variables. The first ``TEXTURE_RANDOM_GRAPHS_FP16`` (default 12) of them also run in
float16, the precision Adreno deployments use, on devices with ``cl_khr_fp16`` (the LLVM
reference stays float32; the float16 tolerance of ``texture_testing.TOLERANCES`` applies).

What draws like these found (on Intel's CPU OpenCL, each fixed in the series with a test of its
own): two convolutions of one shape in a row shared a PrimFunc of the wrong scopes (PR 12, dynamic-
shapes; test_texture_root_causes.py, same_conv_twice); a one-channel or one-element operand of
broadcast arithmetic stopped ConvertLayout (PR 14, elementwise-rewrites;
test_texture_model_patterns.py, spatial attention); a scale after a 1x1 pooling was folded into its
initial value (PR 1, dlight-base-fixes; unit_window_pool_negative_scale); rows of 9 became a 9-lane
vector OpenCL C has no type for (PR 6, dlight-conv2d; nine_wide_intermediate); a split of 8
channels at 4 allocated a negative size (PR 14; graph 16 here, and the C2f pattern); a channel
maximum of a conv result 4 pixels wide was vectorized over its width (PR 9, reductions-pooling;
channel_max_of_four_columns, graphs 3165 and 3499 of an 800-graph draw from 3000).
"""

import os
import random
from typing import Callable, List

import pytest
from tvm import relax

import texture_testing as tt

GRAPHS = int(os.environ.get("TEXTURE_RANDOM_GRAPHS", "24"))
GRAPHS_BASE = int(os.environ.get("TEXTURE_RANDOM_GRAPHS_BASE", "0"))
GRAPHS_FP16 = min(GRAPHS, int(os.environ.get("TEXTURE_RANDOM_GRAPHS_FP16", "12")))

OPERATORS = (
    "conv",
    "conv_dilated",
    "depthwise",
    "group_conv",
    "conv_transpose",
    "max_pool",
    "avg_pool",
    "activation",
    "residual",
    "per_channel",
    "one_channel",
    "one_element",
    "concat",
    "split",
    "channel_slice",
    "resize",
    "channel_max",
    "global_mean",
    "softmax",
)


class RandomGraph:
    """The operators drawn from ``seed``; ``build`` emits them on a NetBuilder.

    The draws of each operator come from the same generator, in the same order, on every
    build, so the texture build and the LLVM reference see one network.
    """

    def __init__(self, seed: int):
        self.seed = seed
        draw = random.Random(seed)
        self.channels = draw.choice([1, 2, 3, 4, 6, 8, 12, 16, 17, 24, 32, 64])
        self.height = draw.randint(2, 32)
        self.width = draw.choice([self.height, draw.randint(2, 32)])
        self.operators = [draw.choice(OPERATORS) for _ in range(draw.randint(1, 5))]

    def __str__(self):
        shape = f"1x{self.channels}x{self.height}x{self.width}"
        return f"graph {self.seed}: {shape} -> {', '.join(self.operators)}"

    def build(self, nb: tt.NetBuilder):
        draw = random.Random(self.seed + 1)
        x = nb.input((1, self.channels, self.height, self.width))
        for name in self.operators:
            x = getattr(self, "_" + name)(nb, draw, x)
        return x

    @staticmethod
    def _shape(x) -> List[int]:
        return [int(x.ty.shape[i]) for i in range(4)]

    def _conv(self, nb, draw, x, dilation=1):
        _, channels, height, width = self._shape(x)
        kernel = draw.choice([1, 3, 5, 7])
        stride = draw.choice([1, 1, 2])
        padding = draw.choice([kernel // 2, 0, (0, 1, 1, 0)])
        pads = padding if isinstance(padding, tuple) else (padding,) * 4
        span = (kernel - 1) * dilation + 1
        out_channels = draw.choice([1, 3, 4, 5, 8, 16, 20, 32])
        if height + pads[0] + pads[2] < span or width + pads[1] + pads[3] < span:
            return x
        w = nb.param("w", (out_channels, channels, kernel, kernel))
        conv = relax.op.nn.conv2d(x, w, strides=stride, padding=padding, dilation=dilation)
        return nb.emit(conv)

    def _conv_dilated(self, nb, draw, x):
        return self._conv(nb, draw, x, dilation=draw.choice([2, 3]))

    def _depthwise(self, nb, draw, x):
        channels = self._shape(x)[1]
        return nb.conv2d(
            x, channels, kernel=draw.choice([3, 5]), stride=draw.choice([1, 2]), groups=channels
        )

    def _group_conv(self, nb, draw, x):
        channels = self._shape(x)[1]
        groups = draw.choice([2, 4])
        if channels % groups:
            return x
        return nb.conv2d(x, groups * draw.choice([1, 2, 4]), kernel=3, groups=groups)

    def _conv_transpose(self, nb, draw, x):
        w = nb.param("w", (self._shape(x)[1], draw.choice([4, 8]), 2, 2))
        return nb.emit(relax.op.nn.conv2d_transpose(x, w, strides=2))

    def _max_pool(self, nb, draw, x):
        size = draw.choice([1, 2, 3])
        if min(self._shape(x)[2:]) < size:
            return x
        return nb.emit(relax.op.nn.max_pool2d(x, size, strides=draw.choice([1, 2])))

    def _avg_pool(self, nb, draw, x):
        return nb.emit(relax.op.nn.avg_pool2d(x, 3, strides=draw.choice([1, 2]), padding=1))

    def _activation(self, nb, draw, x):
        unary: Callable = draw.choice(
            [relax.op.nn.relu, relax.op.sigmoid, relax.op.tanh, relax.op.nn.gelu]
        )
        if draw.random() < 0.3:  # hard-swish: x * relu6(x + 3) / 6
            gate = relax.op.clip(relax.op.add(x, nb.const(3.0)), 0.0, 6.0)
            return nb.emit(relax.op.multiply(x, relax.op.divide(gate, nb.const(6.0))))
        return nb.emit(unary(x))

    def _residual(self, nb, draw, x):
        branch = nb.conv2d(x, self._shape(x)[1], kernel=draw.choice([1, 3]))
        return nb.emit(relax.op.add(x, relax.op.nn.relu(branch)))

    def _broadcast(self, nb, draw, x, shape):
        op = draw.choice([relax.op.add, relax.op.subtract, relax.op.multiply])
        return nb.emit(op(x, nb.param("b", shape)))

    def _per_channel(self, nb, draw, x):
        return self._broadcast(nb, draw, x, (1, self._shape(x)[1], 1, 1))

    def _one_channel(self, nb, draw, x):
        return self._broadcast(nb, draw, x, (1, 1, *self._shape(x)[2:]))

    def _one_element(self, nb, draw, x):
        return self._broadcast(nb, draw, x, draw.choice([(1,), (1, 1, 1, 1)]))

    def _concat(self, nb, draw, x):
        side = nb.conv2d(x, draw.choice([3, 4, 8]), kernel=1)
        return nb.emit(relax.op.concat([x, side], axis=1))

    def _split(self, nb, draw, x):
        channels = self._shape(x)[1]
        if channels < 2:
            return x
        parts = nb.emit(relax.op.split(x, [channels // 2], axis=1))
        first = nb.emit(relax.TupleGetItem(parts, 0))
        second = nb.emit(relax.TupleGetItem(parts, 1))
        return nb.emit(relax.op.concat([second, relax.op.nn.relu(first)], axis=1))

    def _channel_slice(self, nb, draw, x):
        channels = self._shape(x)[1]
        if channels < 2:
            return x
        begin = draw.randint(1, channels - 1)
        return nb.emit(relax.op.strided_slice(x, axes=[1], begin=[begin], end=[channels]))

    def _resize(self, nb, draw, x):
        _, _, height, width = self._shape(x)
        factor = draw.choice([0.5, 2.0])
        size = (max(1, int(height * factor)), max(1, int(width * factor)))
        method = draw.choice(["nearest_neighbor", "linear"])
        return nb.emit(relax.op.image.resize2d(x, size, method=method))

    def _channel_max(self, nb, draw, x):
        return nb.emit(relax.op.max(x, axis=[1], keepdims=True))

    def _global_mean(self, nb, draw, x):
        return nb.emit(relax.op.mean(x, axis=[2, 3], keepdims=True))

    def _softmax(self, nb, draw, x):
        return nb.emit(relax.op.nn.softmax(x, axis=1))


def _cases():
    """Every graph in float32, the first ``GRAPHS_FP16`` of them in float16 too."""
    for seed in range(GRAPHS_BASE, GRAPHS_BASE + GRAPHS):
        yield pytest.param(RandomGraph(seed), "float32", id=f"graph_{seed}")
    for seed in range(GRAPHS_BASE, GRAPHS_BASE + GRAPHS_FP16):
        yield pytest.param(RandomGraph(seed), "float16", id=f"graph_{seed}-float16")


@pytest.mark.requires_opencl
@pytest.mark.parametrize("graph, precision", _cases())
def test_random_graph_matches_llvm(graph: RandomGraph, precision: str, rng):
    tt.require_device(precision)
    tt.check_numerics(graph.build, precision, rng, name=str(graph))
