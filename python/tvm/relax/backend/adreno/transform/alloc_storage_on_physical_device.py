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
"""Allocate storage of every memory scope on the one physical device that owns it.

``AnnotateCustomMemoryScope`` gives each memory scope (``global``,
``global.texture``, ...) its own virtual device, although they all name the same
OpenCL device. The VM indexes its *physical* devices with the virtual device's
position, so a texture module needed one copy of the device per scope
(``VirtualMachine(ex, [dev, dev, dev])``). Given the usual single device, index 1
named the host CPU, which the VM appends after the given devices: storage for
the GPU kernels was silently allocated in host memory, or the call failed with
"device index is out of VM physical devices list".

The memory scope travels separately (as the storage's and the tensor's scope
string), so the device index of an allocation only has to name the physical
device. This pass rewrites the device index of every ``R.vm.alloc_storage`` to
the first virtual device with the same target and device id.
"""

import tvm
from tvm import relax

_ALLOC_STORAGE = tvm.ir.Op.get("relax.vm.alloc_storage")


def physical_device_indices(mod: tvm.IRModule) -> dict:
    """Map each virtual device index to the first index naming the same physical device."""
    vdevices = list(mod.global_infos.get("vdevice", []))
    first_index = {}
    mapping = {}
    for index, vdev in enumerate(vdevices):
        key = (str(vdev.target.kind.name), int(vdev.vdevice_id), str(vdev.target.keys))
        mapping[index] = first_index.setdefault(key, index)
    return mapping


@relax.expr_functor.mutator
class _StorageDeviceRewriter(relax.PyExprMutator):  # pylint: disable=abstract-method
    def __init__(self, mod: tvm.IRModule, mapping: dict):
        super().__init__(mod)
        self._mapping = mapping

    def visit_call_(self, call: relax.Call) -> relax.Expr:  # pylint: disable=arguments-renamed
        call = super().visit_call_(call)
        if not call.op.same_as(_ALLOC_STORAGE):
            return call
        index = call.args[1]
        if not isinstance(index, tvm.tirx.IntImm):
            return call
        physical = self._mapping.get(int(index.value), int(index.value))
        if physical == int(index.value):
            return call
        args = list(call.args)
        args[1] = tvm.tirx.IntImm(index.ty.dtype, physical)
        return relax.Call(call.op, args, call.attrs, call.ty_args, call.span)


def _alloc_storage_on_physical_device(
    func: relax.Function, mod: tvm.IRModule, _ctx: tvm.transform.PassContext
) -> relax.Function:
    mapping = physical_device_indices(mod)
    if all(index == physical for index, physical in mapping.items()):
        return func
    return _StorageDeviceRewriter(mod, mapping).visit_expr(func)


def AllocStorageOnPhysicalDevice() -> tvm.transform.Pass:  # pylint: disable=invalid-name
    """Give ``R.vm.alloc_storage`` the index of the physical device, not of the scope's vdevice.

    Run at the end of the pipeline, once storage is allocated with ``R.vm.alloc_storage``.

    Returns
    -------
    fpass : tvm.transform.Pass
        The pass.
    """
    return relax.transform.function_pass(
        _alloc_storage_on_physical_device, opt_level=0, name="AllocStorageOnPhysicalDevice"
    )
