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
"""A schedule rule for the Winograd convolution stages on Adreno textures."""

from typing import Callable, Dict, List, Optional

from tvm import s_tir, tirx
from tvm.target import Target

from .. import analysis
from .base import (
    WINOGRAD_BATCHED_PRODUCT,
    WINOGRAD_INPUT_TRANSFORM,
    WINOGRAD_OUTPUT_TRANSFORM,
    AdrenoScheduleRule,
    schedule_rule_of,
)
from .config import WinogradConfig
from .utils import schedule_default, schedule_inline_blocks


def _bind_threads(sch: s_tir.Schedule, outer: List, threads: int):
    """Fuse ``outer`` loops into (blockIdx.x, threadIdx.x); returns the thread loop."""
    fused = sch.fuse(*outer, preserve_unit_iters=True)
    bx, tx = sch.split(fused, [None, threads], preserve_unit_iters=True)
    sch.bind(bx, "blockIdx.x")
    sch.bind(tx, "threadIdx.x")
    return tx


def schedule_input_transform(sch: s_tir.Schedule, blk, threads: int) -> None:
    """``V[e, n, c, p, :] = B^T d B``: one thread per (channel texel, tile), the zero padding
    inlined into the window reads, each of the ``alpha x alpha`` tile points written as one
    texel.

    The tile-point loops are not unrolled, for the reason given in
    :py:func:`schedule_output_transform`: when a thread range needs no bounds check, the
    unrolled stores share one scope and all got the first point's value (ResNet-50 layers
    with 256 or more channels on a 2x2 map).
    """
    eps, nu, chunk, tile, lane = sch.get_loops(blk)
    sch.reorder(chunk, tile, eps, nu, lane)
    _bind_threads(sch, [chunk, tile], threads)
    sch.vectorize(lane)


def schedule_batched_product(sch: s_tir.Schedule, blk, threads: int) -> None:
    """``M[e, n, o, p, :] = sum_c U[e, n, c, o, :] V[e, n, c, p]``: one thread per (tile
    point, output texel, tile); per input texel one read of ``V`` (a pixel, into registers),
    four vector reads of ``U``, and the four output lanes accumulated in registers."""
    eps, nu, occ, tile, lane, rco, rci = sch.get_loops(blk)
    sch.reorder(eps, nu, occ, tile, rco, rci, lane)
    tx = _bind_threads(sch, [eps, nu, occ, tile], threads)
    # The update is ``U * V`` (topi.adreno.conv2d_winograd_batched_product): V is read 1.
    pixel = sch.cache_read(blk, 1, "local")
    sch.compute_at(pixel, rco, preserve_unit_loops=True)
    sch.vectorize(sch.get_loops(pixel)[-1])
    sch.unroll(rci)
    sch.vectorize(lane)
    acc = sch.cache_write(blk, 0, "local")
    sch.reverse_compute_at(acc, tx, preserve_unit_loops=True)
    sch.vectorize(sch.get_loops(acc)[-1])
    init = sch.decompose_reduction(blk, rco)
    sch.vectorize(sch.get_loops(init)[-1])


def schedule_output_transform(sch: s_tir.Schedule, blk, threads: int) -> None:
    """``Y = A^T M A``: one thread per output tile and texel of channels, looping over the
    ``tile x tile`` outputs, each written as one texel with the epilogue already inlined
    into the store.

    The output loops are not unrolled. Unrolled, the coefficients would fold to constants,
    but texture stores whose lanes are staged (``VectorizeTextureStore``, used when the
    epilogue reads another texture) are then miscompiled: the C++ ``CodeGenC`` SSA cache
    (``src/target/source/codegen_c.cc``) prints the staging-buffer read once and reuses it
    for every later store of the same scope, so every texel of the tile gets the first
    value.
    """
    alpha = int(sch.get(blk).reads[0].source.shape[0])
    tile = alpha - 2
    n, occ, height, width, lane = sch.get_loops(blk)
    h_out, h_in = sch.split(height, [None, tile], preserve_unit_iters=True)
    w_out, w_in = sch.split(width, [None, tile], preserve_unit_iters=True)
    sch.reorder(n, occ, h_out, w_out, h_in, w_in, lane)
    _bind_threads(sch, [n, occ, h_out, w_out], threads)
    sch.vectorize(lane)


class Winograd(AdrenoScheduleRule):
    """Schedule the stages of a Winograd convolution (``topi.adreno.conv2d_winograd_*``).

    The Adreno legalization emits the input transform, the batched product and the output
    transform as separate calls, so that both intermediates are tensors of their own that
    live in textures (a texture cannot be allocated inside one PrimFunc: C++
    ``LowerTVMBuiltin`` rejects it). Each PrimFunc then holds one stage, recognised by the
    ``schedule_rule`` annotation of its block, plus what FuseOps merged into it (the zero
    padding before the input transform; bias, activation, residual add after the output
    transform, inlined into the store). Every stage reads and writes whole texels, the four
    channels of a pixel vectorized, in work groups of ``WinogradConfig.threads``.

    Parameters
    ----------
    config : Optional[WinogradConfig]
        The knobs; None: ``WinogradConfig.from_target`` of the target being compiled for.
    """

    def __init__(self, config: Optional[WinogradConfig] = None):
        super().__init__()
        self.config = config

    _STAGES: Dict[str, Callable] = {
        WINOGRAD_INPUT_TRANSFORM: schedule_input_transform,
        WINOGRAD_BATCHED_PRODUCT: schedule_batched_product,
        WINOGRAD_OUTPUT_TRANSFORM: schedule_output_transform,
    }

    def apply(
        self,
        func: tirx.PrimFunc | s_tir.Schedule,
        target: Target,
        _: bool,
    ) -> s_tir.Schedule | None:
        """Schedule ``func`` when it holds exactly one Winograd stage, else None."""
        sch = self.schedule_of(func, target)
        if sch is None:
            return None

        root = analysis.get_root_block(sch, sch.func_working_on)
        found = [(b, schedule_rule_of(sch, b)) for b in sch.get_child_blocks(root)]
        found = [(b, stage) for b, stage in found if stage in self._STAGES]
        if len(found) != 1:
            return None
        blk, stage = found[0]
        others = [b for b in sch.get_child_blocks(root) if not sch.get(b).same_as(sch.get(blk))]
        if stage == WINOGRAD_INPUT_TRANSFORM:
            # Zero padding (and any injective producer): inlined into the window reads.
            for producer in sch.get_producers(blk):
                if analysis.get_sblock_info(sch, producer).is_injective():
                    sch.compute_inline(producer)
            others = [b for b in sch.get_child_blocks(root) if not sch.get(b).same_as(sch.get(blk))]
        # Epilogue (bias, activation, residual add, casts): inlined into the stage's store.
        others = schedule_inline_blocks(sch, others)
        config = self.config or WinogradConfig.from_target(target)
        self._STAGES[stage](sch, blk, config.threads)
        schedule_default(sch, others)
        return sch
