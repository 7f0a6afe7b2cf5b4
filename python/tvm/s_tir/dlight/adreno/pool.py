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
"""Pooling with a window that changes from output to output, on Adreno.

Pooling with one window for all outputs (max and average pooling, adaptive pooling whose
output size divides the input, global pooling) is a plain reduction and is scheduled by
:class:`~tvm.s_tir.dlight.adreno.reduction.Reduction`.

Adaptive pooling whose output size does not divide the input (7x7 to 3x3, 10x10 to 4x4) gives
every output its own window: output ``i`` reduces the input rows
``floor(i * H / OH)`` up to ``ceil((i + 1) * H / OH)``, so the number of rows depends on ``i``.
TOPI writes that as a spatial block over the outputs whose body is the reduction block, with
reduction loops whose extents are expressions of the output index.  Such a function has no
reduction block at the top level, so ``Reduction`` does not take it; without a rule it would
stay unscheduled and, on textures, read single lanes of a pixel, which the texture lowering
cannot express.
"""

from typing import List, Optional

import tvm_ffi

from tvm import s_tir, tirx
from tvm.target import Target

from ..analysis.common_analysis import get_sblockrealize
from .base import AdrenoScheduleRule
from .config import ReductionConfig

# The pixel of a texture holds 4 channels (RGBA); packed layouts end with an axis of 4.
_LANES = 4


def _is_reduction(block: "s_tir.SBlock") -> bool:
    return any(iv.iter_type == tirx.IterVar.CommReduce for iv in block.iter_vars)


def _spatial_extents(block: "s_tir.SBlock") -> List[tirx.Expr]:
    return [iv.dom.extent for iv in block.iter_vars if iv.iter_type == tirx.IterVar.DataPar]


class Pool2D(AdrenoScheduleRule):
    """Pooling whose reduction window depends on the output position (adaptive pooling with
    an output size that does not divide the input), average or max, packed or not.

    Takes a PrimFunc with one *window block*: a block with spatial iterators only (one per
    output element) whose body holds exactly one reduction block, the window reduction.  Blocks
    before it must inline into it (padding, casts); after it at most one block cannot be inlined
    (the division of an average, by a count that again depends on the output) and must cover the
    same outputs.  Fixed windows are left to
    :class:`~tvm.s_tir.dlight.adreno.reduction.Reduction`.

    Schedule: one thread per output pixel, ``ReductionConfig.serial_threads`` threads per work
    group.  Windows stay small (one window is at most ``ceil(H / OH) + 1`` rows, and a large
    window means a large input per output anyway), so each thread reduces its window serially
    in registers.  When the innermost output axis is the 4-lane pixel of a packed tensor, the
    four lanes are computed together: every read of the input is one texture pixel, and the
    result is written once, as one pixel.
    """

    def __init__(self, config: Optional[ReductionConfig] = None):
        super().__init__()
        self.config = config

    def apply(  # pylint: disable=too-many-return-statements
        self, func: tirx.PrimFunc, target: Target, _: bool
    ) -> Optional[s_tir.Schedule]:
        """Schedule ``func`` when it is pooling with per-output windows, else None."""
        if not isinstance(func, tirx.PrimFunc) or not self.is_target_available(target):
            return None
        config = self.config or ReductionConfig.from_target(target)
        sch = s_tir.Schedule(func)
        blocks = sch.get_child_blocks(sch.get_sblock(name="root", func_name="main"))
        windows = [b for b in blocks if self._window_reduction(sch, b) is not None]
        if len(windows) != 1:
            return None
        window = windows[0]
        if len(sch.get(window).writes) != 1:
            return None
        epilogue = self._inline_others(sch, blocks, window)
        if epilogue is False:
            return None
        loops = sch.get_loops(window)
        iter_values = get_sblockrealize(sch, window).iter_values
        if len(loops) != len(iter_values) or not all(
            v.same_as(sch.get(lp).loop_var) for lp, v in zip(loops, iter_values)
        ):
            return None
        self._schedule(sch, window, loops, epilogue, config)
        return sch

    @staticmethod
    def _window_reduction(sch: s_tir.Schedule, block) -> Optional["s_tir.SBlock"]:
        """The reduction block nested in ``block`` when ``block`` is a window block."""
        stmt = sch.get(block)
        if _is_reduction(stmt) or not stmt.iter_vars:
            return None
        children = sch.get_child_blocks(block)
        if len(children) != 1 or not _is_reduction(sch.get(children[0])):
            return None
        return sch.get(children[0])

    @staticmethod
    def _inline_others(sch: s_tir.Schedule, blocks, window):
        """Inline producers into the window and consumers after it.  Returns the one consumer
        that cannot be inlined (the epilogue), None without one, False for another structure."""
        names = [sch.get(b).name_hint for b in blocks]
        index = names.index(sch.get(window).name_hint)
        for producer in reversed(blocks[:index]):
            try:
                sch.compute_inline(producer)
            except s_tir.ScheduleError:
                return False
        epilogue = None
        for consumer in blocks[index + 1 :]:
            try:
                sch.reverse_compute_inline(consumer)
                continue
            except s_tir.ScheduleError:
                pass
            if epilogue is not None:
                return False
            epilogue = consumer
        if epilogue is not None:
            ours, theirs = _spatial_extents(sch.get(window)), _spatial_extents(sch.get(epilogue))
            if _is_reduction(sch.get(epilogue)) or not tvm_ffi.structural_equal(ours, theirs):
                # computed under the window's loops, a larger epilogue would be left unwritten
                return False
        return epilogue

    @staticmethod
    def _pixel_lane(sch: s_tir.Schedule, window, loops) -> bool:
        """The innermost output axis is the 4-lane pixel of the packed tensor written."""
        stmt = sch.get(window)
        lane = stmt.iter_vars[-1]
        extent = lane.dom.extent
        if not isinstance(extent, tirx.IntImm) or int(extent) != _LANES:
            return False
        write = stmt.writes[0]
        last_dim = write.source.shape[-1]
        if not isinstance(last_dim, tirx.IntImm) or int(last_dim) != _LANES:
            return False
        return write.region[-1].min.same_as(lane.var) and len(loops) > 1

    def _schedule(self, sch, window, loops, epilogue, config: ReductionConfig) -> None:
        lane = loops[-1] if self._pixel_lane(sch, window, loops) else None
        if epilogue is not None:
            # the window result is a temporary: keep it in registers for the epilogue
            sch.set_scope(window, 0, "local")
            out = epilogue
        else:
            # accumulate in registers and store once: a texture cannot be read and written
            # by the same kernel.  The store block is made before the loops are fused, so that
            # reverse_compute_at gives it the bound check of the last work group; made after,
            # its region is taken from the window's nested reads and the check is lost.
            out = sch.cache_write(window, 0, "local")
        spatial = loops[:-1] if lane is not None else loops
        fused = sch.fuse(*spatial)
        block_x, thread_x = sch.split(fused, [None, config.serial_threads])
        sch.bind(block_x, "blockIdx.x")
        sch.bind(thread_x, "threadIdx.x")
        sch.reverse_compute_at(out, thread_x, preserve_unit_loops=True)
        if lane is not None:
            sch.vectorize(sch.get_loops(out)[-1])
            sch.vectorize(lane)
