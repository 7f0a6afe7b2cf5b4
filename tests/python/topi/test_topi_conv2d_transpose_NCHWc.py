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
# pylint: disable=invalid-name
"""``topi.nn.conv2d_transpose_NCHWc`` against ``topi.nn.conv2d_transpose_nchw`` (the
zero-inserting formulation) on fresh random data, both built for LLVM."""

import numpy as np
import pytest

import tvm
import tvm.testing
from tvm import te, topi


def _run(inputs, output, arrays):
    lib = tvm.compile(te.create_prim_func([*inputs, output]), target="llvm")
    dev = tvm.cpu(0)
    args = [tvm.runtime.tensor(a, dev) for a in arrays]
    out = tvm.runtime.tensor(np.zeros([int(d) for d in output.shape], str(output.dtype)), dev)
    lib(*args, out)
    return out.numpy()


# (in channels, out channels, kernel, stride, padding, output padding, input block)
CASES = {
    "k3_s2": (8, 8, 3, 2, (1, 1, 1, 1), 1, 4),
    "k4_s2": (8, 4, 4, 2, (1, 1, 1, 1), 0, 4),
    "k3_s3_asymmetric": (4, 8, 3, 3, (0, 1, 2, 0), (2, 1), 4),
    "k2_s1_in_block_8": (16, 4, 2, 1, (0, 0, 0, 0), 0, 8),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_conv2d_transpose_NCHWc(case):
    """Strides that divide the kernel or not, asymmetric padding, output padding, an input
    block other than the output's: the zero-inserting NCHW result, unblocked."""
    in_c, out_c, kernel, stride, padding, output_padding, in_block = CASES[case]
    rng = np.random.default_rng()
    data = rng.standard_normal((1, in_c, 6, 5)).astype("float32")
    weight = rng.standard_normal((in_c, out_c, kernel, kernel)).astype("float32")

    data_t = te.placeholder(data.shape, name="data")
    weight_t = te.placeholder(weight.shape, name="weight")
    pair = output_padding if isinstance(output_padding, tuple) else (output_padding,) * 2
    reference = topi.nn.conv2d_transpose_nchw(
        data_t, weight_t, (stride, stride), padding, "float32", pair
    )
    expected = _run([data_t, weight_t], reference, [data, weight])

    blocked_data = data.reshape(1, in_c // in_block, in_block, 6, 5).transpose(0, 1, 3, 4, 2)
    # IOHW -> [O // 4, I, H, W, 4]
    blocked_weight = weight.reshape(in_c, out_c // 4, 4, kernel, kernel).transpose(1, 0, 3, 4, 2)
    data4 = te.placeholder(blocked_data.shape, name="data")
    weight4 = te.placeholder(blocked_weight.shape, name="weight")
    out = topi.nn.conv2d_transpose_NCHWc(data4, weight4, stride, padding, "float32", output_padding)
    result = _run([data4, weight4], out, [blocked_data, blocked_weight])
    n, chunks, h, w, block = result.shape
    result = result.transpose(0, 1, 4, 2, 3).reshape(n, chunks * block, h, w)
    tvm.testing.assert_allclose(result, expected, rtol=1e-5, atol=1e-5)


def test_weight_and_data_channels_must_agree():
    data = te.placeholder((1, 2, 5, 5, 4), name="data")
    weight = te.placeholder((2, 12, 3, 3, 4), name="weight")
    with pytest.raises(ValueError, match="takes 12 input channels, the data has 8"):
        topi.nn.conv2d_transpose_NCHWc(data, weight, 2, 1, "float32", 0)


if __name__ == "__main__":
    tvm.testing.main()
