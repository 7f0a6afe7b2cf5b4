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
"""Tests of AnnotateReductionMemoryScope: a reduction over packed tensors lets its producer
write a texture, which AnnotateCustomMemoryScope alone refuses."""

import numpy as np

import tvm
import tvm.testing
from tvm import relax
from tvm.relax.backend.adreno import legalize_passes
from tvm.relax.backend.adreno.transform import (
    AnnotateCustomMemoryScope,
    AnnotateReductionMemoryScope,
)
from tvm.script import ir as I
from tvm.script import relax as R

TARGET = tvm.target.Target("qcom/adreno-opencl-texture")


@I.ir_module
class ConvThenMean:
    @R.function
    def main(
        x: R.Tensor((1, 8, 8, 8), "float32"), w: R.Tensor((8, 8, 1, 1), "float32")
    ) -> R.Tensor((1, 8, 1, 1), "float32"):
        with R.dataflow():
            conv = R.nn.conv2d(x, w)
            y = R.mean(conv, axis=[2, 3], keepdims=True)
            R.output(y)
        return y


@I.ir_module
class ConvMeanBias:
    @R.function
    def main(
        x: R.Tensor((1, 8, 8, 8), "float32"),
        w: R.Tensor((8, 8, 1, 1), "float32"),
        b: R.Tensor((1, 8, 1, 1), "float32"),
    ) -> R.Tensor((1, 8, 1, 1), "float32"):
        with R.dataflow():
            conv = R.nn.conv2d(x, w)
            y = R.add(R.mean(conv, axis=[2, 3], keepdims=True), b)
            R.output(y)
        return y


def _before_annotation(mod):
    """``mod`` through the Adreno legalization up to the memory scope annotation."""
    with TARGET:
        passes = legalize_passes(TARGET)
        names = [p.info.name for p in passes]
        return tvm.transform.Sequential(passes[: names.index("AnnotateReductionMemoryScope")])(mod)


def _conv_scope(mod):
    scopes = []

    def _visit(expr):
        if isinstance(expr, relax.Call) and expr.op.same_as(tvm.ir.Op.get("relax.nn.conv2d")):
            scopes.append(str(expr.ty.vdevice.memory_scope))

    relax.analysis.post_order_visit(mod["main"], _visit)
    return scopes


def test_conv_feeding_a_reduction_writes_a_texture():
    mod = _before_annotation(ConvThenMean)
    with TARGET:
        ours = AnnotateReductionMemoryScope(TARGET)(mod)
        theirs = AnnotateCustomMemoryScope(TARGET)(mod)
    assert _conv_scope(theirs) == ["global"]
    (scope,) = _conv_scope(ours)
    assert scope.startswith("global.texture")


def _constants(mod):
    found = []

    def _visit(expr):
        if isinstance(expr, tvm.ir.GenericConst):
            found.append(expr)

    relax.analysis.post_order_visit(mod["main"], _visit)
    return found


def test_constants_of_the_input_are_left_as_they_were():
    """The C++ pass gives a constant argument its vdevice in the constant's own node; the
    module given to the pass keeps its constants untouched."""
    bias = np.random.uniform(-1, 1, (1, 8, 1, 1)).astype("float32")
    mod = _before_annotation(relax.transform.BindParams("main", {"b": bias})(ConvMeanBias))
    snapshot = tvm.ir.load_json(tvm.ir.save_json(mod))
    with TARGET:
        annotated = AnnotateReductionMemoryScope(TARGET)(mod)
    tvm.ir.assert_structural_equal(mod, snapshot)
    (given,) = _constants(mod)
    assert given.ty.vdevice is None
    (planned,) = _constants(annotated)
    assert planned.ty.vdevice is not None
    # The bias in NCHW4c, as the layout pass folded it; the tensor is shared, not copied.
    packed = bias.reshape(1, 2, 4, 1, 1).transpose(0, 1, 3, 4, 2)
    np.testing.assert_array_equal(planned.value.numpy(), packed)
    assert planned.value.same_as(given.value)


def test_reduction_keeps_its_op_pattern():
    """The reduction is shown to the C++ pass as injective; the pattern is restored after."""
    mod = _before_annotation(ConvThenMean)
    with TARGET:
        ours = AnnotateReductionMemoryScope(TARGET)(mod)
    patterns = {
        gvar.name_hint: int(func.attrs["op_pattern"])
        for gvar, func in ours.functions_items()
        if isinstance(func, tvm.tirx.PrimFunc)
    }
    before = {
        gvar.name_hint: int(func.attrs["op_pattern"])
        for gvar, func in mod.functions_items()
        if isinstance(func, tvm.tirx.PrimFunc)
    }
    assert patterns == before
    assert patterns["mean"] == 4  # kCommReduce


if __name__ == "__main__":
    tvm.testing.main()
