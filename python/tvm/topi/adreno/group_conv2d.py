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
"""Group convolution on channel-blocked (texture) layouts for Adreno GPUs."""

from tvm import te
from tvm.s_tir.dlight.adreno.base import GROUP_CONV2D, SCHEDULE_RULE

from .utils import CHANNEL_BLOCK, as_pair, blocked_shape, conv_out_size, pad_spatial


def group_conv2d_NCHWc_OIHWo(
    data: te.Tensor,
    kernel: te.Tensor,
    stride,
    padding,
    dilation,
    groups: int,
    out_dtype: str = None,
) -> te.Tensor:
    """Grouped conv2d in ``NCHW4c`` / ``OIHW4o`` for any group size.

    Output channel ``o`` belongs to group ``o // (out_channels / groups)`` and sums over that
    group's ``in_channels / groups`` input channels. When both per-group channel counts are
    multiples of 4, a group starts on a texel boundary and the input-channel reduction is
    split into (texel, lane), so the schedule can read whole pixels. Otherwise the group
    boundaries cut through texels and each product reads one lane.

    (TOPI's generic ``conv2d_NCHWc_OIHWo`` assumes the first case and computes
    ``out_chunks // groups``, which is 0, hence the "Divide by zero" for depthwise and small
    groups.)

    Parameters
    ----------
    data : te.Tensor
        ``[batch, in_channel // 4, in_height, in_width, 4]``.
    kernel : te.Tensor
        ``[out_channel // 4, in_channel // groups, kernel_h, kernel_w, 4]``.
    stride : int or pair of int
        Stride on height and width.
    padding : int, or sequence of 2 or 4 ints
        Zero padding (``[top, left, bottom, right]`` for 4 ints).
    dilation : int or pair of int
        Dilation on height and width.
    groups : int
        Number of groups.
    out_dtype : str, optional
        Accumulation and output dtype (default: the input dtype).

    Returns
    -------
    output : te.Tensor
        ``[batch, out_channel // 4, out_height, out_width, 4]``; its block is annotated
        ``schedule_rule = GROUP_CONV2D`` (``dl.adreno.GroupConv2d`` takes it).
    """
    batch, in_chunks, in_h, in_w, _ = blocked_shape(data)
    out_chunks, in_per_group, kh, kw, _ = blocked_shape(kernel)
    in_channels = in_chunks * CHANNEL_BLOCK
    out_channels = out_chunks * CHANNEL_BLOCK
    if in_channels != in_per_group * groups or out_channels % groups:
        raise ValueError(
            f"{groups} groups do not divide {in_channels} input and {out_channels} output "
            f"channels (weights take {in_per_group} input channels per group)"
        )
    out_per_group = out_channels // groups
    stride_h, stride_w = as_pair(stride)
    dil_h, dil_w = as_pair(dilation)
    out_dtype = out_dtype or data.dtype

    data_pad, (top, left, bottom, right) = pad_spatial(data, padding, (kh, kw), (dil_h, dil_w))
    out_h = conv_out_size(in_h, kh, stride_h, dil_h, top + bottom)
    out_w = conv_out_size(in_w, kw, stride_w, dil_w, left + right)
    rkh = te.reduce_axis((0, kh), name="rkh")
    rkw = te.reduce_axis((0, kw), name="rkw")
    aligned = in_per_group % CHANNEL_BLOCK == 0 and out_per_group % CHANNEL_BLOCK == 0

    def _product(n, chunk, lane, occ, oh, ow, ocb, rc):
        pixel = data_pad[n, chunk, oh * stride_h + rkh * dil_h, ow * stride_w + rkw * dil_w, lane]
        return pixel.astype(out_dtype) * kernel[occ, rc, rkh, rkw, ocb].astype(out_dtype)

    if aligned:
        ric = te.reduce_axis((0, in_per_group // CHANNEL_BLOCK), name="ric")
        rib = te.reduce_axis((0, CHANNEL_BLOCK), name="rib")

        def _compute(n, occ, oh, ow, ocb):
            first_chunk = occ // (out_per_group // CHANNEL_BLOCK) * (in_per_group // CHANNEL_BLOCK)
            rc = ric * CHANNEL_BLOCK + rib
            return te.sum(
                _product(n, first_chunk + ric, rib, occ, oh, ow, ocb, rc),
                axis=[ric, rib, rkh, rkw],
            )

    else:
        ric = te.reduce_axis((0, in_per_group), name="ric")

        def _compute(n, occ, oh, ow, ocb):
            channel = (occ * CHANNEL_BLOCK + ocb) // out_per_group * in_per_group + ric
            return te.sum(
                _product(
                    n, channel // CHANNEL_BLOCK, channel % CHANNEL_BLOCK, occ, oh, ow, ocb, ric
                ),
                axis=[ric, rkh, rkw],
            )

    return te.compute(
        (batch, out_chunks, out_h, out_w, CHANNEL_BLOCK),
        _compute,
        name="group_conv2d_nchw4c",
        tag="group_conv2d_nchw4c",
        attrs={SCHEDULE_RULE: GROUP_CONV2D},
    )
