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
"""Rewrite an inference-mode ``nn.batch_norm`` into ``x * scale + shift``.

With given statistics a batch norm is a per-channel affine map: ``scale = gamma /
sqrt(var + eps)`` and ``shift = beta - mean * scale``. ``DecomposeOpsForInference`` (C++
``DecomposeBatchNorm`` in ``src/relax/transform/decompose_ops.cc``) instead emits ``(x -
mean) / sqrt(var + eps) * gamma + beta`` with each statistic expanded to the input's rank:
ten operator calls, and after ``ConvertLayout`` to ``NCHW4c`` a layout transform for each of
the four statistics. Every later pass of the texture pipeline (``LegalizeOps``,
``AnnotateTextureScope``, ...) works on each of those calls; in a MobileNetV3-like network
with 27 batch norms they were 60% of the module's calls, and the texture build took about
1.6 times as long as the generic one, whose legalization keeps each batch norm as one
``topi.nn.batch_norm`` kernel.

Here the map takes two elementwise calls on the input and two per-channel operands, computed
once: as constants when the statistics are constants, else by one small kernel each (a
``call_te``), which ``LiftTransformParams`` moves into the weight transformation when the
statistics are weights. The operands have the input's rank with the channel extent on the
normalized axis, so that ``ConvertLayout`` blocks them as it blocks a bias. Training-mode
calls are left alone (``KeepTrainingBatchNorm`` rewrites them first). Upstream's
``DecomposeBatchNorm`` could emit this form itself, for every target.
"""

from typing import List

import numpy as np

import tvm
from tvm import relax, te
from tvm.ir import Op
from .utils import rewrite_relax_functions


def _operand_shape(ndim: int, axis: int, channels) -> List:
    """The shape of a per-channel operand broadcast over an input of rank ``ndim``."""
    shape = [1] * ndim
    shape[axis] = channels
    return shape


def _scale_at(gamma, var, epsilon: float, use_gamma: bool, channel):
    """TE expression of one channel's scale: ``gamma / sqrt(var + eps)`` (without gamma,
    ``1 / sqrt(var + eps)``)."""
    inv_std = tvm.tirx.const(1.0, var.dtype) / te.sqrt(
        var[channel] + tvm.tirx.const(epsilon, var.dtype)
    )
    return gamma[channel] * inv_std if use_gamma else inv_std


def _scale_compute(gamma, var, epsilon: float, use_gamma: bool, shape: List, axis: int):
    """TE: the scale of every channel, shaped to broadcast along ``axis``."""
    return te.compute(
        shape,
        lambda *index: _scale_at(gamma, var, epsilon, use_gamma, index[axis]),
        name="bn_scale",
    )


def _shift_compute(
    gamma, beta, mean, var, epsilon: float, use_gamma: bool, use_beta: bool, shape: List, axis: int
):
    """TE: ``beta - mean * scale`` (without beta, ``- mean * scale``), shaped like the scale."""

    def shift_at(channel):
        scale = _scale_at(gamma, var, epsilon, use_gamma, channel)
        return beta[channel] - mean[channel] * scale if use_beta else -mean[channel] * scale

    return te.compute(shape, lambda *index: shift_at(index[axis]), name="bn_shift")


def _scale_shift_constants(gamma, beta, mean, var, attrs, ndim: int, axis: int):
    """The same operands computed with numpy, for statistics that are constants."""
    gamma, beta, mean, var = (arg.value.numpy() for arg in (gamma, beta, mean, var))
    inv_std = 1.0 / np.sqrt(var + var.dtype.type(float(attrs.epsilon)))
    scale = gamma * inv_std if attrs.scale else inv_std
    shift = beta - mean * scale if attrs.center else -mean * scale
    shape = _operand_shape(ndim, axis, -1)
    return (
        relax.const(scale.astype(var.dtype).reshape(shape)),
        relax.const(shift.astype(var.dtype).reshape(shape)),
    )


@relax.expr_functor.mutator
class _BatchNormRewriter(relax.PyExprMutator):  # pylint: disable=abstract-method
    batch_norm_op = Op.get("relax.nn.batch_norm")

    def visit_call_(self, call: relax.Call) -> relax.Expr:  # pylint: disable=arguments-renamed
        call = super().visit_call_(call)
        if not call.op.same_as(self.batch_norm_op) or bool(call.attrs.training):
            return call
        data, gamma, beta, mean, var = call.args
        data_ty = data.ty
        if not isinstance(data_ty, relax.TensorType) or data_ty.ndim < 1:
            return call
        if any(
            not isinstance(arg.ty, relax.TensorType) or arg.ty.ndim != 1 for arg in call.args[1:]
        ):
            return call
        axis = int(call.attrs.axis) % data_ty.ndim
        attrs = call.attrs
        if all(isinstance(arg, tvm.ir.GenericConst) for arg in call.args[1:]):
            scale, shift = _scale_shift_constants(*call.args[1:], attrs, data_ty.ndim, axis)
        else:
            epsilon, use_gamma = float(attrs.epsilon), bool(attrs.scale)
            shape = _operand_shape(data_ty.ndim, axis, var.ty.shape[0])
            scale = self.builder_.emit(
                self.builder_.call_te(
                    _scale_compute,
                    gamma,
                    var,
                    epsilon,
                    use_gamma,
                    shape,
                    axis,
                    primfunc_name_hint="batch_norm_scale",
                )
            )
            shift = self.builder_.emit(
                self.builder_.call_te(
                    _shift_compute,
                    gamma,
                    beta,
                    mean,
                    var,
                    epsilon,
                    use_gamma,
                    bool(attrs.center),
                    shape,
                    axis,
                    primfunc_name_hint="batch_norm_shift",
                )
            )
        scaled = self.builder_.emit(relax.op.multiply(data, scale))
        normalized = self.builder_.emit(relax.op.add(scaled, shift))
        # An inference batch norm returns its moving statistics unchanged.
        return relax.Tuple([normalized, mean, var])


@tvm.transform.module_pass(opt_level=0, name="BatchNormToScaleShift")
class BatchNormToScaleShift:  # pylint: disable=too-few-public-methods
    """Rewrite each inference-mode ``nn.batch_norm`` with 1-D statistics into ``x * scale +
    shift``, the operands computed once per call (see the module docstring).

    Run before ``DecomposeOpsForInference``.

    Returns
    -------
    ret : tvm.transform.Pass
        The pass.
    """

    def transform_module(self, mod: tvm.IRModule, _ctx: tvm.transform.PassContext) -> tvm.IRModule:
        """Apply the rewrite to every Relax function of ``mod``."""
        return rewrite_relax_functions(mod, _BatchNormRewriter(mod))
