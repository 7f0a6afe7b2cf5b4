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
"""Plan tensors that live in textures as image storage, reused by tensors of the same image.

``StaticPlanBlockMemory`` plans every tensor as flat bytes: for a texture tensor it asks
``DeviceGetMemSize.opencl`` for the image's backing size and emits a one-dimensional
``alloc_storage`` of that many bytes, and the tensor becomes a texture view of the flat storage.
An image can alias a buffer only where the device offers ``cl_khr_image2d_from_buffer``
(Adreno, Intel's CPU runtime); elsewhere (PoCL, NVIDIA) each view is an image of its own and
the runtime copies buffer -> image when the view is created and image -> buffer when it is freed,
two full copies per tensor and per inference.

``PlanTextureStorage`` runs before ``StaticPlanBlockMemory`` and plans the texture tensors itself:
each ``R.builtin.alloc_tensor`` with a texture scope gets ``R.vm.alloc_storage`` of an image,
shaped ``[layers, height, width, 4]`` in ``global.texture`` with the tensor's element type, and
the tensor is allocated from it. Once the last user of a tensor has run, a later texture tensor
with the same image (width, height, layers, element type, physical device) takes its storage.
The texture view of an image storage with the same geometry is the image itself, so no copy and
no OpenCL object is needed between kernels; values change scope only in layout-transform
kernels. ``StaticPlanBlockMemory`` still plans the buffers.

A tensor is left to ``StaticPlanBlockMemory`` when it is not a plain temporary of one binding
block: it is returned, used in another block or in a nested expression, or passed to anything
other than a PrimFunc or a packed function. Shapes must be static, element types float32 or
float16, and scopes one of ``TEXTURE_SCOPES``.

The storage is written as ``R.vm.alloc_storage`` because ``VMBuiltinLower``
(``src/relax/backend/vm/vm_builtin_lower.cc``) lowers every ``R.memory.alloc_storage`` with the
element type ``uint8`` (its size is taken as bytes), which loses the image's channel type.
"""

import dataclasses
from typing import Dict, List, Optional, Set

import tvm
from tvm import relax
from tvm.relax.op import vm as _vm_op
from tvm.relax.transform import function_pass
from tvm.s_tir.backend.adreno.texture import TEXTURE_SCOPES, image_extent

from .alloc_storage_on_physical_device import physical_device_indices

_ALLOC_TENSOR = tvm.ir.Op.get("relax.builtin.alloc_tensor")
_CALL_TIR_DYN = tvm.ir.Op.get("relax.vm.call_tir_dyn")
# Ops whose result may share the memory of their first argument.
_VIEW_OPS = tuple(
    tvm.ir.Op.get(name)
    for name in ("relax.reshape", "relax.memory.view", "relax.memory.ensure_zero_offset")
)
# The element types the OpenCL runtime gives images (CL_FLOAT, CL_HALF_FLOAT).
_IMAGE_DTYPES = ("float32", "float16")
# The scope of the planned storage: an image [layers, height, width, 4] in "global.texture" is
# `width` x `height` x `layers` pixels.
STORAGE_SCOPE = "global.texture"


@dataclasses.dataclass(frozen=True)
class ImageKey:
    """What two texture tensors must share to use the same image storage."""

    device: int  # physical device index (the first vdevice naming the same device)
    width: int
    height: int
    layers: int
    dtype: str

    @property
    def storage_shape(self) -> List[int]:
        """The shape of the image storage, ``[layers, height, width, 4]``."""
        return [self.layers, self.height, self.width, 4]


def texture_image_key(call: relax.Call, device_map: Dict[int, int]) -> Optional[ImageKey]:
    """The image of a ``R.builtin.alloc_tensor`` call with a texture scope, else None.

    Parameters
    ----------
    call : relax.Call
        An expression; only ``R.builtin.alloc_tensor`` calls have an image.
    device_map : Dict[int, int]
        Virtual device index -> physical device index (``physical_device_indices``).

    Returns
    -------
    key : Optional[ImageKey]
        The image, or None when the tensor is not a static float32/float16 texture.
    """
    if not isinstance(call, relax.Call) or not call.op.same_as(_ALLOC_TENSOR):
        return None
    shape, dtype, device, scope = call.args
    scope = str(scope.value)
    dtype = str(dtype.value)
    if scope not in TEXTURE_SCOPES or dtype not in _IMAGE_DTYPES:
        return None
    if not isinstance(shape, relax.ShapeExpr) or not isinstance(device, tvm.tirx.IntImm):
        return None
    if not all(isinstance(dim, tvm.tirx.IntImm) for dim in shape.values):
        return None
    dims = [int(dim.value) for dim in shape.values]
    if len(dims) < 3 or dims[-1] != 4:
        return None
    width, height, layers = image_extent(dims, scope)
    index = int(device.value)
    return ImageKey(device_map.get(index, index), width, height, layers, dtype)


def _is_plain_use(value: relax.Expr, mod: tvm.IRModule) -> bool:
    """A call that reads or writes its tensor arguments and keeps no reference to them: a
    PrimFunc of the module, a packed function, or ``R.vm.call_tir_dyn``."""
    if not isinstance(value, relax.Call):
        return False
    if isinstance(value.op, relax.ExternFunc) or value.op.same_as(_CALL_TIR_DYN):
        return True
    if isinstance(value.op, relax.GlobalVar) and value.op in mod.get_global_vars():
        return isinstance(mod[value.op], tvm.tirx.PrimFunc)
    return False


