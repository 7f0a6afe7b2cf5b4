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

The matrices are upstream's (``topi.nn.winograd_util``): Cook-Toom with the interpolation points
chosen there for accuracy, (0, -1, 1) for F(2x2, 3x3) and (0, -1, 1, 1/2, -2) for F(4x4, 3x3),
plus the point at infinity.
"""

from typing import Sequence, Tuple

import numpy as np

import tvm
from tvm import te
from tvm.s_tir.dlight.adreno.base import (
    SCHEDULE_RULE,
    WINOGRAD_BATCHED_PRODUCT,
    WINOGRAD_INPUT_TRANSFORM,
    WINOGRAD_OUTPUT_TRANSFORM,
)

from ..nn.pad import pad
from ..nn.utils import get_pad_tuple
from ..nn.winograd_util import cook_toom_matrices
from .utils import CHANNEL_BLOCK, blocked_shape

KERNEL_SIZE = 3

#: Output tile sizes with a schedule: F(2x2, 3x3) and F(4x4, 3x3).
TILES = (2, 4)


def winograd_matrices(tile: int) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The transform matrices ``(A^T, B^T, G)`` of F(tile x tile, 3 x 3), from
    :func:`tvm.topi.nn.winograd_util.cook_toom_matrices`.

    Parameters
    ----------
    tile : int
        Output tile size, one of ``TILES``.

    Returns
    -------
    matrices : tuple of numpy.ndarray
        ``A^T`` (tile x alpha), ``B^T`` (alpha x alpha), ``G`` (alpha x 3) in float64.
    """
    if tile not in TILES:
        raise ValueError(f"Winograd tile {tile} is not supported, use one of {list(TILES)}")
    a_mat, b_mat, g_mat = cook_toom_matrices(tile, KERNEL_SIZE)
    return tuple(np.asarray(m, dtype="float64") for m in (a_mat.T, b_mat.T, g_mat))


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


def winograd_output_size(in_size: Tuple[int, int], padding) -> Tuple[int, int]:
    """Output height and width of a 3x3, stride-1 convolution.

    Parameters
    ----------
    in_size : tuple of int
        Input height and width.
    padding : int, or sequence of 2 or 4 ints
        Zero padding (``[top, left, bottom, right]`` for 4 ints).

    Returns
    -------
    out_size : tuple of int
        Output height and width.
    """
    top, left, bottom, right = (int(p) for p in get_pad_tuple(padding, (3, 3)))
    return (
        in_size[0] + top + bottom - KERNEL_SIZE + 1,
        in_size[1] + left + right - KERNEL_SIZE + 1,
    )


def conv2d_winograd_input_transform(  # pylint: disable=too-many-locals
    data: te.Tensor, padding, tile: int, out_dtype: str = None
) -> te.Tensor:
    """Winograd input transform ``V = B^T d B`` of every input tile, in ``NCHW4c``.

    Parameters
    ----------
    data : te.Tensor
        ``[batch, in_channel // 4, in_height, in_width, 4]``.
    padding : int, or sequence of 2 or 4 ints
        Zero padding of the convolution (``[top, left, bottom, right]`` for 4 ints).
    tile : int
        Output tile size, 2 or 4.
    out_dtype : str, optional
        Dtype of the transformed tiles (default: the input dtype).

    Returns
    -------
    transformed : te.Tensor
        ``[alpha, alpha, in_channel // 4, tiles, 4]`` with ``alpha = tile + 2`` and ``tiles``
        the output tiles of all images, row-major; channels stay innermost, so every element
        of the result is one texture pixel.
    """
    batch, in_chunks, in_h, in_w, _ = blocked_shape(data)
    _, b_t, _ = winograd_matrices(tile)
    alpha = tile + KERNEL_SIZE - 1
    dtype = out_dtype or data.dtype
    top, left, _, _ = (int(p) for p in get_pad_tuple(padding, (3, 3)))
    out_h, out_w = winograd_output_size((in_h, in_w), padding)
    tiles_h = (out_h + tile - 1) // tile
    tiles_w = (out_w + tile - 1) // tile
    # Pad so that the last tile's window is inside; the extra rows only feed discarded outputs.
    data_pad = pad(
        data,
        (0, 0, top, left, 0),
        (0, 0, tiles_h * tile + 2 - in_h - top, tiles_w * tile + 2 - in_w - left, 0),
        name="data_pad",
    )

    def _input_transform(eps, nu, cc, p, cb):
        n = p // (tiles_h * tiles_w)
        h0 = p % (tiles_h * tiles_w) // tiles_w * tile
        w0 = p % tiles_w * tile
        return _weighted_sum(
            [
                _coef(b_t, eps, a, dtype)
                * _coef(b_t, nu, b, dtype)
                * data_pad[n, cc, h0 + a, w0 + b, cb].astype(dtype)
                for a in range(alpha)
                for b in range(alpha)
            ]
        )

    return te.compute(
        (alpha, alpha, in_chunks, batch * tiles_h * tiles_w, CHANNEL_BLOCK),
        _input_transform,
        name="winograd_input_transform",
        tag="winograd_input_transform",
        attrs={SCHEDULE_RULE: WINOGRAD_INPUT_TRANSFORM},
    )


