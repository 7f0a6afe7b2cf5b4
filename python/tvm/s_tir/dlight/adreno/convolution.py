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
"""A Conv2d schedule rule for Adreno GPU operators.

Takes the direct ``NCHW4c`` / ``OIHW4o`` convolution of ``topi.nn.conv2d_NCHWc_OIHWo`` (a
PrimFunc named ``conv2d_NCHWc...`` whose one reduction block has the loops
``n, oc, oh, ow, ob, ic, kh, kw``), with its data padding and elementwise epilogue.

Each thread computes ``V`` output pixels of 4 channels at one spatial position: it reads
an input pixel once and uses it for the ``V`` channel blocks, and it reads the weights as
vectors of 4 output channels. ``V`` is the largest power of two, up to
``Conv2dConfig.max_channel_blocks``, that still leaves ``Conv2dConfig.min_threads`` threads:
register reuse where the layer has parallelism to spare, all of it spread over threads where
it has not (a 1x1 conv on a 7x7 or 14x14 map). The threads are a flat range over
``(n, oc / V, oh, ow)``, ``ow`` fastest, in work groups of ``Conv2dConfig.threads``: no
thread of a work group idles on a 7x7 map (the former 16x16 spatial work group kept 49 of
its 256 threads busy). The zero padding of the input is computed inside the input read
instead of by a kernel of its own writing the padded input to memory.
"""

import dataclasses
from typing import List, Optional

from tvm import s_tir, tirx
from tvm.target import Target

from ..analysis.common_analysis import get_root_block, get_sblock_info
from .base import AdrenoScheduleRule
from .utils import schedule_default, schedule_inline_blocks

# A texture pixel holds 4 channels: the input channel loop is read in steps of 4.
_LANES = 4


@dataclasses.dataclass(frozen=True)
class Conv2dConfig:
    """Per-target knobs of the direct convolution schedule.

    Parameters
    ----------
    threads : int
        Work-group size.
    min_threads : int
        Fewest threads that the output channel blocking may leave.
    max_channel_blocks : int
        Most output channel blocks (of 4 channels) that one thread computes.
    """

    # Measured on an NVIDIA H200 (OpenCL, float32, the ResNet-50 and MobileNetV2 layers of
    # bench/models.py): against (64, 32768), (64, 16384), (64, 131072), (32, 32768) and
    # (256, 32768), the pair (128, 65536) is the fastest or within 7% of the fastest on every
    # layer, and 256 threads loses up to 40% on 7x7 maps. No Adreno device was available to
    # measure; the values are the starting point for one.
    threads: int = 128
    min_threads: int = 65536
    # 8 blocks (32 accumulators) is the blocking of the Relay-era Adreno schedule.
    max_channel_blocks: int = 8

    @staticmethod
    def from_target(target: Target) -> "Conv2dConfig":
        """The configuration for ``target``, bounded by its thread limit."""
        base = Conv2dConfig()
        if "max_num_threads" not in target.attrs:
            return base
        return dataclasses.replace(
            base, threads=min(base.threads, int(target.attrs["max_num_threads"]))
        )


def _static_extent(sch: s_tir.Schedule, loop: s_tir.schedule.LoopRV) -> Optional[int]:
    extent = sch.get(loop).extent
    return int(extent) if isinstance(extent, tirx.IntImm) else None


def channel_blocks(out_blocks: Optional[int], pixels: Optional[int], config: Conv2dConfig) -> int:
    """Output channel blocks per thread for a conv with ``out_blocks`` blocks of 4 output
    channels and ``pixels`` output positions (None: not static).

    Parameters
    ----------
    out_blocks : Optional[int]
        Extent of the output channel block axis.
    pixels : Optional[int]
        Batch times output height times output width.
    config : Conv2dConfig
        The target's knobs.

    Returns
    -------
    blocks : int
        A power of two dividing ``out_blocks``; 1 for dynamic shapes.
    """
    if out_blocks is None or pixels is None:
        return 1
    blocks = 1
    while (
        blocks * 2 <= config.max_channel_blocks
        and out_blocks % (blocks * 2) == 0
        and pixels * out_blocks // (blocks * 2) >= config.min_threads
    ):
        blocks *= 2
    return blocks


