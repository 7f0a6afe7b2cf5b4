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
"""Tests of the Winograd transform matrices: upstream's Cook-Toom matrices compute a valid
correlation tile, and the Adreno Winograd compute takes exactly those."""

import numpy as np
import pytest

import tvm.testing
from tvm.topi.adreno.conv2d_winograd import TILES, winograd_matrices
from tvm.topi.nn.winograd_util import cook_toom_matrices


def _correlation_tile(data, kernel, tile):
    size = kernel.shape[0]
    return np.array(
        [
            [(data[i : i + size, j : j + size] * kernel).sum() for j in range(tile)]
            for i in range(tile)
        ]
    )


@pytest.mark.parametrize("tile, kernel_size", [(2, 3), (4, 3), (6, 3), (2, 5), (4, 5)])
def test_cook_toom_matrices_give_a_correlation_tile(tile, kernel_size):
    """A^T [(G g G^T) * (B^T d B)] A is the valid correlation of a random input tile with a
    random kernel (float64, to rounding)."""
    a_mat, b_mat, g_mat = cook_toom_matrices(tile, kernel_size)
    alpha = tile + kernel_size - 1
    assert (a_mat.shape, b_mat.shape, g_mat.shape) == (
        (alpha, tile),
        (alpha, alpha),
        (alpha, kernel_size),
    )
    rng = np.random.default_rng()
    data = rng.uniform(-1, 1, (alpha, alpha))
    kernel = rng.uniform(-1, 1, (kernel_size, kernel_size))
    product = (g_mat @ kernel @ g_mat.T) * (b_mat.T @ data @ b_mat)
    np.testing.assert_allclose(
        a_mat.T @ product @ a_mat, _correlation_tile(data, kernel, tile), rtol=0, atol=1e-9
    )


@pytest.mark.parametrize("tile", TILES)
def test_adreno_winograd_takes_upstreams_matrices(tile):
    a_mat, b_mat, g_mat = cook_toom_matrices(tile, 3)
    a_t, b_t, g = winograd_matrices(tile)
    np.testing.assert_array_equal(a_t, a_mat.T)
    np.testing.assert_array_equal(b_t, b_mat.T)
    np.testing.assert_array_equal(g, g_mat)


def test_matrices_are_computed_once_and_read_only():
    """Every Winograd stage of every conv asks for them: one computation per size, shared, so
    no caller may write into them."""
    first, second = cook_toom_matrices(4, 3), cook_toom_matrices(4, 3)
    assert all(a is b for a, b in zip(first, second))
    for matrix in (*first, *winograd_matrices(4)):
        with pytest.raises(ValueError, match="read-only"):
            matrix[0, 0] = 1.0


def test_unsupported_sizes_are_refused():
    with pytest.raises(ValueError, match="tile size"):
        cook_toom_matrices(9, 3)
    with pytest.raises(ValueError, match="kernel size"):
        cook_toom_matrices(4, 9)
    with pytest.raises(ValueError, match="use one of"):
        winograd_matrices(3)


if __name__ == "__main__":
    tvm.testing.main()
