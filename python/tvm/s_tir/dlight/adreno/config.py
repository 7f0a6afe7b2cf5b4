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
"""Per-target knobs of the Adreno schedule rules.

Every rule reads its numbers from one frozen dataclass of this module, chosen from the target
by ``from_target``; a rule never carries a tuning constant of its own. Each field is made by
:func:`knob`: its default, the values a tuner may try instead (the rule's search space, read by
:mod:`tvm.s_tir.meta_schedule.adreno`), and why the default is what it is.

What a rule must know of the device and the target does not say (its compute units; its wave
size where the target's ``thread_warp_size`` is not set) is a :class:`DeviceFacts` of
``DEVICES``, chosen by the target's ``model`` (``-model=adreno-740``); a target naming no known
model gets the Adreno facts of ``DEVICES["adreno"]``. A new device is a new entry there (or a
config passed to the rule), not a new branch in a rule. Knobs named in ``THREAD_KNOBS`` are
work-group sizes: ``from_target`` and :meth:`RuleConfig.space` bound them by the target's
``max_num_threads``.

Every knob's reason says where its default comes from. Most were measured on a desktop GPU
through OpenCL (no Adreno device was at hand), and say so: on an Adreno device they are a
starting point for the tuner (:mod:`tvm.s_tir.meta_schedule.adreno`), not a measurement.
"""

import dataclasses
import itertools
from typing import Any, ClassVar, Dict, List, Sequence, Tuple, TypeVar

from tvm.target import Target

ConfigT = TypeVar("ConfigT", bound="RuleConfig")


def knob(default: Any, choices: Sequence[Any], why: str) -> Any:
    """A knob of a rule config: a dataclass field with its search space and its reason.

    Parameters
    ----------
    default : Any
        The value the rule uses untuned.
    choices : Sequence[Any]
        The values a tuner may try; the default is always one of them.
    why : str
        The reason for the default (what was measured, or which engine does the same).

    Returns
    -------
    field : dataclasses.Field
        The field, to be assigned in a ``RuleConfig`` dataclass body.
    """
    values = tuple(choices)
    if default not in values:
        values = (default,) + values
    # a field factory, like dataclasses.field itself: called in the body of a dataclass
    return dataclasses.field(  # pylint: disable=invalid-field-call
        default=default, metadata={"choices": values, "why": why}
    )


@dataclasses.dataclass(frozen=True)
class DeviceFacts:
    """What the rules need to know of a device that its target does not carry.

    Parameters
    ----------
    compute_units : int
        ``CL_DEVICE_MAX_COMPUTE_UNITS``: the work groups the device runs at once, one per unit
        at least.
    wave_size : int
        Work items the device issues together (a wave, warp or sub-group).
    source : str
        Where the numbers come from.
    """

    compute_units: int
    wave_size: int
    source: str


_TFLITE_GPU_INFO = (
    "TFLite GPU's and ML Drift's device tables (tensorflow/lite/delegates/gpu/common/"
    "gpu_info.cc, ml_drift/common/gpu_info.cc): Adreno 6xx and 7xx run waves of 64 fibers "
    "(half wave) or 128 (full wave); 64 is taken, the wave of a kernel that holds many "
    "registers, as a conv tile does (llama.cpp's Adreno kernels, by Qualcomm engineers, "
    "use 64 on every Adreno)"
)

#: Device facts by the target's ``model``. ``"adreno"`` serves every Adreno target that names
#: no model: the 3 compute units of the Adreno 650 and 660 (the middle of the 6xx and 7xx
#: parts, which report 2 to 6).
DEVICES: Dict[str, DeviceFacts] = {
    "adreno": DeviceFacts(
        3, 64, "an Adreno 650's clinfo reports 3 compute units; waves: " + _TFLITE_GPU_INFO
    ),
    "adreno-630": DeviceFacts(2, 64, "2 compute units in TFLite GPU's table; " + _TFLITE_GPU_INFO),
    "adreno-640": DeviceFacts(
        2, 64, "a Snapdragon 855's clinfo reports 2 compute units; " + _TFLITE_GPU_INFO
    ),
    "adreno-650": DeviceFacts(
        3,
        64,
        "clinfo of a Snapdragon 865: 3 compute units, work groups of up to 1024, preferred "
        "multiple 128 (its full wave); " + _TFLITE_GPU_INFO,
    ),
    "adreno-660": DeviceFacts(3, 64, "3 compute units in TFLite GPU's table; " + _TFLITE_GPU_INFO),
    "adreno-730": DeviceFacts(4, 64, "4 compute units in TFLite GPU's table; " + _TFLITE_GPU_INFO),
    "adreno-740": DeviceFacts(6, 64, "6 compute units in TFLite GPU's table; " + _TFLITE_GPU_INFO),
    "adreno-750": DeviceFacts(6, 64, "6 compute units in ML Drift's table; " + _TFLITE_GPU_INFO),
}


