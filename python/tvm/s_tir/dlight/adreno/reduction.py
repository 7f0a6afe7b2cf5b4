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
"""Reductions and pooling on Adreno, with or without textures.

The rule takes every PrimFunc made of one reduction block and injective blocks around it
(padding before, a division or a cast after): ``sum``, ``mean``, ``max``, ``min``, ``prod``,
max/average/adaptive/global pooling, and an ``argmax``/``argmin`` whose one block writes the
index (the stock legalization copies the index out of a reduction into an index and a value
buffer; that form is left to the generic GPU rules).  It decides from the block alone:
the iteration kinds (spatial iterators, then reduction iterators), the number of elements each
output reduces, and whether the innermost spatial iterator is the 4-lane pixel axis of a
packed ``NCHW4c`` tensor (then the four lanes are computed together, as one texture pixel).

Two schedules, chosen by the number of reduced elements per output:

* few elements (``<= ReductionConfig.max_serial_elements``): one thread per output (pixel),
  the reduction runs serially in a register accumulator; typical of pooling windows.
* many elements: the outputs are spread over work groups and the threads of a group split
  the reduction, combining their partial results in local memory (a cross-thread reduction);
  typical of global pooling and reductions over whole channels or images.

A short reduction followed by a block over another domain (a channel pad after a max pooling,
as in MediaPipe's detectors, and the residual add and activation after it) is scheduled at the
outputs of that last block instead: one thread per output, or per pixel of a packed output, the
reduction values it reads computed in its registers.
"""

from typing import List, Optional

from tvm import s_tir, tirx
from tvm.target import Target
from tvm.topi.adreno.utils import CHANNEL_BLOCK

from ..analysis.common_analysis import get_sblock_info, get_sblockrealize
from .base import AdrenoScheduleRule
from .config import ReductionConfig
from .utils import inline_around_reduction


def _static_int(value) -> Optional[int]:
    return int(value) if isinstance(value, (int, tirx.IntImm)) else None


def _static_extent(dom) -> Optional[int]:
    return _static_int(dom.extent)


def _spatial_then_reduction(block: "s_tir.SBlock") -> int:
    """The number of spatial iterators of ``block`` when they all come before its reduction
    iterators, else 0."""
    kinds = "".join(
        "R" if iv.iter_type == tirx.IterVar.CommReduce else "S" for iv in block.iter_vars
    )
    num_s = len(kinds) - len(kinds.lstrip("S"))
    if kinds != "S" * num_s + "R" * (len(kinds) - num_s):
        return 0
    return num_s


def _the_reduction(sch: s_tir.Schedule, blocks) -> Optional["s_tir.SBlockRV"]:
    """The one reduction block among ``blocks`` when it reduces one tensor over spatial
    iterators followed by reduction iterators, else None (a contraction such as a matmul or a
    conv reads two tensors)."""
    reduce_blocks = [b for b in blocks if get_sblock_info(sch, b).is_reduction()]
    if len(reduce_blocks) != 1:
        return None
    stmt = sch.get(reduce_blocks[0])
    if len(stmt.reads) != 1 or not _spatial_then_reduction(stmt):
        return None
    return reduce_blocks[0]


def reduces_one_tensor(func: tirx.PrimFunc) -> bool:
    """Whether ``func`` has the structure the ``Reduction`` rule takes: one reduction of one
    tensor, its spatial iterators before its reduction iterators.

    Parameters
    ----------
    func : tirx.PrimFunc
        The function.

    Returns
    -------
    takes : bool
        True when the rule may schedule ``func``; it still declines a function whose other
        blocks cannot be inlined around the reduction.
    """
    sch = s_tir.Schedule(func)
    blocks = sch.get_child_blocks(sch.get_sblock(name="root", func_name="main"))
    return _the_reduction(sch, blocks) is not None


