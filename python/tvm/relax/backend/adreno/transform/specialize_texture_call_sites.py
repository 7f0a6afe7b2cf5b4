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
"""Copy texture scopes into PrimFuncs only where a module has textures, one PrimFunc per
distinct set of call-site scopes.

``SpecializePrimFuncBasedOnCallSite`` (C++, ``src/relax/transform/``) gives every PrimFunc
called by ``call_tir`` the memory scopes of its call site, through ``PrimFunc.specialize``.
Two limits of that pass are handled here.

It records the specialized PrimFunc under the callee's own ``GlobalVar``, call site after
call site, so when one PrimFunc is called with different scopes (two identical convolutions
in a row, the first writing a texture and the second a buffer) the last call site wins and
the others pass an image where the kernel takes a buffer (``CL_INVALID_MEM_OBJECT`` at
launch). Before it runs, each call site whose scopes differ from those of the first call of
its PrimFunc is pointed at a copy of the PrimFunc, one copy per distinct list of scopes, so
that every PrimFunc is called with one list. The C++ pass could do the same by giving each
distinct specialization a new ``GlobalVar``.

``specialize`` accepts only parameter buffers whose shape dimensions are constants or plain
variables (``UpdateSpecializeVarMap`` in ``src/tirx/ir/specialize.cc``); a dynamic shape after a
pooling or a strided convolution is an expression such as ``h // 2``, and the pass fails
("The signature of target buffer expected an independent Var") even when every scope is
``global`` and there is nothing to copy.

Dynamic tensors never get a texture scope (``BalanceTextureScope`` keeps them in buffers), so a
module without any texture tensor needs no specialization: ``SpecializeTextureCallSites`` runs
the C++ pass only on modules that have one.  A module mixing textures with such dynamic shapes
still fails; the fix belongs in the C++ pass (skip parameters whose scope does not change).
"""

from typing import Dict, List, Set, Tuple

import tvm
from tvm import relax

from .utils import rewrite_relax_functions

_CALL_TIR = tvm.ir.Op.get("relax.call_tir")


def _scopes(value_type) -> List[str]:
    """The memory scope of each tensor of ``value_type``, ``global`` where none is named."""
    if isinstance(value_type, relax.TupleType):
        return [scope for field in value_type.fields for scope in _scopes(field)]
    if isinstance(value_type, relax.TensorType) and value_type.vdevice is not None:
        return [str(value_type.vdevice.memory_scope)]
    return ["global"]


def _has_texture(value_type) -> bool:
    return any(scope.startswith("global.texture") for scope in _scopes(value_type))


def module_has_texture(mod: tvm.IRModule) -> bool:
    """Whether a ``call_tir`` of ``mod`` takes or returns a tensor in a texture scope."""
    found = []

    def _visit(expr):
        if found or not isinstance(expr, relax.Call) or not expr.op.same_as(_CALL_TIR):
            return
        if _has_texture(expr.args[1].ty) or any(_has_texture(t) for t in expr.ty_args):
            found.append(expr)

    for _, func in mod.functions_items():
        if isinstance(func, relax.Function):
            relax.analysis.post_order_visit(func, _visit)
    return bool(found)


def _call_site_scopes(call: relax.Call) -> Tuple[str, ...]:
    """The scopes a ``call_tir`` gives its PrimFunc's parameters: arguments, then outputs."""
    scopes = [scope for arg in call.args[1].fields for scope in _scopes(arg.ty)]
    scopes += [scope for out in call.ty_args for scope in _scopes(out)]
    return tuple(scopes)


@relax.expr_functor.mutator
class _CallSiteSplitter(relax.PyExprMutator):  # pylint: disable=abstract-method
    """Points each ``call_tir`` at a PrimFunc called with its scopes only: the original for
    the scopes of its first call, a copy for each other list of scopes."""

    def __init__(self, mod: tvm.IRModule):
        super().__init__(mod)
        self._callees: Dict[Tuple[str, Tuple[str, ...]], tvm.ir.GlobalVar] = {}
        self._called: Set[str] = set()  # PrimFuncs already called, with any scopes
        self._names = {gvar.name_hint for gvar in mod.get_global_vars()}

    def visit_call_(self, call: relax.Call) -> relax.Expr:  # pylint: disable=arguments-renamed
        call = super().visit_call_(call)
        if not call.op.same_as(_CALL_TIR):
            return call
        callee = call.args[0]
        key = (callee.name_hint, _call_site_scopes(call))
        if key not in self._callees:
            called = callee.name_hint in self._called
            self._callees[key] = self._copy(callee) if called else callee
            self._called.add(callee.name_hint)
        target = self._callees[key]
        if target.same_as(callee):
            return call
        return relax.Call(call.op, [target, *call.args[1:]], call.attrs, call.ty_args, call.span)

    def _copy(self, callee: tvm.ir.GlobalVar) -> tvm.ir.GlobalVar:
        index = 1
        while f"{callee.name_hint}_{index}" in self._names:
            index += 1
        name = f"{callee.name_hint}_{index}"
        self._names.add(name)
        # A copy with variables and buffers of its own, like any other PrimFunc of the module.
        prim_func = tvm.s_tir.renew_defs(self.builder_.get()[callee])
        # A GlobalVar typed for the copy from a builder of its own: this module's builder
        # would return the callee's GlobalVar, the copy being equal to the callee.
        gvar = relax.BlockBuilder().add_func(prim_func, name)
        self.builder_.update_func(gvar, prim_func)
        return gvar


@tvm.transform.module_pass(opt_level=0, name="SpecializeTextureCallSites")
class SpecializeTextureCallSites:  # pylint: disable=too-few-public-methods
    """``SpecializePrimFuncBasedOnCallSite`` for modules with texture tensors, after giving
    each distinct list of call-site scopes its own PrimFunc; a module whose tensors are all
    buffers is returned unchanged.  See the module docstring.

    Returns
    -------
    ret : tvm.transform.Pass
        The pass.
    """

    def transform_module(self, mod: tvm.IRModule, _ctx: tvm.transform.PassContext) -> tvm.IRModule:
        """Specialize the PrimFuncs of ``mod`` when it has a texture tensor."""
        if not module_has_texture(mod):
            return mod
        mod = rewrite_relax_functions(mod, _CallSiteSplitter(mod))
        return relax.transform.SpecializePrimFuncBasedOnCallSite()(mod)
