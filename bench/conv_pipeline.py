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
"""The 3x3 conv kernels of the layer sweep with their input rows software-pipelined: an
experiment on the Adreno ``Conv2d`` rule's schedule, not one of its knobs.

For each knob set of ``KNOB_SETS`` the kernel is built as the rule schedules it, and again with
the loop over (input channel step, kernel row) fused and its two parts staged
(``software_pipeline_stage`` [0, 1]): TVM's ``InjectSoftwarePipeline`` then reads the next
row's input texels into a second register buffer while the current row's multiply-adds run.
``pipe`` leaves the fused loop rolled (the buffer is picked by the step's parity at run time);
``pipe_unroll`` unrolls it, so that every index is a constant.

Host (needs the compiler):

    python bench/conv_pipeline.py build --out DIR [--tuned CSV]

``--tuned``: a ``bench/tune.py layers`` table, whose best knobs per layer are the set
``best``. The cases are in ``conv_schedules.py``'s format (label ``p:SET[:pipe|:pipe_unroll]``);
on the device, each checked against ``p:default``'s output:

    python DIR/bench/conv_schedules.py device --bundle DIR --out FILE.csv
"""

import argparse
import contextlib
import csv
import json
import pathlib
import sys
from unittest import mock

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

#: The 3x3 direct convolutions of models.LAYERS (the 512-channel one is Winograd).
LAYERS = [
    (64, 64, 3, 1, 1, 56),
    (128, 128, 3, 2, 1, 56),
    (128, 128, 3, 1, 1, 28),
    (256, 256, 3, 1, 1, 14),
]
#: Conv2dConfig overrides besides the defaults and the tuned best; each with the pipeline modes.
KNOB_SETS = {
    "g0_2x2": {"occupancy_waves": (), "channel_blocks": 2, "columns": 2},
    "g0_2x2_k4": {
        "occupancy_waves": (),
        "channel_blocks": 2,
        "columns": 2,
        "split_k": 4,
        "split_k_waves": 16,
    },
    "g42": {"occupancy_waves": (4, 2)},
}
MODES = {"": None, "pipe": False, "pipe_unroll": True}


def _pipeline_rows(sch, unroll: bool) -> None:
    """Fuse the loop above the kernel-row loop ``kh`` of the convolution's accumulation with
    it, stage the fused loop's input row read before its multiply-adds, unroll it if asked."""
    from tvm.s_tir.dlight import analysis  # pylint: disable=import-outside-toplevel

    root = analysis.get_root_block(sch, sch.func_working_on)
    for blk in sch.get_child_blocks(root):
        if sch.get(blk).name_hint.endswith("_init"):
            continue
        loops = sch.get_loops(blk)
        names = [sch.get(loop).loop_var.name for loop in loops]
        if "kh" in names and names.index("kh") > 0:
            row = names.index("kh")
            step = sch.fuse(loops[row - 1], loops[row])
            sch.annotate(step, "software_pipeline_stage", [0, 1])
            sch.annotate(step, "software_pipeline_order", [0, 1])
            if unroll:
                sch.unroll(step)
            return
    raise RuntimeError("no kernel-row loop under an input channel loop: not a direct conv")


def _pipelined(unroll):
    """Within: ``Conv2d`` pipelines the rows it schedules (``unroll`` None: unchanged)."""
    from tvm.s_tir.dlight.adreno import convolution  # pylint: disable=import-outside-toplevel

    if unroll is None:
        return contextlib.nullcontext()
    original = convolution.Conv2d.apply

    def _apply(self, func, target, tunable):
        sch = original(self, func, target, tunable)
        if sch is not None:
            _pipeline_rows(sch, unroll)
        return sch

    return mock.patch.object(convolution.Conv2d, "apply", _apply)


def _tuned_knobs(path: pathlib.Path):
    """The best knobs per layer (``cin,cout,k,s,g,hw``) of a ``tune.py layers`` table."""
    best = {}
    with open(path, newline="", encoding="utf-8") as table:
        for row in csv.DictReader(table):
            if row["task"].startswith("conv2d_NCHWc_OIHWo") and "winograd" not in row["task"]:
                knobs = json.loads(row["best_knobs"])
                knobs["occupancy_waves"] = tuple(knobs["occupancy_waves"])
                best[row["layer"]] = knobs
    return best


def cmd_build(args) -> int:
    """Compile each layer per knob set and pipeline mode into ``cases-p.json`` and libraries."""
    import build_worker  # pylint: disable=import-outside-toplevel
    import conv_schedules  # pylint: disable=import-outside-toplevel
    import models  # pylint: disable=import-outside-toplevel

    best = _tuned_knobs(args.tuned) if args.tuned else {}
    (args.out / "lib").mkdir(parents=True, exist_ok=True)
    target = build_worker.target_of("a")
    cases = []
    for layer in LAYERS:
        mod, _ = models.single_conv(*layer, batch=1)
        mod["main"] = mod["main"].with_attr("num_input", 1)
        sets = {"default": {}, "best": best.get(",".join(map(str, layer)), {}), **KNOB_SETS}
        for set_name, knobs in sets.items():
            for mode, unroll in MODES.items():
                if set_name in KNOB_SETS and mode == "pipe":
                    continue  # rolled lost to unrolled on every layer of the first call
                label = ":".join(part for part in ("p", set_name, mode) if part)
                overrides = {"Conv2dConfig": knobs} if knobs else {}
                # pylint: disable-next=protected-access
                with conv_schedules._knobs(overrides), _pipelined(unroll):
                    cases.append(conv_schedules.build_case(mod, target, layer, 1, label, args.out))
    conv_schedules.write_bundle(args.out, "p", cases)
    return 0


def main() -> int:
    """Parse the command line and run the step."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="step", required=True)
    build = sub.add_parser("build")
    build.add_argument("--out", type=pathlib.Path, required=True)
    build.add_argument("--tuned", type=pathlib.Path, help="a bench/tune.py layers table")
    args = parser.parse_args()
    if args.tuned and not args.tuned.is_file():
        print(f"conv_pipeline: {args.tuned}: no such file (a bench/tune.py layers table)")
        return 2
    return cmd_build(args)


if __name__ == "__main__":
    sys.exit(main())
