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
"""Ops consuming a texture conv2d: each op is fused into the conv kernel, reads the conv
result from a texture, or gets it back through a layout transform.  Every case checks that the
conv2d took the texture path, that the kernels read and write images, and the numbers against
the float32 LLVM build.

Cases whose consumer takes textures (pooling, concat, a second conv, a residual block) also
require the conv2d result itself to stay in a texture.
"""

import pytest

from tvm import relax

import texture_testing as tt

N, C, H, W = 1, 16, 14, 14


def _conv(nb, channels=C, kernel=3):
    return nb.conv2d(nb.input((N, C, H, W)), channels, kernel=kernel)


def _relu(nb):
    return nb.emit(relax.op.nn.relu(_conv(nb)))


def _add_residual(nb):
    x = nb.input((N, C, H, W))
    return nb.emit(relax.op.add(nb.conv2d(x, C), x))


def _add_bias(nb):
    return nb.bias(_conv(nb))


def _add_tensor(nb):
    y = _conv(nb)
    return nb.emit(relax.op.add(y, nb.param("b", (N, C, H, W))))


def _multiply_broadcast_hw(nb):
    return nb.emit(relax.op.multiply(_conv(nb), nb.param("g", (H, W))))


def _add_scalar(nb):
    return nb.emit(relax.op.add(_conv(nb), nb.const(0.5)))


def _multiply_scalar_relu(nb):
    return nb.emit(relax.op.nn.relu(nb.emit(relax.op.multiply(_conv(nb), nb.const(-2.0)))))


def _sum_hw(nb):
    return nb.emit(relax.op.sum(_conv(nb), axis=[2, 3]))


def _sum_keepdims(nb):
    return nb.emit(relax.op.sum(_conv(nb), axis=[2, 3], keepdims=True))


def _sum_channels(nb):
    return nb.emit(relax.op.sum(_conv(nb), axis=[1]))


def _concat(nb):
    y = _conv(nb)
    return nb.emit(relax.op.concat([y, nb.emit(relax.op.nn.relu(y))], axis=1))


def _concat_two_convs(nb):
    x = nb.input((N, C, H, W))
    return nb.emit(relax.op.concat([nb.conv2d(x, 8), nb.conv2d(x, 16, kernel=1)], axis=1))


def _split(nb):
    parts = nb.emit(relax.op.split(_conv(nb, channels=32), indices_or_sections=2, axis=1))
    return [nb.emit(relax.TupleGetItem(parts, 0)), nb.emit(relax.TupleGetItem(parts, 1))]


def _transpose(nb):
    return nb.emit(relax.op.permute_dims(_conv(nb), axes=[0, 2, 3, 1]))


def _softmax(nb):
    return nb.emit(relax.op.nn.softmax(_conv(nb), axis=1))


def _layer_norm(nb):
    y = _conv(nb)
    return nb.emit(
        relax.op.nn.layer_norm(y, nb.param("g", (H, W)), nb.param("b", (H, W)), axes=[-2, -1])
    )


def _squeeze(nb):
    return nb.emit(relax.op.squeeze(_conv(nb), axis=[0]))


def _strided_slice(nb):
    return nb.emit(
        relax.op.strided_slice(
            _conv(nb), axes=[1, 2, 3], begin=[0, 1, 0], end=[16, 14, 14], strides=[2, 3, 4]
        )
    )


def _expand_dims(nb):
    return nb.emit(relax.op.expand_dims(_conv(nb), axis=[1, -3]))


def _reshape(nb):
    return nb.emit(relax.op.reshape(_conv(nb), (N, C, H * W)))


def _max_pool(nb):
    return nb.emit(relax.op.nn.max_pool2d(_conv(nb), pool_size=2, strides=2))


def _avg_pool(nb):
    return nb.emit(relax.op.nn.avg_pool2d(_conv(nb), pool_size=2, strides=2))


def _adaptive_avg_pool(nb):
    return nb.emit(relax.op.nn.adaptive_avg_pool2d(_conv(nb), output_size=7))


def _conv_conv(nb):
    y = nb.emit(relax.op.nn.relu(_conv(nb)))
    return nb.conv2d(y, 32, kernel=3)


def _relu_two_consumers(nb):
    """The conv result feeds a relu and is also an output, so the relu cannot fuse into the
    conv: it becomes an elementwise kernel of its own between two textures."""
    x = nb.input((N, C, H, W))
    c1 = nb.conv2d(x, C, kernel=1)
    return [nb.conv2d(nb.emit(relax.op.nn.relu(c1)), C, kernel=1), c1]


def _residual_block(nb):
    """conv1 -> relu -> conv2, + conv1 (add fused into conv2), * scalar, relu, conv3, relu."""
    x = nb.input((N, C, H, W))
    c1 = nb.conv2d(x, 16, kernel=1)
    c2 = nb.conv2d(nb.emit(relax.op.nn.relu(c1)), 16, kernel=3)
    y = nb.emit(relax.op.add(c2, c1))
    y = nb.emit(relax.op.nn.relu(nb.emit(relax.op.multiply(y, nb.const(0.5)))))
    return nb.emit(relax.op.nn.relu(nb.conv2d(y, 16, kernel=3)))


CASES = {
    "conv2d": tt.Case(_conv),
    "relu": tt.Case(_relu),
    "add_residual": tt.Case(_add_residual),
    "add_bias_broadcast": tt.Case(_add_bias),
    "add_tensor": tt.Case(_add_tensor),
    "multiply_broadcast_hw": tt.Case(_multiply_broadcast_hw),
    "add_scalar": tt.Case(_add_scalar),
    "multiply_scalar_relu": tt.Case(_multiply_scalar_relu),
    "sum_hw": tt.Case(_sum_hw),
    "sum_hw_keepdims": tt.Case(_sum_keepdims),
    "sum_channels": tt.Case(_sum_channels),
    "concat": tt.Case(_concat, conv_output_texture=True),
    "concat_two_convs": tt.Case(_concat_two_convs, convs=2, conv_output_texture=True),
    "split": tt.Case(_split),
    "transpose": tt.Case(_transpose),
    "softmax": tt.Case(_softmax),
    "layer_norm": tt.Case(_layer_norm),
    "squeeze": tt.Case(_squeeze),
    "strided_slice": tt.Case(_strided_slice),
    "expand_dims": tt.Case(_expand_dims),
    "reshape": tt.Case(_reshape),
    "max_pool2d": tt.Case(_max_pool, conv_output_texture=True),
    # avg_pool2d has no texture schedule in main (only max and adaptive avg pool are kept on
    # textures), so its input comes back to a buffer.
    "avg_pool2d": tt.Case(_avg_pool),
    "adaptive_avg_pool2d": tt.Case(_adaptive_avg_pool, conv_output_texture=True),
    "conv2d_relu_conv2d": tt.Case(_conv_conv, convs=2, conv_output_texture=True),
    "relu_two_consumers": tt.Case(_relu_two_consumers, convs=2),
    "residual_block": tt.Case(_residual_block, convs=3, conv_output_texture=True),
}


@pytest.mark.parametrize("case", list(CASES))
def test_texture(case, any_dtype_mode, rng):
    tt.check_case(CASES[case], any_dtype_mode, rng, name=case)
