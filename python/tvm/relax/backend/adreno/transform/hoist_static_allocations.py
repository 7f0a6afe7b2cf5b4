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
"""Allocate a function's statically planned memory once per VM, not on every call.

After ``StaticPlanBlockMemory`` and the VM lowering, every call of a function allocates its
planned storage (``R.vm.alloc_storage``), creates each intermediate tensor in it
(``R.vm.alloc_tensor``) and drops them again (``R.vm.kill_object``): three VM builtin calls per
intermediate on every inference, although sizes, offsets and shapes are compile-time
constants. On a small network these host calls are a third of the inference (BlazeFace: 35
storages, 46 tensors and 82 drops around 46 kernels).

``HoistStaticAllocations`` moves the constant allocations of a function into a function of
their own that returns them as a tuple, and fetches that tuple through
``vm.builtin.cached_static_alloc``, which calls it on the first call and returns the same
objects on every later call of the same VM. The drops of hoisted objects go: the VM keeps them
for its lifetime. A tensor is hoisted only when its storage is and it never leaves the
function: its only uses are as an argument of a PrimFunc call (a kernel writing or reading it)
or a drop. Anything else (returned, put in a tuple, passed to a packed function that could
keep an alias such as ``vm.builtin.reshape``) keeps the allocation per call, and so does its
storage.

The rewrite itself is target-independent, but the builtin ships with the OpenCL runtime
(upstream it belongs beside the VM builtins in ``src/runtime/vm/builtin.cc``, for every
runtime). So the pass rewrites the functions compiled for an OpenCL target, whose modules run
only where that runtime is, and leaves others unchanged: what it emits depends on the module
and the target alone, not on which libraries the compiling process has loaded.
"""

from typing import Dict, List, Set

import tvm
from tvm import relax, tirx

BUILTIN = "vm.builtin.cached_static_alloc"
_ALLOC_STORAGE = tvm.ir.Op.get("relax.vm.alloc_storage")
_ALLOC_TENSOR = tvm.ir.Op.get("relax.vm.alloc_tensor")
_KILL_OBJECT = tvm.ir.Op.get("relax.vm.kill_object")


def _is_static_shape(expr: relax.Expr) -> bool:
    return isinstance(expr, relax.ShapeExpr) and all(
        isinstance(v, tirx.IntImm) for v in expr.values
    )


def _bindings(func: relax.Function) -> List[relax.Binding]:
    return [binding for block in func.body.blocks for binding in block.bindings]


def _kernel_call(mod: tvm.IRModule, value: relax.Expr) -> bool:
    """A call of a PrimFunc of ``mod`` (after lowering: ``gvar(args...)``)."""
    return (
        isinstance(value, relax.Call)
        and isinstance(value.op, tvm.ir.GlobalVar)
        and value.op in mod.functions
        and isinstance(mod[value.op], tirx.PrimFunc)
    )


def _hoistable(mod: tvm.IRModule, func: relax.Function) -> Set[relax.Var]:
    """The storage and tensor variables of ``func`` whose allocation can be hoisted."""
    storages: Dict[relax.Var, List[relax.Var]] = {}  # static storage -> tensors made in it
    escaping: Set[relax.Var] = set(relax.analysis.free_vars(func.body.body))
    for binding in _bindings(func):
        value = binding.value
        if not isinstance(binding, relax.VarBinding):
            escaping.update(relax.analysis.free_vars(value))
            continue
        if isinstance(value, relax.Call) and value.op.same_as(_ALLOC_STORAGE):
            if _is_static_shape(value.args[0]):
                storages[binding.var] = []
            continue
        if isinstance(value, relax.Call) and value.op.same_as(_ALLOC_TENSOR):
            storage = value.args[0]
            if (
                storage in storages
                and isinstance(value.args[1], tirx.IntImm)
                and _is_static_shape(value.args[2])
            ):
                storages[storage].append(binding.var)
            else:
                escaping.update(relax.analysis.free_vars(value))
            continue
        if isinstance(value, relax.Call) and value.op.same_as(_KILL_OBJECT):
            continue
        if _kernel_call(mod, value):
            continue  # kernels read and write their arguments; they keep no reference
        escaping.update(relax.analysis.free_vars(value))
    hoisted = set()
    for storage, made in storages.items():
        if storage not in escaping and not any(t in escaping for t in made):
            hoisted.add(storage)
            hoisted.update(made)
    return hoisted


