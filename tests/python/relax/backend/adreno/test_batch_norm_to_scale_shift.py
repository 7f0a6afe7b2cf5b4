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
# pylint: disable=invalid-name,missing-docstring,not-callable
"""Tests of BatchNormToScaleShift: an inference batch norm becomes ``x * scale + shift``, with
the operands constants or two small kernels, and computes what the batch norm computes."""

from typing import List

import numpy as np
import pytest

import tvm
import tvm.testing
from tvm import relax
from tvm.relax.backend.adreno.transform.batch_norm_to_scale_shift import BatchNormToScaleShift

EPSILON = 1e-3


def _statistics(rng: np.random.Generator, channels: int) -> List[np.ndarray]:
    """gamma, beta, mean and a positive variance, none of them zero."""
    gamma = rng.uniform(0.5, 1.5, channels) * rng.choice([-1.0, 1.0], channels)
    beta = rng.uniform(0.25, 1.0, channels) * rng.choice([-1.0, 1.0], channels)
    mean = rng.uniform(0.25, 1.0, channels) * rng.choice([-1.0, 1.0], channels)
    var = rng.uniform(0.1, 2.0, channels)
    return [a.astype("float32") for a in (gamma, beta, mean, var)]


def _batch_norm_module(shape, axis: int, stats=None, training=False, center=True, scale=True):
    """``main(x[, gamma, beta, mean, var])`` returning the batch norm's normalized output; the
    statistics are constants when ``stats`` is given, else parameters."""
    channels = shape[axis]
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType(shape, "float32"))
    params = [x]
    if stats is None:
        args = [relax.Var(n, relax.TensorType((channels,), "float32")) for n in "gbmv"]
        params += args
    else:
        args = [relax.const(a) for a in stats]
    with bb.function("main", params):
        with bb.dataflow():
            out = bb.emit(
                relax.op.nn.batch_norm(
                    x,
                    *args,
                    axis=axis,
                    epsilon=EPSILON,
                    center=center,
                    scale=scale,
                    training=training,
                )
            )
            normalized = bb.emit_output(relax.TupleGetItem(out, 0))
        bb.emit_func_output(normalized)
    return bb.get()


def _reference(x, stats, axis: int, center=True, scale=True):
    gamma, beta, mean, var = stats
    shape = [1] * x.ndim
    shape[axis] = -1
    out = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + EPSILON)
    out = out * gamma.reshape(shape) if scale else out
    return out + beta.reshape(shape) if center else out


def _run_llvm(mod, *args):
    executable = tvm.compile(mod, target="llvm")
    vm = relax.VirtualMachine(executable, tvm.cpu())
    return vm["main"](*[tvm.runtime.tensor(a) for a in args]).numpy()


def _ops_called(mod) -> List[str]:
    names = []

    def visit(expr):
        if isinstance(expr, relax.Call) and isinstance(expr.op, tvm.ir.Op):
            name = expr.op.name
            if name == "relax.call_tir":
                name = expr.args[0].name_hint
            names.append(name)

    relax.analysis.post_order_visit(mod["main"].body, visit)
    return names


@pytest.mark.parametrize(
    "shape,axis,center,scale",
    [
        ((1, 8, 6, 5), 1, True, True),
        ((1, 6, 5, 8), 3, True, True),
        ((2, 8, 4, 4), 1, False, True),
        ((2, 8, 4, 4), 1, True, False),
    ],
)
def test_weight_statistics_take_two_kernels(shape, axis, center, scale):
    """Statistics that are parameters: one kernel computes the scale and one the shift, and
    the result is the batch norm's."""
    rng = np.random.default_rng()
    before = _batch_norm_module(shape, axis, center=center, scale=scale)
    after = relax.transform.DeadCodeElimination()(BatchNormToScaleShift()(before))
    assert _ops_called(after) == [
        "batch_norm_scale",
        "batch_norm_shift",
        "relax.multiply",
        "relax.add",
    ], after.script()
    x = rng.uniform(-2.0, 2.0, shape).astype("float32")
    stats = _statistics(rng, shape[axis])
    desired = _reference(x, stats, axis, center=center, scale=scale)
    tvm.testing.assert_allclose(_run_llvm(after, x, *stats), desired, rtol=1e-5, atol=1e-5)
    tvm.testing.assert_allclose(_run_llvm(before, x, *stats), desired, rtol=1e-5, atol=1e-5)


def test_constant_statistics_become_constant_operands():
    """Constant statistics: the scale and the shift are constants, no kernel computes them."""
    rng = np.random.default_rng()
    shape = (1, 12, 5, 7)
    stats = _statistics(rng, shape[1])
    after = relax.transform.DeadCodeElimination()(
        BatchNormToScaleShift()(_batch_norm_module(shape, 1, stats))
    )
    assert _ops_called(after) == ["relax.multiply", "relax.add"], after.script()
    x = rng.uniform(-2.0, 2.0, shape).astype("float32")
    tvm.testing.assert_allclose(_run_llvm(after, x), _reference(x, stats, 1), rtol=1e-5, atol=1e-5)


def test_training_mode_is_left_alone():
    """A training-mode batch norm normalizes with its batch's statistics: not a scale-shift."""
    before = _batch_norm_module((2, 4, 3, 3), 1, training=True)
    tvm.ir.assert_structural_equal(BatchNormToScaleShift()(before), before)


def test_lifted_statistics_leave_main_with_the_affine_map():
    """With the statistics as weights, LiftTransformParams moves the two kernels into the weight
    transformation: inference runs only the multiply and the add."""
    before = _batch_norm_module((1, 8, 4, 4), 1)
    before["main"] = before["main"].with_attr("num_input", 1)
    lifted = relax.transform.LiftTransformParams()(BatchNormToScaleShift()(before))
    lifted = relax.transform.DeadCodeElimination()(lifted)
    assert _ops_called(lifted) == ["relax.multiply", "relax.add"], lifted.script()


if __name__ == "__main__":
    tvm.testing.main()
