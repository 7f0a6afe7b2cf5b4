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
"""A schedule rule for Winograd convolutions on Adreno textures."""

from typing import List, Optional

from tvm import s_tir, tirx
from tvm.target import Target

from .. import analysis
from .base import AdrenoScheduleRule
from .utils import schedule_default, schedule_inline_blocks

#: Channels per texture pixel: the innermost axis of every stage, stored as one texel.
_LANES = 4


def _channel_blocked(sch: s_tir.Schedule, blk) -> bool:
    buf = sch.get(blk).writes[0].source
    last = buf.shape[-1]
    return len(buf.shape) == 5 and isinstance(last, tirx.IntImm) and int(last) == _LANES


def _gathers(sch: s_tir.Schedule, blk) -> bool:
    """Whether the block reads more than one element of some input per output element."""
    for region in sch.get(blk).reads:
        extents = [r.extent for r in region.region]
        if any(not isinstance(e, tirx.IntImm) or int(e) > 1 for e in extents):
            return True
    return False


def _bind_texels(sch: s_tir.Schedule, outer: List, threads: int):
    """Fuse ``outer`` loops into (blockIdx.x, threadIdx.x); returns the thread loop."""
    fused = sch.fuse(*outer, preserve_unit_iters=True)
    bx, tx = sch.split(fused, [None, threads], preserve_unit_iters=True)
    sch.bind(bx, "blockIdx.x")
    sch.bind(tx, "threadIdx.x")
    return tx


class Winograd(AdrenoScheduleRule):
    """Schedule a transformed convolution: input transform, batched product, output transform.

    Takes a PrimFunc whose only reduction block (the batched product) reads a channel-blocked
    5-D tensor computed in the same function by a spatial block (the input transform) and is
    read by a spatial block that combines several of its elements per output (the output
    transform). Inlining either transform would recompute it per output channel, so each
    stage becomes its own kernel:

    * input transform: one thread per (channel texel, tile), the ``alpha x alpha`` tile points
      unrolled so that the transform coefficients fold to constants; zero padding inlined;
    * batched product: one thread per (tile point, output texel, tile), four output lanes in
      registers, the input-channel sum serial;
    * output transform: one thread per output texel, the epilogue (bias, activation, residual
      add) inlined into its store.

    The function's input is read from its texture and the output transform writes the
    output texture. The two intermediates stay in global buffers: allocating a texture
    inside a PrimFunc fails in host lowering (C++ ``LowerTVMBuiltin``,
    ``src/tirx/transform/lower_tvm_builtin.cc``: "Expect no tvm_stack_make_shape outside of
    CallNodes"). Once that is fixed, set ``intermediate_scope`` to ``"global.texture"``.
    64 threads per work-group, as in ``GroupConv2d``.
    """

    threads = 64

    def apply(  # pylint: disable=too-many-locals
        self,
        func: tirx.PrimFunc | s_tir.Schedule,
        target: Target,
        _: bool,
    ) -> s_tir.Schedule | None:
        if not isinstance(func, tirx.PrimFunc | s_tir.Schedule) or not self.is_target_available(
            target
        ):
            return None
        if isinstance(func, tirx.PrimFunc):
            sch = s_tir.Schedule(func)
            sch.work_on("main")
        else:
            sch = func

        root = analysis.get_root_block(sch, sch.func_working_on)
        blocks = sch.get_child_blocks(root)
        reductions = [b for b in blocks if analysis.get_sblock_info(sch, b).is_reduction()]
        if len(reductions) != 1 or not _channel_blocked(sch, reductions[0]):
            return None
        product = reductions[0]
        in_tf = self._transform(sch, sch.get_producers(product))
        out_tf = self._transform(sch, sch.get_consumers(product))
        if in_tf is None or out_tf is None:
            return None

        for producer in sch.get_producers(in_tf):
            if analysis.get_sblock_info(sch, producer).is_injective():
                sch.compute_inline(producer)

        # Input transform: (eps, nu, chunk, tile, lane), threads over (chunk, tile).
        eps, nu, chunk, tile, lane = sch.get_loops(in_tf)
        sch.reorder(chunk, tile, eps, nu, lane)
        _bind_texels(sch, [chunk, tile], self.threads)
        sch.unroll(eps)
        sch.unroll(nu)
        sch.vectorize(lane)
        sch.set_scope(in_tf, 0, self.intermediate_scope)

        # Batched product: (eps, nu, out_chunk, tile, lane, rc).
        eps, nu, occ, tile, lane, rc = sch.get_loops(product)
        sch.reorder(eps, nu, occ, tile, rc, lane)
        tx = _bind_texels(sch, [eps, nu, occ, tile], self.threads)
        acc = sch.cache_write(product, 0, "local")
        sch.reverse_compute_at(acc, tx, preserve_unit_loops=True)
        sch.vectorize(sch.get_loops(acc)[-1])
        init = sch.decompose_reduction(product, rc)
        sch.vectorize(sch.get_loops(init)[-1])
        sch.set_scope(acc, 0, self.intermediate_scope)

        # Output transform, with the epilogue inlined into its store.
        done = {sch.get(b) for b in (in_tf, product, acc, init, out_tf)}
        rest = [b for b in sch.get_child_blocks(root) if sch.get(b) not in done]
        rest = schedule_inline_blocks(sch, rest)
        loops = sch.get_loops(out_tf)
        _bind_texels(sch, loops[:4], self.threads)
        sch.vectorize(loops[4])
        schedule_default(sch, rest)
        return sch

    intermediate_scope = "global"

    @staticmethod
    def _transform(sch: s_tir.Schedule, candidates) -> Optional[s_tir.schedule.SBlockRV]:
        """The single spatial, channel-blocked block among ``candidates`` that gathers a
        window of its input per output element (a padding or an elementwise op reads one)."""
        found = [
            b
            for b in candidates
            if analysis.get_sblock_info(sch, b).is_injective()
            and _channel_blocked(sch, b)
            and _gathers(sch, b)
        ]
        return found[0] if len(found) == 1 else None
