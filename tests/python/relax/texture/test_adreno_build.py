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
"""The plain ``tvm.compile`` entry point builds Adreno texture modules (no device needed)."""

import re

import pytest

import tvm
from tvm import relax
from tvm.script import tirx as T

import texture_testing as tt

TEXTURE_TARGET = tvm.target.Target("qcom/adreno-opencl-texture", host="llvm")


def _conv_relu_module(dtype):
    builder = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((1, 16, 14, 14), dtype))
    w = relax.Var("w", relax.TensorType((32, 16, 3, 3), dtype))
    with builder.function("main", [x, w]):
        with builder.dataflow():
            y = builder.emit(relax.op.nn.conv2d(x, w, padding=[1, 1, 1, 1]))
            z = builder.emit_output(relax.op.nn.relu(y))
        builder.emit_func_output(z)
    return builder.get()


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_plain_compile_emits_image_kernels(dtype):
    source = tt.device_sources(tvm.compile(_conv_relu_module(dtype), target=TEXTURE_TARGET))
    read, write = (
        ("read_imagef", "write_imagef")
        if dtype == "float32"
        else (
            "read_imageh",
            "write_imageh",
        )
    )
    assert "image2d_array_t" in source
    assert read in source or read.upper() in source
    assert write in source
    # Buffer vector loads must never be applied to an image parameter.
    image_params = set(re.findall(r"image2d_array_t (\w+)", source))
    assert image_params
    for name in image_params:
        assert not re.search(rf"vload\d\(0, {name}\b", source), name


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_conv2d_legalization_keeps_dtype(dtype):
    with TEXTURE_TARGET:
        lowered = relax.backend.adreno.get_default_pipeline(TEXTURE_TARGET)(
            _conv_relu_module(dtype)
        )
    assert lowered["main"].ret_ty.dtype == dtype
    conv_funcs = [gv.name_hint for gv in lowered.functions if "conv2d" in gv.name_hint]
    assert conv_funcs, "conv2d was not legalized into a PrimFunc"
    for name in conv_funcs:
        out = lowered[name].params[-1]
        assert out.dtype == dtype, name


def test_named_adreno_tir_pipeline():
    @T.prim_func(s_tir=True)
    def add_one(a: T.Buffer((64,), "float32"), b: T.Buffer((64,), "float32")):
        for i in T.thread_binding(64, thread="threadIdx.x"):
            with T.sblock("b"):
                vi = T.axis.remap("S", [i])
                b[vi] = a[vi] + T.float32(1)

    built = tvm.tirx.build(add_one, target=TEXTURE_TARGET, pipeline="adreno")
    assert "add_one" in built.imports[0].inspect_source()


def test_pipeline_object_is_accepted():
    @T.prim_func(s_tir=True)
    def copy(a: T.Buffer((32,), "float32"), b: T.Buffer((32,), "float32")):
        for i in T.thread_binding(32, thread="threadIdx.x"):
            with T.sblock("b"):
                vi = T.axis.remap("S", [i])
                b[vi] = a[vi]

    lowering, _, _ = tvm.tirx.get_tir_pipeline("s_tir")
    built = tvm.tirx.build(copy, target=tvm.target.Target("opencl", host="llvm"), pipeline=lowering)
    assert "copy" in built.imports[0].inspect_source()


def test_unknown_pipeline_type_is_rejected():
    @T.prim_func(s_tir=True)
    def noop(a: T.Buffer((4,), "float32")):
        T.evaluate(0)

    with pytest.raises(TypeError, match="tir pipeline must be"):
        tvm.tirx.build(noop, target="llvm", pipeline=42)
