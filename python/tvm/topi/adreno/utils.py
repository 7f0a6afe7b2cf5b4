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

from typing import Tuple

from tvm import te

from ..utils import get_const_tuple

#: Channels per texture pixel (the RGBA lanes of one texel).
CHANNEL_BLOCK = 4


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
