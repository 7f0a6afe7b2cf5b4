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
``n, oc, oh, ow, ob, ic, kh, kw``), with its data padding and elementwise epilogue: KxK and
1x1 alike, 1x1 being the blocked matrix product over channel blocks x pixels.

Each work item computes a tile of ``Vc`` output channel blocks (4 channels each) by ``Vw``
neighbouring output pixels of one row (:func:`conv_tile`). Per step of 4 input channels and
kernel row it reads the input row segment under the tile once into registers (the window
slides along it: at stride 1 a 3x3 row of 4 outputs reads 6 pixels for 12 taps), per tap the
weights of the ``Vc`` blocks as vectors of 4 output channels, and does ``Vc * Vw * 4`` float4
multiply-adds. The tile is the config's (``Conv2dConfig.channel_blocks`` x ``columns``, or
``pointwise_columns`` for 1x1), halved while the layer has too few work items to fill the
device (TFLite's occupancy guard).
The work items are a flat range over ``(n, oc / Vc, oh, ow / Vw)``, ``ow`` fastest, in work
groups of ``Conv2dConfig.threads``. The zero padding of the input is computed inside the
input read instead of by a kernel of its own writing the padded input to memory.
"""

from typing import List, Optional, Tuple

from tvm import s_tir, tirx
from tvm.target import Target

from ..analysis.common_analysis import get_root_block, get_sblock_info
from .base import AdrenoScheduleRule
from .config import Conv2dConfig
from .group_conv import largest_divisor
from .utils import schedule_default, schedule_inline_blocks

# A texture pixel holds 4 channels: the input channel loop is read in steps of 4.
_LANES = 4


def _static_extent(sch: s_tir.Schedule, loop: s_tir.schedule.LoopRV) -> Optional[int]:
    extent = sch.get(loop).extent
    return int(extent) if isinstance(extent, tirx.IntImm) else None


def conv_tile(
    out_blocks: Optional[int],
    rows: Optional[int],
    out_width: Optional[int],
    config: Conv2dConfig,
    pointwise: bool = False,
) -> Tuple[int, int]:
    """The per-item tile ``(channel blocks, columns)`` of a convolution's output.

    Starts from the config's tile (the largest power of two of channel blocks dividing
    ``out_blocks``, the largest divisor of ``out_width`` up to ``columns``, or
    ``pointwise_columns`` for a 1x1 kernel) and applies the
    occupancy guard: the layer's waves per compute unit at that tile are
    ``items / (wave_size * compute_units)``; for each threshold of ``occupancy_waves`` they fall
    below, the larger tile dimension is halved (channel blocks on a tie), so a 7x7 or 14x14
    layer keeps enough work items to fill the device.

    Parameters
    ----------
    out_blocks : Optional[int]
        Extent of the output channel block axis (None: not static).
    rows : Optional[int]
        Batch times output height (None: not static).
    out_width : Optional[int]
        Output width (None: not static).
    config : Conv2dConfig
        The target's knobs.
    pointwise : bool
        A 1x1 kernel: its columns share no input pixel, they take ``pointwise_columns``.

    Returns
    -------
    tile : Tuple[int, int]
        Channel blocks (a power of two dividing ``out_blocks``) and columns (a divisor of
        ``out_width``); ``(1, 1)`` for dynamic shapes.
    """
    if out_blocks is None or rows is None or out_width is None:
        return 1, 1
    blocks = 1
    while blocks * 2 <= config.channel_blocks and out_blocks % (blocks * 2) == 0:
        blocks *= 2
    most_columns = config.pointwise_columns if pointwise else config.columns
    columns = largest_divisor(out_width, most_columns)
    items = (out_blocks // blocks) * rows * (out_width // columns)
    waves = items / float(config.wave_size * config.compute_units)
    for threshold in config.occupancy_waves:
        if waves >= threshold:
            break
        if blocks >= columns and blocks > 1:
            blocks //= 2
        elif columns > 1:
            columns = largest_divisor(out_width, columns // 2)
    return blocks, columns


class Conv2d(AdrenoScheduleRule):
    """The schedule rule for the direct ``NCHW4c`` convolution (see the module docstring).

    Parameters
    ----------
    config : Optional[Conv2dConfig]
        The knobs; None: ``Conv2dConfig.from_target`` of the target being compiled for.
    """

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
    def schedule_conv2d(  # pylint: disable=too-many-locals
        sch: s_tir.Schedule, blk: s_tir.schedule.SBlockRV, config: Conv2dConfig
    ) -> None:
        """Schedule the convolution block ``blk`` and inline its input padding."""
        pads = Conv2d._input_pads(sch, blk)
        n, oc, oh, ow, ob, ic, kh, kw = sch.get_loops(blk)
        batch, height = _static_extent(sch, n), _static_extent(sch, oh)
        rows = None if batch is None or height is None else batch * height
        blocks, columns = conv_tile(
            _static_extent(sch, oc),
            rows,
            _static_extent(sch, ow),
            config,
            pointwise=_static_extent(sch, kh) == 1 and _static_extent(sch, kw) == 1,
        )

        oco, ocv = sch.split(oc, [None, blocks], preserve_unit_iters=True)
        owo, owv = sch.split(ow, [None, columns], preserve_unit_iters=True)
        sch.reorder(n, oco, oh, owo, ocv, owv, ob)
        fused = sch.fuse(n, oco, oh, owo, preserve_unit_iters=True)
        # A range smaller than a work group gets a work group of its own size: with a single,
        # partial work group C++ ``ReverseComputeAt`` drops the bound of the output write-back
        # below (it widens the write's domain past the tensor and adds no predicate).
        outputs = _static_extent(sch, fused)
        threads = config.threads if outputs is None else min(config.threads, outputs)
        bx, tx = sch.split(fused, [None, threads], preserve_unit_iters=True)
        sch.bind(bx, "blockIdx.x")
        sch.bind(tx, "threadIdx.x")

        ico, icb = sch.split(ic, [None, _LANES], preserve_unit_iters=True)
        sch.reorder(ico, kh, kw, icb, ocv, owv, ob)
        # The input row segment under the tile (4 channels a pixel) per (ico, kh), shared by
        # the kernel columns and the channel blocks: the window slides along it in registers.
        # (consumer_blocks: the input may also feed the epilogue, a residual add, which reads
        # it at the output position.)
        rblk = sch.cache_read(blk, 0, "local", consumer_blocks=[blk])
        for pad in pads:
            sch.compute_inline(pad)
        sch.compute_at(rblk, kh, preserve_unit_loops=True)
        sch.vectorize(sch.get_loops(rblk)[-1])
        # The weights of those 4 input channels for the channel blocks, read as vectors.
        wblk = sch.cache_read(blk, 1, "local", consumer_blocks=[blk])
        sch.compute_at(wblk, kw, preserve_unit_loops=True)
        sch.vectorize(sch.get_loops(wblk)[-1])
        sch.unroll(icb)
        sch.unroll(ocv)
        sch.unroll(owv)

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
