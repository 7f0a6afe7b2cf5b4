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
"""Shared helpers of the Adreno convolution computes.

Every Adreno convolution works on channel-blocked tensors: activations ``NCHW4c``
(``[batch, channel_chunk, height, width, 4]``) and weights ``OIHW4o``
(``[out_channel_chunk, in_channel_per_group, kernel_h, kernel_w, 4]``), because one texture
pixel holds four channels (RGBA).
"""

from typing import Sequence, Tuple, Union

from tvm import te

from ..nn.pad import pad
from ..nn.utils import get_pad_tuple
from ..utils import get_const_tuple

IntPair = Union[int, Sequence[int]]

#: Channels per texture pixel (the RGBA lanes of one texel).
CHANNEL_BLOCK = 4


def as_pair(value: IntPair) -> Tuple[int, int]:
    """Return ``(h, w)`` from an int or a two-element sequence.

    Parameters
    ----------
    value : int or sequence of int
        A stride or dilation.

    Returns
    -------
    pair : tuple of int
        The value for the height and the width axis.
    """
    if isinstance(value, (tuple, list)) or hasattr(value, "__len__"):
        return int(value[0]), int(value[1])
    return int(value), int(value)


def pad_spatial(
    data: te.Tensor, padding, kernel_hw: Tuple[int, int], dilation: Tuple[int, int]
) -> Tuple[te.Tensor, Tuple[int, int, int, int]]:
    """Zero-pad the spatial axes (2 and 3) of a 5-D channel-blocked tensor.

    Parameters
    ----------
    data : te.Tensor
        ``[batch, channel_chunk, height, width, block]``.
    padding : int, or sequence of 2 or 4 ints
        TOPI padding (``[top, left, bottom, right]`` for 4 ints).
    kernel_hw : tuple of int
        The kernel height and width before dilation.
    dilation : tuple of int
        The dilation on height and width.

    Returns
    -------
    padded : te.Tensor
        The padded tensor (``data`` itself when nothing is padded).
    pads : tuple of int
        ``(top, left, bottom, right)``.
    """
    dil_kh = (kernel_hw[0] - 1) * dilation[0] + 1
    dil_kw = (kernel_hw[1] - 1) * dilation[1] + 1
    top, left, bottom, right = get_pad_tuple(padding, (dil_kh, dil_kw))
    pads = tuple(int(p) for p in (top, left, bottom, right))
    if not any(pads):
        return data, pads
    padded = pad(data, (0, 0, pads[0], pads[1], 0), (0, 0, pads[2], pads[3], 0), name="data_pad")
    return padded, pads


def conv_out_size(size: int, kernel: int, stride: int, dilation: int, pad_sum: int) -> int:
    """Output extent of one spatial axis of a convolution.

    Parameters
    ----------
    size : int
        The input extent.
    kernel : int
        The kernel extent before dilation.
    stride : int
        The stride.
    dilation : int
        The dilation.
    pad_sum : int
        Padding before plus padding after.

    Returns
    -------
    extent : int
        ``(size + pad_sum - dilated_kernel) // stride + 1``.
    """
    return (size + pad_sum - ((kernel - 1) * dilation + 1)) // stride + 1


def blocked_shape(tensor: te.Tensor) -> Tuple[int, ...]:
    """Static shape of a channel-blocked tensor, checking that the block is 4.

    Parameters
    ----------
    tensor : te.Tensor
        A 5-D ``NCHW4c`` activation or ``OIHW4o`` weight.

    Returns
    -------
    shape : tuple of int
        Its shape.
    """
    shape = get_const_tuple(tensor.shape)
    if len(shape) != 5 or shape[4] != CHANNEL_BLOCK:
        raise ValueError(f"expected a 5-D tensor blocked by {CHANNEL_BLOCK}, got shape {shape}")
    return shape
