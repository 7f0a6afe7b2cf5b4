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
"""Helpers shared by the Adreno Relax passes."""

from typing import Callable, Dict, List, Optional

import tvm
from tvm import relax

#: Binary elementwise ops that broadcast their operands. They compute the same in any layout
#: of their operands; their layout inference needs operands of equal rank.
BINARY_BROADCAST_OPS = (
    "relax.add",
    "relax.subtract",
    "relax.multiply",
    "relax.divide",
    "relax.maximum",
    "relax.minimum",
    "relax.power",
)


#: The rank of the activations the texture pipeline blocks into ``NCHW4c``.
ACTIVATION_RANK = 4


def conv2d_channel_axis(conv: relax.Call) -> Optional[int]:
    """The channel axis of the result of ``conv``, a ``relax.nn.conv2d`` call, from its
    output layout; None for a layout that is not 4-D."""
    layout = str(conv.attrs.out_layout or conv.attrs.data_layout)
    return layout.index("C") if len(layout) == ACTIVATION_RANK and "C" in layout else None


def with_functions(
    mod: tvm.IRModule, updates: Dict[tvm.ir.GlobalVar, tvm.ir.BaseFunc]
) -> tvm.IRModule:
    """``mod`` with some of its functions replaced.

    Parameters
    ----------
    mod : tvm.IRModule
        The module; it is not changed.
    updates : Dict[tvm.ir.GlobalVar, tvm.ir.BaseFunc]
        The new function of each global to replace.

    Returns
    -------
    mod : tvm.IRModule
        ``mod`` itself when ``updates`` is empty (so that an unchanged module stays the same
        object), else a copy holding the new functions.
    """
    if not updates:
        return mod
    mod = mod.clone()
    for gvar, func in updates.items():
        mod.update_func(gvar, func)
    return mod


def rewrite_relax_functions(
    mod: tvm.IRModule,
    mutator: relax.PyExprMutator,
    finalize: Optional[Callable[[relax.Function], relax.Function]] = None,
) -> tvm.IRModule:
    """Rewrite every Relax function of ``mod`` with ``mutator``.

    The body of a module pass whose mutator adds functions to the module (``call_te``, an
    op's ``FLegalize``), which a ``function_pass`` would drop.

    Parameters
    ----------
    mod : tvm.IRModule
        The module, the one ``mutator`` was created with.
    mutator : relax.PyExprMutator
        The rewrite, applied to each Relax function in turn.
    finalize : Optional[Callable[[relax.Function], relax.Function]]
        Applied to each rewritten function before it replaces the original.

    Returns
    -------
    mod : tvm.IRModule
        The module of ``mutator``'s builder: the rewritten functions, the other functions of
        ``mod`` and those the rewrite added.
    """
    for gvar, func in mod.functions_items():
        if isinstance(func, relax.Function):
            func = mutator.visit_expr(func)
            if finalize is not None:
                func = finalize(func)
            mutator.builder_.update_func(gvar, func)
    return mutator.builder_.get()


class ModuleVDevices:
    """The virtual devices of a module, one per target, device id and memory scope.

    Passes that move tensors between scopes look a scope's VDevice up here and add it when the
    module has none yet; ``write`` stores the list back, the module's own VDevices first.

    Parameters
    ----------
    mod : tvm.IRModule
        The module whose ``vdevice`` global infos are read.
    """

    def __init__(self, mod: tvm.IRModule):
        self.vdevices = list(mod.global_infos["vdevice"]) if "vdevice" in mod.global_infos else []
        self._known = {}
        for vdev in self.vdevices:
            self._known.setdefault(self._key(vdev.target, vdev.vdevice_id, vdev.memory_scope), vdev)

    @staticmethod
    def _key(target: tvm.target.Target, vdevice_id, scope) -> tuple:
        return (str(target), int(vdevice_id), str(scope))

    def get(self, target: tvm.target.Target, scope: str, vdevice_id: int = 0) -> relax.VDevice:
        """The VDevice of ``scope`` on device ``vdevice_id`` of ``target``, added if missing."""
        key = self._key(target, vdevice_id, scope)
        if key not in self._known:
            self._known[key] = relax.VDevice(target, vdevice_id, scope)
            self.vdevices.append(self._known[key])
        return self._known[key]

    def write(self, mod: tvm.IRModule) -> tvm.IRModule:
        """``mod`` with these VDevices as its ``vdevice`` global infos (when there are any)."""
        if self.vdevices:
            mod.update_global_info("vdevice", self.vdevices)
        return mod


def call_tir_args(call: relax.Call) -> Optional[List[relax.Expr]]:
    """The arguments the PrimFunc of a ``relax.call_tir`` receives.

    Parameters
    ----------
    call : relax.Call
        The call.

    Returns
    -------
    args : Optional[List[relax.Expr]]
        The fields of the call's argument tuple (a single argument may stand without a tuple),
        or None when ``call`` is not a ``relax.call_tir``.
    """
    if not call.op.same_as(tvm.ir.Op.get("relax.call_tir")):
        return None
    args = call.args[1]
    return list(args.fields) if isinstance(args, relax.Tuple) else [args]
