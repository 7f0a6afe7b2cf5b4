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
# pylint: disable=invalid-name
"""Decide which tensors of a Relax function live in textures.

``AnnotateTextureScope`` runs after the partial legalization (``LegalizeOps`` with the
convolutions and poolings skipped) and ``AnnotateTIROpPattern``.  Each call asks for each of its
tensor arguments either a buffer or a texture, by this rule:

* a ``call_tir`` of an elementwise, broadcast or injective PrimFunc (``op_pattern`` below
  ``kCommReduce``) reads textures;
* a ``call_tir`` of a reduction with the structure the Adreno ``Reduction`` rule takes
  (:py:func:`~tvm.s_tir.dlight.adreno.reduction.reduces_one_tensor`) reads textures when
  every call of it passes packed tensors only;
* ``relax.nn.conv2d`` in ``NCHW4c`` / ``OIHW4o``, and a ``call_tir`` of a transposed
  convolution (a block annotated with the ``schedule_rule`` of the transposed ``NCHW4c``
  convolution), read their data from a texture and their weight from a buffer; with the
  PassContext option ``relax.adreno.conv_weights_in_textures`` the ``conv2d`` reads its
  weight from a texture too (the ``OIHW4o`` weight is a packed tensor; its blocking writes
  the texture, once when the weights are lifted or folded);
* ``max_pool2d``, ``avg_pool2d`` and ``adaptive_avg_pool2d`` in ``NCHW4c`` read textures;
* every other call reads buffers.

Only a packed tensor (static, 5-D, a last axis of 4) whose image fits the target is asked for
as a texture, in the scope of :py:func:`choose_texture_scope`.  The result of a call takes the
scope most of its consumers ask for, a buffer on a tie (every kernel reads buffers); a consumer
that asks for the other scope reads a copy (``to_vdevice``).  Function parameters are buffers,
and so are results no call reads.  A constant argument takes the scope its first consumer asks
for, in a new constant node: the module given to the pass is not changed.

The pass writes its decisions as the ``vdevice`` of each call result and a ``hint_on_device``
on each argument, and ``RealizeVDevice`` turns the hints into copies, as upstream's
``AnnotateCustomMemoryScope`` (``src/relax/backend/adreno/annotate_custom_storage.cc``) does.
That pass is not used, for three reasons upstream should fix there:

* ``SupportsTexture`` knows the reducing ops only by Relax attributes (conv2d, pooling, layer
  norm), so a legalized ``sum``, ``mean`` or ``max`` never reads a texture;
* ``CollectProducerScopeInfo`` counts each scope a producer's consumers ask for at most once
  (``emplace`` on an existing key), so the hash order of the scopes decides, not the count;
* ``HintArg`` sets the type of a constant argument in the caller's own constant node.
"""

from typing import Dict, List, Optional, Set

import tvm
from tvm import relax, s_tir, tirx
from tvm.s_tir.dlight.adreno.base import CONV2D_TRANSPOSE, schedule_rule_of
from tvm.s_tir.dlight.adreno.reduction import reduces_one_tensor
from tvm.topi.adreno.utils import CHANNEL_BLOCK

from .balance_texture_scope import TextureLimits, choose_texture_scope
from .utils import ModuleVDevices, call_tir_args

# OpPatternKind (include/tvm/relax/op_attr_types.h).
_COMM_REDUCE = 3
_OUT_ELEMWISE_FUSABLE = 4
_TEXTURE_RANK = 5

_CALL_TIR = tvm.ir.Op.get("relax.call_tir")
_CONV2D = tvm.ir.Op.get("relax.nn.conv2d")
_POOLS = tuple(
    tvm.ir.Op.get(name)
    for name in ("relax.nn.max_pool2d", "relax.nn.avg_pool2d", "relax.nn.adaptive_avg_pool2d")
)
_GLOBAL = "global"
#: The PassContext option putting conv weights in textures (registered in
#: src/relax/backend/adreno/pass_config.cc). The image path gives a weight read the texture
#: cache, where a buffer read goes through the device's ordinary memory path; which is faster
#: depends on the device (Adreno GPUs are built around the former), so the default stays a
#: buffer until measured.
CONV_WEIGHTS_OPTION = "relax.adreno.conv_weights_in_textures"


