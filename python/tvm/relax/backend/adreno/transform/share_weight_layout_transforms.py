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
"""One shape-generic PrimFunc for the channel blocking of all weights kept in buffers.

The texture pipeline blocks every convolution weight from ``OIHW`` into ``OIHW4o``.  The
legalization gives each distinct weight shape a PrimFunc of its own, and the build schedules,
lowers and generates host code for each one (about 15 ms apiece on a 2-core CPU): 21 of the 67
PrimFuncs of a MobileNet-like network with 32 convolutions are such copies.  They differ only in
their extents.

``ShareWeightLayoutTransforms`` calls one PrimFunc over symbolic extents instead, one per index
map and dtype, built by the generic legalization of ``relax.layout_transform``.  It takes a
``call_tir`` when

* its callee holds one block annotated ``schedule_rule = adreno.layout_transform`` (a transform
  that does not pad, legalized as the scatter ``out[f(v)] = in[v]``, so that the block's write
  indices are the index map ``f``), and ``f`` blocks one axis: ``v // b`` in its place and
  ``v % b`` last, the other axes in order;
* the callee reads and writes ``global`` buffers (an image needs static extents);
* its input is computed from weights alone: the parameters after the ``num_input`` runtime
  inputs of the Relax function, and what is computed from them.  ``LiftTransformParams``
  moves such a transform into the parameter transformation, which runs once; a transform of
  an activation runs at every call and keeps its kernel for its shape.

A function without ``num_input`` has no weights the pass can tell apart, and is not changed.
"""

from typing import Dict, List, Optional, Set, Tuple

import tvm
import tvm_ffi
from tvm import relax, s_tir, tirx
from tvm.s_tir.dlight.adreno.base import LAYOUT_TRANSFORM, schedule_rule_of

from .utils import call_tir_args

_LAYOUT_TRANSFORM = tvm.ir.Op.get("relax.layout_transform")
_GLOBAL = "global"


def _is_blocking(index_map: tirx.IndexMap) -> bool:
    """Whether ``index_map`` splits one axis ``v`` into ``v // b`` in its place and ``v % b``
    as a new last axis, keeping the other axes in order."""
    inputs = list(index_map.initial_indices)
    outputs = list(index_map.final_indices)
    if len(outputs) != len(inputs) + 1 or not isinstance(outputs[-1], tirx.FloorMod):
        return False
    lanes = outputs[-1]
    if not isinstance(lanes.b, tirx.IntImm) or not any(lanes.a.same_as(v) for v in inputs):
        return False
    for var, out in zip(inputs, outputs[:-1]):
        if var.same_as(lanes.a):
            blocked = isinstance(out, tirx.FloorDiv) and out.a.same_as(var)
            if not blocked or not isinstance(out.b, tirx.IntImm) or out.b.value != lanes.b.value:
                return False
        elif not out.same_as(var):
            return False
    return True


def _buffer_blocking(func: tirx.PrimFunc) -> Optional[Tuple[tirx.IndexMap, str]]:
    """The index map and dtype of ``func`` when it is a channel blocking between buffers in
    the scatter form of the Adreno legalization, else None."""
    if not isinstance(func, tirx.PrimFunc) or len(func.params) != 2:
        return None
    if any(param.scope() != _GLOBAL for param in func.params):
        return None
    sch = s_tir.Schedule(func)
    blocks = sch.get_child_blocks(sch.get_sblock(name="root", func_name="main"))
    if len(blocks) != 1 or schedule_rule_of(sch, blocks[0]) != LAYOUT_TRANSFORM:
        return None
    block = sch.get(blocks[0])
    iters = [iv.var for iv in block.iter_vars]
    if len(block.reads) != 1 or len(block.writes) != 1:
        return None
    read_at = [region.min for region in block.reads[0].region]
    if len(read_at) != len(iters) or not all(i.same_as(v) for i, v in zip(read_at, iters)):
        return None
    index_map = tirx.IndexMap(iters, [region.min for region in block.writes[0].region], None)
    if not _is_blocking(index_map):
        return None
    return index_map, str(func.params[0].dtype)


