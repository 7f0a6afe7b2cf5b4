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
"""Keep float32 textures in half-float images: float16 storage, float32 arithmetic.

A texture is read with ``read_imagef`` and written with ``write_imagef`` whatever the channel
type of the image: OpenCL converts a ``CL_HALF_FLOAT`` pixel to float on read and rounds a float
to half on write. So the float32 kernels of the texture pipeline run unchanged on half images,
on any device with images (no ``cl_khr_fp16``: that extension is only needed for the ``half``
type in kernel code), and every tensor between two such kernels takes half the memory and half
the bandwidth. Each tensor written is rounded once to half (relative error up to 2**-11); the
kernels compute in float32.

The pass runs after ``PlanTextureStorage``. For every image storage that pass planned
(``R.vm.alloc_storage`` in ``global.texture``) with float32 pixels whose tensors are only
passed to PrimFuncs of the module, it makes the storage ``float16`` and gives each tensor
allocated from it the memory scope of its texture scope with the suffix ``-half``
(``global.texture-half``, ``global.texture-nhwc-half``, ``global.texture-weight-half``). The
tensors keep their float32 type, so the kernels are compiled as before; the scope tells the
OpenCL runtime that the image behind the tensor has half pixels (``TextureLayoutFor`` in its
device API), which it needs to size the tensor and to convert host copies. The module's
parameters and results are not touched.

What stays float32, and why (``half_storage_decisions``):

* ``buffer``: a tensor in ``global`` memory; its kernels index it as memory, not as an image.
* ``dtype``: a texture of another element type (float16 already is half).
* ``not-planned``: a texture ``PlanTextureStorage`` left to ``StaticPlanBlockMemory``
  (returned, or used across binding blocks), a view of flat storage, float32 as before.
* ``non-kernel``: a texture passed to something other than a PrimFunc of the module; a packed
  function, such as ``runtime.TVMTensorCopyFromTo`` where a tensor changes scope, sees the
  bytes of the image (the OpenCL runtime would convert such a copy on the host).

OpenCL lets ``write_imagef`` round a float to a half pixel either to the nearest value or
toward zero (the OpenCL C specification, conversion rules for half images), and NVIDIA's
OpenCL rounds toward zero. Rounding toward zero shrinks every stored value a little, and a
network adds those shrinkages up through its residual connections (MediaPipe's palm detector
ended 17% of its output's scale off on NVIDIA, and 0.4% off where the device rounds to
nearest). So the pass also makes the kernels that write a half-pixel image round the value to
the nearest half themselves, ties to even, with integer operations on the float's bits
(``round_to_half``): the device's conversion then has nothing left to round, and every device
stores the same half. A kernel called both with half and float32 outputs gets a copy
(``_half_store``) for the half calls.

The pass is off unless the PassContext option ``relax.adreno.float16_storage`` is true (read
when the pass runs), or the pass is constructed with ``enabled=True``.
"""

import dataclasses
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

import tvm_ffi

import tvm
from tvm import relax
from tvm.s_tir.backend.adreno.texture import TEXTURE_SCOPES

from .plan_texture_storage import STORAGE_SCOPE

# The PassContext option that turns the pass on in the Adreno pipeline.
FLOAT16_STORAGE_OPTION = "relax.adreno.float16_storage"
# The scope suffix the OpenCL runtime reads as "float32 values in half pixels".
HALF_PIXEL_SUFFIX = "-half"

_ALLOC_STORAGE = tvm.ir.Op.get("relax.vm.alloc_storage")
_ALLOC_TENSOR = tvm.ir.Op.get("relax.memory.alloc_tensor")
_BUILTIN_ALLOC_TENSOR = tvm.ir.Op.get("relax.builtin.alloc_tensor")
_KILL_OPS = tuple(
    tvm.ir.Op.get(name) for name in ("relax.memory.kill_tensor", "relax.memory.kill_storage")
)