def device_facts(target: Target) -> DeviceFacts:
    """The facts of the target's device: ``DEVICES`` by its ``model`` (``"adreno"`` when it
    names none the table knows), with the target's ``thread_warp_size`` as the wave size where
    the target sets one (more than 1, the OpenCL target's placeholder)."""
    model = str(target.attrs["model"]) if "model" in target.attrs else ""
    facts = DEVICES.get(model, DEVICES["adreno"])
    warp = int(target.attrs["thread_warp_size"]) if "thread_warp_size" in target.attrs else 1
    if warp > 1 and warp != facts.wave_size:
        facts = dataclasses.replace(facts, wave_size=warp, source=f"{facts.source}; warp: target")
    return facts


def _max_threads(target: Target) -> int:
    # 256: what TVM assumes for a GPU that names no limit (and the Adreno tags' limit).
    return int(target.attrs["max_num_threads"]) if "max_num_threads" in target.attrs else 256


@dataclasses.dataclass(frozen=True)
class RuleConfig:
    """Base of the rule configs: the target bound and the enumerated search space."""

    THREAD_KNOBS: ClassVar[Tuple[str, ...]] = ()
    #: Fields that are facts of the device (``DeviceFacts`` fields of the same name), filled in
    #: by ``from_target`` and never searched.
    DEVICE_KNOBS: ClassVar[Tuple[str, ...]] = ()

    @classmethod
    def from_target(cls: type, target: Target) -> ConfigT:
        """The defaults, with every work-group size bounded by the target's thread limit and
        the device facts of :func:`device_facts`."""
        limit = _max_threads(target)
        base = cls()
        facts = device_facts(target)
        return dataclasses.replace(
            base,
            **{name: min(getattr(base, name), limit) for name in cls.THREAD_KNOBS},
            **{name: getattr(facts, name) for name in cls.DEVICE_KNOBS},
        )

    @classmethod
    def choices(cls) -> Dict[str, Tuple[Any, ...]]:
        """Knob name -> the values a tuner may try (a fixed field: its default alone)."""
        return {
            field.name: field.metadata.get("choices", (field.default,))
            for field in dataclasses.fields(cls)
        }

    @classmethod
    def why(cls, name: str) -> str:
        """The reason given for the default of knob ``name``."""
        field = next(f for f in dataclasses.fields(cls) if f.name == name)
        return field.metadata.get("why", "")

    def space(self, target: Target) -> List["RuleConfig"]:
        """Every combination of the knobs' choices that the target accepts, ``self`` first.

        Parameters
        ----------
        target : Target
            Work-group sizes above its ``max_num_threads`` are left out.

        Returns
        -------
        configs : List[RuleConfig]
            Distinct configs; the first is ``self`` (the untuned schedule is always measured).
        """
        limit = _max_threads(target)
        names = list(self.choices())
        axes = []
        for name, values in self.choices().items():
            if name in self.DEVICE_KNOBS:
                values = (getattr(self, name),)
            elif name in self.THREAD_KNOBS:
                # none fits: only the config's own size (from_target bounds it by the limit)
                values = tuple(v for v in values if v <= limit) or (getattr(self, name),)
            axes.append(values)
        configs = [self]
        seen = {self}  # a set: a list's membership test made large spaces quadratic
        for combo in itertools.product(*axes):
            config = dataclasses.replace(self, **dict(zip(names, combo)))
            if config not in seen:
                seen.add(config)
                configs.append(config)
        return configs


