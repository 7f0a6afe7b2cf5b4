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
"""Reductions after a texture conv2d: sum, mean, max, min over the channel axis (both packed
axes), the spatial axes and all of them, argmax and argmin over the channels, with and without
keepdims.

Each case must compile, read the conv2d result from its texture (``AnnotateReductionMemoryScope``,
``PackChannelArgReduce``), and match the float32 LLVM build on fresh random inputs.  A reduction
whose result keeps the 4-lane layout and feeds a texture consumer writes a texture, whole pixels
at a time.  The Adreno reduction rule picks one thread per output up to
``ReductionConfig.max_serial_elements`` reduced elements and threads sharing an output above it;
``test_element_count_switch`` checks which schedule each side of the threshold gets.
"""

import re

import numpy as np
import pytest

from tvm import relax
from tvm import te
from tvm.s_tir.dlight.adreno import Reduction, ReductionConfig

import texture_testing as tt

N, C, H, W = 1, 16, 10, 10


def _conv(nb, shape=(N, C, H, W), channels=C):
    return nb.conv2d(nb.input(shape), channels, kernel=3)


def _reduce(op, axis, keepdims):
    def _fn(nb):
        return nb.emit(op(_conv(nb), axis=axis, keepdims=keepdims))

    return _fn


REDUCE_OPS = {
    "sum": relax.op.sum,
    "mean": relax.op.mean,
    "max": relax.op.max,
    "min": relax.op.min,
}
ARG_OPS = {"argmax": relax.op.argmax, "argmin": relax.op.argmin}
CASES = {}
for _name, _op in REDUCE_OPS.items():
    for _axes_name, _axes in [("c", [1]), ("h", [2]), ("hw", [2, 3]), ("chw", [1, 2, 3])]:
        for _keep in (False, True):
            CASES[f"{_name}_{_axes_name}{'_keep' if _keep else ''}"] = _reduce(_op, _axes, _keep)
for _name, _op in ARG_OPS.items():
    for _keep in (False, True):
        CASES[f"{_name}_c{'_keep' if _keep else ''}"] = _reduce(_op, 1, _keep)


def _reduce_abs(op, axis, keepdims):
    def _fn(nb):
        return nb.emit(op(nb.emit(relax.op.abs(_conv(nb))), axis=axis, keepdims=keepdims))

    return _fn


# The same sums and means of |conv|: the scale of their rounding errors.
ABS_CASES = {
    f"{name}_{axes_name}{'_keep' if keep else ''}": _reduce_abs(REDUCE_OPS[name], axes, keep)
    for name in ("sum", "mean")
    for axes_name, axes in [("c", [1]), ("h", [2]), ("hw", [2, 3]), ("chw", [1, 2, 3])]
    for keep in (False, True)
}


def _reduction_call(lowered, case):
    op = case.split("_")[0]
    calls = [c for c in tt.texture_call_scopes(lowered) if c.func.split("_")[0] == op]
    assert len(calls) == 1, tt.describe_scopes(lowered)
    return calls[0]


@pytest.mark.parametrize("case", list(CASES))
def test_compile(case, compile_dtype_mode):
    """The texture build compiles, and the reduction kernel reads the conv2d's texture."""
    lowered, ex = tt.check_compile(tt.Case(CASES[case]), compile_dtype_mode)
    call = _reduction_call(lowered, case)
    assert all(tt.is_texture(s) for s in call.inputs), f"{case}: {call}"
    kernels = [k for name, k in tt.kernel_sources(ex).items() if name.startswith(call.func)]
    assert kernels and all(k.reads_image for k in kernels), f"{case}: {sorted(kernels)}"


@pytest.mark.requires_opencl
@pytest.mark.parametrize("case", list(CASES))
def test_numerics(case, dtype_mode, rng):
    if dtype_mode != "float32" and case.startswith("arg"):
        pytest.skip(
            "float16 argmax/argmin: the float16 conv rounds differently from the float32 "
            "reference, so near-ties pick other channels (test_arg_reduce_float16 checks them)"
        )
    if case.startswith("arg"):
        op, keepdims = case.split("_")[0], case.endswith("_keep")
        _check_arg_reduce(_arg_and_values(ARG_OPS[op], keepdims), op, keepdims, dtype_mode, rng)
        return
    if case.split("_")[0] not in ("sum", "mean"):
        tt.check_numerics(CASES[case], dtype_mode, rng, name=case)
        return
    # A sum cancels: on random data its result can be far smaller than its terms (a mean over
    # C, H, W of values of either sign came out at 3e-4 with terms near 1), while the rounding
    # error grows with the terms (at most n * eps * sum |term| for n terms). The error is
    # measured against the same reduction of |terms| instead of against the result.
    mod = tt.build_network(CASES[case], dtype_mode)
    inputs = tt.random_inputs(mod, rng)
    actual = tt.run_vm(tt.build_texture(mod), tt.tvm_device(), inputs)
    magnitudes = tt.reference(ABS_CASES[case], inputs)
    tt.assert_close(
        actual,
        tt.reference(CASES[case], inputs),
        dtype_mode,
        context=f"{case} on {tt.opencl_device().label}",
        scales=[float(np.max(m)) for m in magnitudes],
    )


