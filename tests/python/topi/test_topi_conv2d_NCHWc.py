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
"""Convolutions on channel-blocked (NCHW[x]c) data, built for LLVM, against NCHW references
on fresh random data: ``topi.nn.conv2d_NCHWc_OIHWo`` for any number of groups,
``topi.nn.depthwise_conv2d_NCHWc`` and ``topi.nn.conv2d_transpose_NCHWc`` (against
``topi.nn.conv2d_transpose_nchw``, the zero-inserting formulation)."""

import numpy as np
import pytest
import tvm_ffi

import tvm
import tvm.testing
from tvm import te, topi
from tvm.ir.expr import TensorLoad


def _blocked(x, block):
    """``[n, c, h, w]`` -> ``[n, c // block, h, w, block]``."""
    n, c, h, w = x.shape
    return x.reshape(n, c // block, block, h, w).transpose(0, 1, 3, 4, 2)


def _unblocked(x):
    n, chunks, h, w, block = x.shape
    return x.transpose(0, 1, 4, 2, 3).reshape(n, chunks * block, h, w)


def _blocked_weight(w, block):
    """``[o, i, kh, kw]`` -> ``OIHW[block]o``: ``[o // block, i, kh, kw, block]``."""
    o, i, kh, kw = w.shape
    return w.reshape(o // block, block, i, kh, kw).transpose(0, 2, 3, 4, 1)


def _reference(data, weight, stride, padding, dilation, groups):
    """NCHW grouped convolution in numpy, one kernel tap at a time."""
    top, left, bottom, right = (padding,) * 4 if isinstance(padding, int) else padding
    padded = np.pad(data, ((0, 0), (0, 0), (top, bottom), (left, right)))
    out_c, in_per_group, kh, kw = weight.shape
    out_h = (padded.shape[2] - (kh - 1) * dilation - 1) // stride + 1
    out_w = (padded.shape[3] - (kw - 1) * dilation - 1) // stride + 1
    out_per_group = out_c // groups
    result = np.zeros((data.shape[0], out_c, out_h, out_w), "float64")
    for o in range(out_c):
        first = o // out_per_group * in_per_group
        for i, y, x in np.ndindex(in_per_group, kh, kw):
            window = padded[
                :,
                first + i,
                y * dilation : y * dilation + stride * (out_h - 1) + 1 : stride,
                x * dilation : x * dilation + stride * (out_w - 1) + 1 : stride,
            ]
            result[:, o] += window * weight[o, i, y, x]
    return result


def _run(inputs, output, arrays):
    lib = tvm.compile(te.create_prim_func([*inputs, output]), target="llvm")
    dev = tvm.cpu(0)
    args = [tvm.runtime.tensor(a, dev) for a in arrays]
    out = tvm.runtime.tensor(np.zeros([int(d) for d in output.shape], str(output.dtype)), dev)
    lib(*args, out)
    return out.numpy()


# (in channels, out channels, groups, stride, padding, dilation)
GROUPED = {
    "depthwise": (16, 16, 16, 1, 1, 1),
    "depthwise_multiplier_2": (8, 16, 8, 1, 1, 1),
    "depthwise_stride_2_asymmetric": (8, 8, 8, 2, (1, 0, 2, 1), 1),
    "depthwise_dilated_unpadded": (8, 8, 8, 1, 0, 2),
    "groups_on_blocks": (16, 16, 2, 1, 1, 1),
    "groups_across_blocks": (16, 8, 8, 1, 1, 1),
    "one_group": (8, 12, 1, 1, 1, 1),
}


@pytest.mark.parametrize("case", GROUPED, ids=list(GROUPED))
def test_conv2d_NCHWc_OIHWo_any_groups(case):
    """Depthwise (any channel multiplier), groups starting on a channel block or inside one,
    and one group, all on 4-channel blocks: the numpy NCHW result."""
    in_c, out_c, groups, stride, padding, dilation = GROUPED[case]
    rng = np.random.default_rng()
    data = rng.standard_normal((1, in_c, 9, 10)).astype("float32")
    weight = rng.standard_normal((out_c, in_c // groups, 3, 3)).astype("float32")
    data_t = te.placeholder((1, in_c // 4, 9, 10, 4), name="data")
    weight_t = te.placeholder((out_c // 4, in_c // groups, 3, 3, 4), name="weight")
    out = topi.nn.conv2d_NCHWc_OIHWo(
        data_t, weight_t, stride, padding, dilation, "NCHW4c", "NCHW4c", "float32"
    )
    result = _run([data_t, weight_t], out, [_blocked(data, 4), _blocked_weight(weight, 4)])
    expected = _reference(data, weight, stride, padding, dilation, groups)
    tvm.testing.assert_allclose(_unblocked(result), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("in_block, out_block, multiplier", [(4, 4, 1), (8, 4, 1), (4, 8, 2)])
def test_depthwise_conv2d_NCHWc(in_block, out_block, multiplier):
    """The 6-D ``[oc_chunk, 1, kh, kw, 1, oc_block]`` filter, blocks of the input and the output
    that may differ: the numpy NCHW depthwise result."""
    channels = 16
    rng = np.random.default_rng()
    data = rng.standard_normal((1, channels, 8, 7)).astype("float32")
    weight = rng.standard_normal((channels * multiplier, 1, 3, 3)).astype("float32")
    filter_np = _blocked_weight(weight, out_block)[:, :, :, :, None, :]
    data_t = te.placeholder((1, channels // in_block, 8, 7, in_block), name="data")
    filter_t = te.placeholder(filter_np.shape, name="filter")
    out = topi.nn.depthwise_conv2d_NCHWc(
        data_t, filter_t, 1, 1, 1, f"NCHW{in_block}c", f"NCHW{out_block}c"
    )
    assert out.op.tag == "depthwise_conv2d_NCHWc"
    result = _run([data_t, filter_t], out, [_blocked(data, in_block), filter_np])
    expected = _reference(data, weight, 1, 1, 1, channels)
    tvm.testing.assert_allclose(_unblocked(result), expected, rtol=1e-5, atol=1e-5)


def test_depthwise_reduces_over_the_window_only():
    """A depthwise conv sums over the kernel window alone (no input-channel axis), and with
    channel multiplier 1 output lane ``b`` reads input lane ``b`` of the same block."""
    data = te.placeholder((1, 4, 8, 8, 4), name="data")
    weight = te.placeholder((4, 1, 3, 3, 4), name="weight")
    out = topi.nn.conv2d_NCHWc_OIHWo(data, weight, 1, 1, 1, "NCHW4c", "NCHW4c", "float32")
    assert [axis.var.name for axis in out.op.reduce_axis] == ["kh", "kw"]
    func = te.create_prim_func([data, weight, out])
    blocks, loads = [], []
    tvm_ffi.structural_walk(func, [(tvm.s_tir.SBlock, blocks.append), (TensorLoad, loads.append)])
    (conv,) = [block for block in blocks if block.name_hint == "conv2d_NCHWc_OIHWo"]
    (pixel,) = [load for load in loads if load.source.name == "data_pad"]
    assert pixel.indices[1].same_as(conv.iter_vars[1].var)
    assert pixel.indices[4].same_as(conv.iter_vars[4].var)


def test_depthwise_needs_whole_multipliers():
    data = te.placeholder((1, 2, 8, 8, 4), name="data")
    weight = te.placeholder((3, 1, 3, 3, 4), name="weight")
    with pytest.raises(ValueError, match="12 output and 8 input channels"):
        topi.nn.conv2d_NCHWc_OIHWo(data, weight, 1, 1, 1, "NCHW4c", "NCHW4c", "float32")


# (in channels, out channels, kernel, stride, padding, output padding, input block)
TRANSPOSED = {
    "k3_s2": (8, 8, 3, 2, (1, 1, 1, 1), 1, 4),
    "k4_s2": (8, 4, 4, 2, (1, 1, 1, 1), 0, 4),
    "k3_s3_asymmetric": (4, 8, 3, 3, (0, 1, 2, 0), (2, 1), 4),
    "k2_s1_in_block_8": (16, 4, 2, 1, (0, 0, 0, 0), 0, 8),
}


@pytest.mark.parametrize("case", TRANSPOSED, ids=list(TRANSPOSED))
def test_conv2d_transpose_NCHWc(case):
    """Strides that divide the kernel or not, asymmetric padding, output padding, an input
    block other than the output's: the zero-inserting NCHW result, unblocked."""
    in_c, out_c, kernel, stride, padding, output_padding, in_block = TRANSPOSED[case]
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

    blocked_data = _blocked(data, in_block)
    # IOHW -> [O // 4, I, H, W, 4]: the output channels blocked, as OIHW4o blocks them.
    blocked_weight = _blocked_weight(weight.transpose(1, 0, 2, 3), 4)
    data4 = te.placeholder(blocked_data.shape, name="data")
    weight4 = te.placeholder(blocked_weight.shape, name="weight")
    out = topi.nn.conv2d_transpose_NCHWc(data4, weight4, stride, padding, "float32", output_padding)
    result = _run([data4, weight4], out, [blocked_data, blocked_weight])
    tvm.testing.assert_allclose(_unblocked(result), expected, rtol=1e-5, atol=1e-5)


def test_transposed_weight_and_data_channels_must_agree():
    data = te.placeholder((1, 2, 5, 5, 4), name="data")
    weight = te.placeholder((2, 12, 3, 3, 4), name="weight")
    with pytest.raises(ValueError, match="takes 12 input channels, the data has 8"):
        topi.nn.conv2d_transpose_NCHWc(data, weight, 2, 1, "float32", 0)


if __name__ == "__main__":
    tvm.testing.main()
