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
"""A schedule rule for depthwise and grouped convolutions on Adreno textures."""

from typing import List, Optional

from tvm import s_tir, tirx
from tvm.ir.expr import TensorLoad
from tvm.target import Target
from tvm.topi.adreno.utils import CHANNEL_BLOCK

from .. import analysis
from .base import (
    CONV2D_TRANSPOSE,
    DEPTHWISE_CONV2D,
    GROUP_CONV2D,
    AdrenoScheduleRule,
    schedule_rule_of,
)
from .config import GroupConv2dConfig
from .utils import largest_divisor, schedule_default, schedule_inline_blocks


def _strip_cast(expr):
    while isinstance(expr, tirx.Cast):
        expr = expr.value
    return expr


def _product_loads(block) -> Optional[List]:
    """The two loads ``a`` and ``b`` when the block's update is ``out = out + a * b``."""
    store = block.body
    if not isinstance(store, tirx.BufferStore) or not isinstance(store.value, tirx.Add):
        return None
    acc, prod = store.value.a, _strip_cast(store.value.b)
    if not isinstance(acc, TensorLoad) or not acc.source.same_as(store.buffer):
        return None
    if not isinstance(prod, tirx.Mul):
        return None
    loads = [_strip_cast(prod.a), _strip_cast(prod.b)]
    if not all(isinstance(load, TensorLoad) for load in loads):
        return None
    return loads


def _reads_whole_texels(block, loads) -> bool:
    """Whether both operands are indexed on their innermost axis by the output lane itself:
    then the four lanes of an output texel read the four lanes of one input texel (a
    depthwise conv with channel multiplier 1), so the lane loop can be one vector read."""
    lane = block.iter_vars[4].var
    return all(load.indices[-1].same_as(lane) for load in loads)


def _is_channel_blocked(buf) -> bool:
    last = buf.shape[-1]
    return len(buf.shape) == 5 and isinstance(last, tirx.IntImm) and int(last) == CHANNEL_BLOCK


