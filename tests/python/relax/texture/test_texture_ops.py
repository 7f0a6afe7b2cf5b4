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
"""Single ops on the Adreno texture target: conv2d in its common shapes, and the ops a
network places around convolutions (elementwise, pooling, normalization, data movement) on
their own.

Each case is compiled (scopes after legalization, images in the OpenCL) without a device, and
run on the OpenCL device against the float32 LLVM build on fresh random inputs.
"""

import numpy as np
import pytest

from tvm import relax

import texture_testing as tt

N, C, H, W = 1, 16, 14, 14
SHAPE = (N, C, H, W)


def _conv3x3(nb):
    return nb.conv2d(nb.input(SHAPE), C, kernel=3)


def _conv1x1(nb):
    return nb.conv2d(nb.input(SHAPE), 32, kernel=1)


def _conv3x3_stride2(nb):
    return nb.conv2d(nb.input((1, 8, 15, 15)), 16, kernel=3, stride=2, padding=0)


def _conv3x3_wide(nb):
    return nb.conv2d(nb.input((1, 32, 8, 8)), 32, kernel=3)


def _conv_bias(nb):
    return nb.bias(nb.conv2d(nb.input(SHAPE), C, kernel=3))


def _conv_batch2(nb):
    return nb.conv2d(nb.input((2, 8, 10, 10)), 8, kernel=3, padding=0)


def _add_broadcast(nb):
    return nb.emit(relax.op.add(nb.input(SHAPE), nb.param("b", (1, C, 1, 1))))


def _multiply_broadcast_hw(nb):
    return nb.emit(relax.op.multiply(nb.input(SHAPE), nb.param("b", (H, W))))


def _add_scalar(nb):
    return nb.emit(relax.op.add(nb.input(SHAPE), nb.const(0.75)))


def _multiply_scalar(nb):
    return nb.emit(relax.op.multiply(nb.input(SHAPE), nb.const(-1.5)))


def _max_pool(nb):
    return nb.emit(relax.op.nn.max_pool2d(nb.input(SHAPE), pool_size=2, strides=2))


def _avg_pool(nb):
    return nb.emit(relax.op.nn.avg_pool2d(nb.input(SHAPE), pool_size=3, strides=1, padding=1))


def _global_avg_pool(nb):
    return nb.emit(relax.op.nn.adaptive_avg_pool2d(nb.input(SHAPE), output_size=1))


def _softmax(nb):
    return nb.emit(relax.op.nn.softmax(nb.input(SHAPE), axis=1))


def _layer_norm(nb):
    x = nb.input(SHAPE)
    return nb.emit(relax.op.nn.layer_norm(x, nb.param("g", (H, W)), nb.param("b", (H, W)), axes=[-2, -1]))


def _concat(nb):
    return nb.emit(relax.op.concat([nb.input(SHAPE), nb.input((N, 8, H, W))], axis=1))


def _resize_after_conv(nb):
    y = _conv3x3(nb)
    return nb.emit(relax.op.image.resize2d(y, (21, 25), method="cubic", cubic_alpha=-0.5))


def _transpose(nb):
    return nb.emit(relax.op.permute_dims(nb.input(SHAPE), axes=[0, 2, 3, 1]))


# name -> Case.  convs=0: no texture is expected for the op alone (the Adreno pipeline puts
# textures around convolutions only); those cases check numerics and that whatever images
# appear are used as images.
CASES = {
    "conv2d_3x3": tt.Case(_conv3x3),
    "conv2d_1x1": tt.Case(_conv1x1),
    "conv2d_3x3_stride2": tt.Case(_conv3x3_stride2),
    "conv2d_3x3_c32": tt.Case(_conv3x3_wide),
    "conv2d_bias": tt.Case(_conv_bias),
    "conv2d_batch2": tt.Case(_conv_batch2),
    "add_broadcast_channel": tt.Case(_add_broadcast, convs=0),
    "multiply_broadcast_hw": tt.Case(_multiply_broadcast_hw, convs=0),
    "add_scalar": tt.Case(_add_scalar, convs=0),
    "multiply_scalar": tt.Case(_multiply_scalar, convs=0),
    "max_pool2d": tt.Case(_max_pool, convs=0),
    "avg_pool2d": tt.Case(_avg_pool, convs=0),
    "global_avg_pool2d": tt.Case(_global_avg_pool, convs=0),
    "softmax": tt.Case(_softmax, convs=0),
    "layer_norm": tt.Case(_layer_norm, convs=0),
    "concat": tt.Case(_concat, convs=0),
    "transpose": tt.Case(_transpose, convs=0),
    "resize_cubic_after_conv": tt.Case(_resize_after_conv, conv_output_texture=True),
}


@pytest.mark.parametrize("case", list(CASES))
def test_texture(case, any_dtype_mode, rng):
    tt.check_case(CASES[case], any_dtype_mode, rng, name=case)


def test_plain_compile_uses_adreno_tir_pipeline():
    """``tvm.compile(mod, Target("qcom/adreno-opencl-texture", host="llvm"))`` must run the
    Adreno TIR pipeline by itself (on the unfixed base it runs the generic one)."""
    used, why = tt.plain_compile_uses_adreno_tir_pipeline()
    assert used, why


def test_comparison_catches_one_wrong_lane(rng):
    """The comparison flags the failure the base shows (one channel of each 4-lane pixel
    replicated into the other three): 75% of elements, not a rounding-level difference."""
    ref = tt.random_inputs(tt.build_network(_conv3x3, "float32"), rng)[0]
    packed = ref.reshape(N, C // 4, 4, H, W)
    wrong = np.repeat(packed[:, :, :1], 4, axis=2).reshape(ref.shape)
    (problem,) = tt.compare([wrong], [ref], "float32")
    assert 0.7 < problem.fraction <= 0.75
    assert not tt.compare([ref * (1 + 1e-6)], [ref], "float32")


def test_random_inputs_do_not_saturate(rng):
    mod = tt.build_network(_layer_norm, "float16")
    for value in tt.random_inputs(mod, rng):
        assert value.dtype == np.float16
        assert np.all(value != 0)
        assert np.all(np.isfinite(value))
    x = tt.random_inputs(mod, rng)[0]
    assert 0.3 < np.mean(x > 0) < 0.7, "activations must have mixed signs"
