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
"""Tests of SpecializeTextureCallSites: call-site scopes are copied into PrimFuncs only in
modules that have texture tensors, and a PrimFunc called with different scopes gets one copy
per list of scopes."""

import pytest

import tvm
import tvm.testing
from tvm import relax
from tvm.relax.backend.adreno.transform.specialize_texture_call_sites import (
    SpecializeTextureCallSites,
)
from tvm.script import ir as I
from tvm.script import relax as R
from tvm.script import tirx as T


@I.ir_module
class DynamicBuffers:
    """A buffer of extent n // 2 (after a strided op): PrimFunc.specialize rejects it."""

    @T.prim_func(private=True, s_tir=True)
    def downsample(var_x: T.handle, var_y: T.handle):
        n = T.int64()
        x = T.match_buffer(var_x, (n,))
        y = T.match_buffer(var_y, (n // T.int64(2),))
        for i in range(n // T.int64(2)):
            with T.sblock("y"):
                vi = T.axis.spatial(n // T.int64(2), i)
                y[vi] = x[vi * T.int64(2)]

    @R.function
    def main(x: R.Tensor(("n",), "float32")) -> R.Tensor(("n // 2",), "float32"):
        n = T.int64()
        cls = DynamicBuffers
        with R.dataflow():
            y = R.call_tir(cls.downsample, (x,), out_ty=R.Tensor((n // 2,), "float32"))
            R.output(y)
        return y


@I.ir_module
class TextureOutput:
    I.module_global_infos(
        {"vdevice": [I.vdevice("opencl", 0, "global"), I.vdevice("opencl", 0, "global.texture")]}
    )

    @T.prim_func(private=True, s_tir=True)
    def relu(
        x: T.Buffer((T.int64(1), T.int64(2), T.int64(4), T.int64(4), T.int64(4)), "float32"),
        y: T.Buffer((T.int64(1), T.int64(2), T.int64(4), T.int64(4), T.int64(4)), "float32"),
    ):
        for n, c, h, w, l in T.grid(T.int64(1), T.int64(2), T.int64(4), T.int64(4), T.int64(4)):
            with T.sblock("relu"):
                vn, vc, vh, vw, vl = T.axis.remap("SSSSS", [n, c, h, w, l])
                y[vn, vc, vh, vw, vl] = T.max(x[vn, vc, vh, vw, vl], T.float32(0))

    @R.function
    def main(
        x: R.Tensor((1, 2, 4, 4, 4), "float32"),
    ) -> R.Tensor((1, 2, 4, 4, 4), "float32", "opencl:1:global.texture"):
        cls = TextureOutput
        with R.dataflow():
            y = R.call_tir(
                cls.relu,
                (x,),
                out_ty=R.Tensor((1, 2, 4, 4, 4), "float32", "opencl:1:global.texture"),
            )
            R.output(y)
        return y


_SHAPE = (T.int64(1), T.int64(2), T.int64(4), T.int64(4), T.int64(4))


@I.ir_module
class OneReluThreeCallSites:
    """One PrimFunc called buffer -> texture, texture -> buffer, then buffer -> texture."""

    I.module_global_infos(
        {"vdevice": [I.vdevice("opencl", 0, "global"), I.vdevice("opencl", 0, "global.texture")]}
    )

    @T.prim_func(private=True, s_tir=True)
    def relu(x: T.Buffer(_SHAPE, "float32"), y: T.Buffer(_SHAPE, "float32")):
        for n, c, h, w, l in T.grid(*_SHAPE):
            with T.sblock("relu"):
                vn, vc, vh, vw, vl = T.axis.remap("SSSSS", [n, c, h, w, l])
                y[vn, vc, vh, vw, vl] = T.max(x[vn, vc, vh, vw, vl], T.float32(0))

    @R.function
    def main(
        x: R.Tensor((1, 2, 4, 4, 4), "float32"),
    ) -> R.Tensor((1, 2, 4, 4, 4), "float32", "opencl:1:global.texture"):
        cls = OneReluThreeCallSites
        with R.dataflow():
            a = R.call_tir(
                cls.relu,
                (x,),
                out_ty=R.Tensor((1, 2, 4, 4, 4), "float32", "opencl:1:global.texture"),
            )
            b = R.call_tir(
                cls.relu, (a,), out_ty=R.Tensor((1, 2, 4, 4, 4), "float32", "opencl:0:global")
            )
            c = R.call_tir(
                cls.relu,
                (b,),
                out_ty=R.Tensor((1, 2, 4, 4, 4), "float32", "opencl:1:global.texture"),
            )
            R.output(c)
        return c


@I.ir_module
class OneReluPerCallSiteScopes:
    """OneReluThreeCallSites with the copy written by hand: the second call site, whose scopes
    differ from the first's, calls relu_1; the third shares relu with the first."""

    I.module_global_infos(
        {"vdevice": [I.vdevice("opencl", 0, "global"), I.vdevice("opencl", 0, "global.texture")]}
    )

    @T.prim_func(private=True, s_tir=True)
    def relu(x: T.Buffer(_SHAPE, "float32"), y: T.Buffer(_SHAPE, "float32")):
        for n, c, h, w, l in T.grid(*_SHAPE):
            with T.sblock("relu"):
                vn, vc, vh, vw, vl = T.axis.remap("SSSSS", [n, c, h, w, l])
                y[vn, vc, vh, vw, vl] = T.max(x[vn, vc, vh, vw, vl], T.float32(0))

    @T.prim_func(private=True, s_tir=True)
    def relu_1(x: T.Buffer(_SHAPE, "float32"), y: T.Buffer(_SHAPE, "float32")):
        for n, c, h, w, l in T.grid(*_SHAPE):
            with T.sblock("relu"):
                vn, vc, vh, vw, vl = T.axis.remap("SSSSS", [n, c, h, w, l])
                y[vn, vc, vh, vw, vl] = T.max(x[vn, vc, vh, vw, vl], T.float32(0))

    @R.function
    def main(
        x: R.Tensor((1, 2, 4, 4, 4), "float32"),
    ) -> R.Tensor((1, 2, 4, 4, 4), "float32", "opencl:1:global.texture"):
        cls = OneReluPerCallSiteScopes
        with R.dataflow():
            a = R.call_tir(
                cls.relu,
                (x,),
                out_ty=R.Tensor((1, 2, 4, 4, 4), "float32", "opencl:1:global.texture"),
            )
            b = R.call_tir(
                cls.relu_1, (a,), out_ty=R.Tensor((1, 2, 4, 4, 4), "float32", "opencl:0:global")
            )
            c = R.call_tir(
                cls.relu,
                (b,),
                out_ty=R.Tensor((1, 2, 4, 4, 4), "float32", "opencl:1:global.texture"),
            )
            R.output(c)
        return c


def _param_scopes(mod: tvm.IRModule):
    return {
        gvar.name_hint: [param.scope() for param in func.params]
        for gvar, func in mod.functions_items()
        if isinstance(func, tvm.tirx.PrimFunc)
    }


def test_module_without_textures_is_returned_unchanged():
    # The C++ pass alone fails on the dynamic extent, with nothing to specialize.
    with pytest.raises(Exception, match="independent Var"):
        relax.transform.SpecializePrimFuncBasedOnCallSite()(DynamicBuffers)
    tvm.ir.assert_structural_equal(SpecializeTextureCallSites()(DynamicBuffers), DynamicBuffers)


def test_module_with_a_texture_is_specialized():
    out = SpecializeTextureCallSites()(TextureOutput)
    tvm.ir.assert_structural_equal(
        out, relax.transform.SpecializePrimFuncBasedOnCallSite()(TextureOutput)
    )
    prim_func = [f for _, f in out.functions_items() if isinstance(f, tvm.tirx.PrimFunc)][0]
    assert "global.texture" in prim_func.script()


def test_cpp_pass_alone_keeps_the_scopes_of_the_last_call_site():
    # The root cause: one PrimFunc, specialized per call site under its own GlobalVar.
    out = relax.transform.SpecializePrimFuncBasedOnCallSite()(OneReluThreeCallSites)
    assert _param_scopes(out) == {"relu": ["global", "global.texture"]}


def test_each_list_of_call_site_scopes_gets_its_own_prim_func():
    out = SpecializeTextureCallSites()(OneReluThreeCallSites)
    tvm.ir.assert_structural_equal(
        out, relax.transform.SpecializePrimFuncBasedOnCallSite()(OneReluPerCallSiteScopes)
    )
    assert _param_scopes(out) == {
        "relu": ["global", "global.texture"],
        "relu_1": ["global.texture", "global"],
    }


if __name__ == "__main__":
    tvm.testing.main()
