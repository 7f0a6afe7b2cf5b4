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
"""Winograd conv2d F(m x m, 3 x 3) on channel-blocked (texture) layouts for Adreno GPUs.

A 3x3, stride-1 convolution computes each ``m x m`` output tile from an ``(m+2) x (m+2)``
input tile as ``Y = A^T [ (G g G^T) * (B^T d B) ] A`` (Lavin and Gray, "Fast Algorithms for
Convolutional Neural Networks", 2016): the weight transform ``G g G^T`` (done once, at compile
time for constant weights), the input transform ``B^T d B``, an elementwise product summed
over input channels (a batched matrix product, one per tile position), and the output
transform ``A^T (.) A``. Every intermediate keeps channels innermost in blocks of 4, so each
stage reads and writes texture pixels.

The matrices use the interpolation points (0, 1, -1) for F(2x2, 3x3) and (0, 1, -1, 2, -2)
for F(4x4, 3x3), plus the point at infinity.
"""

from typing import Dict, Sequence, Tuple

import numpy as np

import tvm
from tvm import te

from ..nn.pad import pad
from ..nn.utils import get_pad_tuple
from .utils import CHANNEL_BLOCK, blocked_shape

#: ``tile -> (A^T, B^T, G)`` for a 3x3 kernel: A^T is (tile, alpha), B^T (alpha, alpha),
#: G (alpha, 3), with ``alpha = tile + 2``.
_MATRICES: Dict[int, Tuple[np.ndarray, np.ndarray, np.ndarray]] = {
    2: (
        np.array([[1, 1, 1, 0], [0, 1, -1, -1]]),
        np.array([[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]]),
        np.array([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]]),
    ),
    4: (
        np.array(
            [
                [1, 1, 1, 1, 1, 0],
                [0, 1, -1, 2, -2, 0],
                [0, 1, 1, 4, 4, 0],
                [0, 1, -1, 8, -8, 1],
            ]
        ),
        np.array(
            [
                [4, 0, -5, 0, 1, 0],
                [0, -4, -4, 1, 1, 0],
                [0, 4, -4, -1, 1, 0],
                [0, -2, -1, 2, 1, 0],
                [0, 2, -1, -2, 1, 0],
                [0, 4, 0, -5, 0, 1],
            ]
        ),
        np.array(
            [
                [1 / 4, 0, 0],
                [-1 / 6, -1 / 6, -1 / 6],
                [-1 / 6, 1 / 6, -1 / 6],
                [1 / 24, 1 / 12, 1 / 6],
                [1 / 24, -1 / 12, 1 / 6],
                [0, 0, 1],
            ]
        ),
    ),
}

KERNEL_SIZE = 3


