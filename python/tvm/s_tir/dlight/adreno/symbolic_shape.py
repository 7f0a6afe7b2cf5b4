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
"""Kernels with symbolic shapes on Adreno: the generic GPU schedules.

Tensors with a dynamic shape never live in textures (``BalanceTextureScope`` keeps them in
buffers), so the Adreno rules, written for 4-lane texture pixels, bring them nothing.  They also
break them: those rules fuse the output loops and store whole pixels with ``vstore4``, and with
a symbolic height or width the store address holds a floor division by a symbolic extent, which
TIR lowers to a ``Let`` expression that the C code generator (C++, ``CodeGenC``) prints as a
declaration in the middle of the ``vstore4`` call: the OpenCL kernel does not compile.

:class:`SymbolicShapeFallback` comes first among the Adreno rules and schedules every PrimFunc
with a symbolic buffer shape by the generic GPU rules, which run such modules correctly on the
generic OpenCL target.
"""

from typing import List, Optional

from tvm import tirx
from tvm.target import Target

from .. import gpu
from ..base import ScheduleRule
from .base import AdrenoScheduleRule


def has_symbolic_shape(func: tirx.PrimFunc) -> bool:
    """Whether a parameter buffer of ``func`` has a dimension that is not a constant."""
    for param in func.params:
        shape = getattr(param.ty, "shape", None)
        if shape is not None and any(not isinstance(dim, tirx.IntImm) for dim in shape):
            return True
    return False


class SymbolicShapeFallback(AdrenoScheduleRule):
    """Schedule PrimFuncs with symbolic buffer shapes by the generic GPU rules (reduction,
    general reduction, then one thread per output element); leave the others to the Adreno
    rules.  See the module docstring."""

    def __init__(self, rules: Optional[List[ScheduleRule]] = None):
        super().__init__()
        self.rules = rules or [gpu.Reduction(), gpu.GeneralReduction(), gpu.Fallback()]

    def apply(self, func: tirx.PrimFunc, target: Target, tunable: bool):
        """The first generic schedule of ``func`` when its shapes are symbolic, else None."""
        if not isinstance(func, tirx.PrimFunc) or not self.is_target_available(target):
            return None
        if not has_symbolic_shape(func):
            return None
        for rule in self.rules:
            sch = rule.apply(func, target, tunable)
            if sch is not None:
                return sch
        return None