def _alloc_function(func: relax.Function, order: List[relax.Var]) -> relax.Function:
    """A function without parameters making the allocations ``order`` of ``func``."""
    fresh = {var: relax.Var(var.name, var.ty) for var in order}
    bindings = []
    for binding in _bindings(func):
        if binding.var in fresh:
            value = binding.value
            args = [fresh.get(arg, arg) for arg in value.args]
            bindings.append(
                relax.VarBinding(fresh[binding.var], relax.Call(value.op, args, value.attrs))
            )
    return relax.Function(
        [],
        relax.SeqExpr([relax.BindingBlock(bindings)], relax.Tuple([fresh[v] for v in order])),
        ret_ty=relax.TupleType([var.ty for var in order]),
    )


def _fetching_function(
    func: relax.Function, order: List[relax.Var], alloc_gvar: tvm.ir.GlobalVar, entry: int
) -> relax.Function:
    """``func`` reading the allocations ``order`` from the cached tuple, without their drops."""
    cached = relax.Var("static_alloc", relax.TupleType([var.ty for var in order]))
    fetch = relax.VarBinding(
        cached,
        relax.op.call_builtin_with_ctx(
            BUILTIN, [alloc_gvar, tirx.IntImm("int64", entry)], ty_args=cached.ty
        ),
    )
    index = {var: i for i, var in enumerate(order)}
    blocks = []
    for number, block in enumerate(func.body.blocks):
        bindings = [fetch] if number == 0 else []
        for binding in block.bindings:
            value = binding.value
            if binding.var in index:
                read = relax.TupleGetItem(cached, index[binding.var])
                bindings.append(relax.VarBinding(binding.var, read))
            elif not (
                isinstance(value, relax.Call)
                and value.op.same_as(_KILL_OBJECT)
                and value.args[0] in index
            ):
                bindings.append(binding)
        blocks.append(relax.BindingBlock(bindings))
    body = relax.SeqExpr(blocks, func.body.body)
    return relax.Function(func.params, body, func.ret_ty, func.is_pure, func.attrs, func.span)


@tvm.transform.module_pass(opt_level=0, name="HoistStaticAllocations")
class HoistStaticAllocations:  # pylint: disable=too-few-public-methods
    """Allocate each Relax function's constant-size planned memory once per VM.

    Run last, on VM-lowered functions (``R.vm.alloc_storage`` / ``R.vm.alloc_tensor``). For
    a function ``f`` with hoistable allocations (see the module docstring) it adds a function
    ``f_static_alloc`` making them (with a global symbol, as the VM code generator needs for
    every function) and rewrites ``f`` to fetch them through ``vm.builtin.cached_static_alloc``.
    Only under an OpenCL target (``tvm.target.Target.current()``), the runtime that carries the
    builtin; unchanged otherwise.
    """

    def transform_module(  # pylint: disable=missing-function-docstring
        self, mod: tvm.IRModule, _ctx: tvm.transform.PassContext
    ) -> tvm.IRModule:
        target = tvm.target.Target.current(allow_none=True)
        if target is None or target.kind.name != "opencl":
            return mod
        builder = relax.BlockBuilder(mod)
        entry = 0
        for gvar, func in mod.functions_items():
            if not isinstance(func, relax.Function) or not isinstance(func.body, relax.SeqExpr):
                continue
            hoisted = _hoistable(mod, func)
            if not hoisted:
                continue
            order = [b.var for b in _bindings(func) if b.var in hoisted]
            name = f"{gvar.name_hint}_static_alloc"
            alloc_func = _alloc_function(func, order).with_attrs(
                {"relax.force_pure": True, "global_symbol": name}
            )
            alloc_gvar = builder.add_func(builder.normalize(alloc_func), name)
            fetching = _fetching_function(func, order, alloc_gvar, entry)
            builder.update_func(gvar, builder.normalize(fetching))
            entry += 1
        return builder.get() if entry else mod