# ---------------------------------------------------------------------------------------------
# Convolutions (rules: convolution.py, group_conv.py, winograd.py)
# ---------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Conv2dConfig(RuleConfig):
    """Knobs of the direct ``NCHW4c`` convolution, KxK and 1x1 (:class:`~.convolution.Conv2d`).

    One work item computes a tile of ``channel_blocks`` output channel blocks (of 4 channels)
    by ``columns`` neighbouring output pixels of one row: per step of 4 input channels it reads
    the input row segment once and the weights once and does ``channel_blocks * columns * 4``
    float4 multiply-adds. The tile shrinks while the layer has too few work items to fill the
    device (the occupancy guard, see :func:`~.convolution.conv_tile`). A KxK tile may also
    span ``tile_rows`` output rows.

    Parameters
    ----------
    threads : int
        Work-group size.
    channel_blocks : int
        Most output channel blocks per work item (a power of two).
    columns : int
        Most output pixels of a row per work item of a KxK conv (a divisor of the output width
        is taken).
    pointwise_columns : int
        The same for a 1x1 conv.
    compute_units : int
        Compute units of the device, for the occupancy guard (a device fact,
        :func:`device_facts`).
    wave_size : int
        Threads per wave (warp) of the device, for the occupancy guard (a device fact).
    occupancy_waves : Tuple[int, ...]
        For each threshold the layer's waves per compute unit (at the full tile) fall below,
        one tile dimension is halved.
    tile_rows : int
        Most output rows per work item of a KxK conv (a divisor of the output height is
        taken): per kernel row the item reads the input row segment under each of its rows.
        The occupancy guard sizes the tile before this; split-K counts the rows' items.
        A layer with row tiles is not staged (``shared_rows``).
    split_k : int
        Most parts the input channels of a work item are split into, across the threads of a
        work group (:func:`~.convolution.split_k_ways`).
    split_k_waves : int
        The split doubles while the layer's waves per compute unit stay below this.
    split_k_min_steps : int
        Fewest reduction steps of one part.
    unroll_window : bool
        Unroll the loops over the kernel's rows and columns, so that the reads of all its taps
        can be issued before their multiply-adds.
    unroll_columns : bool
        Unroll the loop over the kernel's columns alone (``unroll_window`` off): the input row
        segment a work item holds in registers is then indexed by constants only, and the
        step's code grows by the kernel width, not its area.
    unroll_window_limit : int
        Most float4 multiply-adds an unrolled step may hold (taps x 4 input channels x the
        tile): a larger window stays rolled whatever ``unroll_window`` says.
    shared_rows : int
        0: every work item reads its input and weights from memory itself. ``R``: a work group
        covers up to ``R`` whole output rows of a few output channel tiles, and per step of 4
        input channels its threads copy the input rows under them into local memory together,
        and each thread reads its tile's input from there
        (:func:`~.convolution.shared_tile_group`).
    shared_weights : bool
        The threads of a work group copy each step's weights into local memory: with
        ``shared_rows`` those of the group's channel tiles, in the split-K schedule those of
        its parts.
    shared_bytes : int
        Most bytes of local memory such a work group may stage; a layer whose rows need more
        is scheduled without staging.
    """

    THREAD_KNOBS: ClassVar[Tuple[str, ...]] = ("threads",)
    DEVICE_KNOBS: ClassVar[Tuple[str, ...]] = ("compute_units", "wave_size")

    threads: int = knob(
        128,
        (64, 128, 256),
        "on a desktop GPU (OpenCL, float32, the ResNet-50 and MobileNetV2 layers) the fastest "
        "or within 7% of the fastest on every layer of the one-pixel schedule; 256 loses up to "
        "40% on 7x7 maps. Not measured on an Adreno device",
    )
    # Conv kernels alone on a desktop GPU (OpenCL, float32, us): with the occupancy guard off,
    # 4 blocks x 4 columns was 1.5x to 9x slower than upstream's one-pixel tile (64 -> 64 3x3
    # on 56x56: 282 against 37), 2 x 4 up to 2x slower (72 against 37); 2 x 2 on the 7x7 stem
    # 33.9 against 37.1 for 2 x 1. With these defaults every conv layer of ResNet-50 and
    # MobileNetV2 is as fast as upstream's schedule or faster (3x3 128ch stride 2: 65.0
    # against 71.8).
    channel_blocks: int = knob(
        2,
        (1, 2, 4, 8),
        "8 channels per item, the largest of MNN's image conv tiles (4 ch x 4 columns, 4 ch x "
        "4 rows, 8 ch x 4 rows): each block more reuses the input pixel once more; 4 blocks "
        "were slower on every layer measured on a desktop GPU (above)",
    )
    columns: int = knob(
        2,
        (1, 2, 4),
        "output columns per item of a KxK conv: at stride 1 a 3x3 row of 2 outputs reads 4 "
        "input pixels for 6 taps. MNN uses 4; on a desktop GPU 2 won on the stem (above), 4 lost",
    )
    pointwise_columns: int = knob(
        1,
        (1, 2, 4),
        "output columns per item of a 1x1 conv: its columns share no input pixel, only the "
        "weights, which all items of a work group read alike. On a desktop GPU (64 -> 256, 56x56): "
        "23 us at 1 block x 4 columns, 19 at 2 x 2, 14 at 2 x 1",
    )
    compute_units: int = knob(
        3,
        (3,),
        "a device fact: from_target sets the target's (DEVICES by its model); this default is "
        "the generic Adreno entry's",
    )
    wave_size: int = knob(
        64, (64,), "a device fact: from_target sets the target's; this is Adreno's (DEVICES)"
    )
    occupancy_waves: Tuple[int, ...] = knob(
        (8, 4, 2),
        ((8, 4, 2), (4, 2), ()),
        "TFLite GPU's guard: below 8, 4 and 2 waves per compute unit one tile dimension is "
        "halved each time ((4, 2): one halving fewer; () turns the guard off)",
    )

    tile_rows: int = knob(
        1,
        (1, 2, 4),
        "one row keeps the most work items on a small Adreno. MNN's image convolutions also "
        "have tiles of 4 rows (above), which read each weight once for 4 rows. Not yet timed "
        "on an Adreno device nor on a desktop GPU: the tuner decides per workload",
    )

    split_k: int = knob(
        8,
        (1, 2, 4, 8, 16),
        "most ways the input channels of a work item are split across threads (1: never). "
        "MNN and TFLite split the reduction of small deep layers across a work group too",
    )
    split_k_waves: int = knob(
        8,
        (4, 8, 16),
        "the split doubles while the layer has fewer waves per compute unit than this: the "
        "occupancy guard's first threshold",
    )
    split_k_min_steps: int = knob(
        16,
        (16,),
        "fewest reduction steps (input channel blocks x taps) a part keeps: below it the "
        "write-back's sum of the partials costs as much as the part",
    )
    # Conv kernels alone on a desktop GPU (OpenCL, float32, us): unrolled alone, 44.2 against
    # 35.9 rolled on the 64-channel 3x3 layer at 56x56 and 30.0
    # against 33.5 on the 7x7 stem; with occupancy_waves (4, 2) the 64-channel layer took 27.6
    # but the 3-channel 3x3 stem 9.8 against 7.5; with the guard off the 128- and 256-channel
    # 3x3 layers took 4 to 11% less.
    unroll_window: bool = knob(
        False,
        (False, True),
        "kept rolled: on a desktop GPU, unrolled alone it was 23% slower on the 64-channel 3x3 "
        "layer and faster only with a larger tile than the guard gives at one image (above), "
        "which the tuner finds per workload",
    )
    # The row segment of a step is a private array indexed by the column loop: with that loop
    # rolled, clang 15's OpenCL-to-PTX (-O3, vload4/vstore4 written out as element accesses)
    # keeps it in a stack frame (64 bytes for the 64-channel 3x3 layer split with its weights
    # staged, 24 local loads and stores a kernel row); with the columns unrolled it has none,
    # at a third of the full unroll's code.
    unroll_columns: bool = knob(
        False,
        (False, True),
        "kept rolled, as unroll_window: a constant-indexed row segment (above) is untimed on "
        "an Adreno device and on a desktop GPU, so the tuner decides per workload",
    )
    # Building single conv kernels on PoCL 3.1, first call, s: rolled 1.6; unrolled steps of
    # 576 (3x3, 4 blocks x 4 columns), 1152 (3x3, 8 x 4) and 1568 (7x7 stem, 2 x 4)
    # multiply-adds 37, 35 and 38; 6272 (7x7 stem, 8 x 4; 38033 lines of OpenCL C) had not
    # built after 5 minutes. A tuning round on a desktop GPU's driver spent its whole 570 s on
    # the 7x7 stem's 48 candidates.
    unroll_window_limit: int = knob(
        1568,
        (1568,),
        "the largest unrolled step that built in under a minute on PoCL (above), which admits "
        "every 3x3 tile of the space; a larger window stays rolled. A bound on the other "
        "knobs, not a search knob",
    )
    shared_rows: int = knob(
        0,
        (0, 1, 2, 4),
        "off: MNN's image convolutions and TFLite GPU's generic convolution on Adreno read "
        "the input and the weights from memory in each work item, the texture cache serving "
        "the items that share them; staging costs a barrier per step. On a desktop GPU "
        "(where TFLite GPU stages the weights in local memory) staging the weights took the "
        "1x1 layers on 56x56 maps 7 to 19% less time (64 -> 256: 11.0 us against 13.5) and "
        "the 64-channel 3x3 layer 4% less than its best unstaged schedule, while the input "
        "alone staged cost time: the tuner decides per workload",
    )
    shared_weights: bool = knob(
        False,
        (False, True),
        "off, as shared_rows. On a desktop GPU the weights were what staging saved: the "
        "64-channel 3x3 layer at 2 blocks x 2 columns took 26.8 us with them staged, 86.1 "
        "with the input rows alone and 66.5 unstaged; split-K with the weights staged took "
        "the 3x3 layers 18 to 27% less time than the same splits unstaged",
    )
    shared_bytes: int = knob(
        16384,
        (16384,),
        "half the 32 KiB of local memory an Adreno 6xx or 7xx compute unit reports, so that "
        "two work groups fit on one. A bound on the other knobs, not a search knob",
    )