class GroupConv2d(AdrenoScheduleRule):
    """Schedule channel-blocked (``NCHW4c``) depthwise and grouped convolutions.

    Takes a PrimFunc with exactly one reduction block annotated ``schedule_rule`` with one of
    :attr:`RULES`: the depthwise and group convolutions (``topi.nn.conv2d_NCHWc_OIHWo`` with
    more than one group) and the transposed convolution (``topi.nn.conv2d_transpose_NCHWc``),
    annotated by the Adreno legalizations. The block must also have the structure the schedule
    relies on: an update ``out = out + a * b`` over 5-D channel-blocked buffers, the five
    output axes (batch, channel chunk, height, width, lane of extent 4) as its first iterators
    and only reduction axes after them. A block without one of those annotations, such as the
    direct convolution of ``Conv2d``, is declined whatever the order of the rules. One thread
    computes an output texel, so unlike ``Conv2d`` there is no input-channel loop to split by
    the texel width and no reduction across threads. The zero padding is inlined into the
    window read, and elementwise consumers (bias, activation, residual add, casts) into the
    store, so the fused function is one kernel that reads and writes images.

    Depthwise with channel multiplier 1 (each output lane reads the same lane of the input,
    MobileNet's case) is a streaming kernel: a work item computes 4 channels x
    ``GroupConv2dConfig.rows`` x ``GroupConv2dConfig.columns`` neighbouring output pixels (the
    largest divisors of the output height and width up to them). With one row, per kernel row
    it reads the input row segment under its columns once into registers and slides the
    window along it (6 pixels for the 12 taps of 4 outputs of a 3x3 at stride 1); with stacked
    rows it does the same down the input column under each kernel column. The weight texel of
    each tap is read once for all the item's outputs. Other channel maps (multipliers above
    1, group convolution) compute one output texel per item, reading lane by lane. Work items
    are fused over the output, the width innermost, and split into work groups of
    ``GroupConv2dConfig.threads``.

    Parameters
    ----------
    config : Optional[GroupConv2dConfig]
        The knobs; None: ``GroupConv2dConfig.from_target`` of the target being compiled for.
    """

    #: The ``schedule_rule`` annotations of the blocks this rule takes.
    RULES = (DEPTHWISE_CONV2D, GROUP_CONV2D, CONV2D_TRANSPOSE)

    def __init__(self, config: Optional[GroupConv2dConfig] = None):
        super().__init__()
        self.config = config

    @classmethod
    def _conv_block(cls, sch: s_tir.Schedule, blocks) -> Optional[s_tir.schedule.SBlockRV]:
        reductions = [b for b in blocks if analysis.get_sblock_info(sch, b).is_reduction()]
        if len(reductions) != 1 or schedule_rule_of(sch, reductions[0]) not in cls.RULES:
            return None
        blk = reductions[0]
        stmt = sch.get(blk)
        loads = _product_loads(stmt)
        if loads is None or not _is_channel_blocked(stmt.body.buffer):
            return None
        if not all(_is_channel_blocked(load.source) for load in loads):
            return None
        kinds = analysis.get_sblock_info(sch, blk).dom_kind()
        if not kinds.startswith("SSSSS") or set(kinds[5:]) != {"R"}:
            return None
        if int(stmt.iter_vars[4].dom.extent) != CHANNEL_BLOCK:
            return None
        return blk

    def apply(  # pylint: disable=too-many-locals
        self,
        func: tirx.PrimFunc | s_tir.Schedule,
        target: Target,
        _: bool,
    ) -> s_tir.Schedule | None:
        """Schedule ``func`` when it holds a channel-blocked grouped convolution, else None."""
        sch = self.schedule_of(func, target)
        if sch is None:
            return None

        blocks = sch.get_child_blocks(analysis.get_root_block(sch, sch.func_working_on))
        conv = self._conv_block(sch, blocks)
        if conv is None:
            return None
        whole_texels = _reads_whole_texels(sch.get(conv), _product_loads(sch.get(conv)))
        config = self.config or GroupConv2dConfig.from_target(target)
        loops = sch.get_loops(conv)
        reduce_loops = loops[5:]
        # The sliding window needs the (kernel row, kernel column) reduction of a depthwise
        # conv; the width must be static to pick a divisor of it, and the height to stack rows.
        height, width = sch.get(loops[2]).extent, sch.get(loops[3]).extent
        streaming = whole_texels and len(reduce_loops) == 2 and isinstance(width, tirx.IntImm)
        columns = largest_divisor(int(width), config.columns) if streaming else 1
        rows = 1
        if streaming and isinstance(height, tirx.IntImm):
            rows = largest_divisor(int(height), config.rows)
        # An item of one output row stages the input row under it per kernel row; an item of
        # stacked rows stages the input column under them per kernel column, so that the
        # items of a warp, neighbours along the row, read neighbouring texels at every tap.
        if rows > 1:
            reduce_loops = reduce_loops[::-1]

        window = sch.cache_read(conv, 0, "local", consumer_blocks=[conv]) if streaming else None
        weights = None
        # Zero padding: inlined, so the window is read straight from the input image.
        for producer in sch.get_producers(conv if window is None else window):
            if analysis.get_sblock_info(sch, producer).is_injective():
                sch.compute_inline(producer)
        n, occ, oh, ow, lane = loops[:5]
        oh_outer, oh_inner = sch.split(oh, [None, rows], preserve_unit_iters=True)
        ow_outer, ow_inner = sch.split(ow, [None, columns], preserve_unit_iters=True)
        sch.reorder(oh_outer, ow_outer, oh_inner, ow_inner)
        items = sch.fuse(n, occ, oh_outer, ow_outer, preserve_unit_iters=True)
        # Fewer items than a work group: a work group of their number. With a single, partial
        # work group C++ ``ReverseComputeAt`` drops the bound of the output write-back (as in
        # ``Conv2d``): the texels of the item's outputs would be stored past the tensor.
        extent = sch.get(items).extent
        threads = config.threads
        if isinstance(extent, tirx.IntImm):
            threads = min(threads, int(extent))
        bx, tx = sch.split(items, [None, threads], preserve_unit_iters=True)
        sch.reorder(bx, tx, *reduce_loops, oh_inner, ow_inner, lane)
        sch.bind(bx, "blockIdx.x")
        sch.bind(tx, "threadIdx.x")

        out = sch.cache_write(conv, 0, "local")
        sch.reverse_compute_at(out, tx, preserve_unit_loops=True)
        sch.vectorize(sch.get_loops(out)[-1])
        if whole_texels:
            sch.vectorize(lane)
        if streaming:
            # The input under the item's outputs, per staging step: one pixel read each.
            sch.compute_at(window, reduce_loops[0], preserve_unit_loops=True)
            sch.vectorize(sch.get_loops(window)[-1])
            # The step's weight texels, each read once for all the item's outputs.
            weights = sch.cache_read(conv, 1, "local", consumer_blocks=[conv])
            sch.compute_at(weights, reduce_loops[0], preserve_unit_loops=True)
            sch.vectorize(sch.get_loops(weights)[-1])
            for loop in (reduce_loops[1], oh_inner, ow_inner):
                sch.unroll(loop)
        init = sch.decompose_reduction(conv, reduce_loops[0])
        sch.vectorize(sch.get_loops(init)[-1])

        # Epilogue (bias, activation, residual add, casts): inlined into the texel store.
        blocks = sch.get_child_blocks(analysis.get_root_block(sch, sch.func_working_on))
        done = {sch.get(b) for b in (conv, out, init)}
        done |= {sch.get(b) for b in (window, weights) if b is not None}
        remaining = schedule_inline_blocks(sch, [b for b in blocks if sch.get(b) not in done])
        schedule_default(sch, remaining)
        return sch
