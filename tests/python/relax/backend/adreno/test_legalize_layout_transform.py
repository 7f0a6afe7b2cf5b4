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
"""Tests of the Adreno legalization of ``relax.layout_transform``: the PrimFunc of each
distinct transform (static input shape, dtype, index map, pad value) is built once per module,
and the module is the one that building every call gives."""

import importlib

import tvm
import tvm.testing
from tvm import relax
from tvm.script import ir as I
from tvm.script import relax as R

# The module, not the function of the same name that the package exports.
legalize = importlib.import_module("tvm.relax.transform.legalize_ops.adreno.layout_transform")


def _to_4o(o, i, h, w):
    return (o // 4, i, h, w, o % 4)


@I.ir_module
class _Weights:
    @R.function
    def main(
        a: R.Tensor((8, 3, 3, 3), "float32"),
        b: R.Tensor((8, 3, 3, 3), "float32"),
        c: R.Tensor((4, 8, 1, 1), "float32"),
    ):
        with R.dataflow():
            ta = R.layout_transform(a, index_map=_to_4o)
            tb = R.layout_transform(b, index_map=lambda x, y, z, t: (x // 4, y, z, t, x % 4))
            tc = R.layout_transform(c, index_map=_to_4o)
            td = R.layout_transform(a, index_map=_to_4o, pad_value=1.0)
            R.output(ta, tb, tc, td)
        return (ta, tb, tc, td)


def _legalize(mod):
    return relax.transform.LegalizeOps({"relax.layout_transform": legalize.layout_transform})(mod)


def test_each_distinct_transform_is_built_once_per_module(monkeypatch):
    builds = []

    def _counted(call):
        builds.append(call)
        return original(call)

    original = legalize._build
    monkeypatch.setattr(legalize, "_BUILT", type(legalize._BUILT)())
    monkeypatch.setattr(legalize, "_build", _counted)
    cached = _legalize(_Weights)
    # a and b: one shape, one map (other variable names); c: another shape; a padded: another
    # pad value.
    assert len(builds) == 3
    # Another module builds its own (the kept PrimFuncs carry the first module's names).
    tvm.ir.assert_structural_equal(_legalize(_Weights), cached)
    assert len(builds) == 6

    # Nothing kept: every call is built, as without the cache.
    monkeypatch.setattr(legalize, "_BUILT", type(legalize._BUILT)())
    monkeypatch.setattr(legalize, "_BUILT_KEYS", 0)
    uncached = _legalize(_Weights)
    assert len(builds) == 10
    tvm.ir.assert_structural_equal(cached, uncached)


if __name__ == "__main__":
    tvm.testing.main()