REASONS = {
    "half": "float16 image storage, float32 in the kernels",
    "buffer": "a buffer (global scope): its kernels index it as memory, not as an image",
    "dtype": "a texture of another element type than float32",
    "not-planned": "a texture left to StaticPlanBlockMemory (returned or used across blocks)",
    "non-kernel": "a texture passed to a packed function (such as the copy of a scope change), "
    "which sees the bytes of the image",
}


def half_scope(scope: str) -> str:
    """The memory scope of a float32 tensor of texture scope ``scope`` kept in half pixels."""
    return scope + HALF_PIXEL_SUFFIX


def _scope_of(sinfo) -> str:
    vdevice = getattr(sinfo, "vdevice", None)
    return "global" if vdevice is None else str(vdevice.memory_scope)


@dataclasses.dataclass
class TensorDecision:
    """Whether one tensor allocated in a function is stored in half, and why (not)."""

    name: str
    scope: str
    dtype: str
    reason: str  # a key of REASONS

    @property
    def half(self) -> bool:
        return self.reason == "half"


@dataclasses.dataclass
class _Plan:
    storages: Set[relax.Var]  # image storages to make float16
    tensors: Set[relax.Var]  # tensors allocated from them
    decisions: List[TensorDecision]


def _kernel_callees(mod: tvm.IRModule) -> Set[str]:
    return {
        gv.name_hint for gv, func in mod.functions_items() if isinstance(func, tvm.tirx.PrimFunc)
    }


def _plan_function(func: relax.Function, mod: tvm.IRModule) -> _Plan:
    """Decide, for the tensors allocated in ``func``, which live in half-pixel images."""
    kernels = _kernel_callees(mod)
    # PlanTextureStorage plans the binding blocks of the body, so they are all we look at.
    body = func.body
    blocks = body.blocks if isinstance(body, relax.SeqExpr) else []
    bindings = [b for block in blocks for b in block.bindings if isinstance(b, relax.VarBinding)]

    storage_of: Dict[relax.Var, relax.Var] = {}  # tensor -> its image storage
    image_storages: Set[relax.Var] = set()
    refers: Dict[relax.Var, Set[relax.Var]] = {}  # var -> tensors whose memory it names
    decisions: Dict[relax.Var, TensorDecision] = {}
    non_kernel: Set[relax.Var] = set()
    for binding in bindings:
        value, var = binding.value, binding.var
        if isinstance(value, relax.Call) and value.op.same_as(_ALLOC_STORAGE):
            dtype = str(value.args[2].value)
            if str(value.args[3].value) == STORAGE_SCOPE and dtype == "float32":
                image_storages.add(var)
            continue
        if isinstance(value, relax.Call) and value.op.same_as(_ALLOC_TENSOR):
            scope, dtype = _scope_of(var.ty), str(var.ty.dtype)
            storage = value.args[0]
            if scope == "global":
                decisions[var] = TensorDecision(var.name, scope, dtype, "buffer")
            elif dtype != "float32":
                decisions[var] = TensorDecision(var.name, scope, dtype, "dtype")
            elif scope not in TEXTURE_SCOPES:
                decisions[var] = TensorDecision(var.name, scope, dtype, "not-planned")
            elif storage in image_storages:
                decisions[var] = TensorDecision(var.name, scope, dtype, "half")
                storage_of[var] = storage
                refers[var] = {var}
            else:
                decisions[var] = TensorDecision(var.name, scope, dtype, "not-planned")
            continue
        if isinstance(value, relax.Call) and value.op.same_as(_BUILTIN_ALLOC_TENSOR):
            scope, dtype = _scope_of(var.ty), str(var.ty.dtype)
            reason = "buffer" if scope == "global" else "not-planned"
            if scope != "global" and dtype != "float32":
                reason = "dtype"
            decisions[var] = TensorDecision(var.name, scope, dtype, reason)
            continue
        named = set()
        for used in relax.analysis.free_vars(value):
            named |= refers.get(used, set())
        if not named:
            continue
        if isinstance(value, (relax.Var, relax.Tuple, relax.TupleGetItem)):
            refers[var] = named
        elif isinstance(value, relax.Call) and any(value.op.same_as(op) for op in _KILL_OPS):
            continue
        elif not (
            isinstance(value, relax.Call)
            and isinstance(value.op, relax.GlobalVar)
            and value.op.name_hint in kernels
        ):
            non_kernel |= named

    # A storage is half only if every tensor in it is; one non-kernel use keeps it float32.
    kept_float32 = {storage_of[t] for t in non_kernel}
    storages, tensors = set(), set()
    for tensor, storage in storage_of.items():
        if storage in kept_float32:
            decisions[tensor].reason = "non-kernel"
        else:
            storages.add(storage)
            tensors.add(tensor)
    return _Plan(storages, tensors, list(decisions.values()))


