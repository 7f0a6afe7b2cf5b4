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
"""Tests of RewriteBufferReshapeToView: reshape kernels between buffers become views."""

import tvm
import tvm.testing
from tvm import relax
from tvm.relax.backend.adreno.transform import RewriteBufferReshapeToView
from tvm.script import ir as I
from tvm.script import relax as R
from tvm.script import tirx as T


def _rewrite(mod):
    return relax.transform.DeadCodeElimination()(RewriteBufferReshapeToView()(mod))


def test_reshape_kernel_between_buffers_becomes_a_view():
    @I.ir_module
    class Before:
        @T.prim_func(private=True, s_tir=True)
        def flatten(
            x: T.Buffer((T.int64(2), T.int64(8)), "float32"),
            y: T.Buffer((T.int64(16),), "float32"),
        ):
            for i in range(T.int64(16)):
                with T.sblock("T_reshape"):
                    vi = T.axis.spatial(T.int64(16), i)
                    y[vi] = x[vi // T.int64(8), vi % T.int64(8)]

        @R.function
        def main(x: R.Tensor((2, 8), "float32")) -> R.Tensor((16,), "float32"):
            cls = Before
            with R.dataflow():
                y = R.call_tir(cls.flatten, (x,), out_ty=R.Tensor((16,), "float32"))
                R.output(y)
            return y

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((2, 8), "float32")) -> R.Tensor((16,), "float32"):
            with R.dataflow():
                y = R.reshape(x, R.shape([16]))
                R.output(y)
            return y

    tvm.ir.assert_structural_equal(_rewrite(Before), Expected)


def test_reshape_into_a_texture_stays_a_kernel():
    """The image shape follows the tensor shape: a texture result is not a view."""

    @I.ir_module
    class Before:
        I.module_global_infos({"vdevice": [I.vdevice("opencl", 0, "global.texture")]})

        @T.prim_func(private=True, s_tir=True)
        def unflatten(
            x: T.Buffer((T.int64(64),), "float32"),
            y: T.Buffer((T.int64(1), T.int64(4), T.int64(4), T.int64(4)), "float32"),
        ):
            for i, j, k, lane in T.grid(T.int64(1), T.int64(4), T.int64(4), T.int64(4)):
                with T.sblock("T_reshape"):
                    vi, vj, vk, vl = T.axis.remap("SSSS", [i, j, k, lane])
                    y[vi, vj, vk, vl] = x[vj * T.int64(16) + vk * T.int64(4) + vl]

        @R.function
        def main(
            x: R.Tensor((64,), "float32"),
        ) -> R.Tensor((1, 4, 4, 4), "float32", "opencl:0:global.texture"):
            cls = Before
            with R.dataflow():
                y = R.call_tir(
                    cls.unflatten,
                    (x,),
                    out_ty=R.Tensor((1, 4, 4, 4), "float32", "opencl:0:global.texture"),
                )
                R.output(y)
            return y

    tvm.ir.assert_structural_equal(_rewrite(Before), Before)


def test_copy_of_fewer_elements_stays_a_kernel():
    """A kernel that keeps the leading 12 of 16 elements matches the reshape pattern, but a
    view of another size would be wrong."""

    @I.ir_module
    class Before:
        @T.prim_func(private=True, s_tir=True)
        def head(
            x: T.Buffer((T.int64(2), T.int64(8)), "float32"),
            y: T.Buffer((T.int64(12),), "float32"),
        ):
            for i in range(T.int64(12)):
                with T.sblock("T_reshape"):
                    vi = T.axis.spatial(T.int64(12), i)
                    y[vi] = x[vi // T.int64(8), vi % T.int64(8)]

        @R.function
        def main(x: R.Tensor((2, 8), "float32")) -> R.Tensor((12,), "float32"):
            cls = Before
            with R.dataflow():
                y = R.call_tir(cls.head, (x,), out_ty=R.Tensor((12,), "float32"))
                R.output(y)
            return y

    tvm.ir.assert_structural_equal(_rewrite(Before), Before)


if __name__ == "__main__":
    tvm.testing.main()