def _is_alias(value: relax.Expr) -> bool:
    """A binding whose variable may refer to the memory of the tensors it mentions."""
    if isinstance(value, (relax.Var, relax.Tuple, relax.TupleGetItem)):
        return True
    return isinstance(value, relax.Call) and any(value.op.same_as(op) for op in _VIEW_OPS)


@dataclasses.dataclass
class _Storage:
    key: ImageKey
    var: Optional[relax.Var] = None  # bound while rewriting


def _plan_block(
    block: relax.BindingBlock,
    used_elsewhere: Set[relax.Var],
    mod: tvm.IRModule,
    device_map: Dict[int, int],
) -> Dict[relax.Var, _Storage]:
    """Assign an image storage to each plannable texture tensor allocated in ``block``."""
    bindings = list(block.bindings)
    keys: Dict[relax.Var, ImageKey] = {}
    refers: Dict[relax.Var, Set[relax.Var]] = {}  # var -> tensors whose memory it may name
    last_use: Dict[relax.Var, int] = {}
    dropped: Set[relax.Var] = set()
    for index, binding in enumerate(bindings):
        key = texture_image_key(binding.value, device_map)
        if key is not None and isinstance(binding, relax.VarBinding):
            keys[binding.var] = key
            refers[binding.var] = {binding.var}
            last_use[binding.var] = index
            continue
        named = set()
        for var in relax.analysis.free_vars(binding.value):
            named |= refers.get(var, set())
        if not named:
            continue
        for tensor in named:
            last_use[tensor] = index
        if _is_alias(binding.value) or isinstance(binding, relax.MatchCast):
            refers[binding.var] = named
        elif not _is_plain_use(binding.value, mod):
            dropped |= named
    for var, named in refers.items():
        if var in used_elsewhere:
            dropped |= named

    # Allocate in program order; a tensor's storage is free for bindings after its last use.
    plan: Dict[relax.Var, _Storage] = {}
    free: Dict[ImageKey, List[_Storage]] = {}
    release_at: Dict[int, List[relax.Var]] = {}
    for tensor, index in last_use.items():
        release_at.setdefault(index, []).append(tensor)
    for index, binding in enumerate(bindings):
        tensor = binding.var
        if tensor in keys and tensor not in dropped:
            pool = free.get(keys[tensor], [])
            plan[tensor] = pool.pop() if pool else _Storage(keys[tensor])
        for released in release_at.get(index, []):
            if released in plan:
                free.setdefault(plan[released].key, []).append(plan[released])
    return plan


def _plan_function(
    func: relax.Function, mod: tvm.IRModule, device_map: Dict[int, int]
) -> Dict[relax.Var, _Storage]:
    """Plan the binding blocks of the function body (nested blocks are left alone)."""
    body = func.body
    if not isinstance(body, relax.SeqExpr):
        return {}
    block_uses = [
        {var for binding in block.bindings for var in relax.analysis.free_vars(binding.value)}
        for block in body.blocks
    ]
    returned = set(relax.analysis.free_vars(body.body))
    plan: Dict[relax.Var, _Storage] = {}
    for index, block in enumerate(body.blocks):
        elsewhere = set(returned)
        for other, uses in enumerate(block_uses):
            if other != index:
                elsewhere |= uses
        plan.update(_plan_block(block, elsewhere, mod, device_map))
    return plan


@relax.expr_functor.mutator
class _TextureStorageRewriter(relax.PyExprMutator):  # pylint: disable=abstract-method
    """Allocate each planned texture tensor from its image storage."""

    def __init__(self, mod: tvm.IRModule, plan: Dict[relax.Var, _Storage]):
        super().__init__(mod)
        self._plan = plan

    def visit_var_binding_(self, binding: relax.VarBinding) -> None:
        storage = self._plan.get(binding.var)
        if storage is None:
            super().visit_var_binding_(binding)
            return
        shape, dtype, device, _ = binding.value.args
        if storage.var is None:
            alloc_storage = _vm_op.alloc_storage(
                relax.ShapeExpr(storage.key.storage_shape), device, dtype, STORAGE_SCOPE
            )
            storage.var = self.builder_.emit(alloc_storage, "texture_storage")
        tensor = relax.op.memory.alloc_tensor(storage.var, 0, shape, dtype, device)
        self.builder_.emit_normalized(
            relax.VarBinding(binding.var, self.builder_.normalize(tensor))
        )


@function_pass(opt_level=0, name="PlanTextureStorage")
class PlanTextureStorage:  # pylint: disable=too-few-public-methods
    """Give texture tensors image storage, shared by tensors of the same image over time.

    Run after ``CallTIRRewrite`` and before ``StaticPlanBlockMemory``, which plans what is
    left (buffers, and texture tensors this pass does not take).

    Returns
    -------
    ret : tvm.transform.Pass
        The pass.
    """

    def transform_function(
        self, func: relax.Function, mod: tvm.IRModule, _ctx: tvm.transform.PassContext
    ) -> relax.Function:
        """Plan and rewrite ``func``, a Relax function of ``mod``."""
        plan = _plan_function(func, mod, physical_device_indices(mod))
        if not plan:
            return func
        return _TextureStorageRewriter(mod, plan).visit_expr(func)
