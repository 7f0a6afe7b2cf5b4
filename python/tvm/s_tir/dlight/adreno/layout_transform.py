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

"Schedules for Texture Based Layout Transforms"

from tvm import s_tir, tirx
from tvm.target import Target

from .. import analysis
from .base import AdrenoScheduleRule
from .config import LayoutTransformConfig


def _vector_size(buf) -> int:
    """The vector width along the innermost axis of ``buf`` (see ``BufferInfo.get_vecsize``);
    1 when that axis or its loop has a symbolic extent (a dynamic width), which gives no
    vector but a valid schedule."""
    extents = [buf.shape[-1], buf.assoc_lps_info[-1].extent]
    if not all(isinstance(e, (int, tirx.IntImm)) for e in extents):
        return 1
    return buf.get_vecsize()


class LayoutTransform(AdrenoScheduleRule):
    """Texture based Layout Transform Dlight Schedule for Adreno.

    Parameters
    ----------
    use_op_name : bool
        Take the block named ``te_layout_transform``; False: any block that the analysis
        finds to be a layout transform.
    config : LayoutTransformConfig | None
        The knobs; None takes ``LayoutTransformConfig.from_target`` of the target.
    """

    def __init__(self, use_op_name=True, config: LayoutTransformConfig | None = None):
        super().__init__()
        self.use_op_name = use_op_name
        self.config = config

    # TODO: Try using Coalesced Writes...
    def apply(  # pylint: disable=too-many-locals
        self,
        func: tirx.PrimFunc | s_tir.Schedule,
        target: Target,
        _: bool,
    ) -> None | s_tir.Schedule | list[s_tir.Schedule]:
        """Schedule ``func`` when it is one layout-transform block, else None."""
        # pylint: disable=invalid-name
        if not (isinstance(func, tirx.PrimFunc | s_tir.Schedule)) or not self.is_target_available(
            target
        ):
            return None

        if isinstance(func, tirx.PrimFunc):
            sch = s_tir.Schedule(func)
            sch.work_on("main")
        elif isinstance(func, s_tir.Schedule):
            sch = func

        root_block = analysis.get_root_block(sch, sch.func_working_on)

        if len(sch.get_child_blocks(root_block)) != 1:
            return None

        blk = sch.get_child_blocks(root_block)[0]
        block_info = analysis.get_sblock_info(sch, blk)
        if not (
            (self.use_op_name and block_info.name == "te_layout_transform")
            or (not self.use_op_name and block_info.is_layout_transform(sch))
        ):
            return None

        read_buf, write_buf = (block_info.read_bufs(sch)[0], block_info.write_bufs(sch)[0])
        lps = block_info.get_loops()
        lpv_read, lpv_write = (
            read_buf.assoc_lps[-1],
            write_buf.assoc_lps[-1],
        )

        if lpv_read is None or lpv_write is None:
            return None

        vlen_read, vlen_write = _vector_size(read_buf), _vector_size(write_buf)
        local_cache = sch.get(lpv_read) != sch.get(lpv_write) or vlen_read != vlen_write
        block_loops = [
            lp
            for lp in lps
            if sch.get(lp) != sch.get(lpv_read) and sch.get(lp) != sch.get(lpv_write)
        ]
        vec_loops = (
            [lpv_read, lpv_write] if sch.get(lpv_read) != sch.get(lpv_write) else (lpv_read,)
        )
        sch.reorder(*block_loops, *vec_loops)
        if local_cache:
            if sch.get(lpv_read) != sch.get(lpv_write):
                blp_read, vlp_read = sch.split(
                    lpv_read, [None, vlen_read], preserve_unit_iters=True
                )
                blp_write, vlp_write = sch.split(
                    lpv_write, [None, vlen_write], preserve_unit_iters=True
                )
                sch.reorder(blp_read, blp_write, vlp_read, vlp_write)
                block_loops += [blp_read, blp_write]
                rblk = sch.cache_read(blk, 0, "local")
                sch.compute_at(rblk, block_loops[-1], preserve_unit_loops=True)
                sch.vectorize(sch.get_loops(rblk)[-1])
                sch.vectorize(vlp_write)
            else:
                # One loop is innermost for both buffers (NHWC <-> NCHW4c: the channels).
                if vlen_read > vlen_write:
                    read_lp, vec_lp = sch.split(
                        lpv_read, [None, vlen_write], preserve_unit_iters=True
                    )
                    block_loops += [read_lp]
                    rblk = sch.cache_read(blk, 0, "local")
                    sch.compute_at(rblk, read_lp, preserve_unit_loops=True)
                    sch.vectorize(sch.get_loops(rblk)[-1])
                    sch.vectorize(vec_lp)
                else:
                    rblk = sch.cache_read(blk, 0, "local")
                    sch.compute_at(rblk, block_loops[-1], preserve_unit_loops=True)
                    _, vread_lp = sch.split(
                        sch.get_loops(rblk)[-1], vlen_read, preserve_unit_iters=True
                    )
                    sch.vectorize(vread_lp)
                    _, vlp_write = sch.split(
                        lpv_write, [None, vlen_write], preserve_unit_iters=True
                    )
                    sch.vectorize(vlp_write)
        else:
            blp, vlp = sch.split(lpv_read, [None, vlen_read], preserve_unit_iters=True)
            block_loops += [blp]
            sch.vectorize(vlp)

        b = sch.fuse(*block_loops)
        # A fixed work-group size: the fused extent may be symbolic (a dynamic batch or image
        # size), and the bound check of the last group is generated by the split either way.
        config = self.config or LayoutTransformConfig.from_target(target)
        bx, tx = sch.split(b, [None, config.threads], preserve_unit_iters=True)
        sch.bind(bx, "blockIdx.x")
        sch.bind(tx, "threadIdx.x")
        return sch
