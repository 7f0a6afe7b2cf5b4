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
"""Fold the re-layout of bound weights with numpy before ``FoldConstant``.

After ``ConvertLayout`` every bound conv weight goes through a chain of high-level ops
(``astype`` of float16 weights, ``permute_dims`` of NHWC models' OHWI weights, the
``layout_transform`` to OIHW4o, the batch-norm arithmetic of ``DecomposeOpsForInference``,
the ``broadcast_to`` and ``reshape`` of PReLU slopes).
``FoldConstant`` (C++ ``src/relax/transform/fold_constant.cc``) evaluates each such call by
legalizing it to a fresh PrimFunc and building that with LLVM: about three builds per weight,
which made it three quarters of the texture build of MediaPipe BlazeFace (60 of 80 s on two
cores, 198 LLVM builds).  The same data movement and arithmetic is exact in numpy and takes
microseconds.  Calls whose inputs are all constants and whose op is one of those below are
replaced by their value; anything else is left for ``FoldConstant``.
"""

import math
from typing import Callable, Dict, Optional

import numpy as np

import tvm
from tvm import relax
from tvm.ir import Op
from tvm.relax.transform import function_pass
from tvm.relax.utils import get_static_shape

_CONSTANT_TYPE = type(relax.const(0.0))


_INDEX_OPS = {
    "Add": np.add,
    "Sub": np.subtract,
    "Mul": np.multiply,
    "FloorDiv": np.floor_divide,
    "FloorMod": np.mod,
}


def _eval_index(expr, env):
    """An index expression of an IndexMap on numpy index grids (None: not one we know)."""
    if isinstance(expr, tvm.tirx.IntImm):
        return int(expr.value)
    if isinstance(expr, tvm.tirx.Var):
        return env.get(expr.name)
    combine = _INDEX_OPS.get(type(expr).__name__)
    if combine is None:
        return None
    lhs, rhs = _eval_index(expr.a, env), _eval_index(expr.b, env)
    return None if lhs is None or rhs is None else combine(lhs, rhs)


def _layout_transform(call, arrays):
    """Scatter every element to the index the IndexMap gives it; only where the map is a
    bijection onto the output (no padding): a padded transform is left to FoldConstant."""
    if call.attrs.pad_value is not None:
        return None
    src = arrays[0]
    index_map = call.attrs.index_map
    out_shape = get_static_shape(call.ty)
    if math.prod(out_shape) != src.size or len(index_map.initial_indices) != src.ndim:
        return None
    grids = np.indices(src.shape, dtype="int64")
    env = {var.name: grid for var, grid in zip(index_map.initial_indices, grids)}
    targets = [_eval_index(e, env) for e in index_map.final_indices]
    if len(targets) != len(out_shape) or any(t is None for t in targets):
        return None
    dst = np.zeros(out_shape, dtype=src.dtype)
    dst[tuple(np.broadcast_to(t, src.shape) for t in targets)] = src
    hit = np.zeros(out_shape, dtype=bool)
    hit[tuple(np.broadcast_to(t, src.shape) for t in targets)] = True
    return dst if hit.all() else None


def _permute_dims(call, arrays):
    axes = call.attrs.axes
    return np.transpose(arrays[0], None if axes is None else [int(a) for a in axes])


def _binary(ufunc):
    # A PrimValue operand is not among the tensor arrays: such calls are left to FoldConstant.
    return lambda call, arrays: ufunc(arrays[0], arrays[1]) if len(arrays) == 2 else None


# op name -> evaluator(call, input arrays) returning the value, or None to leave the call.
# Only ops whose numpy result is bit-identical to the TOPI kernel on LLVM (data movement,
# IEEE add/subtract/multiply/divide/sqrt, casts).
_EVALUATORS: Dict[str, Callable] = {
    "relax.astype": lambda call, arrays: arrays[0].astype(str(call.attrs.dtype)),
    "relax.permute_dims": _permute_dims,
    "relax.reshape": lambda call, arrays: arrays[0].reshape(get_static_shape(call.ty)),
    "relax.broadcast_to": lambda call, arrays: np.broadcast_to(
        arrays[0], get_static_shape(call.ty)
    ),
    "relax.expand_dims": lambda call, arrays: arrays[0].reshape(get_static_shape(call.ty)),
    "relax.squeeze": lambda call, arrays: arrays[0].reshape(get_static_shape(call.ty)),
    "relax.layout_transform": _layout_transform,
    "relax.add": _binary(np.add),
    "relax.subtract": _binary(np.subtract),
    "relax.multiply": _binary(np.multiply),
    "relax.divide": _binary(np.divide),
    "relax.negative": lambda call, arrays: np.negative(arrays[0]),
    "relax.sqrt": lambda call, arrays: np.sqrt(arrays[0]),
}


@relax.expr_functor.mutator
class _HostFolder(relax.PyExprMutator):  # pylint: disable=abstract-method
    """Replaces calls of ``_EVALUATORS`` ops on constants (directly or through dataflow
    variables bound to constants) by constants."""

    def _constant_value(self, expr) -> Optional[np.ndarray]:
        if isinstance(expr, relax.Var):
            expr = self.lookup_binding(expr)
        if isinstance(expr, _CONSTANT_TYPE):
            return expr.value.numpy()
        return None

    def visit_call_(self, call):  # pylint: disable=arguments-renamed
        call = super().visit_call_(call)
        if not isinstance(call.op, Op) or call.op.name not in _EVALUATORS:
            return call
        out_shape = get_static_shape(call.ty)
        if out_shape is None:
            return call
        tensor_args = [a for a in call.args if isinstance(a.ty, relax.TensorType)]
        arrays = [self._constant_value(a) for a in tensor_args]
        if not arrays or any(a is None for a in arrays):
            return call
        value = _EVALUATORS[call.op.name](call, arrays)
        if value is None:
            return call
        value = np.ascontiguousarray(np.asarray(value, dtype=str(call.ty.dtype)))
        if list(value.shape) != out_shape:
            return call
        return relax.const(value, str(call.ty.dtype))


@function_pass(opt_level=0, name="FoldConstantOnHost")
class FoldConstantOnHost:  # pylint: disable=too-few-public-methods
    """Evaluate re-layouts, casts and elementwise arithmetic of constants with numpy.

    Run before ``FoldConstant``, which then finds nothing of these left to build; see the
    module docstring for the ops.

    Returns
    -------
    ret : tvm.transform.Pass
        The pass.
    """

    def transform_function(
        self, func: relax.Function, mod: tvm.IRModule, _ctx: tvm.transform.PassContext
    ) -> relax.Function:
        """Fold in ``func``, a Relax function of ``mod``."""
        return _HostFolder(mod).visit_expr(func)
