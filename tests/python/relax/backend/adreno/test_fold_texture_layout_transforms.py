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
"""Tests of FoldTextureLayoutTransforms: inverse layout transforms cancel, transforms out of
NCHW4c sink below elementwise ops, channel pads and resizes, duplicates merge."""

import tvm
import tvm.testing
from tvm.relax.backend.adreno.transform.fold_texture_layout_transforms import (
    FoldTextureLayoutTransforms,
)
from tvm.script import ir as I
from tvm.script import relax as R


def test_pack_after_unpack_cancels_across_a_permutation():
    """NCHW4c -> NHWC, NHWC -> NCHW (the TFLite frontend's permute_dims), NCHW -> NCHW4c."""

    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((1, 2, 4, 4, 4), "float32")) -> R.Tensor((1, 2, 4, 4, 4), "float32"):
            with R.dataflow():
                nhwc = R.layout_transform(x, index_map=lambda n, c, h, w, l: (n, h, w, c * 4 + l))
                nchw = R.permute_dims(nhwc, [0, 3, 1, 2])
                packed = R.layout_transform(
                    nchw, index_map=lambda n, c, h, w: (n, c // 4, h, w, c % 4)
                )
                y = R.nn.relu(packed)
                R.output(y)
            return y

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((1, 2, 4, 4, 4), "float32")) -> R.Tensor((1, 2, 4, 4, 4), "float32"):
            with R.dataflow():
                y = R.nn.relu(x)
                R.output(y)
            return y

    tvm.ir.assert_structural_equal(FoldTextureLayoutTransforms()(Before), Expected)


