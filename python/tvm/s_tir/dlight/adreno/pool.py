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
"""Pool schedule rule for Adreno operators.

Pooling is a reduction of one tensor over a window, so it is scheduled by
:class:`~tvm.s_tir.dlight.adreno.reduction.Reduction`, which recognises it by block analysis
(spatial iterators, then reduction iterators, the 4-lane pixel axis innermost) instead of by
the names TOPI gives its blocks.  The previous rule matched ``pool_max`` and
``adaptive_pool_sum`` by name, missed average pooling, and vectorized the pixel lanes around a
one-element accumulator, so the four lanes of every pixel overwrote each other (the max pool
and global average pool results were wrong).
"""

from .reduction import Reduction


class Pool2D(Reduction):  # pylint: disable=too-few-public-methods
    """Max, average, adaptive and global 2-D pooling; the same schedules as
    :class:`~tvm.s_tir.dlight.adreno.reduction.Reduction`, kept under its historical name."""