def _is_packed(ty) -> bool:
    """A static 5-D tensor whose last axis is the 4-lane pixel."""
    if not isinstance(ty, relax.TensorType) or ty.shape is None or ty.ndim != _TEXTURE_RANK:
        return False
    dims = list(ty.shape)
    return all(isinstance(d, tirx.IntImm) for d in dims) and int(dims[-1]) == CHANNEL_BLOCK


def _callee_args(call: relax.Call) -> List[relax.Expr]:
    """The arguments the callee of ``call`` receives: those of the PrimFunc of a ``call_tir``,
    else the call's own."""
    args = call_tir_args(call)
    return list(call.args) if args is None else args


def _tensor_args(call: relax.Call) -> List[relax.Expr]:
    """The arguments of ``call`` that the callee reads as tensors."""
    return [arg for arg in _callee_args(call) if isinstance(arg.ty, relax.TensorType)]


def _texture_reductions(mod: tvm.IRModule, calls: List[relax.Call]) -> Dict[tvm.ir.GlobalVar, bool]:
    """The reduction PrimFuncs that read textures: every call passes only packed tensors and
    the function has the structure of the Adreno ``Reduction`` rule."""
    packed: Dict[tvm.ir.GlobalVar, bool] = {}
    for call in calls:
        if call.op.same_as(_CALL_TIR):
            gvar = call.args[0]
            args = _tensor_args(call)
            packed[gvar] = (
                packed.get(gvar, True) and bool(args) and all(_is_packed(a.ty) for a in args)
            )
    chosen = {}
    for gvar, all_packed in packed.items():
        func = mod[gvar]
        if all_packed and _op_pattern(func) in (_COMM_REDUCE, _OUT_ELEMWISE_FUSABLE):
            chosen[gvar] = reduces_one_tensor(func)
    return chosen


def _op_pattern(func: tirx.PrimFunc) -> Optional[int]:
    if func.attrs is None or "op_pattern" not in func.attrs:
        return None
    return int(func.attrs["op_pattern"])


def _block_schedule_rules(func: tirx.PrimFunc) -> Set[str]:
    """The schedule rules the blocks of ``func`` are annotated with."""
    sch = s_tir.Schedule(func)
    blocks = sch.get_child_blocks(sch.get_sblock(name="root", func_name="main"))
    return {schedule_rule_of(sch, block) for block in blocks} - {None}


class _ScopeRule:
    """Which arguments of a call read textures (see the module docstring)."""

    def __init__(
        self,
        mod: tvm.IRModule,
        limits: TextureLimits,
        calls: List[relax.Call],
        conv_weights_in_textures: bool,
    ):
        self.mod = mod
        self.limits = limits
        self.conv_weights_in_textures = conv_weights_in_textures
        self.reductions = _texture_reductions(mod, calls)
        self.callees: Dict[tvm.ir.GlobalVar, List[bool]] = {}
        self.asked: Dict[relax.Call, List[str]] = {}

    def _reads_textures(self, call: relax.Call) -> List[bool]:
        """Per tensor argument, whether the callee reads it from a texture; the last entry
        repeats for the remaining arguments."""
        if call.op.same_as(_CALL_TIR):
            gvar = call.args[0]
            if gvar not in self.callees:
                self.callees[gvar] = self._prim_func_reads_textures(gvar)
            return self.callees[gvar]
        attrs = call.attrs
        if call.op.same_as(_CONV2D):
            blocked = attrs.data_layout == "NCHW4c" and attrs.kernel_layout == "OIHW4o"
            return [True, self.conv_weights_in_textures] if blocked else [False]
        if any(call.op.same_as(pool) for pool in _POOLS):
            return [attrs.layout == "NCHW4c"]
        return [False]

    def _prim_func_reads_textures(self, gvar: tvm.ir.GlobalVar) -> List[bool]:
        func = self.mod[gvar]
        if not isinstance(func, tirx.PrimFunc):
            return [False]
        pattern = _op_pattern(func)
        if pattern is not None and pattern < _COMM_REDUCE:
            return [True]
        if CONV2D_TRANSPOSE in _block_schedule_rules(func):
            return [True, False]
        return [self.reductions.get(gvar, False)]

    def argument_scopes(self, call: relax.Call) -> List[str]:
        """The scope ``call`` asks for each of its tensor arguments."""
        if call not in self.asked:
            reads = self._reads_textures(call)
            scopes = []
            for index, arg in enumerate(_tensor_args(call)):
                texture = reads[min(index, len(reads) - 1)] and _is_packed(arg.ty)
                scope = choose_texture_scope(arg.ty.shape, self.limits) if texture else _GLOBAL
                scopes.append(scope)
            self.asked[call] = scopes
        return self.asked[call]


