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
# pylint: disable=invalid-name,missing-docstring,no-self-argument,not-callable
"""Tests of FoldConstantOnHost: the re-layout, casts and IEEE arithmetic of bound weights are
computed with numpy before FoldConstant.

A call of one of those ops whose tensor inputs are all constants becomes a constant equal to
the transform of the original values, and FoldConstant of the result is structurally equal to
FoldConstant of the input (the LLVM-built value, bit for bit).  Calls with non-constant inputs,
other ops and padded layout transforms are left for FoldConstant.
"""

import numpy as np
import pytest

import tvm
import tvm.testing
from tvm import relax
from tvm.relax.backend.adreno.transform.fold_constant_on_host import FoldConstantOnHost
from tvm.script import ir as I
from tvm.script import relax as R

ADRENO = tvm.target.Target("qcom/adreno-opencl-texture")


def _random(shape, dtype="float32", low=None):
    """Fresh standard-normal values of ``shape``; with ``low``, their magnitudes plus ``low``."""
    values = np.random.default_rng().standard_normal(shape)
    if low is not None:
        values = np.abs(values) + low
    return values.astype(dtype)


def _bind(mod, **params):
    """``mod`` with the parameters of ``main`` named in ``params`` bound to those arrays."""
    return relax.transform.BindParams("main", params)(mod)


def _constant_function(build, *arrays):
    """A module whose ``main`` takes no parameters and returns ``build`` of ``arrays`` as
    constants, in a dataflow block.

    Parameters
    ----------
    build : Callable[..., relax.Expr]
        Makes the call of the op under test from the constants.
    *arrays : np.ndarray
        The constant inputs.

    Returns
    -------
    mod : tvm.IRModule
        The module.
    """
    builder = relax.BlockBuilder()
    with builder.function("main", []):
        with builder.dataflow():
            out = builder.emit_output(build(*[relax.const(a) for a in arrays]))
        builder.emit_func_output(out)
    return builder.get()


def _has_calls(mod):
    """Whether a Relax function of ``mod`` still calls an operator."""
    found = []

    def visit(expr):
        if isinstance(expr, relax.Call):
            found.append(expr)

    for _, func in mod.functions_items():
        if isinstance(func, relax.Function):
            relax.analysis.post_order_visit(func, visit)
    return bool(found)