@dataclasses.dataclass(frozen=True)
class DepthwisePointwiseConfig(Conv2dConfig):
    """Knobs of a depthwise convolution and the 1x1 convolution reading it, in one kernel
    (:class:`~.convolution.DepthwisePointwiseConv2d`): those of the 1x1 convolution, and where
    the depthwise result of a step of 4 input channels is computed.

    Parameters
    ----------
    share_depthwise : bool
        False: each work item computes the depthwise result of its own pixels in registers,
        again for every work item along the output channels. True: a work group holds every
        output channel tile of a few pixels, its threads compute the depthwise result of those
        pixels once into local memory and all of them read it there.
    """

    share_depthwise: bool = knob(
        True,
        (True, False),
        "shared where a work group can hold every channel tile (registers otherwise): the "
        "depthwise result is computed once per pixel instead of once per output channel tile "
        "(20 times for MobileNetV2's 960 -> 160 block at 2 blocks a tile), for a barrier per "
        "step. On Intel's CPU OpenCL (wall clock per call of one block, median of 5) a "
        "MobileNetV2 block of 384 depthwise channels into 96 on 7x7 took 2.2 ms shared, 12.8 "
        "in registers and 2.3 as two kernels; a 32-channel 5x5 block on 64x64 25.5, 35.4 and "
        "4.5. On a desktop GPU (each candidate alone, cold) registers won 30 of the 35 fused "
        "workloads of MobileNetV2, BlazeFace and palm detection, by up to 36%: the tuner "
        "decides per workload",
    )
    shared_rows: int = knob(
        0,
        (0,),
        "the depthwise result of a step has its own staging (share_depthwise); the 1x1 "
        "convolution's input is not staged again",
    )
    shared_weights: bool = knob(False, (False,), "only with shared_rows")
    tile_rows: int = knob(1, (1,), "a KxK conv's knob; the pair's convolution is 1x1")
    unroll_columns: bool = knob(False, (False,), "a KxK conv's knob, as tile_rows")