def winograd_matrices(tile: int) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The transform matrices ``(A^T, B^T, G)`` of F(tile x tile, 3 x 3).

    Parameters
    ----------
    tile : int
        Output tile size, 2 or 4.

    Returns
    -------
    matrices : tuple of numpy.ndarray
        ``A^T`` (tile x alpha), ``B^T`` (alpha x alpha), ``G`` (alpha x 3) in float64.
    """
    if tile not in _MATRICES:
        raise ValueError(f"Winograd tile {tile} is not supported, use one of {sorted(_MATRICES)}")
    return tuple(np.asarray(m, dtype="float64") for m in _MATRICES[tile])


def _coef(matrix: np.ndarray, row, col: int, dtype: str):
    """``matrix[row, col]`` for a symbolic ``row`` and a constant ``col``: a select chain over
    the nonzero entries of the column, which folds to a constant once ``row`` is known."""
    value = tvm.tirx.const(0.0, dtype)
    for i in range(matrix.shape[0]):
        if matrix[i, col] != 0:
            value = tvm.tirx.Select(row == i, tvm.tirx.const(matrix[i, col], dtype), value)
    return value


def _weighted_sum(terms: Sequence):
    total = terms[0]
    for term in terms[1:]:
        total = total + term
    return total


def conv2d_winograd_weight_transform(kernel: te.Tensor, tile: int, out_dtype: str = None):
    """Winograd weight transform ``U = G g G^T`` of ``OIHW4o`` weights.

    Parameters
    ----------
    kernel : te.Tensor
        ``[out_channel // 4, in_channel, 3, 3, 4]``.
    tile : int
        Output tile size, 2 or 4.
    out_dtype : str, optional
        Dtype of the transformed weights (default: the kernel dtype).

    Returns
    -------
    transformed : te.Tensor
        ``[alpha, alpha, in_channel, out_channel // 4, 4]``.
    """
    out_chunks, in_channels, kh, kw, _ = blocked_shape(kernel)
    if (kh, kw) != (KERNEL_SIZE, KERNEL_SIZE):
        raise ValueError(f"Winograd F(m, 3) needs a 3x3 kernel, got {kh}x{kw}")
    _, _, g_mat = winograd_matrices(tile)
    alpha = tile + KERNEL_SIZE - 1
    dtype = out_dtype or kernel.dtype

    def _compute(eps, nu, ci, occ, ob):
        return _weighted_sum(
            [
                _coef(g_mat, eps, i, dtype)
                * _coef(g_mat, nu, j, dtype)
                * kernel[occ, ci, i, j, ob].astype(dtype)
                for i in range(KERNEL_SIZE)
                for j in range(KERNEL_SIZE)
            ]
        )

    return te.compute(
        (alpha, alpha, in_channels, out_chunks, CHANNEL_BLOCK),
        _compute,
        name="winograd_weight_transform",
        tag="winograd_weight_transform",
    )


def conv2d_winograd_NCHWc_OIHWo(  # pylint: disable=too-many-locals
    data: te.Tensor, weight_transformed: te.Tensor, padding, tile: int, out_dtype: str = None
) -> te.Tensor:
    """Winograd conv2d F(tile x tile, 3 x 3), stride 1, dilation 1, in ``NCHW4c``.

    Parameters
    ----------
    data : te.Tensor
        ``[batch, in_channel // 4, in_height, in_width, 4]``.
    weight_transformed : te.Tensor
        ``[alpha, alpha, in_channel, out_channel // 4, 4]`` from
        :py:func:`conv2d_winograd_weight_transform`.
    padding : int, or sequence of 2 or 4 ints
        Zero padding (``[top, left, bottom, right]`` for 4 ints).
    tile : int
        Output tile size, 2 or 4.
    out_dtype : str, optional
        Accumulation and output dtype (default: the input dtype).

    Returns
    -------
    output : te.Tensor
        ``[batch, out_channel // 4, out_height, out_width, 4]``.
    """
    batch, in_chunks, in_h, in_w, _ = blocked_shape(data)
    alpha, _, in_channels, out_chunks, _ = blocked_shape(weight_transformed)
    if alpha != tile + KERNEL_SIZE - 1 or in_channels != in_chunks * CHANNEL_BLOCK:
        raise ValueError(
            f"transformed weights {weight_transformed.shape} do not match tile {tile} and "
            f"{in_chunks * CHANNEL_BLOCK} input channels"
        )
    a_t, b_t, _ = winograd_matrices(tile)
    dtype = out_dtype or data.dtype
    top, left, bottom, right = (int(p) for p in get_pad_tuple(padding, (3, 3)))
    out_h = in_h + top + bottom - KERNEL_SIZE + 1
    out_w = in_w + left + right - KERNEL_SIZE + 1
    tiles_h = (out_h + tile - 1) // tile
    tiles_w = (out_w + tile - 1) // tile
    num_tiles = batch * tiles_h * tiles_w
    # Pad so that the last tile's window is inside; the extra rows only feed discarded outputs.
    data_pad = pad(
        data,
        (0, 0, top, left, 0),
        (0, 0, tiles_h * tile + 2 - in_h - top, tiles_w * tile + 2 - in_w - left, 0),
        name="data_pad",
    )

    def _tile_origin(p):
        n = p // (tiles_h * tiles_w)
        rest = p % (tiles_h * tiles_w)
        return n, rest // tiles_w * tile, rest % tiles_w * tile

    # V[eps, nu, c, p, cb] = sum_ab B^T[eps, a] d[a, b] B^T[nu, b] (B^T d B of the tile).
    def _input_transform(eps, nu, cc, p, cb):
        n, h0, w0 = _tile_origin(p)
        return _weighted_sum(
            [
                _coef(b_t, eps, a, dtype)
                * _coef(b_t, nu, b, dtype)
                * data_pad[n, cc, h0 + a, w0 + b, cb].astype(dtype)
                for a in range(alpha)
                for b in range(alpha)
            ]
        )

    data_pack = te.compute(
        (alpha, alpha, in_chunks, num_tiles, CHANNEL_BLOCK),
        _input_transform,
        name="winograd_input_transform",
    )

    # M[eps, nu, o, p] = sum_c U[eps, nu, c, o] V[eps, nu, c, p]: one product per tile point.
    rc = te.reduce_axis((0, in_channels), name="rc")
    product = te.compute(
        (alpha, alpha, out_chunks, num_tiles, CHANNEL_BLOCK),
        lambda eps, nu, occ, p, ob: te.sum(
            weight_transformed[eps, nu, rc, occ, ob].astype(dtype)
            * data_pack[eps, nu, rc // CHANNEL_BLOCK, p, rc % CHANNEL_BLOCK],
            axis=[rc],
        ),
        name="winograd_batched_product",
    )

    # Y = A^T M A, gathered back to NCHW4c.
    def _output_transform(n, occ, h, w, ob):
        p = (n * tiles_h + h // tile) * tiles_w + w // tile
        return _weighted_sum(
            [
                _coef(a_t, h % tile, a, dtype)
                * _coef(a_t, w % tile, b, dtype)
                * product[a, b, occ, p, ob]
                for a in range(alpha)
                for b in range(alpha)
            ]
        )

    return te.compute(
        (batch, out_chunks, out_h, out_w, CHANNEL_BLOCK),
        _output_transform,
        name="winograd_output_transform",
        tag="conv2d_winograd_nchw4c",
    )
