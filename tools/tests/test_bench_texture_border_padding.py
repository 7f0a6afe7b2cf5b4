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
# pylint: disable=invalid-name,missing-docstring,no-self-argument,not-callable
# pylint: disable=chained-comparison  # TVMScript guards are written term by term
"""The bench experiment bench/experiments/texture_border_padding.py: which guard terms of a
padded texture read it drops, and which it keeps."""

import sys
from pathlib import Path

import pytest

tvm = pytest.importorskip("tvm", reason="the experiment is a TVM pass: needs the workspace venv")

# pylint: disable=wrong-import-position
from tvm.script import tirx as T

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "experiments"))
from texture_border_padding import TextureBorderPadding  # noqa: E402

# pylint: enable=wrong-import-position

# A (1, 2, 6, 8, 4) texture is an image of 8 x 6 pixels and 2 layers: the read at (w - 1, h - 1)
# of the padded window is inside the image for 1 <= w < 9 and 1 <= h < 7.


def _apply(func):
    return TextureBorderPadding()(tvm.IRModule({"main": func}))["main"]


def test_inside_the_image_terms_are_dropped():
    @T.prim_func(private=True)
    def before(
        img: T.Buffer((1, 2, 6, 8, 4), "float32", scope="global.texture"),
        out: T.Buffer((80, 4), "float32"),
    ):
        for h, w in T.grid(8, 10):
            out[h * 10 + w, 0:4] = T.if_then_else(
                1 <= h and h < 7 and 1 <= w and w < 9,
                T.call_intrin(
                    "float32x4",
                    "tirx.texture2d_load",
                    img.data,
                    w - 1,
                    h - 1,
                    1,
                    128,
                    T.Ramp(0, 1, 4),
                ),
                T.Broadcast(T.float32(0), 4),
            )

    @T.prim_func(private=True)
    def expected(
        img: T.Buffer((1, 2, 6, 8, 4), "float32", scope="global.texture"),
        out: T.Buffer((80, 4), "float32"),
    ):
        for h, w in T.grid(8, 10):
            out[h * 10 + w, 0:4] = T.call_intrin(
                "float32x4", "tirx.texture2d_load", img.data, w - 1, h - 1, 1, 128, T.Ramp(0, 1, 4)
            )

    tvm.ir.assert_structural_equal(_apply(before), expected)


def test_other_terms_stay():
    """A term on the layer (an image array clamps its layer index) and one tighter than the
    image (w >= 2) stay; the bounds of the image go."""

    @T.prim_func(private=True)
    def before(
        img: T.Buffer((1, 2, 6, 8, 4), "float32", scope="global.texture"),
        out: T.Buffer((80, 4), "float32"),
        layer: T.int32,
    ):
        for h, w in T.grid(8, 10):
            out[h * 10 + w, 0:4] = T.if_then_else(
                2 <= w and layer < 2 and 1 <= h and h < 7,
                T.call_intrin(
                    "float32x4",
                    "tirx.texture2d_load",
                    img.data,
                    w - 1,
                    h - 1,
                    layer,
                    128,
                    T.Ramp(0, 1, 4),
                ),
                T.Broadcast(T.float32(0), 4),
            )

    @T.prim_func(private=True)
    def expected(
        img: T.Buffer((1, 2, 6, 8, 4), "float32", scope="global.texture"),
        out: T.Buffer((80, 4), "float32"),
        layer: T.int32,
    ):
        for h, w in T.grid(8, 10):
            out[h * 10 + w, 0:4] = T.if_then_else(
                2 <= w and layer < 2,
                T.call_intrin(
                    "float32x4",
                    "tirx.texture2d_load",
                    img.data,
                    w - 1,
                    h - 1,
                    layer,
                    128,
                    T.Ramp(0, 1, 4),
                ),
                T.Broadcast(T.float32(0), 4),
            )

    tvm.ir.assert_structural_equal(_apply(before), expected)


def test_a_nonzero_padding_value_is_kept():
    """The border is zero: a read padded with another value (a max pool's) keeps its guard."""

    @T.prim_func(private=True)
    def before(
        img: T.Buffer((1, 2, 6, 8, 4), "float32", scope="global.texture"),
        out: T.Buffer((80, 4), "float32"),
    ):
        for h, w in T.grid(8, 10):
            out[h * 10 + w, 0:4] = T.if_then_else(
                1 <= h and h < 7 and 1 <= w and w < 9,
                T.call_intrin(
                    "float32x4",
                    "tirx.texture2d_load",
                    img.data,
                    w - 1,
                    h - 1,
                    1,
                    128,
                    T.Ramp(0, 1, 4),
                ),
                T.Broadcast(T.float32(-3.0e38), 4),
            )

    tvm.ir.assert_structural_equal(_apply(before), before)


def test_an_image_of_another_extent_is_kept():
    """The same guard around a read of a (1, 2, 6, 6, 4) texture (6 pixels wide): w < 9 is not
    its width and stays; the other terms go."""

    @T.prim_func(private=True)
    def before(
        img: T.Buffer((1, 2, 6, 6, 4), "float32", scope="global.texture"),
        out: T.Buffer((80, 4), "float32"),
    ):
        for h, w in T.grid(8, 10):
            out[h * 10 + w, 0:4] = T.if_then_else(
                1 <= h and h < 7 and 1 <= w and w < 9,
                T.call_intrin(
                    "float32x4",
                    "tirx.texture2d_load",
                    img.data,
                    w - 1,
                    h - 1,
                    1,
                    128,
                    T.Ramp(0, 1, 4),
                ),
                T.Broadcast(T.float32(0), 4),
            )

    @T.prim_func(private=True)
    def expected(
        img: T.Buffer((1, 2, 6, 6, 4), "float32", scope="global.texture"),
        out: T.Buffer((80, 4), "float32"),
    ):
        for h, w in T.grid(8, 10):
            out[h * 10 + w, 0:4] = T.if_then_else(
                w < 9,
                T.call_intrin(
                    "float32x4",
                    "tirx.texture2d_load",
                    img.data,
                    w - 1,
                    h - 1,
                    1,
                    128,
                    T.Ramp(0, 1, 4),
                ),
                T.Broadcast(T.float32(0), 4),
            )

    tvm.ir.assert_structural_equal(_apply(before), expected)
