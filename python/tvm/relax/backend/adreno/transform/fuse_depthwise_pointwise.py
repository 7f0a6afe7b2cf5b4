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
"""Opt-in: a depthwise convolution and the 1x1 convolution that reads it, as one kernel.

Mobile networks are chains of depthwise separable blocks: a depthwise ``KxK`` convolution
(with its bias and activation) whose only reader is a ``1x1`` convolution. ``FuseOps`` gives
each convolution a kernel of its own, since a reduction does not fuse into another one, so a
small network launches two kernels per block; on a device where a launch costs about as much
host time as the kernel takes (5 to 10 us per kernel on a desktop GPU through OpenCL), the
launches bound the network.

``FuseDepthwisePointwise`` runs between ``FuseOps`` and ``FuseTIR``. It merges the call of a
depthwise group into the call of the 1x1 group that reads it when

* the depthwise group holds one ``call_tir`` whose PrimFunc has a block annotated
  ``schedule_rule = adreno.depthwise_conv2d_NCHWc``, the rest elementwise;
* the 1x1 group holds one ``call_tir`` whose PrimFunc has a block annotated
  ``schedule_rule = adreno.conv2d_NCHWc`` with a ``1x1`` weight and the same output pixels as
  its input (stride 1), and the depthwise result is that call's data argument and nothing else;
* the depthwise result has no other use.

The merged group is one primitive function, which ``FuseTIR`` turns into one PrimFunc with
both convolutions; :class:`~tvm.s_tir.dlight.adreno.DepthwisePointwiseConv2d` schedules it as
the 1x1 convolution that computes each step of 4 input channels of the depthwise result in
registers where it reads them. That recomputes the depthwise result once per work item along
the output channels, so the pass is a choice between launches and arithmetic, off by default
(the PassContext option ``relax.adreno.fuse_depthwise_pointwise``)::

    with tvm.transform.PassContext(config={"relax.adreno.fuse_depthwise_pointwise": True}):
        ex = tvm.compile(mod, target)
"""

from typing import Dict, List, Optional, Tuple

import tvm
from tvm import relax, s_tir, tirx
from tvm.s_tir.dlight.adreno.base import CONV2D, DEPTHWISE_CONV2D, schedule_rule_of

from .utils import call_tir_args

_CALL_TIR = tvm.ir.Op.get("relax.call_tir")
#: The PassContext option that turns the pass on (registered in
#: src/relax/backend/adreno/pass_config.cc).
FUSE_OPTION = "relax.adreno.fuse_depthwise_pointwise"


def _conv_block(func: tirx.PrimFunc) -> Optional[Tuple[str, s_tir.SBlock]]:
    """The schedule rule and the block of the one annotated convolution of ``func``."""
    sch = s_tir.Schedule(func)
    found = []
    for block in sch.get_child_blocks(sch.get_sblock(name="root", func_name="main")):
        rule = schedule_rule_of(sch, block)
        if rule is not None:
            found.append((rule, sch.get(block)))
    return found[0] if len(found) == 1 else None


class _ConvIndex:
    """The annotated convolution of each PrimFunc of a module, found once per PrimFunc."""

    def __init__(self, mod: tvm.IRModule):
        self.mod = mod
        self._found: Dict[tvm.ir.GlobalVar, Optional[Tuple[str, s_tir.SBlock]]] = {}

    def __getitem__(self, gvar: tvm.ir.GlobalVar) -> Optional[Tuple[str, s_tir.SBlock]]:
        if gvar not in self._found:
            callee = self.mod[gvar]
            self._found[gvar] = _conv_block(callee) if isinstance(callee, tirx.PrimFunc) else None
        return self._found[gvar]