def half_storage_decisions(mod: tvm.IRModule) -> Dict[str, List[TensorDecision]]:
    """Per Relax function of ``mod`` (as ``PlanTextureStorage`` leaves it), every tensor it
    allocates and whether ``HalfTextureStorage`` keeps it in half pixels (``REASONS``)."""
    return {
        gv.name_hint: _plan_function(func, mod).decisions
        for gv, func in mod.functions_items()
        if isinstance(func, relax.Function)
    }


@relax.expr_functor.mutator
class _HalfStorageRewriter(relax.PyExprMutator):  # pylint: disable=abstract-method
    """Make the planned storages float16 and give their tensors the ``-half`` scopes."""

    def __init__(
        self, mod: tvm.IRModule, plan: _Plan, vdevices: Dict[tuple, Tuple[int, relax.VDevice]]
    ):
        super().__init__(mod)
        self._plan = plan
        self._vdevices = vdevices

    def visit_var_binding_(self, binding: relax.VarBinding) -> None:
        value = binding.value
        if binding.var in self._plan.storages:
            shape, device, _, scope = value.args
            # The VM hands the storage's scope to every tensor allocated from it
            # (vm.builtin.alloc_tensor), so the runtime learns of the half pixels from it.
            storage = relax.op.vm.alloc_storage(
                shape, device, "float16", half_scope(str(scope.value))
            )
            self.builder_.emit_normalized(
                relax.VarBinding(binding.var, self.builder_.normalize(storage))
            )
            return
        if binding.var in self._plan.tensors:
            # The VM gives a tensor the memory scope of the virtual device its alloc_tensor
            # names (vm.builtin.alloc_tensor's scope argument): name the "-half" one.
            sinfo = binding.var.ty
            key = _vdevice_key(sinfo.vdevice, half_scope(_scope_of(sinfo)))
            index, vdevice = self._vdevices[key]
            storage, offset, shape, dtype, _ = value.args
            tensor = relax.op.memory.alloc_tensor(
                self.visit_expr(storage), offset, shape, dtype, index
            )
            new_var = relax.Var(
                binding.var.name, relax.TensorType(sinfo.shape, sinfo.dtype, vdevice)
            )
            self.set_var_remap(binding.var, new_var)
            self.builder_.emit_normalized(
                relax.VarBinding(new_var, self.builder_.normalize(tensor))
            )
            return
        super().visit_var_binding_(binding)


def round_to_half(value):
    """``value`` (float32) rounded to the nearest float16 value, ties to even, as float32.

    The float's 13 low mantissa bits are the ones float16 drops: adding half of their weight
    (``0xFFF``, one more when the kept part is odd) and clearing them rounds to nearest even
    in the normal range of float16. Values in its subnormal range keep 10 mantissa bits,
    more than float16 holds there; the device's conversion rounds those (an error below
    2**-24, absolute). Infinities stay infinite.

    Parameters
    ----------
    value : PrimExpr
        A float32 expression, scalar or vector.

    Returns
    -------
    rounded : PrimExpr
        The float32 expression of the rounded value.
    """
    dtype = value.ty.dtype
    lanes = int(dtype.lanes)
    bits_type = "uint32" if lanes == 1 else f"uint32x{lanes}"

    def const(number):
        scalar = tvm.tirx.const(number, "uint32")
        return scalar if lanes == 1 else tvm.tirx.Broadcast(scalar, lanes)

    # Bound once, so that the stored expression is computed once.
    bits = tvm.tirx.Var("bits", bits_type)
    odd = tvm.tirx.bitwise_and(tvm.tirx.shift_right(bits, const(13)), const(1))
    rounded = tvm.tirx.bitwise_and(bits + const(0xFFF) + odd, const(0xFFFFE000))
    return tvm.tirx.Let(
        bits, tvm.tirx.reinterpret(bits_type, value), tvm.tirx.reinterpret(str(dtype), rounded)
    )