def _nchw_to_nchw4c(n, c, h, w):
    return (n, c // 4, h, w, c % 4)


def test_permute_and_layout_transform_of_a_bound_weight_are_folded():
    """An OHWI weight to OIHW to OIHW4o, as ConvertLayout leaves it in front of a texture
    conv: both calls become constants, the conv of the non-constant data stays."""

    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((1, 1, 5, 5, 4), "float32"), w: R.Tensor((8, 3, 3, 4), "float32")):
            with R.dataflow():
                oihw = R.permute_dims(w, [0, 3, 1, 2])
                packed = R.layout_transform(
                    oihw, index_map=lambda o, i, h, kw: (o // 4, i, h, kw, o % 4)
                )
                y = R.nn.conv2d(
                    x, packed, data_layout="NCHW4c", kernel_layout="OIHW4o", out_layout="NCHW4c"
                )
                R.output(y)
            return y

    @I.ir_module
    class Expected:
        @R.function
        def main(
            x: R.Tensor((1, 1, 5, 5, 4), "float32"),
            w_oihw: R.Tensor((8, 4, 3, 3), "float32"),
            w_packed: R.Tensor((2, 4, 3, 3, 4), "float32"),
        ):
            with R.dataflow():
                # the folded permute_dims stays bound (dead code is DeadCodeElimination's)
                oihw: R.Tensor((8, 4, 3, 3), "float32") = w_oihw  # pylint: disable=unused-variable
                packed: R.Tensor((2, 4, 3, 3, 4), "float32") = w_packed
                y = R.nn.conv2d(
                    x, packed, data_layout="NCHW4c", kernel_layout="OIHW4o", out_layout="NCHW4c"
                )
                R.output(y)
            return y

    weight = _random((8, 3, 3, 4))
    oihw = weight.transpose(0, 3, 1, 2)
    # OIHW4o: output channel o = 4 * block + lane, the lane innermost
    packed = oihw.reshape(2, 4, 4, 3, 3).transpose(0, 2, 3, 4, 1)
    after = FoldConstantOnHost()(_bind(Before, w=weight))
    tvm.ir.assert_structural_equal(after, _bind(Expected, w_oihw=oihw, w_packed=packed))


def _integers(low, high, shape):
    """Fresh int32 values in ``[low, high)``."""
    return np.random.default_rng().integers(low, high, shape, dtype="int32")


# case -> (the call of the op on constants, the inputs: drawn when the test runs)
FOLDED_CALLS = {
    "astype_to_float16": (
        lambda a: relax.op.astype(a, "float16"),
        lambda: [_random((4, 8)) * 100],
    ),
    "astype_to_int32": (lambda a: relax.op.astype(a, "int32"), lambda: [_random((4, 8)) * 100]),
    "astype_to_float32": (
        lambda a: relax.op.astype(a, "float32"),
        lambda: [_random((4, 8), "float16")],
    ),
    "permute_dims": (lambda a: relax.op.permute_dims(a, [2, 0, 1]), lambda: [_random((2, 3, 4))]),
    "permute_dims_reverse": (relax.op.permute_dims, lambda: [_random((2, 3, 4))]),
    "reshape": (lambda a: relax.op.reshape(a, (8, 4)), lambda: [_random((4, 8))]),
    "broadcast_to": (lambda a: relax.op.broadcast_to(a, (3, 4, 8)), lambda: [_random((4, 1))]),
    "expand_dims": (lambda a: relax.op.expand_dims(a, [0, 2]), lambda: [_random((4, 8))]),
    "squeeze": (lambda a: relax.op.squeeze(a, [1]), lambda: [_random((4, 1, 8))]),
    "layout_transform_nchw_to_nchw4c": (
        lambda a: relax.op.layout_transform(a, index_map=_nchw_to_nchw4c),
        lambda: [_random((1, 8, 3, 3))],
    ),
    "layout_transform_nhwc_to_nchw4c": (
        lambda a: relax.op.layout_transform(
            a, index_map=lambda n, h, w, c: (n, c // 4, h, w, c % 4)
        ),
        lambda: [_random((1, 3, 3, 8))],
    ),
    "layout_transform_nchw4c_to_nchw": (
        lambda a: relax.op.layout_transform(
            a, index_map=lambda n, c, h, w, lane: (n, c * 4 + lane, h, w)
        ),
        lambda: [_random((1, 2, 3, 3, 4))],
    ),
    "add_broadcast": (relax.op.add, lambda: [_random((4, 8)), _random((8,))]),
    "subtract_scalar": (relax.op.subtract, lambda: [_random((4, 8)), _random(())]),
    "multiply_float16": (
        relax.op.multiply,
        lambda: [_random((4, 8), "float16"), _random((4, 1), "float16")],
    ),
    "divide": (relax.op.divide, lambda: [_random((4, 8)), _random((1, 8), low=0.1)]),
    "divide_int32": (
        relax.op.divide,
        lambda: [_integers(-100, 100, (4, 8)), _integers(1, 9, (4, 8))],
    ),
    "negative": (relax.op.negative, lambda: [_random((4, 8))]),
    "sqrt": (relax.op.sqrt, lambda: [_random((4, 8), low=0.0)]),
}


@pytest.mark.parametrize("case", FOLDED_CALLS)
def test_folded_value_is_fold_constant_value(case):
    """Folded on the host (no call left), and FoldConstant of that is FoldConstant's module:
    the numpy value equals the LLVM-built one bit for bit."""
    build, make_inputs = FOLDED_CALLS[case]
    mod = _constant_function(build, *make_inputs())
    on_host = FoldConstantOnHost()(mod)
    assert not _has_calls(on_host), on_host
    fold_constant = relax.transform.FoldConstant()
    tvm.ir.assert_structural_equal(fold_constant(on_host), fold_constant(mod))


def test_batch_norm_chain_of_a_float16_weight_is_folded_as_fold_constant_does():
    """The arithmetic DecomposeOpsForInference leaves on a conv weight, on a cast weight."""

    @I.ir_module
    class Before:
        @R.function
        def main(
            w: R.Tensor((8, 4, 3, 3), "float16"),
            gamma: R.Tensor((8, 1, 1, 1), "float32"),
            var: R.Tensor((8, 1, 1, 1), "float32"),
            eps: R.Tensor((), "float32"),
        ):
            with R.dataflow():
                weight = R.astype(w, "float32")
                std = R.sqrt(R.add(var, eps))
                y = R.multiply(weight, R.divide(gamma, std))
                R.output(y)
            return y

    mod = _bind(
        Before,
        w=_random((8, 4, 3, 3), "float16"),
        gamma=_random((8, 1, 1, 1)),
        var=_random((8, 1, 1, 1), low=0.0),
        eps=np.array(1e-5, "float32"),
    )
    on_host = FoldConstantOnHost()(mod)
    assert not _has_calls(on_host)
    fold_constant = relax.transform.FoldConstant()
    tvm.ir.assert_structural_equal(fold_constant(on_host), fold_constant(mod))


def test_calls_with_non_constant_inputs_are_kept():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((1, 8, 3, 3), "float32"), w: R.Tensor((1, 8, 3, 3), "float32")):
            with R.dataflow():
                packed = R.layout_transform(
                    x, index_map=lambda n, c, h, w: (n, c // 4, h, w, c % 4)
                )
                scaled = R.multiply(x, w)
                y = R.add(packed, R.const(1.0, "float32"))
                R.output(scaled, y)
            return (scaled, y)

    mod = _bind(Before, w=_random((1, 8, 3, 3)))
    tvm.ir.assert_structural_equal(FoldConstantOnHost()(mod), mod)


KEPT_CALLS = {
    # not ops of the pass: left to FoldConstant
    "exp": (relax.op.exp, lambda: [_random((4, 8))]),
    "sum": (lambda a: relax.op.sum(a, axis=[1]), lambda: [_random((4, 8))]),
    "conv2d": (relax.op.nn.conv2d, lambda: [_random((1, 4, 5, 5)), _random((4, 4, 3, 3))]),
    # padded layout transforms: 6 channels in 2 blocks of 4
    "layout_transform_pad_value": (
        lambda a: relax.op.layout_transform(a, index_map=_nchw_to_nchw4c, pad_value=0.0),
        lambda: [_random((1, 6, 3, 3))],
    ),
    "layout_transform_implicit_padding": (
        lambda a: relax.op.layout_transform(a, index_map=_nchw_to_nchw4c),
        lambda: [_random((1, 6, 3, 3))],
    ),
}


@pytest.mark.parametrize("case", KEPT_CALLS)
def test_other_calls_are_left_to_fold_constant(case):
    build, make_inputs = KEPT_CALLS[case]
    mod = _constant_function(build, *make_inputs())
    tvm.ir.assert_structural_equal(FoldConstantOnHost()(mod), mod)


def test_binary_op_with_a_prim_value_operand_matches_fold_constant():
    """A binary op of a constant tensor and a PrimValue is left to FoldConstant, which then
    folds it as it would have alone."""
    mod = _constant_function(
        lambda a: relax.op.add(a, relax.prim_value(tvm.tirx.FloatImm("float32", 2.0))),
        _random((4, 8)),
    )
    tvm.ir.assert_structural_equal(FoldConstantOnHost()(mod), mod)
    fold_constant = relax.transform.FoldConstant()
    tvm.ir.assert_structural_equal(fold_constant(FoldConstantOnHost()(mod)), fold_constant(mod))


@I.ir_module
class NhwcConv:
    @R.function
    def main(x: R.Tensor((1, 6, 6, 8), "float32"), w: R.Tensor((8, 3, 3, 8), "float32")):
        with R.dataflow():
            y = R.nn.conv2d(x, w, padding=[1, 1], data_layout="NHWC", kernel_layout="OHWI")
            R.output(y)
        return y


@pytest.mark.requires_opencl
def test_texture_conv_with_a_bound_ohwi_weight_matches_llvm():
    """The texture pipeline re-lays the bound OHWI weight out to OIHW4o (folded on the host):
    the conv on OpenCL agrees with the same module built for LLVM."""
    mod = _bind(NhwcConv, w=_random((8, 3, 3, 8)))
    data = _random((1, 6, 6, 8))
    device = tvm.opencl(0)
    texture = relax.VirtualMachine(tvm.compile(mod, target=ADRENO), device)
    reference = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
    out = texture["main"](tvm.runtime.tensor(data, device)).numpy()
    expected = reference["main"](tvm.runtime.tensor(data)).numpy()
    tvm.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)


if __name__ == "__main__":
    tvm.testing.main()
