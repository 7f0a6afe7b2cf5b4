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
"""Tests of SplitChannelReductionKeepdims: keepdims reductions over the channels become a
reduction without keepdims and an expand_dims."""

import tvm
import tvm.testing
from tvm import relax
from tvm.relax.backend.adreno.transform import SplitChannelReductionKeepdims
from tvm.script import ir as I
from tvm.script import relax as R


def test_keepdims_channel_reductions_are_split():
    @I.ir_module
    class Before:
        @R.function
        def main(
            x: R.Tensor((1, 8, 6, 6), "float32"),
        ) -> R.Tuple(R.Tensor((1, 1, 6, 6), "float32"), R.Tensor((1, 1, 1, 1), "float32")):
            with R.dataflow():
                total = R.sum(x, axis=[1], keepdims=True)
                peak = R.max(x, axis=None, keepdims=True)
                out = (total, peak)
                R.output(out)
            return out

    @I.ir_module
    class Expected:
        @R.function
        def main(
            x: R.Tensor((1, 8, 6, 6), "float32"),
        ) -> R.Tuple(R.Tensor((1, 1, 6, 6), "float32"), R.Tensor((1, 1, 1, 1), "float32")):
            with R.dataflow():
                lv = R.sum(x, axis=[1], keepdims=False)
                total = R.expand_dims(lv, axis=[1])
                lv1 = R.max(x, axis=[0, 1, 2, 3], keepdims=False)
                peak = R.expand_dims(lv1, axis=[0, 1, 2, 3])
                out = (total, peak)
                R.output(out)
            return out

    tvm.ir.assert_structural_equal(SplitChannelReductionKeepdims()(Before), Expected)


def test_spatial_and_non_keepdims_reductions_are_kept():
    @I.ir_module
    class Before:
        @R.function
        def main(
            x: R.Tensor((1, 8, 6, 6), "float32"),
        ) -> R.Tuple(R.Tensor((1, 8, 1, 1), "float32"), R.Tensor((1, 6, 6), "float32")):
            with R.dataflow():
                pooled = R.mean(x, axis=[2, 3], keepdims=True)
                total = R.sum(x, axis=[1], keepdims=False)
                out = (pooled, total)
                R.output(out)
            return out

    tvm.ir.assert_structural_equal(SplitChannelReductionKeepdims()(Before), Before)


def test_split_reduction_leaves_the_packed_layout_legalizable():
    """ConvertLayout of the keepdims reduction after an NCHW4c conv gives a [1, 1, H, W, 1]
    tensor whose transform back to NCHW does not legalize; after the split it does."""

    @I.ir_module
    class Before:
        @R.function
        def main(
            x: R.Tensor((1, 8, 6, 6), "float32"), w: R.Tensor((8, 8, 1, 1), "float32")
        ) -> R.Tensor((1, 1, 6, 6), "float32"):
            with R.dataflow():
                conv = R.nn.conv2d(x, w)
                y = R.sum(conv, axis=[1], keepdims=True)
                R.output(y)
            return y

    layouts = {"relax.nn.conv2d": ["NCHW4c", "OIHW4o"]}
    mod = relax.transform.ConvertLayout(layouts)(SplitChannelReductionKeepdims()(Before))
    lowered = relax.transform.LegalizeOps()(mod)
    left = []

    def _visit(expr):
        if isinstance(expr, relax.Call) and isinstance(expr.op, tvm.ir.Op):
            left.append(expr.op.name)

    relax.analysis.post_order_visit(lowered["main"], _visit)
    assert "relax.layout_transform" not in left and "relax.sum" not in left


if __name__ == "__main__":
    tvm.testing.main()
