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
"""Depthwise convolution on channel-blocked (texture) layouts for Adreno GPUs."""

from tvm import te
from tvm.s_tir.dlight.adreno.base import DEPTHWISE_CONV2D, SCHEDULE_RULE

from .utils import CHANNEL_BLOCK, as_pair, blocked_shape, conv_out_size, pad_spatial


def depthwise_conv2d_NCHWc_OIHWo(
    data: te.Tensor, kernel: te.Tensor, stride, padding, dilation, out_dtype: str = None
) -> te.Tensor:
    """Depthwise conv2d, any channel multiplier, in ``NCHW4c`` / ``OIHW4o``.

    Output channel ``o`` reads input channel ``o // multiplier``, where
    ``multiplier = out_channels // in_channels``. With multiplier 1 the four lanes of an output
    texel come from the four lanes of the same input texel, so the read is one pixel.

    Parameters
    ----------
    data : te.Tensor
        ``[batch, in_channel // 4, in_height, in_width, 4]``.
    kernel : te.Tensor
        ``[out_channel // 4, 1, kernel_h, kernel_w, 4]``.
    stride : int or pair of int
        Stride on height and width.
    padding : int, or sequence of 2 or 4 ints
        Zero padding (``[top, left, bottom, right]`` for 4 ints).
    dilation : int or pair of int
        Dilation on height and width.
    out_dtype : str, optional
        Accumulation and output dtype (default: the input dtype).

    Returns
    -------
    output : te.Tensor
        ``[batch, out_channel // 4, out_height, out_width, 4]``; its block is annotated
        ``schedule_rule = DEPTHWISE_CONV2D`` (``dl.adreno.GroupConv2d`` takes it).
    """
    batch, in_chunks, in_h, in_w, _ = blocked_shape(data)
    out_chunks, one, kh, kw, _ = blocked_shape(kernel)
    if one != 1:
        raise ValueError(f"depthwise weights have one input channel per group, got {one}")
    in_channels = in_chunks * CHANNEL_BLOCK
    out_channels = out_chunks * CHANNEL_BLOCK
    if out_channels % in_channels:
        raise ValueError(f"{out_channels} output channels are no multiple of {in_channels}")
    multiplier = out_channels // in_channels
    stride_h, stride_w = as_pair(stride)
    dil_h, dil_w = as_pair(dilation)
    out_dtype = out_dtype or data.dtype

    data_pad, (top, left, bottom, right) = pad_spatial(data, padding, (kh, kw), (dil_h, dil_w))
    out_h = conv_out_size(in_h, kh, stride_h, dil_h, top + bottom)
    out_w = conv_out_size(in_w, kw, stride_w, dil_w, left + right)
    rkh = te.reduce_axis((0, kh), name="rkh")
    rkw = te.reduce_axis((0, kw), name="rkw")

    def _compute(n, occ, oh, ow, ocb):
        if multiplier == 1:
            chunk, lane = occ, ocb
        else:
            channel = (occ * CHANNEL_BLOCK + ocb) // multiplier
            chunk, lane = channel // CHANNEL_BLOCK, channel % CHANNEL_BLOCK
        pixel = data_pad[n, chunk, oh * stride_h + rkh * dil_h, ow * stride_w + rkw * dil_w, lane]
        return te.sum(
            pixel.astype(out_dtype) * kernel[occ, 0, rkh, rkw, ocb].astype(out_dtype),
            axis=[rkh, rkw],
        )

    return te.compute(
        (batch, out_chunks, out_h, out_w, CHANNEL_BLOCK),
        _compute,
        name="depthwise_conv2d_nchw4c",
        tag="depthwise_conv2d_nchw4c",
        attrs={SCHEDULE_RULE: DEPTHWISE_CONV2D},
    )