def _stored_params(func) -> Set[int]:
    """The indices of the parameters of the PrimFunc ``func`` whose buffers it stores into."""
    stored: Set[int] = set()

    def _visit(store):
        for index, param in enumerate(func.params):
            if store.buffer.same_as(param):
                stored.add(index)

    tvm_ffi.structural_walk(func.body, [(tvm.tirx.BufferStore, _visit)], order="post")
    return stored


def _rounding_stores(func, params: FrozenSet[int]):
    """The PrimFunc ``func`` with every float32 value it stores into the parameters
    ``params`` rounded to the nearest half (``round_to_half``)."""
    buffers = [func.params[i] for i in params]

    def _round(store):
        dtype = store.value.ty.dtype
        if (
            not any(store.buffer.same_as(b) for b in buffers)
            or str(dtype).split("x", maxsplit=1)[0] != "float32"
        ):
            return store
        return tvm.tirx.BufferStore(store.buffer, round_to_half(store.value), store.indices)

    return tvm_ffi.structural_map(func, (tvm.tirx.BufferStore, _round), order="post")


def _half_positions(call: relax.Call) -> FrozenSet[int]:
    """The positions of the arguments of ``call`` that live in half-pixel images."""
    return frozenset(
        i
        for i, arg in enumerate(call.args)
        if isinstance(arg.ty, relax.TensorType)
        and arg.ty.vdevice is not None
        and str(arg.ty.vdevice.memory_scope).endswith(HALF_PIXEL_SUFFIX)
    )


@relax.expr_functor.mutator
class _StoreRounder(relax.PyExprMutator):  # pylint: disable=abstract-method
    """Point each call of a kernel that writes half-pixel images at its rounding version."""

    def __init__(
        self, mod: tvm.IRModule, targets: Dict[Tuple[str, FrozenSet[int]], relax.GlobalVar]
    ):
        super().__init__(mod)
        self._targets = targets

    def visit_call_(self, call: relax.Call) -> relax.Expr:  # pylint: disable=arguments-renamed
        call = super().visit_call_(call)
        if isinstance(call.op, relax.GlobalVar):
            key = (call.op.name_hint, _half_positions(call))
            if key in self._targets:
                return relax.Call(self._targets[key], call.args, call.attrs, call.ty_args)
        return call


def _round_half_stores(mod: tvm.IRModule) -> tvm.IRModule:
    """Make every kernel that stores into a half-pixel image round to the nearest half.

    A kernel whose every call writes half images in the same parameters is rewritten in
    place; one whose calls differ gets a rounding copy per set of such parameters."""
    kernels = {
        global_var.name_hint: (global_var, func)
        for global_var, func in mod.functions_items()
        if isinstance(func, tvm.tirx.PrimFunc)
    }
    uses: Dict[str, Set[FrozenSet[int]]] = {}

    def _visit(expr):
        if isinstance(expr, relax.Call) and isinstance(expr.op, relax.GlobalVar):
            if expr.op.name_hint in kernels:
                uses.setdefault(expr.op.name_hint, set()).add(_half_positions(expr))

    for func in mod.functions.values():
        if isinstance(func, relax.Function):
            relax.analysis.post_order_visit(func, _visit)
    builder = relax.BlockBuilder(mod)
    targets: Dict[Tuple[str, FrozenSet[int]], relax.GlobalVar] = {}
    for name, keys in uses.items():
        global_var, func = kernels[name]
        stored = _stored_params(func)
        rounding = {key: frozenset(key & stored) for key in keys}
        distinct = {params for params in rounding.values() if params}
        if not distinct:
            continue
        if len(distinct) == 1 and all(rounding.values()):
            # Every call writes half images in the same parameters: round in place.
            builder.update_func(global_var, _rounding_stores(func, distinct.pop()))
            continue
        variants = {}
        for params in sorted(distinct, key=sorted):
            suffix = "_half_store"
            if len(distinct) > 1:
                suffix += "_" + "_".join(str(i) for i in sorted(params))
            # Fresh parameters and buffers: the copy must not share definitions with ``func``.
            variant = _rounding_stores(tvm.s_tir.renew_defs(func), params)
            if func.attrs is not None and "global_symbol" in func.attrs:
                variant = variant.with_attr("global_symbol", name + suffix)
            variants[params] = builder.add_func(variant, name + suffix)
        for key, params in rounding.items():
            if params:
                targets[(name, key)] = variants[params]
    rounded = builder.get()
    if not targets:
        return rounded
    for global_var, func in list(rounded.functions_items()):
        if isinstance(func, relax.Function):
            rounded[global_var] = _StoreRounder(rounded, targets).visit_expr(func)
    return rounded


