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
"""Tests of the Adreno TIR pipeline: registered as a (lowering, host, device) tuple, and the
texture store passes around VectorizeLoop."""

import tvm
import tvm.testing
from tvm import tirx
from tvm.script import tirx as T

TARGET = tvm.target.Target("qcom/adreno-opencl-texture", host="llvm")


@T.prim_func(s_tir=True)
def relu(x: T.Buffer((64,), "float32"), y: T.Buffer((64,), "float32")):
    T.func_attr({"global_symbol": "relu"})
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            with T.sblock("relu"):
                vi = T.axis.spatial(64, bx * 64 + tx)
                y[vi] = T.max(x[vi], T.float32(0))


@tvm.instrument.pass_instrument
class _PassNames:
    def __init__(self):
        self.names = []

    def run_before_pass(self, _mod, info):
        # "s_tir.backend.adreno.TextureFlatten" -> "TextureFlatten"
        self.names.append(info.name.rsplit(".", 1)[-1])


def test_adreno_pipeline_is_a_pipeline_map_entry():
    lowering, finalize_host, finalize_device = tvm.tirx.get_tir_pipeline("adreno")
    assert isinstance(lowering, tvm.transform.Pass)
    assert isinstance(finalize_host(), tvm.transform.Pass)
    assert isinstance(finalize_device(), tvm.transform.Pass)


def test_adreno_target_gets_the_adreno_pipeline_by_default():
    default = tvm.tirx.get_default_tir_pipeline(TARGET)
    assert default[1:] == tvm.tirx.get_tir_pipeline("adreno")[1:]
    recorder = _PassNames()
    mod = tirx.transform.BindTarget(TARGET)(tvm.IRModule({"relu": relu}))
    with tvm.transform.PassContext(instruments=[recorder]):
        default[0](mod)
    assert "TextureFlatten" in recorder.names


def test_texture_stores_are_staged_before_vectorizing_and_verified_after():
    recorder = _PassNames()
    lowering, _, _ = tvm.tirx.get_tir_pipeline("adreno")
    mod = tirx.transform.BindTarget(TARGET)(tvm.IRModule({"relu": relu}))
    with tvm.transform.PassContext(instruments=[recorder]):
        lowering(mod)
    names = recorder.names
    assert (
        names.index("VectorizeTextureStore")
        < names.index("VectorizeLoop")
        < names.index("VerifyTextureStore")
    )
    assert names.index("InjectTextureAlloc") < names.index("FlattenBuffer")


if __name__ == "__main__":
    tvm.testing.main()
