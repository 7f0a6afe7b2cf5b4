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
"""Tests of LowerConv2dTransposeNCHWc: supported transposed convs become the NCHW4c compute
between layout transforms, others are kept."""

import numpy as np

import tvm
import tvm.testing
from tvm import relax
from tvm.relax.backend.adreno.transform.lower_conv2d_transpose_nchwc import (
    LowerConv2dTransposeNCHWc,
)
from tvm.script import ir as I
from tvm.script import relax as R


@I.ir_module
class Upsample:
    """6 input channels (padded to 8 in the weight), 6 output channels (sliced back)."""

    @R.function
    def main(
        x: R.Tensor((1, 6, 5, 5), "float32"), w: R.Tensor((6, 6, 3, 3), "float32")
    ) -> R.Tensor((1, 6, 10, 10), "float32"):
        with R.dataflow():
            y = R.nn.conv2d_transpose(x, w, strides=[2, 2], padding=[1, 1], output_padding=[1, 1])
            R.output(y)
        return y


def _ops(func):
    names = []

    def _visit(expr):
        if isinstance(expr, relax.Call) and isinstance(expr.op, tvm.ir.Op):
            names.append(expr.op.name)

    relax.analysis.post_order_visit(func, _visit)
    return names


def test_transposed_conv_becomes_a_packed_call_between_layout_transforms():
    mod = LowerConv2dTransposeNCHWc()(Upsample)
    assert _ops(mod["main"]) == [
        "relax.nn.pad",
        "relax.layout_transform",
        "relax.layout_transform",
        "relax.call_tir",
        "relax.layout_transform",
        "relax.strided_slice",
    ]
    prim_funcs = [f for _, f in mod.functions_items() if isinstance(f, tvm.tirx.PrimFunc)]
    assert len(prim_funcs) == 1
    # the packed compute: NCHW4c data, OIHW4o weight, NCHW4c output
    assert [[int(d) for d in p.ty.shape] for p in prim_funcs[0].params] == [
        [1, 2, 5, 5, 4],
        [2, 8, 3, 3, 4],
        [1, 2, 10, 10, 4],
    ]


def test_grouped_transposed_conv_is_kept():
    @I.ir_module
    class Before:
        @R.function
        def main(
            x: R.Tensor((1, 8, 5, 5), "float32"), w: R.Tensor((8, 4, 3, 3), "float32")
        ) -> R.Tensor((1, 8, 7, 7), "float32"):
            with R.dataflow():
                y = R.nn.conv2d_transpose(x, w, groups=2)
                R.output(y)
            return y

    tvm.ir.assert_structural_equal(LowerConv2dTransposeNCHWc()(Before), Before)


def test_lowered_transposed_conv_computes_the_transposed_conv():
    rng = np.random.default_rng()
    data = rng.uniform(-1.0, 1.0, size=(1, 6, 5, 5)).astype("float32")
    weight = rng.uniform(-1.0, 1.0, size=(6, 6, 3, 3)).astype("float32")

    def _run(mod):
        vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
        return vm["main"](tvm.runtime.tensor(data), tvm.runtime.tensor(weight)).numpy()

    expected = _run(Upsample)
    # The packed loop sums the 54 products in another order; outputs near zero need an atol.
    lowered = _run(LowerConv2dTransposeNCHWc()(Upsample))
    tvm.testing.assert_allclose(lowered, expected, rtol=1e-5, atol=1e-5)


if __name__ == "__main__":
    tvm.testing.main()