@dataclasses.dataclass(frozen=True)
class GroupConv2dConfig(RuleConfig):
    """Knobs of the depthwise and grouped convolution (:class:`~.group_conv.GroupConv2d`).

    Parameters
    ----------
    threads : int
        Work-group size.
    columns : int
        Most output pixels of a row per work item of a depthwise convolution with channel
        multiplier 1 (a divisor of the output width is taken). Other grouped convolutions
        compute one pixel per item.
    rows : int
        Most output rows per work item of such a depthwise convolution (a divisor of the
        output height is taken). With one row the window slides along the input row in
        registers, with more down the input column.
    """

    THREAD_KNOBS: ClassVar[Tuple[str, ...]] = ("threads",)

    threads: int = knob(
        64,
        (32, 64, 128, 256),
        "a work-group size every OpenCL device accepts and one full Adreno wave",
    )
    columns: int = knob(
        1,
        (1, 2, 4, 8),
        "MNN's depthwise image kernel takes 4 channels x 4 output columns per item for "
        "Adreno's texture cache. On a desktop GPU at 8 and 32 images 2 columns with 2 or 4 "
        "rows took 1.1 to 2.9 times as long as 1 column with 4 rows; with one row, 4 columns "
        "took 1.8 to 2.0 times as long as 1 on the layers of 56x56 and more, 8 columns 2.6 to "
        "4.0 times on all four: the items of a wave then read texels columns apart",
    )
    rows: int = knob(
        4,
        (1, 2, 4, 8),
        "an item of 4 rows reads 6 input texels per kernel column of a 3x3 (4.5 per output "
        "against 9 for one pixel), and its wave's reads stay on neighbouring texels. On a "
        "desktop GPU at 8 and 32 images 1 column x 4 rows took 0.63 to 0.92 of the time of "
        "2 columns x 1 row on the four depthwise layers of MobileNetV2 measured, and 0.67 to "
        "0.97 of the generic buffer kernel's on the three at stride 1; at one image every "
        "setting sat at the launch floor",
    )