@relax.expr_functor.visitor
class _BindingCollector(relax.PyExprVisitor):  # pylint: disable=abstract-method
    """The variable bindings of a function, in order."""

    def __init__(self):
        super().__init__()
        self.bindings: List[relax.VarBinding] = []

    def visit_var_binding_(self, binding: relax.VarBinding):  # pylint: disable=arguments-renamed
        self.bindings.append(binding)
        super().visit_var_binding_(binding)


def _var_bindings(func: relax.Function) -> List[relax.VarBinding]:
    collector = _BindingCollector()
    collector.visit_expr(func)
    return collector.bindings


def _demands(bindings: List[relax.VarBinding], rule: _ScopeRule) -> Dict[relax.Var, List[str]]:
    """The scopes the consumers of each variable ask for, one entry per consumer."""
    demands: Dict[relax.Var, List[str]] = {}
    tuple_fields: Dict[relax.Var, List[relax.Expr]] = {}
    field_of: Dict[relax.Var, relax.Expr] = {}
    for binding in bindings:
        value = binding.value
        if isinstance(value, relax.Tuple):
            tuple_fields[binding.var] = list(value.fields)
        elif isinstance(value, relax.TupleGetItem) and value.tuple_value in tuple_fields:
            # A consumer of a field of a tuple built here asks the field's producer.
            field_of[binding.var] = tuple_fields[value.tuple_value][value.index]
        elif isinstance(value, relax.Call):
            asked: Dict[relax.Var, str] = {}
            for arg, scope in zip(_tensor_args(value), rule.argument_scopes(value)):
                arg = field_of.get(arg, arg)
                if isinstance(arg, relax.Var):
                    asked.setdefault(arg, scope)  # a consumer counts once per tensor
            for var, scope in asked.items():
                demands.setdefault(var, []).append(scope)
    return demands


def _decide(demands: List[str]) -> str:
    """The scope most consumers ask for; a buffer on a tie."""
    textures = [scope for scope in demands if scope != _GLOBAL]
    if not textures or len(textures) * 2 <= len(demands):
        return _GLOBAL
    return textures[0]


def _with_vdevice(ty, vdevice: relax.VDevice):
    """``ty`` (a tensor, or a tuple of tensors) stored on ``vdevice``."""
    if isinstance(ty, relax.TupleType):
        return relax.TupleType([_with_vdevice(field, vdevice) for field in ty.fields])
    if ty.shape is None:
        return relax.TensorType(None, ty.dtype, vdevice, ndim=ty.ndim)
    return relax.TensorType(ty.shape, ty.dtype, vdevice)


def _is_primitive(func: relax.Function) -> bool:
    return func.attrs is not None and bool(func.attrs.get("Primitive", False))


def _is_tensor_or_tuple(ty) -> bool:
    if isinstance(ty, relax.TupleType):
        return all(_is_tensor_or_tuple(field) for field in ty.fields)
    return isinstance(ty, relax.TensorType)