def _arg_and_values(op, keepdims=False):
    """The index of ``op`` over the channels of a conv, and the conv values negated beside it
    (computed apart, exactly)."""

    def _fn(nb):
        y = _conv(nb)
        return nb.emit(op(y, axis=1, keepdims=keepdims)), nb.emit(relax.op.negative(y))

    return _fn


def _check_arg_reduce(fn, op, keepdims, dtype_mode, rng):
    """Build ``fn`` (an index and the values it was taken over, negated): its arg reduction
    reads textures.  Run it: the index is the extreme of the values the device computed, and
    in float32 those values match LLVM's.  Checked against LLVM's index instead, two channels
    within rounding of each other may be ordered one way on the device and the other on LLVM.

    Returns
    -------
    index : np.ndarray
        The index the device answered.
    """
    mod = tt.build_network(fn, dtype_mode)
    lowered, ex = tt.build_texture_with_scopes(mod)
    assert all(tt.is_texture(s) for s in _reduction_call(lowered, op).inputs)
    tt.require_device(dtype_mode, done="compile-side checks passed")
    inputs = tt.random_inputs(mod, rng)
    index, negated = tt.run_vm(ex, tt.tvm_device(), inputs)
    values = -negated.astype("float32")
    want = values.argmax(axis=1) if op == "argmax" else values.argmin(axis=1)
    np.testing.assert_array_equal(index, np.expand_dims(want, 1) if keepdims else want)
    if dtype_mode == "float32":
        _, desired = tt.reference(fn, inputs)
        tt.assert_close([negated], [desired], "float32", context=f"{op} conv values")
    return index


@pytest.mark.requires_fp16
@pytest.mark.parametrize("op", list(ARG_OPS))
def test_arg_reduce_float16(op, rng):
    """float16 argmax/argmin from a texture against NumPy on the conv2d values the device
    computed (returned negated beside the index: exact in float16, so ties agree too)."""
    _check_arg_reduce(_arg_and_values(ARG_OPS[op]), op, False, "float16", rng)


def _padded_arg_reduce(op, keepdims):
    """Six output channels, padded to eight on textures, whose padded lanes hold 0.  The conv
    takes x*x and +-(w*w), so every real channel is < 0 for argmax (> 0 for argmin): a padded
    lane would win everywhere if it took part.  The conv values are returned negated beside
    the index (computed apart, exactly), so that the index is checked against the values the
    device computed: two channels within rounding of each other may be ordered one way on the
    device and the other on LLVM."""

    def _fn(nb):
        x = nb.input((N, C, H, W))
        w = nb.param("w", (6, C, 3, 3))
        weight = nb.emit(relax.op.multiply(w, w))
        if op == "argmax":
            weight = nb.emit(relax.op.negative(weight))
        y = nb.emit(relax.op.nn.conv2d(nb.emit(relax.op.multiply(x, x)), weight, padding=1))
        return nb.emit(ARG_OPS[op](y, axis=1, keepdims=keepdims)), nb.emit(relax.op.negative(y))

    return _fn


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("op", list(ARG_OPS))
def test_arg_reduce_padded_channels(op, keepdims, rng):
    """C % 4 != 0: the argmax/argmin reads the padded texture and never answers a padded
    channel (see ``_check_arg_reduce`` for the rest)."""
    index = _check_arg_reduce(_padded_arg_reduce(op, keepdims), op, keepdims, "float32", rng)
    assert index.min() >= 0 and index.max() < 6, np.unique(index)


def _max_h_then_conv(nb):
    y = _conv(nb)
    pooled = nb.emit(relax.op.max(y, axis=[2], keepdims=True))
    return nb.conv2d(pooled, C, kernel=1)


def test_reduction_writes_texture():
    """max over H with keepdims keeps [N, C/4, 1, W, 4]; its consumer is a texture conv2d, so
    the reduction reads a texture and writes one, four channels per store."""
    mod = tt.build_network(_max_h_then_conv, "float32")
    lowered, ex = tt.build_texture_with_scopes(mod)
    call = _reduction_call(lowered, "max")
    assert tt.is_texture(call.inputs[0]) and tt.is_texture(call.outputs[0]), str(call)
    kernel = tt.kernel_sources(ex)[call.func + "_kernel"]
    assert kernel.reads_image and kernel.writes_image, kernel.body
    stores = re.findall(r"write_image[fh]\([^;]*;", kernel.body)
    assert stores and all("float4" in st or "half4" in st for st in stores), stores