@dataclasses.dataclass(frozen=True)
class WinogradConfig(RuleConfig):
    """Knobs of the three Winograd stages (:class:`~.winograd.Winograd`).

    Parameters
    ----------
    threads : int
        Work-group size of every stage.
    """

    THREAD_KNOBS: ClassVar[Tuple[str, ...]] = ("threads",)

    threads: int = knob(
        64,
        (32, 64, 128, 256),
        "a work-group size every OpenCL device accepts and one full Adreno wave",
    )


@dataclasses.dataclass(frozen=True)
class WinogradChoiceConfig(RuleConfig):
    """Knobs of the choice between Winograd and the direct convolution, read by the Adreno
    conv2d legalization (``relax.transform.legalize_ops.adreno.winograd_tile``) for a 3x3,
    stride-1, ungrouped conv: not a schedule knob (the choice makes different PrimFuncs).

    Parameters
    ----------
    min_channels : int
        Fewest input and output channels for Winograd (more than any layer has: never).
    tile4_min_extent : int
        Smallest output height and width for F(4x4, 3x3); below it F(2x2, 3x3).
    """

    # Measured on ResNet-50's 3x3 layers (a desktop GPU through OpenCL, float32, median ms of
    # the layer with its two layout transforms, direct / F(2x2) / F(4x4), the direct conv
    # splitting its input channels across threads): 64ch 56x56 0.053 / 0.071 / 0.083, 128ch
    # 28x28 0.058 / 0.080 / 0.099, 256ch 14x14 0.062 / 0.079 / 0.085, 512ch 7x7 0.099 / 0.080
    # / 0.100. Without the split Winograd won from 256 channels.
    min_channels: int = knob(
        512,
        (64, 128, 256, 512, 1 << 30),
        "Winograd pays once the product (9 m^2 / (m + 2)^2 of the multiplies) outweighs the two "
        "transforms and intermediate textures: on a desktop GPU direct won up to 256 channels, "
        "F(2x2) at 512 (table above)",
    )
    tile4_min_extent: int = knob(
        8,
        (1, 8, 16, 1 << 30),
        "F(4x4) needs enough 6x6 tiles: on a desktop GPU at 7x7 (two tiles overhanging by one "
        "row and column) F(2x2) was faster (table above); at 14x14 F(4x4) was, against the "
        "unsplit direct conv",
    )


