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
"""Kernel names stay short, whatever FuseOps joins.

A conv2d followed by a 40-op elementwise chain fuses into one function whose name lists every
op (over 300 characters): PoCL aborted the process while linking such a kernel.  Both the
texture target and the generic OpenCL target must emit only names within the bound, and the
renamed kernels must still compute the network.
"""

import re

import numpy as np
import pytest

import tvm
from tvm import relax
from tvm.relax.backend.gpu_generic import BoundKernelNames
from tvm.relax.backend.gpu_generic.kernel_names import DEFAULT_MAX_NAME_LENGTH, bounded_name

import texture_testing as tt

# SplitHostDevice appends "_kernel" or "_kernel_<N>" to the PrimFunc name.
MAX_KERNEL_NAME = DEFAULT_MAX_NAME_LENGTH + len("_kernel_99")
_CHAIN = (relax.op.sigmoid, relax.op.tanh, relax.op.nn.relu, relax.op.negative)


def _long_chain(nb: tt.NetBuilder):
    x = nb.input((1, 8, 8, 8))
    y = nb.bias(nb.conv2d(x, 8))
    for i in range(40):
        y = nb.emit(_CHAIN[i % len(_CHAIN)](y))
    return y


TARGETS = {
    "texture": tt.build_texture,
    "generic": lambda mod: tvm.compile(mod, target=tvm.target.Target("opencl", host="llvm")),
}


def _kernel_names(ex):
    return re.findall(r"__kernel\s+void\s+(\w+)\s*\(", tt.device_sources(ex))


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_long_fused_chain_has_bounded_kernel_names(target, rng):
    """The fused kernel keeps a readable prefix, every name fits the bound, and the result
    equals the LLVM build on fresh random inputs."""
    mod = tt.build_network(_long_chain, "float32")
    ex = TARGETS[target](mod)
    names = _kernel_names(ex)
    assert names, "no OpenCL kernels emitted"
    too_long = [n for n in names if len(n) > MAX_KERNEL_NAME]
    assert not too_long, f"kernel names over {MAX_KERNEL_NAME} chars: {too_long}"
    fused = [n for n in names if n.startswith("fused_conv2d")]
    assert fused, f"no fused conv2d kernel among {names}"
    assert all(re.search(r"_[0-9a-f]{8}_kernel", n) for n in fused), fused

    tt.require_device(done="kernel names checked")
    inputs = tt.random_inputs(mod, rng)
    actual = tt.run_vm(ex, tt.tvm_device(), inputs)
    desired = tt.reference(_long_chain, inputs)
    tt.assert_close(actual, desired, "float32", context=f"{target} on {tt.opencl_device().label}")


def test_bounded_name():
    """Short names stay as they are; long ones keep a prefix and differ by their hash."""
    assert bounded_name("fused_conv2d_add_relu") == "fused_conv2d_add_relu"
    long_a = "fused_conv2d" + "_tir_sigmoid" * 30
    long_b = "fused_conv2d" + "_tir_sigmoid" * 29 + "_tir_tanh"
    short_a, short_b = bounded_name(long_a), bounded_name(long_b)
    assert len(short_a) <= DEFAULT_MAX_NAME_LENGTH and len(short_b) <= DEFAULT_MAX_NAME_LENGTH
    assert short_a.startswith("fused_conv2d_tir_sigmoid")
    assert short_a != short_b
    assert bounded_name(long_a) == short_a  # deterministic: the same build, the same names


def test_bound_kernel_names_renames_callers():
    """The pass renames the long PrimFunc and the call_tir that calls it, leaves short
    PrimFuncs and Relax functions alone, and keeps the module well formed."""
    mod = tt.build_network(_long_chain, "float32")
    with tvm.target.Target("opencl"):
        legalized = tvm.transform.Sequential(
            relax.backend.gpu_generic.legalize_passes(tvm.target.Target("opencl"))[:-1]
        )(mod)
    before = {g.name_hint for g, f in legalized.functions_items()}
    long_names = [n for n in before if len(n) > DEFAULT_MAX_NAME_LENGTH]
    assert long_names, "the chain did not fuse into one long-named function"
    after_mod = BoundKernelNames()(legalized)
    after = {g.name_hint for g, _ in after_mod.functions_items()}
    assert after == (before - set(long_names)) | {bounded_name(n) for n in long_names}
    relax.analysis.well_formed(after_mod)  # raises on an undefined or untyped GlobalVar
    called = []
    call_tir = tvm.ir.Op.get("relax.call_tir")
    relax.analysis.post_order_visit(
        after_mod["main"],
        lambda e: (
            called.append(e.args[0].name_hint)
            if isinstance(e, relax.Call) and e.op.same_as(call_tir)
            else None
        ),
    )
    assert set(called) <= after and bounded_name(long_names[0]) in called
