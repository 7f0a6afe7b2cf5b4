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
"""Tests of dlight.ApplyDefaultSchedule: the pass schedules a copy of the module it is given.

The input module keeps its unscheduled PrimFuncs, so the same module can be scheduled again,
for another target, and get that target's schedule rather than the first one's.
"""

import tvm_ffi

import tvm
import tvm.testing
from tvm import tirx
from tvm.s_tir import dlight as dl
from tvm.script import ir as I
from tvm.script import relax as R
from tvm.script import tirx as T

OPENCL = tvm.target.Target("opencl")
# An OpenCL device with a quarter of the default work-group size: its Fallback schedule
# differs from OPENCL's in the thread extent only.
SMALL_OPENCL = tvm.target.Target(
    {"kind": "opencl", "max_num_threads": 64, "max_threads_per_block": 64}
)


def _elementwise_module():
    """A fresh module with one unscheduled elementwise PrimFunc and a Relax caller.

    Returns
    -------
    mod : tvm.IRModule
        ``add_one`` (a 64 x 64 addition) and ``main`` calling it through ``call_tir``.
    """

    @I.ir_module
    class Module:
        @T.prim_func(s_tir=True)
        def add_one(a: T.Buffer((64, 64), "float32"), b: T.Buffer((64, 64), "float32")):
            for i, j in T.grid(64, 64):
                with T.sblock("b"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    b[vi, vj] = a[vi, vj] + T.float32(1)

        @R.function
        def main(x: R.Tensor((64, 64), "float32")) -> R.Tensor((64, 64), "float32"):
            cls = Module
            y = R.call_tir(cls.add_one, (x,), out_ty=R.Tensor((64, 64), "float32"))
            return y

    return Module


def _schedule(mod, target):
    """Run ApplyDefaultSchedule with the generic GPU fallback rule under ``target``."""
    with target:
        return dl.ApplyDefaultSchedule(dl.gpu.Fallback())(mod)


def _thread_extents(func):
    """The extent of every thread-bound loop of ``func``, by thread tag."""
    extents = {}

    def visit(loop):
        if loop.thread_binding is not None:
            extents[str(loop.thread_binding.thread_tag)] = int(loop.extent)

    tvm_ffi.structural_walk(func, [(tirx.For, visit)], order="pre")
    return extents


def test_input_module_is_not_modified():
    mod = _elementwise_module()
    copy_before = mod.clone()
    scheduled = _schedule(mod, OPENCL)
    assert not scheduled.same_as(mod)
    tvm.ir.assert_structural_equal(mod, copy_before)
    # A second parse of the same TVMScript: what the module held before any pass ran.
    tvm.ir.assert_structural_equal(mod, _elementwise_module())
    assert "tirx.is_scheduled" not in mod["add_one"].attrs
    assert not _thread_extents(mod["add_one"])


def test_output_holds_the_rule_schedule():
    """The returned PrimFunc is the rule's schedule of the input, marked as scheduled; the
    Relax function is carried over as it was."""
    mod = _elementwise_module()
    with OPENCL:
        by_rule = dl.gpu.Fallback().apply(_elementwise_module()["add_one"], OPENCL, False)
    scheduled = _schedule(mod, OPENCL)
    expected = by_rule.mod["main"].with_attr("tirx.is_scheduled", True)
    tvm.ir.assert_structural_equal(scheduled["add_one"], expected)
    assert _thread_extents(scheduled["add_one"])["threadIdx.x"] == 256
    assert scheduled["main"].same_as(mod["main"])


def test_same_module_scheduled_for_a_second_target():
    """Scheduling the module for OPENCL first must not leave it marked as scheduled: the
    schedule for SMALL_OPENCL uses that target's 64 threads per group."""
    mod = _elementwise_module()
    first = _schedule(mod, OPENCL)
    second = _schedule(mod, SMALL_OPENCL)
    assert _thread_extents(first["add_one"])["threadIdx.x"] == 256
    assert _thread_extents(second["add_one"])["threadIdx.x"] == 64
    assert _thread_extents(first["add_one"])["blockIdx.x"] == 64 * 64 // 256
    assert _thread_extents(second["add_one"])["blockIdx.x"] == 64 * 64 // 64


def test_scheduled_functions_are_kept():
    """A module whose PrimFuncs are all scheduled comes back as it is."""
    scheduled = _schedule(_elementwise_module(), OPENCL)
    copy_before = scheduled.clone()
    again = _schedule(scheduled, SMALL_OPENCL)
    tvm.ir.assert_structural_equal(again, copy_before)
    tvm.ir.assert_structural_equal(scheduled, copy_before)
    assert _thread_extents(again["add_one"])["threadIdx.x"] == 256


if __name__ == "__main__":
    tvm.testing.main()