def _shape_generic(index_map: tirx.IndexMap, dtype: str) -> tirx.PrimFunc:
    """The generic legalization of ``index_map`` on a tensor of symbolic extents."""
    extents = [tirx.Var(f"n{axis}", "int64") for axis in range(len(index_map.initial_indices))]
    data = relax.Var("data", relax.TensorType(extents, dtype))
    builder = relax.BlockBuilder()
    with builder.function("scratch", [data]):
        call = builder.normalize(relax.op.layout_transform(data, index_map))
        legalized = _LAYOUT_TRANSFORM.get_attr("FLegalize")(builder, call)
        builder.emit_func_output(data)
    return builder.get()[legalized.args[0]]


def _weights(func: relax.Function) -> Set[relax.Var]:
    """The variables of ``func`` computed from its weights alone (and constants)."""
    if func.attrs is None or "num_input" not in func.attrs:
        return set()
    weights = set(func.params[int(func.attrs["num_input"]) :])
    blocks = func.body.blocks if isinstance(func.body, relax.SeqExpr) else []
    for binding in (binding for block in blocks for binding in block.bindings):
        if all(var in weights for var in relax.analysis.free_vars(binding.value)):
            weights.add(binding.var)
    return weights


@relax.expr_functor.mutator
class _CalleeSwapper(relax.PyExprMutator):  # pylint: disable=abstract-method
    """Calls the shared PrimFunc from the ``call_tir`` of each weight blocking."""

    def __init__(self, mod: tvm.IRModule):
        super().__init__(mod)
        self.mod = mod
        self.blockings: Dict[tvm.ir.GlobalVar, Optional[Tuple[tirx.IndexMap, str]]] = {}
        self.shared: List[Tuple[tirx.IndexMap, str, tvm.ir.GlobalVar]] = []
        self.weights: Set[relax.Var] = set()

    def _blocking(self, gvar: tvm.ir.GlobalVar) -> Optional[Tuple[tirx.IndexMap, str]]:
        if gvar not in self.blockings:
            self.blockings[gvar] = _buffer_blocking(self.mod[gvar])
        return self.blockings[gvar]

    def _shared_callee(self, index_map: tirx.IndexMap, dtype: str) -> tvm.ir.GlobalVar:
        for known_map, known_dtype, gvar in self.shared:
            if known_dtype == dtype and tvm_ffi.structural_equal(
                known_map, index_map, map_free_vars=True
            ):
                return gvar
        func = _shape_generic(index_map, dtype)
        gvar = self.builder_.add_func(func, "layout_transform_any_shape")
        self.shared.append((index_map, dtype, gvar))
        return gvar

    def visit_call_(self, call: relax.Call) -> relax.Expr:  # pylint: disable=arguments-renamed
        call = super().visit_call_(call)
        args = call_tir_args(call)
        if args is None or len(args) != 1 or args[0] not in self.weights:
            return call
        blocking = self._blocking(call.args[0])
        if blocking is None:
            return call
        callee = self._shared_callee(*blocking)
        return relax.Call(call.op, [callee, *call.args[1:]], call.attrs, call.ty_args, call.span)


@tvm.transform.module_pass(opt_level=0, name="ShareWeightLayoutTransforms")
class ShareWeightLayoutTransforms:  # pylint: disable=too-few-public-methods
    """Call one shape-generic PrimFunc for the channel blocking of weights between buffers.

    See the module docstring for the rule.  Run after the memory scopes are final in the
    PrimFuncs (``SpecializeTextureCallSites``) and before the schedule rules.

    Returns
    -------
    ret : tvm.transform.Pass
        The pass.
    """

    def transform_module(self, mod: tvm.IRModule, _ctx: tvm.transform.PassContext) -> tvm.IRModule:
        """Rewrite the weight blockings of every Relax function of ``mod``."""
        swapper = _CalleeSwapper(mod)
        for gvar, func in mod.functions_items():
            if isinstance(func, relax.Function):
                swapper.weights = _weights(func)
                if swapper.weights:
                    swapper.builder_.update_func(gvar, swapper.visit_expr(func))
        if not swapper.shared:
            return mod
        # The static PrimFuncs no call uses any more.
        return relax.transform.DeadCodeElimination()(swapper.builder_.get())
