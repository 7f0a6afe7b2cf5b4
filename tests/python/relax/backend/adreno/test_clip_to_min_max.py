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
"""Tests of ClipToMinMax: clip of 4-D tensors becomes minimum(maximum(x, lo), hi)."""

import tvm
import tvm.testing
from tvm import relax
from tvm.relax.backend.adreno.transform.clip_to_min_max import ClipToMinMax
from tvm.script import ir as I
from tvm.script import relax as R


def test_clip_of_4d_tensor_becomes_maximum_then_minimum():
    """The bounds become constants of the tensor's dtype (float16 here, not float32)."""

    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((1, 8, 4, 4), "float16")) -> R.Tensor((1, 8, 4, 4), "float16"):
            with R.dataflow():
                y = R.clip(x, 0.0, 6.0)
                R.output(y)
            return y

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((1, 8, 4, 4), "float16")) -> R.Tensor((1, 8, 4, 4), "float16"):
            with R.dataflow():
                low = R.maximum(x, R.const(0.0, "float16"))
                y = R.minimum(low, R.const(6.0, "float16"))
                R.output(y)
            return y

    tvm.ir.assert_structural_equal(ClipToMinMax()(Before), Expected)


def test_clip_of_other_rank_is_kept():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((8, 16), "float32")) -> R.Tensor((8, 16), "float32"):
            with R.dataflow():
                y = R.clip(x, -1.0, 1.0)
                R.output(y)
            return y

    tvm.ir.assert_structural_equal(ClipToMinMax()(Before), Before)


def test_rewritten_clip_follows_the_packed_layout():
    """After the rewrite ConvertLayout keeps the activation in NCHW4c: one layout transform
    back to NCHW at the end, none between the conv and the activation."""

    @I.ir_module
    class Before:
        @R.function
        def main(
            x: R.Tensor((1, 8, 6, 6), "float32"), w: R.Tensor((8, 8, 1, 1), "float32")
        ) -> R.Tensor((1, 8, 6, 6), "float32"):
            with R.dataflow():
                conv = R.nn.conv2d(x, w)
                y = R.clip(conv, 0.0, 6.0)
                R.output(y)
            return y

    layouts = {"relax.nn.conv2d": ["NCHW4c", "OIHW4o"]}
    converted = relax.transform.ConvertLayout(layouts)(ClipToMinMax()(Before))
    packed = []

    def _visit(expr):
        if isinstance(expr, relax.Call) and expr.op.name in ("relax.maximum", "relax.minimum"):
            packed.append(expr.ty.ndim == 5)

    relax.analysis.post_order_visit(converted["main"], _visit)
    assert packed == [True, True]


if __name__ == "__main__":
    tvm.testing.main()
