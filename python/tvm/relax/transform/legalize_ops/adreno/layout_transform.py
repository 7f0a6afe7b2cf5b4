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
"""Legalize ``relax.layout_transform`` for Adreno GPUs.

The generic legalization lowers the op; here its block is annotated
``schedule_rule = adreno.layout_transform`` (``tvm.s_tir.dlight.adreno.base``), which is how
``dl.adreno.LayoutTransform`` finds it. A transform that pads (the result has elements that no
input element maps to) is left unannotated: its block selects between the input and the pad
value, which the vector schedule of ``LayoutTransform`` does not handle, and the Adreno
``Fallback`` rule schedules it.
"""

import tvm
from tvm import relax, s_tir, tirx
from tvm.s_tir.dlight.adreno.base import LAYOUT_TRANSFORM, SCHEDULE_RULE


def _pads(call: relax.Call) -> bool:
    """Whether the transform's output has elements outside the image of its input."""
    _, padding = call.attrs.index_map.non_surjective_inverse(call.args[0].ty.shape)
    return not isinstance(padding, tirx.IntImm)


def layout_transform(bb: relax.BlockBuilder, call: relax.Call) -> relax.Expr:
    """Legalize a ``relax.layout_transform`` call; see the module docstring.

    The generic legalization builds its PrimFunc in a scratch builder, so that the annotated
    PrimFunc is the one added to the module (identical transforms share it).

    Parameters
    ----------
    bb : relax.BlockBuilder
        The block builder of the legalization.
    call : relax.Call
        The ``relax.layout_transform`` call.

    Returns
    -------
    expr : relax.Expr
        The ``call_tir`` computing it.
    """
    scratch = relax.BlockBuilder()
    legalized = tvm.ir.Op.get("relax.layout_transform").get_attr("FLegalize")(scratch, call)
    gvar = legalized.args[0]
    func = scratch.get()[gvar]
    if not _pads(call):
        sch = s_tir.Schedule(func)
        (block,) = sch.get_child_blocks(sch.get_sblock("root"))
        sch.annotate(block, SCHEDULE_RULE, LAYOUT_TRANSFORM)
        func = sch.mod["main"]
    args = [bb.add_func(func, gvar.name_hint), *legalized.args[1:]]
    return relax.Call(legalized.op, args, legalized.attrs, legalized.ty_args)