@pytest.mark.requires_opencl
def test_reduction_writes_texture_numerics(dtype_mode, rng):
    tt.check_numerics(_max_h_then_conv, dtype_mode, rng, name="max_h_then_conv")


def _sum_hw(hw):
    def _fn(nb):
        y = _conv(nb, (N, C, hw[0], hw[1]))
        return nb.emit(relax.op.sum(y, axis=[2, 3], keepdims=True))

    return _fn


THRESHOLD = ReductionConfig().max_serial_elements
# H x W each side of the threshold: at most it (one thread per output), just above it.
SWITCH_SIZES = {"serial": (4, 4), "split": (4, 8)}


@pytest.mark.parametrize("strategy", list(SWITCH_SIZES))
def test_element_count_switch(strategy):
    """At most the threshold one thread reduces each output; above it the threads of a work
    group share it (local memory and barriers in the kernel)."""
    hw = SWITCH_SIZES[strategy]
    assert (hw[0] * hw[1] <= THRESHOLD) == (strategy == "serial"), (hw, THRESHOLD)
    mod = tt.build_network(_sum_hw(hw), "float32")
    lowered, ex = tt.build_texture_with_scopes(mod)
    call = _reduction_call(lowered, "sum")
    assert tt.is_texture(call.inputs[0]), str(call)
    kernel = tt.kernel_sources(ex)[call.func + "_kernel"]
    assert kernel.reads_image, kernel.body
    shares_output = "__local" in kernel.body and "barrier(" in kernel.body
    assert shares_output == (strategy == "split"), kernel.body


@pytest.mark.requires_opencl
@pytest.mark.parametrize("strategy", list(SWITCH_SIZES))
def test_element_count_switch_numerics(strategy, dtype_mode, rng):
    hw = SWITCH_SIZES[strategy]
    tt.check_numerics(_sum_hw(hw), dtype_mode, rng, name=f"sum_hw{hw}")


def test_rule_ignores_contractions():
    """A matmul has one reduction block reading two tensors: not a reduction of one tensor."""
    a = te.placeholder((8, 16), name="a")
    b = te.placeholder((16, 8), name="b")
    k = te.reduce_axis((0, 16), name="k")
    c = te.compute((8, 8), lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="c")
    func = te.create_prim_func([a, b, c])
    assert Reduction().apply(func, tt.texture_target(), False) is None


def test_rule_takes_channel_sum():
    x = te.placeholder((1, 4, 6, 6, 4), name="x")
    r1 = te.reduce_axis((0, 4), name="r1")
    r2 = te.reduce_axis((0, 4), name="r2")
    y = te.compute((1, 6, 6), lambda n, h, w: te.sum(x[n, r1, h, w, r2], axis=[r1, r2]), name="y")
    func = te.create_prim_func([x, y])
    assert Reduction().apply(func, tt.texture_target(), False) is not None


def test_rule_declines_broadcast_epilogue():
    """Squeeze-and-excitation fuses a mean with a multiply over the whole input: a consumer
    over a larger domain than the reduction.  The rule leaves it to the generic rules instead
    of failing inside reverse_compute_inline."""
    x = te.placeholder((1, 4, 6, 6, 4), name="x")
    rh = te.reduce_axis((0, 6), name="rh")
    rw = te.reduce_axis((0, 6), name="rw")
    s = te.compute((1, 4, 4), lambda n, c, l: te.sum(x[n, c, rh, rw, l], axis=[rh, rw]), name="s")
    y = te.compute(x.shape, lambda n, c, h, w, l: x[n, c, h, w, l] * s[n, c, l], name="y")
    func = te.create_prim_func([x, y])
    assert Reduction().apply(func, tt.texture_target(), False) is None


def _squeeze_excitation(nb):
    y = _conv(nb)
    scale = nb.emit(relax.op.sigmoid(nb.emit(relax.op.mean(y, axis=[2, 3], keepdims=True))))
    return nb.emit(relax.op.multiply(y, scale))


@pytest.mark.requires_opencl
def test_squeeze_excitation_numerics(dtype_mode, rng):
    """The fused mean + broadcast multiply reads the conv2d texture through the generic
    reduction schedule and is right."""
    tt.check_numerics(_squeeze_excitation, dtype_mode, rng, name="squeeze_excitation")