def _is_pointwise(block: s_tir.SBlock) -> bool:
    """A ``1x1`` stride-1 ``NCHW4c`` convolution: an ``OIHW4o`` weight of ``1x1`` taps, and the
    output pixel ``(oh, ow)`` reading the input pixel ``(oh, ow)``."""
    if len(block.writes) != 1:
        return False
    out = block.writes[0].source
    reads = [region.source for region in block.reads if not region.source.same_as(out)]
    if len(reads) != 2 or any(len(buf.shape) != 5 for buf in (*reads, out)):
        return False
    data, weight = reads

    def extents(buf, axes):
        return [int(x) if isinstance(x, tirx.IntImm) else None for x in buf.shape[axes]]

    return extents(weight, slice(2, 4)) == [1, 1] and extents(data, slice(2, 4)) == extents(
        out, slice(2, 4)
    )


class _Group:
    """One call of ``main`` after ``FuseOps``: a primitive function or a bare ``call_tir``."""

    def __init__(self, mod: tvm.IRModule, call: relax.Call):
        self.call = call
        self.func: Optional[relax.Function] = None
        self.inner: List[relax.Call] = []
        if isinstance(call.op, tvm.ir.GlobalVar):
            func = mod[call.op]
            if isinstance(func, relax.Function) and func.attrs and "Primitive" in func.attrs:
                self.func = func
                bindings = [b for block in func.body.blocks for b in block.bindings]
                self.inner = [b.value for b in bindings if call_tir_args(b.value) is not None]
        elif call_tir_args(call) is not None:
            self.inner = [call]

    @property
    def args(self) -> List[relax.Expr]:
        return list(self.call.args) if self.func is not None else call_tir_args(self.call)

    def conv(self, index: _ConvIndex) -> Optional[Tuple[str, s_tir.SBlock, relax.Call]]:
        """The group's one convolution: its rule, block and ``call_tir``."""
        convs = []
        for inner in self.inner:
            found = index[inner.args[0]]
            if found is not None:
                convs.append((*found, inner))
        return convs[0] if len(convs) == 1 else None

    def data_param_index(self, conv: relax.Call) -> Optional[int]:
        """Which argument of the group's call is the data of its convolution ``conv``."""
        data = call_tir_args(conv)[0]
        if self.func is None:
            return 0
        params = list(self.func.params)
        # The data of the convolution and of nothing else in the group (not a residual too).
        if data not in params or _uses(self.func).get(data, 0) != 1:
            return None
        return params.index(data)

    def emit(self, builder: relax.BlockBuilder, inputs: List[relax.Expr]) -> relax.Expr:
        """Emit the group's computation on ``inputs`` (in the order of its call's arguments)."""
        if self.func is None:
            call = self.call
            args = [call.args[0], relax.Tuple(inputs), *call.args[2:]]
            return builder.emit(relax.Call(call.op, args, call.attrs, call.ty_args))
        func = relax.utils.copy_with_new_vars(self.func)
        body = func.bind_params(dict(zip(func.params, inputs))).body
        for block in body.blocks:
            for binding in block.bindings:
                builder.emit_normalized(binding)
        return body.body


def _uses(func: relax.Function) -> Dict[relax.Var, int]:
    """How many times each variable is read in the body of ``func``."""
    counts: Dict[relax.Var, int] = {}

    def _visit(expr):
        if isinstance(expr, relax.Var):
            counts[expr] = counts.get(expr, 0) + 1

    relax.analysis.post_order_visit(func.body, _visit)
    return counts


def _merge(mod: tvm.IRModule, depthwise: _Group, pointwise: _Group, data: int) -> relax.Function:
    """One primitive function computing ``depthwise`` then ``pointwise`` on its result."""
    outer = depthwise.args + [a for i, a in enumerate(pointwise.args) if i != data]
    params = [relax.Var(f"p{i}", arg.ty) for i, arg in enumerate(outer)]
    builder = relax.BlockBuilder(mod)
    with builder.function("fused_dw_pw", params, attrs={"Primitive": True}, private=True):
        with builder.dataflow():
            result = depthwise.emit(builder, params[: len(depthwise.args)])
            rest = iter(params[len(depthwise.args) :])
            inputs = [result if i == data else next(rest) for i in range(len(pointwise.args))]
            out = builder.emit_output(pointwise.emit(builder, inputs))
        builder.emit_func_output(out)
    return builder.get()["fused_dw_pw"]


