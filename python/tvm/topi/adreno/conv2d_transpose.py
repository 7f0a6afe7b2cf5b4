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
"""Transposed convolution on channel-blocked (texture) layouts for Adreno GPUs."""

from typing import Sequence

from tvm import te, tirx
from tvm.s_tir.dlight.adreno.base import CONV2D_TRANSPOSE, SCHEDULE_RULE

from .utils import CHANNEL_BLOCK, as_pair, blocked_shape


def conv2d_transpose_out_size(
    size: int, kernel: int, stride: int, pad_before: int, pad_after: int, output_padding: int
) -> int:
    """Output extent of one spatial axis of a transposed convolution (dilation 1).

    Parameters
    ----------
    size, kernel, stride : int
        The input extent, the kernel extent and the stride.
    pad_before, pad_after : int
        The padding removed from the two ends of the full result.
    output_padding : int
        Rows (columns) added at the far end.

    Returns
    -------
    extent : int
        ``(size - 1) * stride + kernel - pad_before - pad_after + output_padding``.
    """
    return (size - 1) * stride + kernel - pad_before - pad_after + output_padding


def conv2d_transpose_NCHWc(
    data: te.Tensor,
    kernel: te.Tensor,
    stride,
    padding: Sequence[int],
    output_padding=0,
    out_dtype: str = None,
) -> te.Tensor:
    """Transposed conv2d (dilation 1, one group) in ``NCHW4c`` with blocked weights.

    Output pixel ``oh`` of a transposed convolution gathers input row ``ih`` through kernel
    row ``kh`` when ``ih * stride + kh == oh + pad_top``. So only the kernel rows congruent to
    ``oh + pad_top`` modulo the stride contribute, ``ceil(kernel / stride)`` of them: each
    output reads ``ih = (oh + pad_top) // stride - j`` with ``kh = (oh + pad_top) % stride +
    j * stride`` for ``j`` in that range (the same on the width axis). Unlike the textbook
    formulation (a stride-1 convolution over the input with ``stride - 1`` zeros inserted
    between pixels and a flipped kernel) no product with an inserted zero is computed, a
    ``stride**2`` saving. Rows outside the input or the kernel read zero: the input and
    (when the stride does not divide the kernel) the kernel are zero-padded in their own
    blocks, which a schedule inlines into the window reads.

    The reduction over input channels is split into (texel, lane), so a schedule can read
    whole input pixels.

    Parameters
    ----------
    data : te.Tensor
        ``[batch, in_channel // 4, in_height, in_width, 4]``.
    kernel : te.Tensor
        ``[out_channel // 4, in_channel, kernel_h, kernel_w, 4]``: the ``IOHW`` weight of
        ``relax.nn.conv2d_transpose`` with the output channels blocked by 4, not flipped.
    stride : int or pair of int
        Stride on height and width.
    padding : sequence of 4 ints
        ``[top, left, bottom, right]``, as in ``relax.nn.conv2d_transpose``.
    output_padding : int or pair of int
        Extra rows and columns at the bottom and right of the output.
    out_dtype : str, optional
        Accumulation and output dtype (default: the input dtype).

    Returns
    -------
    output : te.Tensor
        ``[batch, out_channel // 4, out_height, out_width, 4]``; its block is annotated
        ``schedule_rule = CONV2D_TRANSPOSE`` (``dl.adreno.GroupConv2d`` takes it).
    """
    batch, in_chunks, in_h, in_w, _ = blocked_shape(data)
    out_chunks, in_channels, kh, kw, _ = blocked_shape(kernel)
    if in_channels != in_chunks * CHANNEL_BLOCK:
        raise ValueError(
            f"the weight takes {in_channels} input channels, the data has "
            f"{in_chunks * CHANNEL_BLOCK}"
        )
    stride_h, stride_w = as_pair(stride)
    out_pad_h, out_pad_w = as_pair(output_padding)
    top, left, bottom, right = (int(p) for p in padding)
    out_dtype = out_dtype or data.dtype
    out_h = conv2d_transpose_out_size(in_h, kh, stride_h, top, bottom, out_pad_h)
    out_w = conv2d_transpose_out_size(in_w, kw, stride_w, left, right, out_pad_w)

    # Taps per output pixel on each axis, and the kernel extent rounded up to whole strides.
    taps_h, taps_w = -(-kh // stride_h), -(-kw // stride_w)
    kernel_pad = _pad_kernel(kernel, taps_h * stride_h, taps_w * stride_w)
    # Output oh reads input rows (oh + top) // stride - j, j < taps_h: from -(taps_h - 1) up
    # to (out_h - 1 + top) // stride. Pad the input so that every such row exists.
    pad_top, pad_left = taps_h - 1, taps_w - 1
    rows = max(in_h + pad_top, (out_h - 1 + top) // stride_h + 1 + pad_top)
    cols = max(in_w + pad_left, (out_w - 1 + left) // stride_w + 1 + pad_left)
    data_pad = te.compute(
        (batch, in_chunks, rows, cols, CHANNEL_BLOCK),
        lambda n, c, h, w, b: tirx.if_then_else(
            tirx.all(h >= pad_top, h < in_h + pad_top, w >= pad_left, w < in_w + pad_left),
            data[n, c, h - pad_top, w - pad_left, b],
            tirx.const(0, data.dtype),
        ),
        name="data_pad",
    )

    ric = te.reduce_axis((0, in_chunks), name="ric")
    rib = te.reduce_axis((0, CHANNEL_BLOCK), name="rib")
    rjh = te.reduce_axis((0, taps_h), name="rjh")
    rjw = te.reduce_axis((0, taps_w), name="rjw")

    def _compute(n, occ, oh, ow, ocb):
        row, col = oh + top, ow + left
        pixel = data_pad[
            n, ric, row // stride_h - rjh + pad_top, col // stride_w - rjw + pad_left, rib
        ]
        # The kernel row is ``row % stride_h + rjh * stride_h``, written without ``%``: with
        # ``%`` the flattened index of a buffer weight came out wrong on the texture target
        # (``floormod(ow + left, 2)`` lost its ``+ left`` after the output axes were fused and
        # split by the schedule: an integer simplification bug in C++ ``src/arith``).
        weight = kernel_pad[
            occ,
            ric * CHANNEL_BLOCK + rib,
            row - row // stride_h * stride_h + rjh * stride_h,
            col - col // stride_w * stride_w + rjw * stride_w,
            ocb,
        ]
        return te.sum(pixel.astype(out_dtype) * weight.astype(out_dtype), axis=[ric, rib, rjh, rjw])

    return te.compute(
        (batch, out_chunks, out_h, out_w, CHANNEL_BLOCK),
        _compute,
        name="conv2d_transpose_nchw4c",
        tag="conv2d_transpose_nchw4c",
        attrs={SCHEDULE_RULE: CONV2D_TRANSPOSE},
    )


def _pad_kernel(kernel: te.Tensor, rows: int, cols: int) -> te.Tensor:
    """Zero-extend the kernel's spatial axes to ``rows`` x ``cols`` (no-op when equal)."""
    out_chunks, in_channels, kh, kw, block = blocked_shape(kernel)
    if (rows, cols) == (kh, kw):
        return kernel
    return te.compute(
        (out_chunks, in_channels, rows, cols, block),
        lambda o, i, h, w, b: tirx.if_then_else(
            tirx.all(h < kh, w < kw), kernel[o, i, h, w, b], tirx.const(0, kernel.dtype)
        ),
        name="kernel_pad",
    )