class Reduction(AdrenoScheduleRule):
    """Reductions and pooling: one thread per output for short reductions, threads sharing
    each output for long ones (see the module docstring)."""

    def __init__(self, config: Optional[ReductionConfig] = None):
        super().__init__()
        self.config = config

    # pylint: disable=too-many-locals,too-many-return-statements,too-many-branches
    def apply(self, func: tirx.PrimFunc, target: Target, _: bool) -> Optional[s_tir.Schedule]:
        """Schedule ``func`` when it is one reduction of one tensor (see the module docstring),
        else return None."""
        sch = self.schedule_of(func, target)
        if sch is None:
            return None
        config = self.config or ReductionConfig.from_target(target)
        root = sch.get_sblock(name="root", func_name="main")
        blocks = sch.get_child_blocks(root)
        block = _the_reduction(sch, blocks)
        if block is None:
            return None
        # A last block over another domain (a pad after the pooling) is scheduled at its own
        # outputs, with the reduction computed under it (short reductions only, see below).
        consumer = self._consumer_over_another_domain(sch, blocks, block)
        if consumer is not None:
            if not self._inline_into_consumer(sch, blocks, block, consumer):
                return None
            blocks = sch.get_child_blocks(root)
        epilogue = self._inline_others(sch, blocks[:-1] if consumer else blocks, block)
        if epilogue is False or (consumer is not None and epilogue is not None):
            return None

        stmt = sch.get(block)
        num_s = _spatial_then_reduction(stmt)
        loops = sch.get_loops(block)
        if not self._trivial_binding(sch, block, loops):
            return None

        reduce_elems = 1
        for iv in stmt.iter_vars[num_s:]:
            extent = _static_extent(iv.dom)
            reduce_elems = None if extent is None or reduce_elems is None else reduce_elems * extent
        lanes = self._pixel_lanes(stmt, num_s)
        spatial, reduction = loops[:num_s], loops[num_s:]
        lane = None
        if lanes:
            spatial, lane = spatial[:-1], spatial[-1]
        if consumer is not None:
            # Each consumer output recomputes the reduction outputs it reads: only cheap for
            # short reductions.
            if reduce_elems is None or reduce_elems > config.max_serial_elements:
                return None
            consumer_lanes = self._pixel_lanes(sch.get(consumer), len(sch.get(consumer).iter_vars))
            if consumer_lanes and not lanes:
                return None  # each lane of a stored pixel would need its own reduction
            self._schedule_at_consumer(sch, block, consumer, consumer_lanes, config)
            return sch
        # Reduction extents that vary per output (adaptive pooling windows) are bounded by one
        # window of the input: reduce them serially.
        if reduce_elems is None or reduce_elems <= config.max_serial_elements:
            self._schedule_serial(sch, block, spatial, reduction, lane, epilogue, config)
        else:
            self._schedule_split(sch, block, spatial, reduction, lane, epilogue, config)
        return sch

    @staticmethod
    def _position(sch: s_tir.Schedule, blocks, block) -> int:
        """The index of ``block`` in ``blocks``, found by the block itself (``blocks`` may be
        references taken after ``block`` was, which compare unequal)."""
        stmt = sch.get(block)
        return next(i for i, b in enumerate(blocks) if sch.get(b).same_as(stmt))

    @staticmethod
    def _inline_others(sch: s_tir.Schedule, blocks, block):
        """Inline the injective blocks around the reduction (:func:`inline_around_reduction`,
        consumers over the reduction's outputs only).  Returns False when the function has
        another structure, else the epilogue block or None."""
        # A consumer over a larger domain: the broadcast multiply of a squeeze-and-excitation
        # block before the last block.
        points = Reduction._spatial_points(sch.get(block))
        epilogue = inline_around_reduction(
            sch,
            blocks,
            block,
            lambda consumer: Reduction._spatial_points(sch.get(consumer)) == points,
        )
        if epilogue is not None and epilogue is not False:
            try:
                sch.reverse_compute_inline(epilogue)  # still not inlinable: keep it
            except s_tir.ScheduleError:
                pass
            if len(sch.get(block).writes) != 1:
                return False
        return epilogue

    @staticmethod
    def _consumer_over_another_domain(sch: s_tir.Schedule, blocks, block):
        """The last block, when it is injective and iterates over another domain than the
        reduction's outputs (a pad after the pooling, as MediaPipe's detectors pad channels
        before a residual add), else None."""
        last = blocks[-1]
        stmt = sch.get(last)
        if last.same_as(block) or get_sblock_info(sch, last).is_reduction():
            return None
        points = Reduction._spatial_points(stmt)
        if points is None or points == Reduction._spatial_points(sch.get(block)):
            return None
        return last

    @staticmethod
    def _inline_into_consumer(sch: s_tir.Schedule, blocks, block, consumer) -> bool:
        """Inline the blocks between the reduction and ``consumer`` that iterate over the
        consumer's domain (a pad before a residual add and its activation) forwards, into
        ``consumer``; False when one cannot be inlined."""
        index = Reduction._position(sch, blocks, block)
        points = Reduction._spatial_points(sch.get(consumer))
        for between in blocks[index + 1 : -1]:
            if Reduction._spatial_points(sch.get(between)) != points:
                continue  # over the reduction's domain: an epilogue, inlined later
            try:
                sch.compute_inline(between)
            except s_tir.ScheduleError:
                return False
        return True

    @staticmethod
    def _spatial_points(block: "s_tir.SBlock") -> Optional[int]:
        """Number of points of the block's spatial iteration domain (None when dynamic)."""
        points = 1
        for iv in block.iter_vars:
            if iv.iter_type != tirx.IterVar.DataPar:
                continue
            extent = _static_extent(iv.dom)
            if extent is None:
                return None
            points *= extent
        return points

    @staticmethod
    def _trivial_binding(sch: s_tir.Schedule, block, loops) -> bool:
        """Loop i binds block iterator i."""
        iter_values = get_sblockrealize(sch, block).iter_values
        if len(loops) != len(iter_values):
            return False
        return all(v.same_as(sch.get(lp).loop_var) for lp, v in zip(loops, iter_values))

    @staticmethod
    def _pixel_lanes(block: "s_tir.SBlock", num_s: int) -> bool:
        """The innermost spatial iterator is the 4-lane pixel axis of the written buffer and
        indexes no other axis than the last of any buffer read."""
        lane_iv = block.iter_vars[num_s - 1]
        if _static_extent(lane_iv.dom) != CHANNEL_BLOCK:
            return False
        if len(block.writes) != 1:
            return False
        write = block.writes[0]
        if _static_int(write.source.shape[-1]) != CHANNEL_BLOCK:
            return False
        last = write.region[-1]
        if not (isinstance(last.min, tirx.Var) and last.min.same_as(lane_iv.var)):
            return False
        # A channel reduction of an NCHW4c image into a buffer 4 columns wide writes its
        # columns innermost, and reads them as the image's width, not as lanes of a pixel.
        return not any(
            var.same_as(lane_iv.var)
            for read in block.reads
            for axis in read.region[:-1]
            for var in tirx.analysis.undefined_vars(axis.min)
        )

    @staticmethod
    def _localize_temporaries(sch: s_tir.Schedule, block) -> List[int]:
        """Keep the block's temporary results in registers; return the indices of its writes
        that are function outputs.

        A tuple reduction (the value beside the index of an argmax) writes a buffer that the
        function allocates; left in ``global`` scope it would become a kernel-scope global
        variable, which OpenCL C does not allow."""
        root = sch.get(sch.get_sblock(name="root", func_name="main"))
        outputs = []
        for i, region in enumerate(sch.get(block).writes):
            if any(region.source.same_as(buf) for buf in root.alloc_buffers):
                sch.set_scope(block, i, "local")
            else:
                outputs.append(i)
        return outputs

    @staticmethod
    def _schedule_serial(sch, block, spatial, reduction, lane, epilogue, config: ReductionConfig):
        """One thread per output pixel; the reduction accumulates in registers."""
        fused = sch.fuse(*spatial) if spatial else sch.add_unit_loop(block)
        order = [fused] + list(reduction) + ([lane] if lane is not None else [])
        sch.reorder(*order)
        writes: List = []
        outputs = Reduction._localize_temporaries(sch, block)
        if epilogue is not None:
            # the reduction result is a temporary: keep it in registers for the epilogue
            sch.set_scope(block, 0, "local")
            writes.append(epilogue)
        else:
            for i in outputs:
                writes.append(sch.cache_write(block, i, "local"))
        for write in writes:
            sch.reverse_compute_at(write, fused, preserve_unit_loops=True)
            if lane is not None:
                sch.vectorize(sch.get_loops(write)[-1])
        if lane is not None:
            # Vectorize the pixel lanes before splitting off the initialization, while the
            # block is still a complete reduction under the lane loop.
            sch.vectorize(lane)
        # Split the outputs over threads once the store is under the loop: the split guards
        # every block under it (reduction and store), so the threads past the last output
        # write nothing.  A store moved under the thread loop after the split is not guarded,
        # and an image store out of bounds corrupts memory.
        bx, tx = sch.split(fused, [None, config.serial_threads])
        sch.bind(bx, "blockIdx.x")
        sch.bind(tx, "threadIdx.x")
        if reduction:
            sch.decompose_reduction(block, reduction[0])

    @staticmethod
    def _schedule_at_consumer(sch, block, consumer, lanes: bool, config: ReductionConfig):
        """One thread per output of the consumer (per pixel when ``lanes``: its 4 lanes are
        stored together); the reduction outputs it reads are computed in registers under its
        thread, guarded where the consumer reads none (the pad)."""
        loops = sch.get_loops(consumer)
        fused = sch.fuse(*(loops[:-1] if lanes else loops))
        bx, tx = sch.split(fused, [None, config.serial_threads])
        sch.bind(bx, "blockIdx.x")
        sch.bind(tx, "threadIdx.x")
        Reduction._localize_temporaries(sch, block)
        sch.compute_at(block, tx, preserve_unit_loops=True)
        stmt = sch.get(block)
        num_r = sum(iv.iter_type == tirx.IterVar.CommReduce for iv in stmt.iter_vars)
        if lanes:
            sch.vectorize(sch.get_loops(consumer)[-1])
            # the lanes innermost, under the window: one pixel read per window step
            window = sch.get_loops(block)[-num_r:]
            lane = sch.get_loops(block)[-num_r - 1]
            sch.reorder(*window, lane)
            try:
                sch.vectorize(lane)
            except s_tir.ScheduleError:
                # the block's binding under the split is not affine (outputs per channel block
                # not a multiple of the work group): the lanes stay a loop, reading per lane
                pass
        try:
            # the initialization out of the window loops, where the bindings allow it
            sch.decompose_reduction(block, sch.get_loops(block)[-num_r - (1 if lanes else 0)])
        except s_tir.ScheduleError:
            pass  # a partial last work group: the init stays a branch of the first window step

    @staticmethod
    def _schedule_split(sch, block, spatial, reduction, lane, epilogue, config: ReductionConfig):
        """One work group per output pixel; its threads split the reduction."""
        fused = sch.fuse(*spatial) if spatial else sch.add_unit_loop(block)
        red = sch.fuse(*reduction)
        order = [fused] + ([lane] if lane is not None else []) + [red]
        sch.reorder(*order)
        sch.bind(fused, "blockIdx.x")
        _, tx = sch.split(red, [None, config.split_threads])
        sch.bind(tx, "threadIdx.x")
        Reduction._localize_temporaries(sch, block)
        if epilogue is not None:
            sch.set_scope(block, 0, "local")
            write = epilogue
        elif lane is not None:
            write = sch.cache_write(block, 0, "local")
        else:
            return
        sch.reverse_compute_at(write, fused, preserve_unit_loops=True)
        if lane is not None:
            sch.vectorize(sch.get_loops(write)[-1])