def _fuse_block(
    index: _ConvIndex, builder: relax.BlockBuilder, block, uses: Dict[relax.Var, int]
) -> Optional[relax.DataflowBlock]:
    """``block`` with each depthwise group merged into the 1x1 group reading it, or None when
    no pair qualifies."""
    mod = index.mod
    bound = {b.var: b for b in block.bindings if isinstance(b.value, relax.Call)}
    merged: Dict[relax.Var, relax.Call] = {}
    dropped = set()
    for binding in block.bindings:
        if not isinstance(binding.value, relax.Call):
            continue
        pointwise = _Group(mod, binding.value)
        conv = pointwise.conv(index)
        if conv is None or conv[0] != CONV2D or not _is_pointwise(conv[1]):
            continue
        data = pointwise.data_param_index(conv[2])
        if data is None:
            continue
        source = pointwise.args[data]
        if source not in bound or uses.get(source, 0) != 1:
            continue
        if sum(arg.same_as(source) for arg in pointwise.args) != 1:
            continue
        depthwise = _Group(mod, bound[source].value)
        dw_conv = depthwise.conv(index)
        if dw_conv is None or dw_conv[0] != DEPTHWISE_CONV2D:
            continue
        gvar = builder.add_func(_merge(mod, depthwise, pointwise, data), "fused_dw_pw")
        args = depthwise.args + [a for i, a in enumerate(pointwise.args) if i != data]
        merged[binding.var] = relax.Call(gvar, args)
        dropped.add(source)
    if not merged:
        return None
    bindings = []
    for binding in block.bindings:
        if binding.var in dropped:
            continue
        if binding.var in merged:
            binding = relax.VarBinding(binding.var, merged[binding.var])
        bindings.append(binding)
    return relax.DataflowBlock(bindings)


@tvm.transform.module_pass(opt_level=0, name="FuseDepthwisePointwise")
class FuseDepthwisePointwise:  # pylint: disable=too-few-public-methods
    """Merge each depthwise convolution group into the 1x1 convolution group that reads it,
    when the PassContext option ``relax.adreno.fuse_depthwise_pointwise`` is true (a no-op
    otherwise).

    See the module docstring for the rule. Run after ``FuseOps`` and before ``FuseTIR``.

    Returns
    -------
    ret : tvm.transform.Pass
        The pass.
    """

    def transform_module(self, mod: tvm.IRModule, ctx: tvm.transform.PassContext) -> tvm.IRModule:
        """Merge the pairs in every Relax function of ``mod`` that is not itself a group."""
        if not bool(ctx.config.get(FUSE_OPTION, False)):
            return mod
        builder = relax.BlockBuilder(mod)
        index = _ConvIndex(mod)
        changed = False
        for gvar, func in mod.functions_items():
            if not isinstance(func, relax.Function) or (func.attrs and "Primitive" in func.attrs):
                continue
            if not isinstance(func.body, relax.SeqExpr):
                continue
            uses = _uses(func)
            blocks = []
            for block in func.body.blocks:
                fused = None
                if isinstance(block, relax.DataflowBlock):
                    fused = _fuse_block(index, builder, block, uses)
                blocks.append(block if fused is None else fused)
            if all(new.same_as(old) for new, old in zip(blocks, func.body.blocks)):
                continue
            changed = True
            body = relax.SeqExpr(blocks, func.body.body)
            builder.update_func(
                gvar, relax.Function(func.params, body, func.ret_ty, func.is_pure, func.attrs)
            )
        if not changed:
            return mod
        return relax.transform.DeadCodeElimination()(builder.get())
