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
"""Copy a tensor between memory scopes of one device into planned memory.

Where one producer feeds both a buffer consumer and a texture consumer,
``AnnotateCustomMemoryScope`` leaves an ``R.to_vdevice`` between the two scopes (MediaPipe
BlazeFace has nine per inference). The VM lowers it to ``vm.builtin.to_device``, which is
``Tensor::CopyTo``: a new tensor from the device API (an image created per call, outside every
pool), the copy, and a wait for the whole queue. Between two scopes of the same physical device
the wait buys nothing, since the copy is ordered on the device's in-order queue like a kernel.

``LowerVDeviceCopy`` runs after ``CallTIRRewrite`` and rewrites such a ``to_vdevice`` into an
``R.builtin.alloc_tensor`` in the destination scope and ``runtime.TVMTensorCopyFromTo``, which
copies without waiting. The memory planners then treat the destination like any kernel result
(``PlanTextureStorage`` for textures, ``StaticPlanBlockMemory`` for buffers), so a steady-state
inference allocates nothing and waits for nothing there; the copy itself stays, because the value
really changes scope. A ``to_vdevice`` to another device, or with a dynamic shape, is left as is.
"""

from typing import Dict, Optional

import tvm
from tvm import relax
from tvm.relax.transform import function_pass
from tvm.relax.utils import get_static_shape

from .alloc_storage_on_physical_device import physical_device_indices

_TO_VDEVICE = tvm.ir.Op.get("relax.to_vdevice")
# Copies between two tensors of one device on its queue, with no host wait (Tensor::CopyFromTo).
COPY_FUNC = "runtime.TVMTensorCopyFromTo"


def _vdevice_key(vdev):
    return (str(vdev.target), int(vdev.vdevice_id), str(vdev.memory_scope))


def _vdevice_index(vdevices, vdev) -> Optional[int]:
    for index, known in enumerate(vdevices):
        if _vdevice_key(known) == _vdevice_key(vdev):
            return index
    return None


@relax.expr_functor.mutator
class _VDeviceCopyRewriter(relax.PyExprMutator):  # pylint: disable=abstract-method
    def __init__(self, mod: tvm.IRModule):
        super().__init__(mod)
        self._vdevices = list(mod.global_infos.get("vdevice", []))
        self._physical: Dict[int, int] = physical_device_indices(mod)

    def _same_device_indices(self, call: relax.Call):
        """(source index, destination index) of a copy between scopes of one device."""
        src_ty, dst_ty = call.args[0].ty, call.ty
        if get_static_shape(src_ty) is None or get_static_shape(dst_ty) is None:
            return None
        if src_ty.vdevice is None or dst_ty.vdevice is None:
            return None
        src = _vdevice_index(self._vdevices, src_ty.vdevice)
        dst = _vdevice_index(self._vdevices, dst_ty.vdevice)
        if src is None or dst is None or self._physical[src] != self._physical[dst]:
            return None
        return src, dst

    def visit_var_binding_(self, binding: relax.VarBinding) -> None:
        value = binding.value
        if not (isinstance(value, relax.Call) and value.op.same_as(_TO_VDEVICE)):
            super().visit_var_binding_(binding)
            return
        indices = self._same_device_indices(value)
        if indices is None:
            super().visit_var_binding_(binding)
            return
        dst_ty = value.ty
        alloc = relax.op.builtin.alloc_tensor(
            dst_ty.shape, str(dst_ty.dtype), indices[1], str(dst_ty.vdevice.memory_scope)
        )
        # As CallTIRRewrite writes it: the result type, with its vdevice, as the type argument.
        alloc = relax.Call(alloc.op, alloc.args, alloc.attrs, [dst_ty])
        self.builder_.emit_normalized(relax.VarBinding(binding.var, self.builder_.normalize(alloc)))
        source = self.visit_expr(value.args[0])
        self.builder_.emit(relax.Call(relax.ExternFunc(COPY_FUNC), [source, binding.var]))


@function_pass(opt_level=0, name="LowerVDeviceCopy")
class LowerVDeviceCopy:  # pylint: disable=too-few-public-methods
    """Rewrite ``R.to_vdevice`` between memory scopes of one device into an allocation in the
    destination scope and a copy that does not wait for the device.

    Run after ``CallTIRRewrite`` and before the memory planners (``PlanTextureStorage``,
    ``StaticPlanBlockMemory``).

    Returns
    -------
    ret : tvm.transform.Pass
        The pass.
    """

    def transform_function(
        self, func: relax.Function, mod: tvm.IRModule, _ctx: tvm.transform.PassContext
    ) -> relax.Function:
        """Rewrite ``func``, a Relax function of ``mod``."""
        if not mod.global_infos.get("vdevice"):
            return func
        return _VDeviceCopyRewriter(mod).visit_expr(func)