def _vdevice_key(vdevice: relax.VDevice, scope: str):
    return (str(vdevice.target), int(vdevice.vdevice_id), scope)


def _half_vdevices(mod: tvm.IRModule, tensors: Set[relax.Var]) -> List[relax.VDevice]:
    """The virtual devices of ``mod``, with a ``-half`` one appended beside the virtual device
    of each tensor in ``tensors`` (appended, so the indices of the others stay)."""
    vdevices = list(mod.global_infos.get("vdevice", []))
    known = {_vdevice_key(v, str(v.memory_scope)) for v in vdevices}
    for tensor in tensors:
        vdev = tensor.ty.vdevice
        key = _vdevice_key(vdev, half_scope(str(vdev.memory_scope)))
        if key not in known:
            vdevices.append(relax.VDevice(vdev.target, int(vdev.vdevice_id), key[2]))
            known.add(key)
    return vdevices


@tvm.transform.module_pass(opt_level=0, name="HalfTextureStorage")
class HalfTextureStorage:  # pylint: disable=too-few-public-methods
    """Store the float32 textures planned by ``PlanTextureStorage`` as half-float images.

    Parameters
    ----------
    enabled : Optional[bool]
        True or False to force the pass on or off; None (the default) reads the PassContext
        option ``relax.adreno.float16_storage`` (False when unset) when the pass runs.

    Returns
    -------
    ret : tvm.transform.Pass
        The pass.
    """

    def __init__(self, enabled: Optional[bool] = None):
        self.enabled = enabled

    def _is_enabled(self) -> bool:
        if self.enabled is not None:
            return self.enabled
        config = tvm.transform.PassContext.current().config
        return bool(config.get(FLOAT16_STORAGE_OPTION, False))

    def transform_module(self, mod: tvm.IRModule, _ctx: tvm.transform.PassContext) -> tvm.IRModule:
        """Rewrite every Relax function of ``mod`` whose planned textures can be half."""
        if not self._is_enabled():
            return mod
        plans = {
            global_var: _plan_function(func, mod)
            for global_var, func in mod.functions_items()
            if isinstance(func, relax.Function)
        }
        plans = {global_var: plan for global_var, plan in plans.items() if plan.tensors}
        if not plans:
            return mod
        tensors = set().union(*(plan.tensors for plan in plans.values()))
        vdevice_list = _half_vdevices(mod, tensors)
        vdevices = {
            _vdevice_key(v, str(v.memory_scope)): (index, v) for index, v in enumerate(vdevice_list)
        }
        functions = dict(mod.functions_items())
        for global_var, plan in plans.items():
            rewriter = _HalfStorageRewriter(mod, plan, vdevices)
            functions[global_var] = rewriter.visit_expr(mod[global_var])
        global_infos = dict(mod.global_infos.items())
        global_infos["vdevice"] = vdevice_list
        return _round_half_stores(
            tvm.IRModule(functions, attrs=mod.attrs, global_infos=global_infos)
        )