def test_unpack_sinks_below_bias_add_and_activation():
    """The bias is packed too (a constant one folds later), so the epilogue runs in NCHW4c."""

    @I.ir_module
    class Before:
        @R.function
        def main(
            x: R.Tensor((1, 2, 4, 4, 4), "float32"), b: R.Tensor((1, 8, 1, 1), "float32")
        ) -> R.Tensor((1, 8, 4, 4), "float32"):
            with R.dataflow():
                unpacked = R.layout_transform(
                    x, index_map=lambda n, c, h, w, l: (n, c * 4 + l, h, w)
                )
                y = R.add(unpacked, b)
                z = R.nn.relu(y)
                R.output(z)
            return z

    @I.ir_module
    class Expected:
        @R.function
        def main(
            x: R.Tensor((1, 2, 4, 4, 4), "float32"), b: R.Tensor((1, 8, 1, 1), "float32")
        ) -> R.Tensor((1, 8, 4, 4), "float32"):
            with R.dataflow():
                bias = R.layout_transform(b, index_map=lambda n, c, h, w: (n, c // 4, h, w, c % 4))
                y = R.add(x, bias)
                z = R.nn.relu(y)
                out = R.layout_transform(z, index_map=lambda n, c, h, w, l: (n, c * 4 + l, h, w))
                R.output(out)
            return out

    tvm.ir.assert_structural_equal(FoldTextureLayoutTransforms()(Before), Expected)


def test_identical_transforms_of_one_tensor_merge():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((1, 8, 4, 4), "float32")) -> R.Tensor((1, 2, 4, 4, 4), "float32"):
            with R.dataflow():
                a = R.layout_transform(x, index_map=lambda n, c, h, w: (n, c // 4, h, w, c % 4))
                b = R.layout_transform(x, index_map=lambda n, c, h, w: (n, c // 4, h, w, c % 4))
                y = R.add(a, b)
                R.output(y)
            return y

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((1, 8, 4, 4), "float32")) -> R.Tensor((1, 2, 4, 4, 4), "float32"):
            with R.dataflow():
                a = R.layout_transform(x, index_map=lambda n, c, h, w: (n, c // 4, h, w, c % 4))
                y = R.add(a, a)
                R.output(y)
            return y

    tvm.ir.assert_structural_equal(FoldTextureLayoutTransforms()(Before), Expected)


def test_unpacked_tensor_with_two_uses_and_padding_transforms_are_kept():
    """An unpacked tensor read twice is not sunk (it would be computed twice); a transform that
    pads the channels is not a plain change of layout and does not cancel."""

    @I.ir_module
    class Before:
        @R.function
        def main(
            x: R.Tensor((1, 2, 4, 4, 4), "float32"), v: R.Tensor((1, 6, 4, 4), "float32")
        ) -> R.Tuple(R.Tensor((1, 8, 4, 4), "float32"), R.Tensor((1, 2, 4, 4, 4), "float32")):
            with R.dataflow():
                unpacked = R.layout_transform(
                    x, index_map=lambda n, c, h, w, l: (n, c * 4 + l, h, w)
                )
                y = R.nn.relu(unpacked)
                z = R.add(unpacked, y)
                padded = R.layout_transform(
                    v, index_map=lambda n, c, h, w: (n, c // 4, h, w, c % 4), pad_value=0.0
                )
                out = (z, padded)
                R.output(out)
            return out

    tvm.ir.assert_structural_equal(FoldTextureLayoutTransforms()(Before), Before)


def test_unpack_sinks_below_a_channel_pad_of_whole_blocks():
    """BlazeFace's shortcut: NHWC zero channels 8 -> 12 become one more channel block, the pad
    runs in NCHW4c (with the spatial pad) and the transforms around it cancel."""

    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((1, 2, 4, 4, 4), "float32")) -> R.Tensor((1, 3, 6, 4, 4), "float32"):
            with R.dataflow():
                nhwc = R.layout_transform(x, index_map=lambda n, c, h, w, l: (n, h, w, c * 4 + l))
                wide = R.nn.pad(nhwc, pad_width=[0, 0, 1, 1, 0, 0, 0, 4], pad_value=0.0)
                y = R.layout_transform(wide, index_map=lambda n, h, w, c: (n, c // 4, h, w, c % 4))
                R.output(y)
            return y

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((1, 2, 4, 4, 4), "float32")) -> R.Tensor((1, 3, 6, 4, 4), "float32"):
            with R.dataflow():
                y = R.nn.pad(x, pad_width=[0, 0, 0, 1, 1, 1, 0, 0, 0, 0], pad_value=0.0)
                R.output(y)
            return y

    tvm.ir.assert_structural_equal(FoldTextureLayoutTransforms()(Before), Expected)


def test_channel_pad_sinks_below_a_transform_with_another_reader():
    """The unpacked tensor also feeds a permute_dims: the pad still runs in NCHW4c, and the
    transform stays for the other reader."""

    @I.ir_module
    class Before:
        @R.function
        def main(
            x: R.Tensor((1, 2, 4, 4, 4), "float32"),
        ) -> R.Tuple(R.Tensor((1, 3, 4, 4, 4), "float32"), R.Tensor((1, 8, 4, 4), "float32")):
            with R.dataflow():
                nhwc = R.layout_transform(x, index_map=lambda n, c, h, w, l: (n, h, w, c * 4 + l))
                wide = R.nn.pad(nhwc, pad_width=[0, 0, 0, 0, 0, 0, 0, 4], pad_value=0.0)
                y = R.layout_transform(wide, index_map=lambda n, h, w, c: (n, c // 4, h, w, c % 4))
                z = R.permute_dims(nhwc, [0, 3, 1, 2])
                out = (y, z)
                R.output(out)
            return out

    @I.ir_module
    class Expected:
        @R.function
        def main(
            x: R.Tensor((1, 2, 4, 4, 4), "float32"),
        ) -> R.Tuple(R.Tensor((1, 3, 4, 4, 4), "float32"), R.Tensor((1, 8, 4, 4), "float32")):
            with R.dataflow():
                nhwc = R.layout_transform(x, index_map=lambda n, c, h, w, l: (n, h, w, c * 4 + l))
                y = R.nn.pad(x, pad_width=[0, 0, 0, 1, 0, 0, 0, 0, 0, 0], pad_value=0.0)
                z = R.permute_dims(nhwc, [0, 3, 1, 2])
                out = (y, z)
                R.output(out)
            return out

    tvm.ir.assert_structural_equal(FoldTextureLayoutTransforms()(Before), Expected)


def test_channel_pads_of_part_blocks_and_reflections_stay_unpacked():
    """Two zero channels would split a texel block; a reflection over channels reads lanes of
    other blocks: both pads keep their unpacked layout. A spatial reflection is any layout's."""

    @I.ir_module
    class Before:
        @R.function
        def main(
            x: R.Tensor((1, 2, 4, 4, 4), "float32"),
            z: R.Tensor((1, 2, 4, 4, 4), "float32"),
        ) -> R.Tuple(R.Tensor((1, 10, 4, 4), "float32"), R.Tensor((1, 16, 4, 4), "float32")):
            with R.dataflow():
                a = R.layout_transform(x, index_map=lambda n, c, h, w, l: (n, c * 4 + l, h, w))
                part = R.nn.pad(a, pad_width=[0, 0, 0, 2, 0, 0, 0, 0], pad_value=0.0)
                b = R.layout_transform(z, index_map=lambda n, c, h, w, l: (n, c * 4 + l, h, w))
                mirrored = R.nn.pad(b, pad_width=[0, 0, 4, 4, 0, 0, 0, 0], pad_mode="reflect")
                out = (part, mirrored)
                R.output(out)
            return out

    tvm.ir.assert_structural_equal(FoldTextureLayoutTransforms()(Before), Before)

    @I.ir_module
    class Spatial:
        @R.function
        def main(x: R.Tensor((1, 2, 4, 4, 4), "float32")) -> R.Tensor((1, 8, 6, 6), "float32"):
            with R.dataflow():
                a = R.layout_transform(x, index_map=lambda n, c, h, w, l: (n, c * 4 + l, h, w))
                y = R.nn.pad(a, pad_width=[0, 0, 0, 0, 1, 1, 1, 1], pad_mode="reflect")
                R.output(y)
            return y

    @I.ir_module
    class SpatialExpected:
        @R.function
        def main(x: R.Tensor((1, 2, 4, 4, 4), "float32")) -> R.Tensor((1, 8, 6, 6), "float32"):
            with R.dataflow():
                p = R.nn.pad(x, pad_width=[0, 0, 0, 0, 1, 1, 1, 1, 0, 0], pad_mode="reflect")
                y = R.layout_transform(p, index_map=lambda n, c, h, w, l: (n, c * 4 + l, h, w))
                R.output(y)
            return y

    tvm.ir.assert_structural_equal(FoldTextureLayoutTransforms()(Spatial), SpatialExpected)


def test_unpack_sinks_below_an_nhwc_resize():
    """The palm detector's upsampling: NCHW4c -> NHWC, a bilinear resize in NHWC, back to
    NCHW4c. The resize runs in NCHW4c and both transforms go."""

    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((1, 2, 4, 4, 4), "float32")) -> R.Tensor((1, 2, 8, 8, 4), "float32"):
            with R.dataflow():
                nhwc = R.layout_transform(x, index_map=lambda n, c, h, w, l: (n, h, w, c * 4 + l))
                big = R.image.resize2d(nhwc, R.shape([8, 8]), layout="NHWC", method="linear")
                y = R.layout_transform(big, index_map=lambda n, h, w, c: (n, c // 4, h, w, c % 4))
                R.output(y)
            return y

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((1, 2, 4, 4, 4), "float32")) -> R.Tensor((1, 2, 8, 8, 4), "float32"):
            with R.dataflow():
                y = R.image.resize2d(x, R.shape([8, 8]), layout="NCHW4c", method="linear")
                R.output(y)
            return y

    tvm.ir.assert_structural_equal(FoldTextureLayoutTransforms()(Before), Expected)


def test_unpack_sinks_below_an_nchw_resize_and_keeps_its_attributes():
    """A nearest-neighbour resize with TFLite's coordinates, in NCHW, feeding the output: it
    runs in NCHW4c with the same attributes, and the transform out of NCHW4c follows it."""

    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((1, 2, 4, 4, 4), "float32")) -> R.Tensor((1, 8, 8, 12), "float32"):
            with R.dataflow():
                nchw = R.layout_transform(x, index_map=lambda n, c, h, w, l: (n, c * 4 + l, h, w))
                y = R.image.resize2d(
                    nchw,
                    R.shape([8, 12]),
                    method="nearest_neighbor",
                    coordinate_transformation_mode="asymmetric",
                    rounding_method="floor",
                )
                R.output(y)
            return y

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((1, 2, 4, 4, 4), "float32")) -> R.Tensor((1, 8, 8, 12), "float32"):
            with R.dataflow():
                blocked = R.image.resize2d(
                    x,
                    R.shape([8, 12]),
                    layout="NCHW4c",
                    method="nearest_neighbor",
                    coordinate_transformation_mode="asymmetric",
                    rounding_method="floor",
                )
                y = R.layout_transform(
                    blocked, index_map=lambda n, c, h, w, l: (n, c * 4 + l, h, w)
                )
                R.output(y)
            return y

    tvm.ir.assert_structural_equal(FoldTextureLayoutTransforms()(Before), Expected)


def test_resize_of_another_layout_or_a_shared_unpack_stays():
    """An unpacked tensor read as if it were NCHW while it is NHWC (the resize's layout names
    other axes), and one that another op reads too, keep their transforms."""

    @I.ir_module
    class Before:
        @R.function
        def main(
            x: R.Tensor((1, 2, 4, 4, 4), "float32"),
        ) -> R.Tuple(R.Tensor((1, 4, 8, 8), "float32"), R.Tensor((1, 8, 8, 8), "float32")):
            with R.dataflow():
                nhwc = R.layout_transform(x, index_map=lambda n, c, h, w, l: (n, h, w, c * 4 + l))
                wrong = R.image.resize2d(nhwc, R.shape([8, 8]), layout="NCHW")
                nchw = R.layout_transform(x, index_map=lambda n, c, h, w, l: (n, c * 4 + l, h, w))
                shared = R.image.resize2d(nchw, R.shape([8, 8]))
                doubled = R.add(nchw, nchw)
                out = (wrong, shared)
                R.output(out, doubled)
            return out

    After = FoldTextureLayoutTransforms()(Before)
    resizes = []
    tvm.relax.analysis.post_order_visit(
        After["main"],
        lambda e: isinstance(e, tvm.relax.Call)
        and e.op.same_as(tvm.ir.Op.get("relax.image.resize2d"))
        and resizes.append(str(e.attrs.layout)),
    )
    assert sorted(resizes) == ["NCHW", "NCHW"]


if __name__ == "__main__":
    tvm.testing.main()
