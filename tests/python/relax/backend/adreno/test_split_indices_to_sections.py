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
"""Tests of SplitIndicesToSections: splits of 4-D tensors at indices become sections or
slices, so that ConvertLayout blocks them right."""

import numpy as np
import pytest

import tvm
import tvm.testing
from tvm import relax
from tvm.relax.backend.adreno.transform.split_indices_to_sections import (
    SplitIndicesToSections,
)
from tvm.script import ir as I
from tvm.script import relax as R

LAYOUTS = {"relax.nn.conv2d": ["NCHW4c", "OIHW4o", "NCHW4c"]}


def test_equal_pieces_become_sections():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((1, 24, 4, 4), "float32")) -> R.Tensor((1, 8, 4, 4), "float32"):
            with R.dataflow():
                s = R.split(x, [8, 16], axis=1)
                y = s[2]
                R.output(y)
            return y

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((1, 24, 4, 4), "float32")) -> R.Tensor((1, 8, 4, 4), "float32"):
            with R.dataflow():
                s = R.split(x, 3, axis=1)
                y = s[2]
                R.output(y)
            return y

    tvm.ir.assert_structural_equal(SplitIndicesToSections()(Before), Expected)


def test_unequal_pieces_of_whole_blocks_become_slices():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((1, 24, 4, 4), "float32")) -> R.Tensor((1, 24, 4, 4), "float32"):
            with R.dataflow():
                s = R.split(x, [8], axis=-3)
                y = R.concat((s[1], s[0]), axis=1)
                R.output(y)
            return y

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((1, 24, 4, 4), "float32")) -> R.Tensor((1, 24, 4, 4), "float32"):
            with R.dataflow():
                a = R.strided_slice(x, axes=[1], begin=[0], end=[8])
                b = R.strided_slice(x, axes=[1], begin=[8], end=[24])
                y = R.concat((b, a), axis=1)
                R.output(y)
            return y

    tvm.ir.assert_structural_equal(SplitIndicesToSections()(Before), Expected)


def test_splits_that_convert_layout_already_handles_are_kept():
    """Sections; pieces that are not whole blocks (the layout rule falls back to NCHW);
    an index past the end (an empty piece); tensors of another rank."""

    @I.ir_module
    class Before:
        @R.function
        def main(
            x: R.Tensor((1, 24, 4, 4), "float32"), t: R.Tensor((1, 24, 16), "float32")
        ) -> R.Tensor((1, 42, 4, 4), "float32"):
            with R.dataflow():
                a = R.split(x, 2, axis=1)
                b = R.split(x, [6], axis=1)
                c = R.split(x, [24], axis=1)
                d = R.split(t, [12], axis=1)
                y = R.concat((a[0], b[1], c[1], R.reshape(d[0], (1, 12, 4, 4))), axis=1)
                R.output(y)
            return y

    tvm.ir.assert_structural_equal(SplitIndicesToSections()(Before), Before)


def _conv_split_conv(channels: int, index: int) -> tvm.IRModule:
    """A C2f-like block: conv, split of its output at ``index``, conv of the second piece,
    concat of the first piece with it."""
    rest = channels - index
    x = relax.Var("x", R.Tensor((1, channels, 6, 6), "float32"))
    w0 = relax.Var("w0", R.Tensor((channels, channels, 1, 1), "float32"))
    w1 = relax.Var("w1", R.Tensor((rest, rest, 1, 1), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x, w0, w1]):
        with bb.dataflow():
            conv = bb.emit(relax.op.nn.conv2d(x, w0))
            pieces = bb.emit(relax.op.split(conv, [index], axis=1))
            second = bb.emit(relax.op.nn.conv2d(relax.TupleGetItem(pieces, 1), w1))
            y = bb.emit_output(relax.op.concat([relax.TupleGetItem(pieces, 0), second], axis=1))
        bb.emit_func_output(y)
    return bb.get()


@pytest.mark.parametrize("channels, index", [(32, 16), (24, 8)])
def test_convert_layout_blocks_the_rewritten_split(channels, index):
    """Without the rewrite ConvertLayout keeps the index in channels on a blocked axis (the
    split of 32 channels at 16 gives pieces of 32 and 0 channels, and the second conv fails).
    After it, the halves are split in blocks and the slices are taken in NCHW."""
    converted = relax.transform.ConvertLayout(LAYOUTS)(
        SplitIndicesToSections()(_conv_split_conv(channels, index))
    )
    convs = []

    def _visit(expr):
        if isinstance(expr, relax.Call) and expr.op.name == "relax.nn.conv2d":
            convs.append([int(d) for d in expr.args[0].ty.shape])

    relax.analysis.post_order_visit(converted["main"], _visit)
    assert convs == [[1, channels // 4, 6, 6, 4], [1, (channels - index) // 4, 6, 6, 4]]


@pytest.mark.requires_opencl
@pytest.mark.parametrize("channels, index", [(32, 16), (24, 8)])
def test_split_after_texture_conv_matches_numpy(channels, index):
    rng = np.random.default_rng()
    rest = channels - index
    x = rng.uniform(-1.0, 1.0, size=(1, channels, 6, 6)).astype("float32")
    w0 = rng.uniform(-1.0, 1.0, size=(channels, channels, 1, 1)).astype("float32")
    w1 = rng.uniform(-1.0, 1.0, size=(rest, rest, 1, 1)).astype("float32")
    c = np.einsum("nchw,oc->nohw", x, w0[:, :, 0, 0])
    expected = np.concatenate(
        [c[:, :index], np.einsum("nchw,oc->nohw", c[:, index:], w1[:, :, 0, 0])], axis=1
    )

    target = tvm.target.Target("qcom/adreno-opencl-texture", host="llvm")
    dev = tvm.opencl(0)
    vm = relax.VirtualMachine(tvm.compile(_conv_split_conv(channels, index), target=target), dev)
    out = vm["main"](*[tvm.runtime.tensor(a, dev) for a in (x, w0, w1)])
    tvm.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-4)


if __name__ == "__main__":
    tvm.testing.main()
