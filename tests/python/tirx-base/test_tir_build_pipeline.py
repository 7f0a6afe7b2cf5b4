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
"""Tests of tvm.tirx.build's pipeline argument: the target's pipeline by default, a registered
one by name, a Pass in place of the lowering, anything else refused."""

import numpy as np
import pytest

import tvm
import tvm.testing
from tvm.script import tirx as T
from tvm.tirx import compilation_pipeline


@T.prim_func(s_tir=True)
def add_one(x: T.Buffer((8,), "float32"), y: T.Buffer((8,), "float32")):
    T.func_attr({"global_symbol": "add_one"})
    for i in range(8):
        with T.sblock("add_one"):
            vi = T.axis.spatial(8, i)
            y[vi] = x[vi] + T.float32(1)


def _stand_in(name):
    """A pipeline that fails at once, saying its name: which one build picked."""

    def _pipeline():
        @tvm.transform.module_pass(opt_level=0)
        def _fail(_mod, _ctx):
            raise RuntimeError(f"stand-in pipeline {name} chosen")

        return _fail, None, None

    return _pipeline


@pytest.mark.parametrize("pipeline", ["default", None])
def test_default_pipeline_follows_the_target(monkeypatch, pipeline):
    monkeypatch.setitem(compilation_pipeline.PIPELINE_MAP, "adreno", _stand_in("adreno"))
    target = tvm.target.Target("qcom/adreno-opencl-texture", host="llvm")
    with pytest.raises(RuntimeError, match="stand-in pipeline adreno chosen"):
        tvm.tirx.build(add_one, target=target, pipeline=pipeline)


def test_pipeline_by_name(monkeypatch):
    monkeypatch.setitem(compilation_pipeline.PIPELINE_MAP, "mine", _stand_in("mine"))
    with pytest.raises(RuntimeError, match="stand-in pipeline mine chosen"):
        tvm.tirx.build(add_one, target="llvm", pipeline="mine")


def test_pass_replaces_the_lowering_and_keeps_the_finalization():
    lowering, _, _ = tvm.tirx.get_tir_pipeline("s_tir")
    calls = []

    @tvm.transform.module_pass(opt_level=0)
    def custom(mod, _ctx):
        calls.append(len(mod.functions))
        return lowering(mod)

    lib = tvm.tirx.build(add_one, target="llvm", pipeline=custom)
    assert calls == [1]
    x = np.random.default_rng().uniform(-1.0, 1.0, size=8).astype("float32")
    y = tvm.runtime.tensor(np.zeros(8, "float32"))
    lib["add_one"](tvm.runtime.tensor(x), y)
    tvm.testing.assert_allclose(y.numpy(), x + 1.0)


def test_other_pipeline_values_are_refused():
    with pytest.raises(TypeError, match="tir pipeline must be None, a pipeline name or a"):
        tvm.tirx.build(add_one, target="llvm", pipeline=42)


if __name__ == "__main__":
    tvm.testing.main()
