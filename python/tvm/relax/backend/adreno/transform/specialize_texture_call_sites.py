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
"""Copy texture scopes into PrimFuncs only where a module has textures.

``SpecializePrimFuncBasedOnCallSite`` (C++, ``src/relax/transform/``) gives every PrimFunc
called by ``call_tir`` the memory scopes of its call site, through ``PrimFunc.specialize``.
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

import tvm
from tvm import relax

_CALL_TIR = tvm.ir.Op.get("relax.call_tir")


def _has_texture(value_type) -> bool:
    if isinstance(value_type, relax.TupleType):
        return any(_has_texture(f) for f in value_type.fields)
    if not isinstance(value_type, relax.TensorType) or value_type.vdevice is None:
        return False
    return str(value_type.vdevice.memory_scope).startswith("global.texture")


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


@tvm.transform.module_pass(opt_level=0, name="SpecializeTextureCallSites")
class SpecializeTextureCallSites:  # pylint: disable=too-few-public-methods
    """``SpecializePrimFuncBasedOnCallSite`` for modules with texture tensors; a module whose
    tensors are all buffers is returned unchanged.  See the module docstring.

    Returns
    -------
    ret : tvm.transform.Pass
        The pass.
    """

    def transform_module(self, mod: tvm.IRModule, _ctx: tvm.transform.PassContext) -> tvm.IRModule:
        """Specialize the PrimFuncs of ``mod`` when it has a texture tensor."""
        if not module_has_texture(mod):
            return mod
        return relax.transform.SpecializePrimFuncBasedOnCallSite()(mod)
