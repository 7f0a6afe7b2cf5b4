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
"""A texture executable runs on the one OpenCL device it is given (AllocStorageOnPhysicalDevice)."""

import numpy as np
import pytest

import tvm
from tvm import relax

import texture_testing as tt

TEXTURE_TARGET = tvm.target.Target("qcom/adreno-opencl-texture", host="llvm")
ALLOC_STORAGE = tvm.ir.Op.get("relax.vm.alloc_storage")


def _conv_add_module():
    builder = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((1, 8, 10, 10), "float32"))
    w = relax.Var("w", relax.TensorType((8, 8, 3, 3), "float32"))
    with builder.function("main", [x, w]):
        with builder.dataflow():
            y = builder.emit(relax.op.nn.conv2d(x, w, padding=[1, 1, 1, 1]))
            z = builder.emit_output(relax.op.add(y, x))
        builder.emit_func_output(z)
    return builder.get()


def _storage_device_indices(mod):
    indices = []

    def _visit(expr):
        if isinstance(expr, relax.Call) and expr.op.same_as(ALLOC_STORAGE):
            indices.append(int(expr.args[1].value))

    relax.analysis.post_order_visit(mod["main"], _visit)
    return indices


def test_storage_of_every_scope_is_on_device_zero():
    with TEXTURE_TARGET:
        lowered = relax.backend.adreno.get_default_pipeline(TEXTURE_TARGET)(_conv_add_module())
    scopes = {str(v.memory_scope) for v in lowered.global_infos["vdevice"]}
    assert len(scopes) > 1, f"expected texture and buffer scopes, got {scopes}"
    indices = _storage_device_indices(lowered)
    assert indices and set(indices) == {0}, indices


@pytest.mark.requires_opencl
def test_single_device_vm_matches_cpu(rng):
    x = rng.uniform(-1.0, 1.0, size=(1, 8, 10, 10)).astype("float32")
    w = rng.uniform(-0.5, 0.5, size=(8, 8, 3, 3)).astype("float32")
    cpu_vm = relax.VirtualMachine(tvm.compile(_conv_add_module(), target="llvm"), tvm.cpu())
    expected = cpu_vm["main"](tvm.runtime.tensor(x), tvm.runtime.tensor(w)).numpy()

    dev = tt.tvm_device()
    vm = relax.VirtualMachine(tvm.compile(_conv_add_module(), target=TEXTURE_TARGET), dev)
    out = vm["main"](tvm.runtime.tensor(x, dev), tvm.runtime.tensor(w, dev)).numpy()
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)