class Conv2d(AdrenoScheduleRule):
    """The schedule rule for the direct ``NCHW4c`` convolution (see the module docstring)."""

    def __init__(self, config: Optional[Conv2dConfig] = None):
        super().__init__()
        self.config = config

    @staticmethod
    def _input_pads(
        sch: s_tir.Schedule, blk: s_tir.schedule.SBlockRV
    ) -> List[s_tir.schedule.SBlockRV]:
        """The data-padding blocks writing the convolution's input."""
        data = sch.get(blk).reads[0].source
        return [
            producer
            for producer in sch.get_producers(blk)
            if sch.get(producer).writes[0].source.same_as(data)
            and get_sblock_info(sch, producer).is_data_pad(sch)
        ]

    @staticmethod
    def schedule_conv2d(
        sch: s_tir.Schedule, blk: s_tir.schedule.SBlockRV, config: Conv2dConfig
    ) -> None:
        """Schedule the convolution block ``blk`` and inline its input padding."""
        pads = Conv2d._input_pads(sch, blk)
        n, oc, oh, ow, ob, ic, kh, kw = sch.get_loops(blk)
        extents = [_static_extent(sch, loop) for loop in (n, oh, ow)]
        pixels = None if None in extents else extents[0] * extents[1] * extents[2]
        blocks = channel_blocks(_static_extent(sch, oc), pixels, config)

        oco, ocv = sch.split(oc, [None, blocks], preserve_unit_iters=True)
        sch.reorder(n, oco, oh, ow, ocv, ob)
        fused = sch.fuse(n, oco, oh, ow, preserve_unit_iters=True)
        # A range smaller than a work group gets a work group of its own size: with a single,
        # partial work group C++ ``ReverseComputeAt`` drops the bound of the output write-back
        # below (it widens the write's domain past the tensor and adds no predicate).
        outputs = _static_extent(sch, fused)
        threads = config.threads if outputs is None else min(config.threads, outputs)
        bx, tx = sch.split(fused, [None, threads], preserve_unit_iters=True)
        sch.bind(bx, "blockIdx.x")
        sch.bind(tx, "threadIdx.x")

        ico, icb = sch.split(ic, [None, _LANES], preserve_unit_iters=True)
        sch.reorder(ico, kh, kw, icb, ocv, ob)
        # One input pixel (4 channels) per (ico, kh, kw), shared by the channel blocks.
        # (consumer_blocks: the input may also feed the epilogue, a residual add, which reads
        # it at the output position.)
        rblk = sch.cache_read(blk, 0, "local", consumer_blocks=[blk])
        for pad in pads:
            sch.compute_inline(pad)
        sch.compute_at(rblk, kw, preserve_unit_loops=True)
        sch.vectorize(sch.get_loops(rblk)[-1])
        # The weights of those 4 input channels for the channel blocks, read as vectors.
        wblk = sch.cache_read(blk, 1, "local", consumer_blocks=[blk])
        sch.compute_at(wblk, kw, preserve_unit_loops=True)
        sch.vectorize(sch.get_loops(wblk)[-1])
        sch.unroll(icb)
        sch.unroll(ocv)

        oblk = sch.cache_write(blk, 0, "local")
        sch.reverse_compute_at(oblk, tx, preserve_unit_loops=True)
        sch.vectorize(sch.get_loops(oblk)[-1])
        init_blk = sch.decompose_reduction(blk, ico)
        sch.vectorize(sch.get_loops(init_blk)[-1])

    def apply(  # pylint: disable=too-many-locals,missing-docstring
        self,
        func: tirx.PrimFunc | s_tir.Schedule,
        target: Target,
        _: bool,
    ) -> s_tir.Schedule | None:
        if not (isinstance(func, tirx.PrimFunc | s_tir.Schedule)) or not self.is_target_available(
            target
        ):
            return None

        if isinstance(func, tirx.PrimFunc):
            sch = s_tir.Schedule(func)
            sch.work_on("main")
        elif isinstance(func, s_tir.Schedule):
            sch = func

        root_block = get_root_block(sch, sch.func_working_on)
        blocks = sch.get_child_blocks(root_block)
        reduction_blocks = list(
            filter(lambda block: get_sblock_info(sch, block).is_reduction(), blocks)
        )

        def is_convolution(blk):
            block_info = get_sblock_info(sch, blk)
            return "conv2d_NCHWc" in block_info.name and len(sch.get_loops(blk)) == 8

        if len(reduction_blocks) != 1 or not is_convolution(reduction_blocks[0]):
            return None

        conv_blk = reduction_blocks[0]
        inlined = {sch.get(pad).name_hint for pad in Conv2d._input_pads(sch, conv_blk)}
        remaining_blocks = [
            blk
            for blk in blocks
            if blk not in reduction_blocks and sch.get(blk).name_hint not in inlined
        ]
        config = self.config or Conv2dConfig.from_target(target)
        Conv2d.schedule_conv2d(sch, conv_blk, config)
        remaining_blocks = schedule_inline_blocks(sch, remaining_blocks)
        schedule_default(sch, remaining_blocks)

        return sch
