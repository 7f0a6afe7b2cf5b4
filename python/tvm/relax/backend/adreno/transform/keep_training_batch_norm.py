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
"""Keep the meaning of ``nn.batch_norm(training=True)`` through the inference decomposition.

A training-mode batch norm normalizes with the statistics of its own batch and returns the
updated moving statistics (``topi.nn.batch_norm``, which the default legalization calls, does
that). The Adreno pipeline runs ``DecomposeOpsForInference`` first, whose C++
``DecomposeBatchNorm`` (``src/relax/transform/decompose_ops.cc``) ignores the attribute and
always normalizes with the moving statistics: a training-mode batch norm came out wrong on
every element, on textures and buffers alike. Upstream could make ``DecomposeBatchNorm``
decline training-mode calls, or decompose them as ``DecomposeOpsForTraining`` does.

Here such a call becomes an inference-mode batch norm of the batch's mean and (biased)
variance, over every axis but the channel axis, and the moving statistics are updated with
the call's momentum, as ``topi.nn.batch_norm`` computes them.
"""

import tvm
from tvm import relax
from tvm.relax.transform import function_pass
from tvm.ir import Op


@relax.expr_functor.mutator
class _TrainingBatchNormRewriter(relax.PyExprMutator):  # pylint: disable=abstract-method
    batch_norm_op = Op.get("relax.nn.batch_norm")

    def visit_call_(self, call: relax.Call) -> relax.Expr:  # pylint: disable=arguments-renamed
        call = super().visit_call_(call)
        if not call.op.same_as(self.batch_norm_op) or not bool(call.attrs.training):
            return call
        data, gamma, beta, moving_mean, moving_var = call.args
        data_ty = data.ty
        if not isinstance(data_ty, relax.TensorType) or data_ty.ndim < 1:
            return call
        attrs = call.attrs
        axis = int(attrs.axis) % data_ty.ndim
        others = [i for i in range(data_ty.ndim) if i != axis]
        mean = self.builder_.emit(relax.op.mean(data, others))
        var = self.builder_.emit(relax.op.variance(data, others))
        normalized = self.builder_.emit(
            relax.op.nn.batch_norm(
                data,
                gamma,
                beta,
                mean,
                var,
                axis=axis,
                epsilon=float(attrs.epsilon),
                center=bool(attrs.center),
                scale=bool(attrs.scale),
                momentum=float(attrs.momentum),
                training=False,
            )
        )
        momentum = float(attrs.momentum)

        def _update(moving, batch):
            kept = relax.op.multiply(moving, relax.const(1.0 - momentum, data_ty.dtype))
            return relax.op.add(
                kept, relax.op.multiply(batch, relax.const(momentum, data_ty.dtype))
            )

        return relax.Tuple(
            [
                relax.TupleGetItem(normalized, 0),
                _update(moving_mean, mean),
                _update(moving_var, var),
            ]
        )


@function_pass(opt_level=0, name="KeepTrainingBatchNorm")
class KeepTrainingBatchNorm:  # pylint: disable=too-few-public-methods
    """Rewrite ``nn.batch_norm(training=True)`` into an inference-mode batch norm of the
    batch's statistics, before ``DecomposeOpsForInference``; see the module docstring.

    Returns
    -------
    ret : tvm.transform.Pass
        The pass.
    """

    def transform_function(
        self, func: relax.Function, mod: tvm.IRModule, _ctx: tvm.transform.PassContext
    ) -> relax.Function:
        """Rewrite the training-mode batch norms of ``func``."""
        return _TrainingBatchNormRewriter(mod).visit_expr(func)