# ---------------------------------------------------------------------------------------------
# Reductions, pooling, layout transforms, the elementwise fallback
# ---------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ReductionConfig(RuleConfig):
    """Knobs of the reductions and pooling (:class:`~.reduction.Reduction`,
    :class:`~.pool.VaryingWindowPool2D`).

    Parameters
    ----------
    max_serial_elements : int
        Largest number of reduced elements per output that one thread reduces alone; above it
        the threads of a work group share the reduction.
    serial_threads : int
        Work-group size of the serial schedule (threads, one output each).
    split_threads : int
        Work-group size of the cross-thread schedule (threads sharing one output).
    """

    THREAD_KNOBS: ClassVar[Tuple[str, ...]] = ("serial_threads", "split_threads")

    # Measured with both schedules forced (the reduction kernel alone reading a texture,
    # float32, device timer, median of 15 samples after warm-up) on a desktop GPU through
    # OpenCL. Serial time / split time, > 1 where the split schedule wins:
    #
    #   reduced elements n                  4     8    16    32    64   128   256  1024  4096
    #   sum over H, W; 16 output pixels  0.94  0.99  1.00  1.22  2.14  4.14  7.85  28.3  13.5
    #   same, 128 output pixels          0.95  0.93  0.99  0.99  0.98  0.99  1.57  4.90  10.1
    #   same, 1024 output pixels         0.96  0.97  1.01  1.01  0.98  0.97  1.61  2.89  3.76
    #   sum over channels; 196 outputs   0.98  1.02  1.04  1.03  1.19  2.15  4.00  12.5  50.8
    #
    # Up to 16 elements the two are within 4%, or the serial one is up to 7% faster; from 32 on
    # the split schedule is never more than 3% slower, and 2x faster already at 64 (few outputs).
    # Kernels under about 7 us are launch-bound there, which flattens the small counts.  On
    # PoCL (a CPU without fast local memory) the serial schedule wins almost everywhere: it
    # cannot place the switch.
    # The Relay-era Adreno schedules switched at 50, not measured again here.
    # Choices: 1 makes every reduction split, 1 << 30 every reduction serial.
    max_serial_elements: int = knob(
        16, (1, 16, 1 << 30), "the switch measured on a desktop GPU (table above)"
    )
    serial_threads: int = knob(
        64,
        (32, 64, 128, 256),
        "Adreno GPUs run 64 to 128 threads per wave; 64 keeps small outputs in one wave",
    )
    split_threads: int = knob(
        64,
        (16, 32, 64, 128, 256),
        "a power of two (the cross-thread tree reduction halves it); 64 threads of 4 lanes "
        "read 256 values per step, enough to hide the texture latency on a single output",
    )


@dataclasses.dataclass(frozen=True)
class LayoutTransformConfig(RuleConfig):
    """Knobs of the layout transforms (:class:`~.layout_transform.LayoutTransform`).

    Parameters
    ----------
    threads : int
        Largest work-group size over the fused (vectorized) output elements; a group from half
        of it up that divides them is taken when there is one, so that no group is checked.
    """

    THREAD_KNOBS: ClassVar[Tuple[str, ...]] = ("threads",)

    threads: int = knob(
        256,
        (64, 128, 256, 512, 1024),
        "a multiple of every wave size (Adreno 64/128, NVIDIA 32) and the limit of the Adreno "
        "tags: a copy kernel has no registers to spare, so the largest group hides most latency",
    )


@dataclasses.dataclass(frozen=True)
class FallbackConfig(RuleConfig):
    """Knobs of the elementwise fallback on textures (:class:`~.fallback.Fallback`).

    Parameters
    ----------
    threads : int
        Work-group size over the fused spatial loops.
    """

    THREAD_KNOBS: ClassVar[Tuple[str, ...]] = ("threads",)

    threads: int = knob(
        256,
        (64, 128, 256, 512, 1024),
        "the target's thread limit (256 on the Adreno tags), bounded by from_target: an "
        "elementwise kernel holds few registers, so the largest group the device allows",
    )