def conv2d_winograd_batched_product(
    data_pack: te.Tensor, weight_transformed: te.Tensor, out_dtype: str = None
) -> te.Tensor:
    """The Winograd product ``M[e, n, o, p] = sum_c U[e, n, c, o] V[e, n, c, p]``.

    One matrix product per tile point ``(e, n)``, reduced over input channels.

    Parameters
    ----------
    data_pack : te.Tensor
        ``[alpha, alpha, in_channel // 4, tiles, 4]`` from
        :py:func:`conv2d_winograd_input_transform`.
    weight_transformed : te.Tensor
        ``[alpha, alpha, in_channel, out_channel // 4, 4]`` from
        :py:func:`conv2d_winograd_weight_transform`.
    out_dtype : str, optional
        Accumulation and output dtype (default: the dtype of ``data_pack``).

    Returns
    -------
    product : te.Tensor
        ``[alpha, alpha, out_channel // 4, tiles, 4]``.
    """
    alpha, _, in_chunks, num_tiles, _ = blocked_shape(data_pack)
    w_alpha, _, in_channels, out_chunks, _ = blocked_shape(weight_transformed)
    if w_alpha != alpha or in_channels != in_chunks * CHANNEL_BLOCK:
        raise ValueError(
            f"transformed weights {list(weight_transformed.shape)} do not match transformed "
            f"input {list(data_pack.shape)}"
        )
    dtype = out_dtype or data_pack.dtype
    # The input-channel sum is split into (texel, lane), so V is read one texel at a time.
    rco = te.reduce_axis((0, in_chunks), name="rco")
    rci = te.reduce_axis((0, CHANNEL_BLOCK), name="rci")
    return te.compute(
        (alpha, alpha, out_chunks, num_tiles, CHANNEL_BLOCK),
        lambda eps, nu, occ, p, ob: te.sum(
            weight_transformed[eps, nu, rco * CHANNEL_BLOCK + rci, occ, ob].astype(dtype)
            * data_pack[eps, nu, rco, p, rci].astype(dtype),
            axis=[rco, rci],
        ),
        name="winograd_batched_product",
        tag="winograd_batched_product",
        attrs={SCHEDULE_RULE: WINOGRAD_BATCHED_PRODUCT},
    )


def conv2d_winograd_output_transform(
    product: te.Tensor, out_size: Tuple[int, int], tile: int, out_dtype: str = None
) -> te.Tensor:
    """Winograd output transform ``Y = A^T M A``, gathered back to ``NCHW4c``.

    Parameters
    ----------
    product : te.Tensor
        ``[alpha, alpha, out_channel // 4, tiles, 4]`` from
        :py:func:`conv2d_winograd_batched_product`.
    out_size : tuple of int
        Output height and width (the tiles may overhang them).
    tile : int
        Output tile size, 2 or 4.
    out_dtype : str, optional
        Output dtype (default: the dtype of ``product``).

    Returns
    -------
    output : te.Tensor
        ``[batch, out_channel // 4, out_height, out_width, 4]``.
    """
    alpha, _, out_chunks, num_tiles, _ = blocked_shape(product)
    if alpha != tile + KERNEL_SIZE - 1:
        raise ValueError(f"a product of {alpha}x{alpha} tile points does not match tile {tile}")
    a_t, _, _ = winograd_matrices(tile)
    out_h, out_w = (int(s) for s in out_size)
    tiles_h = (out_h + tile - 1) // tile
    tiles_w = (out_w + tile - 1) // tile
    if num_tiles % (tiles_h * tiles_w):
        raise ValueError(f"{num_tiles} tiles do not cover a {out_h}x{out_w} output by {tile}")
    dtype = out_dtype or product.dtype

    def _output_transform(n, occ, h, w, ob):
        p = (n * tiles_h + h // tile) * tiles_w + w // tile
        return _weighted_sum(
            [
                _coef(a_t, h % tile, a, dtype)
                * _coef(a_t, w % tile, b, dtype)
                * product[a, b, occ, p, ob].astype(dtype)
                for a in range(alpha)
                for b in range(alpha)
            ]
        )

    return te.compute(
        (num_tiles // (tiles_h * tiles_w), out_chunks, out_h, out_w, CHANNEL_BLOCK),
        _output_transform,
        name="winograd_output_transform",
        tag="conv2d_winograd_nchw4c",
        attrs={SCHEDULE_RULE: WINOGRAD_OUTPUT_TRANSFORM},
    )


def conv2d_winograd_NCHWc_OIHWo(
    data: te.Tensor, weight_transformed: te.Tensor, padding, tile: int, out_dtype: str = None
) -> te.Tensor:
    """Winograd conv2d F(tile x tile, 3 x 3), stride 1, dilation 1, in ``NCHW4c``.

    The three stages in one compute; the Adreno legalization calls them one by one instead,
    so that each intermediate is a tensor of its own that can live in a texture.

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
    _, _, in_h, in_w, _ = blocked_shape(data)
    alpha = blocked_shape(weight_transformed)[0]
    if alpha != tile + KERNEL_SIZE - 1:
        raise ValueError(f"transformed weights of {alpha}x{alpha} points do not match tile {tile}")
    data_pack = conv2d_winograd_input_transform(data, padding, tile, out_dtype)
    product = conv2d_winograd_batched_product(data_pack, weight_transformed, out_dtype)
    out_size = winograd_output_size((in_h, in_w), padding)
    return conv2d_winograd_output_transform(product, out_size, tile, out_dtype)
