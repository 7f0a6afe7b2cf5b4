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
# pylint: disable=missing-docstring
"""Tests of dlight's SBlockInfo.is_data_pad: the same answer as the full test of every
condition, with the buffer analysis asked only of blocks whose value is conditional."""

import tvm
import tvm.testing
from tvm import relax, s_tir
from tvm.s_tir import dlight as dl

from adreno_schedule_testing import fused_prim_funcs, only


def _hard_swish(x):
    relu6 = relax.op.minimum(
        relax.op.maximum(relax.op.add(x, relax.const(3.0)), relax.const(0.0)), relax.const(6.0)
    )
    return relax.op.divide(relax.op.multiply(x, relu6), relax.const(6.0))


def _every_condition(info, sch):
    """Every condition of a data pad, each evaluated, in the order they were written before."""
    has_if_then_else = tvm.get_global_func("s_tir.schedule.HasIfThenElse")
    writes, reads = info.write_bufs(sch), info.read_bufs(sch)
    return bool(
        all(k == "S" for k in info.dom_kind())
        and len(writes) == 1
        and len(reads) == 1
        and not info.is_elementwise(sch)
        and len(writes[0].buf_region.region) == len(reads[0].buf_region.region)
        and has_if_then_else(sch.get(info.block_rv))
    )


def test_only_the_pad_is_analysed(monkeypatch):
    """A conv with its input pad and a five-block hard-swish epilogue: only the pad is a data
    pad, and only the pad's reads and writes are analysed."""
    func = only(fused_prim_funcs((1, 4, 8, 8, 4), (8, 16, 3, 3, 4), epilogue=_hard_swish))
    sch = s_tir.Schedule(func)
    infos = [
        dl.analysis.get_sblock_info(sch, b) for b in sch.get_child_blocks(sch.get_sblock("root"))
    ]
    expected = {info.name: _every_condition(info, sch) for info in infos}
    assert [name for name, is_pad in expected.items() if is_pad] == ["conv2d_data_pad"]

    analysed = []
    read_bufs = dl.analysis.SBlockInfo.read_bufs

    def counted(info, schedule):
        analysed.append(info.name)
        return read_bufs(info, schedule)

    monkeypatch.setattr(dl.analysis.SBlockInfo, "read_bufs", counted)
    assert {info.name: bool(info.is_data_pad(sch)) for info in infos} == expected
    assert analysed == ["conv2d_data_pad"]


if __name__ == "__main__":
    tvm.testing.main()
