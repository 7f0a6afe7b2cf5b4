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
# pylint: disable=invalid-name,missing-docstring,no-self-argument,not-callable,no-method-argument
# pylint: disable=unused-variable
"""Tests of HoistStaticAllocations: constant planned memory is allocated once per VM."""

import tvm
import tvm.testing
from tvm.relax.backend.adreno.transform import HoistStaticAllocations
from tvm.script import ir as I
from tvm.script import relax as R
from tvm.script import tirx as T

OPENCL = tvm.target.Target("qcom/adreno-opencl-texture")


def _hoist(mod, target=OPENCL):
    if target is None:
        return HoistStaticAllocations()(mod)
    with target:
        return HoistStaticAllocations()(mod)


def test_planned_intermediate_is_fetched_from_the_cache():
    """The storage and the tensor of the intermediate ``t`` move to ``main_static_alloc``;
    ``main`` fetches them and no longer drops them. The output ``y`` escapes: it stays a
    per-call allocation."""

    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
            R.func_attr({"relax.force_pure": True})
            cls = Before
            storage: R.Object = R.vm.alloc_storage(
                R.shape([16]), R.prim_value(0), R.dtype("uint8"), "global"
            )
            t: R.Tensor((4,), "float32") = R.vm.alloc_tensor(
                storage, R.prim_value(0), R.shape([4]), R.dtype("float32")
            )
            _1: R.Tuple = R.vm.kill_object(storage)
            _2: R.Tuple = cls.add_one(x, t)
            out_storage: R.Object = R.vm.alloc_storage(
                R.shape([16]), R.prim_value(0), R.dtype("uint8"), "global"
            )
            y: R.Tensor((4,), "float32") = R.vm.alloc_tensor(
                out_storage, R.prim_value(0), R.shape([4]), R.dtype("float32")
            )
            _3: R.Tuple = cls.add_one(t, y)
            _4: R.Tuple = R.vm.kill_object(t)
            return y

        @T.prim_func(private=True, s_tir=True)
        def add_one(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.sblock("y"):
                    vi = T.axis.spatial(4, i)
                    y[vi] = x[vi] + T.float32(1)

    @I.ir_module
    class Expected:
        @R.function
        def main_static_alloc() -> R.Tuple(R.Object, R.Tensor((4,), "float32")):
            R.func_attr({"relax.force_pure": True, "global_symbol": "main_static_alloc"})
            storage: R.Object = R.vm.alloc_storage(
                R.shape([16]), R.prim_value(0), R.dtype("uint8"), "global"
            )
            t: R.Tensor((4,), "float32") = R.vm.alloc_tensor(
                storage, R.prim_value(0), R.shape([4]), R.dtype("float32")
            )
            return (storage, t)

        @R.function
        def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
            R.func_attr({"relax.force_pure": True})
            cls = Expected
            static_alloc: R.Tuple(R.Object, R.Tensor((4,), "float32")) = R.call_builtin_with_ctx(
                "vm.builtin.cached_static_alloc",
                (cls.main_static_alloc, R.prim_value(0)),
                ty_args=(R.Tuple(R.Object, R.Tensor((4,), "float32")),),
            )
            storage: R.Object = static_alloc[0]
            t: R.Tensor((4,), "float32") = static_alloc[1]
            _2: R.Tuple = cls.add_one(x, t)
            out_storage: R.Object = R.vm.alloc_storage(
                R.shape([16]), R.prim_value(0), R.dtype("uint8"), "global"
            )
            y: R.Tensor((4,), "float32") = R.vm.alloc_tensor(
                out_storage, R.prim_value(0), R.shape([4]), R.dtype("float32")
            )
            _3: R.Tuple = cls.add_one(t, y)
            return y

        @T.prim_func(private=True, s_tir=True)
        def add_one(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.sblock("y"):
                    vi = T.axis.spatial(4, i)
                    y[vi] = x[vi] + T.float32(1)

    tvm.ir.assert_structural_equal(_hoist(Before), Expected)
    # only the OpenCL runtime has the builtin: another target, or none, keeps the module
    for target in (tvm.target.Target("qcom/adreno-vulkan"), tvm.target.Target("llvm"), None):
        tvm.ir.assert_structural_equal(_hoist(Before, target), Before)


def test_aliased_and_symbolic_allocations_stay_per_call():
    """A tensor passed to a packed function (which may keep a view of it) and a storage of a
    symbolic size are allocated on every call: the module is unchanged."""

    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor(("n",), "float32")) -> R.Tensor((4,), "float32"):
            R.func_attr({"relax.force_pure": True})
            n = T.int64()
            storage: R.Object = R.vm.alloc_storage(
                R.shape([16]), R.prim_value(0), R.dtype("uint8"), "global"
            )
            t: R.Tensor((4,), "float32") = R.vm.alloc_tensor(
                storage, R.prim_value(0), R.shape([4]), R.dtype("float32")
            )
            dyn: R.Object = R.vm.alloc_storage(
                R.shape([n * 4]), R.prim_value(0), R.dtype("uint8"), "global"
            )
            v: R.Tensor((4,), "float32") = R.call_packed(
                "vm.builtin.reshape", t, R.shape([4]), ty_args=(R.Tensor((4,), "float32"),)
            )
            return v

    tvm.ir.assert_structural_equal(_hoist(Before), Before)


if __name__ == "__main__":
    tvm.testing.main()