@relax.expr_functor.mutator
class _ScopeWriter(relax.PyExprMutator):  # pylint: disable=abstract-method
    """Writes the decided scopes: the vdevice of each call result, a ``hint_on_device`` on each
    tensor argument, and constants of their own with the scope their first consumer asks
    for."""

    def __init__(self, mod: tvm.IRModule, target: tvm.target.Target, rule: _ScopeRule):
        super().__init__(mod)
        self.target = target
        self.rule = rule
        self.device = tvm.device(target.get_target_device_type(), 0)
        self.vdevices = ModuleVDevices(mod)
        self.result_scope: Dict[relax.Call, str] = {}
        self.constants: Dict[tvm.ir.GenericConst, tvm.ir.GenericConst] = {}
        self.params: Set[relax.Var] = set()

    def vdevice(self, scope: str) -> relax.VDevice:
        """The module's virtual device of ``scope``, made on first use."""
        return self.vdevices.get(self.target, scope)

    def decide(self, func: relax.Function, bindings: List[relax.VarBinding]):
        """Choose the scope of every call result of ``func``, whose bindings are given."""
        self.params = set(func.params)
        demands = _demands(bindings, self.rule)
        for binding in bindings:
            if isinstance(binding.value, relax.Call):
                self.result_scope[binding.value] = _decide(demands.get(binding.var, []))

    def _hint_on(self, arg: relax.Expr, scope: str) -> relax.Expr:
        """``hint_on_device(arg, scope)``, with the module's VDevice of ``scope`` made, where
        ``RealizeVDevice`` looks it up."""
        self.vdevice(scope)
        return relax.op.hint_on_device(arg, self.device, scope)

    def _hint(self, arg: relax.Expr, scope: str) -> relax.Expr:
        if arg in self.params and scope != _GLOBAL:
            # A hint would make the parameter itself a texture; the caller passes buffers.
            return relax.op.to_vdevice(self._hint_on(arg, _GLOBAL), self.vdevice(scope))
        if isinstance(arg, tvm.ir.GenericConst) and arg.ty.vdevice is None:
            if arg not in self.constants:
                self.constants[arg] = tvm.ir.GenericConst(
                    arg.value, _with_vdevice(arg.ty, self.vdevice(scope)), arg.span
                )
                return self.constants[arg]
            arg = self.constants[arg]
        return self._hint_on(arg, scope)

    def visit_call_(self, call: relax.Call) -> relax.Expr:  # pylint: disable=arguments-renamed
        scope = self.result_scope.get(call)
        if scope is None or not _is_tensor_or_tuple(call.ty):
            return super().visit_call_(call)
        # The arguments are rewritten first and the call is built with its result type: the
        # type inference of an op would see arguments in different scopes and refuse them.
        new_call = relax.Call(call.op, [self.visit_expr(arg) for arg in call.args], call.attrs)
        out_ty = _with_vdevice(call.ty, self.vdevice(scope))
        scopes = iter(self.rule.argument_scopes(call))

        def _hinted(arg):
            return self._hint(arg, next(scopes)) if isinstance(arg.ty, relax.TensorType) else arg

        hinted = [_hinted(arg) for arg in _callee_args(new_call)]
        if call.op.same_as(_CALL_TIR):
            new_args = [new_call.args[0], relax.Tuple(hinted), *new_call.args[2:]]
        else:
            new_args = hinted
        return relax.Call(call.op, new_args, call.attrs, [out_ty], call.span)


@tvm.transform.module_pass(opt_level=0, name="AnnotateTextureScope")
class AnnotateTextureScope:  # pylint: disable=too-few-public-methods
    """Place the tensors that texture-reading consumers ask for in textures.

    See the module docstring for the rule.

    Parameters
    ----------
    target : tvm.target.Target
        The texture target; its ``texture_spatial_limit`` and ``texture_depth_limit`` bound the
        images.

    Returns
    -------
    ret : tvm.transform.Pass
        The pass.
    """

    def __init__(self, target: tvm.target.Target):
        self.target = target

    def transform_module(self, mod: tvm.IRModule, ctx: tvm.transform.PassContext) -> tvm.IRModule:
        """Annotate the scope of every tensor of the Relax functions of ``mod``."""
        funcs = {
            gvar: (func, _var_bindings(func))
            for gvar, func in mod.functions_items()
            if isinstance(func, relax.Function) and not _is_primitive(func)
        }
        calls = [
            b.value
            for _, bindings in funcs.values()
            for b in bindings
            if isinstance(b.value, relax.Call)
        ]
        weights_in_textures = bool(ctx.config.get(CONV_WEIGHTS_OPTION, False))
        rule = _ScopeRule(mod, TextureLimits.from_target(self.target), calls, weights_in_textures)
        writer = _ScopeWriter(mod, self.target, rule)
        for gvar, (func, bindings) in funcs.items():
            writer.decide(func, bindings)
            writer.builder_.update_func(gvar, writer.visit_expr(func))
        mod = writer.vdevices.write(writer.builder_.get())
        mod = relax.transform.DeadCodeElimination()(mod)
        mod = relax.transform.RealizeVDevice()(mod)
        return relax.transform.CanonicalizeBindings()(mod)
