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
"""The conv kernels of the layer sweep alone: Adreno schedule variants against each other and
against the generic buffer target, without the layout transforms and VM calls around them.

Host (needs the compiler), once per Python stack (the current mirror, or another checkout's
venv for its schedules):

    python bench/conv_schedules.py build --out DIR --label a [--variants default,...]
    python bench/conv_schedules.py build --out DIR --label c --generic
    python bench/conv_schedules.py build --out DIR --label a_b8 --batch 8 [--groups grouped]

compiles every layer of ``models.LAYERS`` (weights lifted as in ``build_worker``), and records
each conv kernel of it (the convolution, or the three Winograd stages; not the weight
re-layout) with its arguments' shapes, dtypes and memory scopes. ``--variants`` compiles the
Adreno layers once per entry of ``VARIANTS`` (knob overrides of the rule configs); ``--batch``
gives every layer that many images (1: the networks' batch), to see how a kernel's throughput
grows when the layer has more work items than one image gives it; ``--groups`` builds only the
ungrouped (``dense``) or the depthwise (``grouped``) layers, ``--kernel 3`` only those of one
kernel size; ``--grid`` adds a variant per combination of knob values.

Device (runtime only, the bundle of ``run.py bundle`` on PYTHONPATH):

    python bench/conv_schedules.py device --bundle DIR --out FILE.csv

times each recorded kernel on its own (arguments allocated in their scopes, random inputs,
device timer, median of ``--repeat`` samples of enough launches for 2 ms), sums a layer's
conv kernels (``kernel_us``) and, apart, the other kernels of its ``main`` (``other_us``: the
layout transforms into and out of the texture layout), and checks each Adreno variant's
output against the first label's on the same inputs. Beside ``kernel_us``: the host's
enqueue time per launch within the timer's spans (``kernel_host_us``; equal to ``kernel_us``
when the kernel is shorter than a launch, and the timer then measures the host) and the
median of the kernels' own profiling events over 50 traced launches (``kernel_event_us``).
"""

import argparse
import ast
import contextlib
import csv
import ctypes
import dataclasses
import itertools
import json
import os
import pathlib
import sys
from unittest import mock

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import module_tree  # noqa: E402  pylint: disable=wrong-import-position

#: Knob overrides per variant: rule config class name -> fields; or compile options
#: (``_OPTIONS``): ``required_pass``, an opt-in pass to compile with,
#: ``conv_weights_in_textures``, and ``depthwise_input_in_buffer`` (an experiment: the texture
#: scope rule keeps a grouped conv's input in an NCHW4c buffer).
VARIANTS = {
    "default": {},
    "guard_off": {"Conv2dConfig": {"occupancy_waves": ()}},
    "guard_16_8_4": {"Conv2dConfig": {"occupancy_waves": (16, 8, 4)}},
    "tile_2x1": {"Conv2dConfig": {"columns": 1, "occupancy_waves": ()}},
    "tile_1x2": {"Conv2dConfig": {"channel_blocks": 1, "pointwise_columns": 2}},
    "dw_one_row": {"GroupConv2dConfig": {"columns": 2, "rows": 1}},
    "split_k_1": {"Conv2dConfig": {"split_k": 1}},
    "split_k_2": {"Conv2dConfig": {"split_k": 2}},
    "split_k_4": {"Conv2dConfig": {"split_k": 4}},
    "split_k_16": {"Conv2dConfig": {"split_k": 16}},
    "split_k_16_waves_16": {"Conv2dConfig": {"split_k": 16, "split_k_waves": 16}},
    "dw_columns_4": {"GroupConv2dConfig": {"columns": 4, "rows": 1}},
    "dw_threads_128": {"GroupConv2dConfig": {"threads": 128}},
    "dw_threads_256": {"GroupConv2dConfig": {"threads": 256}},
    "unroll_window": {"Conv2dConfig": {"unroll_window": True}},
    "unroll_window_waves_4_2": {"Conv2dConfig": {"unroll_window": True, "occupancy_waves": (4, 2)}},
    "unroll_window_guard_off": {"Conv2dConfig": {"unroll_window": True, "occupancy_waves": ()}},
    "unroll_window_threads_64": {"Conv2dConfig": {"unroll_window": True, "threads": 64}},
    "guard_off_unsplit": {"Conv2dConfig": {"occupancy_waves": (), "split_k": 1}},
    # Work groups of whole rows staging each step's input (and weights) in local memory; split-K
    # takes a layer first unless it is off (_unsplit).
    **{
        f"staged_{rows}{weights}{guard}{unsplit}": {
            "Conv2dConfig": {
                "shared_rows": rows,
                "shared_weights": bool(weights),
                **({"occupancy_waves": ()} if guard else {}),
                **({"split_k": 1} if unsplit else {}),
            }
        }
        for rows in (1, 2, 4)
        for weights in ("", "_weights")
        for guard in ("", "_guard_off")
        for unsplit in ("", "_unsplit")
    },
    # Split-K with each step's weights staged (and the same splits unstaged).
    "guard_off_split_16": {
        "Conv2dConfig": {"occupancy_waves": (), "split_k": 16, "split_k_waves": 16}
    },
    **{
        f"split_weights{guard}{most}": {
            "Conv2dConfig": {
                "shared_weights": True,
                **({"occupancy_waves": ()} if guard else {}),
                **({"split_k": 16, "split_k_waves": 16} if most else {}),
            }
        }
        for guard in ("", "_guard_off")
        for most in ("", "_16")
    },
    # Tiles of several output rows, split-K with the weights staged, the guard off; _columns:
    # the kernel columns unrolled (the row segment at constant offsets). One row without
    # _columns is split_weights_guard_off{,_16}.
    **{
        f"rows_{rows}_split_weights{columns}{most}": {
            "Conv2dConfig": {
                "tile_rows": rows,
                "shared_weights": True,
                "occupancy_waves": (),
                "unroll_columns": bool(columns),
                **({"split_k": 16, "split_k_waves": 16} if most else {}),
            }
        }
        for rows in (1, 2, 4)
        for columns in ("", "_columns")
        for most in ("", "_16")
        if rows > 1 or columns
    },
    # Larger register tiles over the staged rows (2 rows, weights staged, never split).
    **{
        f"staged_2_weights_tile_{blocks}x{columns}": {
            "Conv2dConfig": {
                "shared_rows": 2,
                "shared_weights": True,
                "channel_blocks": blocks,
                "columns": columns,
                "pointwise_columns": columns,
                "occupancy_waves": (),
                "split_k": 1,
            }
        }
        for blocks, columns in ((1, 4), (2, 4), (4, 2), (4, 4))
    },
    # Not knobs: the opt-in TIR pass TextureBorderPadding, and the weights in textures (every
    # conv kind).
    "texture_border_padding": {"required_pass": "TextureBorderPadding"},
    "conv_weights_in_textures": {"conv_weights_in_textures": True},
    "depthwise_input_in_buffer": {"depthwise_input_in_buffer": True},
}

#: Variant entries that are compile options, not rule knobs.
_OPTIONS = ("required_pass", "conv_weights_in_textures", "depthwise_input_in_buffer")


@contextlib.contextmanager
def _knobs(overrides):
    """Make ``from_target`` of each named rule config return the defaults with ``overrides``."""
    # pylint: disable-next=import-outside-toplevel
    from tvm.s_tir.dlight.adreno import config

    with contextlib.ExitStack() as patches:
        for name, fields in overrides.items():
            if name in _OPTIONS:
                continue
            cls = getattr(config, name)

            def _patched(target, _original=cls.from_target, _fields=fields):
                return dataclasses.replace(_original(target), **_fields)

            patches.enter_context(mock.patch.object(cls, "from_target", staticmethod(_patched)))
        yield


@contextlib.contextmanager
def _compile_options(overrides):
    """Compile with the opt-in pass a ``required_pass`` variant names (opt_level 3 besides),
    and with the conv weights in textures where the variant asks."""
    import tvm  # pylint: disable=import-outside-toplevel

    with contextlib.ExitStack() as stack:
        config = {}
        if overrides.get("conv_weights_in_textures"):
            config["relax.adreno.conv_weights_in_textures"] = True
        if "required_pass" in overrides:
            stack.enter_context(
                tvm.transform.PassContext(
                    opt_level=3, required_pass=[overrides["required_pass"]], config=config
                )
            )
        elif config:
            stack.enter_context(tvm.transform.PassContext(config=config))
        if overrides.get("depthwise_input_in_buffer"):
            stack.enter_context(_grouped_conv_input_in_buffer())
        yield


def _grouped_conv_input_in_buffer():
    """Within: the Adreno texture scope rule reads no grouped conv2d's input from a texture
    (the bench's experiment on where the depthwise kernel's time goes; not a compiler option)."""
    # pylint: disable-next=import-outside-toplevel
    from tvm.relax.backend.adreno.transform import annotate_texture_scope as scopes

    rule = scopes._ScopeRule  # pylint: disable=protected-access
    original = rule._reads_textures  # pylint: disable=protected-access

    def _reads_textures(self, call):
        conv2d = scopes._CONV2D  # pylint: disable=protected-access
        if call.op.same_as(conv2d) and int(call.attrs.groups) > 1:
            return [False]
        return original(self, call)

    return mock.patch.object(rule, "_reads_textures", _reads_textures)


def _conv_calls(mod, target):
    """The kernels ``main`` calls, as (name, [(shape, dtype, scope) of each argument, output
    last]): the conv kernels, and the others (layout transforms), in two lists."""
    import tvm  # pylint: disable=import-outside-toplevel
    from tvm import relax  # pylint: disable=import-outside-toplevel

    with target:
        lowered = tvm.transform.Sequential(
            relax.pipeline.library_dispatch_passes(target) + relax.pipeline.legalize_passes(target)
        )(mod)
    call_tir = tvm.ir.Op.get("relax.call_tir")
    found, others = [], []

    def _info(type_):
        vdev = type_.vdevice
        scope = "global" if vdev is None else str(vdev.memory_scope)
        return [int(d) for d in type_.shape], str(type_.dtype), scope

    def _visit(expr):
        if isinstance(expr, relax.Call) and expr.op.same_as(call_tir):
            name = expr.args[0].name_hint
            if "weight_transform" in name:
                return  # lifted: runs once with the weights, not per inference
            args = [_info(arg.ty) for arg in expr.args[1].fields] + [_info(expr.ty)]
            (found if "conv2d" in name else others).append((name, args))

    relax.analysis.post_order_visit(lowered["main"], _visit)
    return found, others


def grid_variants(spec: str):
    """Variants for every combination of the values of comma-separated terms
    ``RuleConfig.knob=v1/v2/...`` (values read as Python literals), named ``knob_v1-knob2_v``."""
    from tvm.s_tir.dlight.adreno import config  # pylint: disable=import-outside-toplevel

    axes = []
    for term in spec.split(","):
        name, _, values = term.partition("=")
        rule, _, knob = name.partition(".")
        fields = getattr(getattr(config, rule, None), "__dataclass_fields__", {})
        if not (knob in fields and values):
            raise ValueError(
                f"--grid term {term!r}: write RuleConfig.knob=value/value/... with a knob of "
                "tvm.s_tir.dlight.adreno.config"
            )
        try:
            axes.append((rule, knob, [ast.literal_eval(v) for v in values.split("/")]))
        except (ValueError, SyntaxError) as err:
            raise ValueError(f"--grid term {term!r}: a value is no Python literal") from err
    variants = {}
    for combo in itertools.product(*(values for _, _, values in axes)):
        overrides = {}
        for (rule, knob, _), value in zip(axes, combo):
            overrides.setdefault(rule, {})[knob] = value
        variants["-".join(f"{knob}_{v}" for (_, knob, _), v in zip(axes, combo))] = overrides
    return variants


def _applies(variant: str, layer) -> bool:
    """Whether a variant changes the schedule of ``layer`` (groups > 1: GroupConv2d's knobs)."""
    overrides = VARIANTS[variant]
    if not overrides or any(name in overrides for name in _OPTIONS):
        return True
    rule = "GroupConv2dConfig" if layer[4] > 1 else "Conv2dConfig"
    return rule in overrides


def cmd_build(args) -> int:
    """Compile every layer (per variant) and record its conv kernels in ``cases-LABEL.json``."""
    import build_worker  # pylint: disable=import-outside-toplevel
    import models  # pylint: disable=import-outside-toplevel

    (args.out / "lib").mkdir(parents=True, exist_ok=True)
    config = "c" if args.generic else "a"
    target = build_worker.target_of(config)
    variants = ["default"] if args.generic else args.variants.split(",")
    if args.grid and not args.generic:
        try:
            grid = grid_variants(args.grid)
        except ValueError as err:
            raise SystemExit(f"conv_schedules: {err}") from err
        VARIANTS.update(grid)
        variants += [name for name in grid if name not in variants]
    cases = []
    for layer in models.tiny_layers() if args.tiny else models.LAYERS:
        if args.groups != "all" and (layer[4] > 1) != (args.groups == "grouped"):
            continue
        if args.kernel and layer[2] != args.kernel:
            continue
        mod, _ = models.single_conv(*layer, batch=args.batch)
        mod["main"] = mod["main"].with_attr("num_input", 1)
        for variant in variants:
            if not _applies(variant, layer):
                continue
            label = args.label if variant == "default" else f"{args.label}:{variant}"
            overrides = {} if args.generic else VARIANTS[variant]
            with _knobs(overrides), _compile_options(overrides):
                cases.append(build_case(mod, target, layer, args.batch, label, args.out))
    write_bundle(args.out, args.label, cases)
    return 0


def build_case(mod, target, layer, batch: int, label: str, out: pathlib.Path) -> dict:
    """Compile ``mod`` (one layer) under the knobs in effect into ``out/lib`` and return its
    case: the library and the arguments of its conv kernels and of the others."""
    import build_worker  # pylint: disable=import-outside-toplevel
    import tvm  # pylint: disable=import-outside-toplevel

    calls, others = _conv_calls(mod, target)
    exe = tvm.compile(mod, target=target, relax_pipeline=build_worker.lifted_pipeline(target))
    lib = f"{'-'.join(str(v) for v in layer)}__{label.replace(':', '_')}.so"
    exe.export_library(str(out / "lib" / lib))
    print(f"built {lib}: {[name for name, _ in calls]}", flush=True)
    return {
        "layer": list(layer),
        "batch": batch,
        "label": label,
        "lib": lib,
        "calls": calls,
        "others": others,
    }


def write_bundle(out: pathlib.Path, label: str, cases) -> None:
    """Write ``cases-LABEL.json`` and this script (with module_tree) for the device step."""
    (out / f"cases-{label}.json").write_text(json.dumps(cases, indent=1), encoding="utf-8")
    (out / "bench").mkdir(exist_ok=True)
    for name in ("conv_schedules.py", "module_tree.py"):
        (out / "bench" / name).write_text((HERE / name).read_text(encoding="utf-8"))


def layer_flop(layer, batch=1):
    """The direct convolution's FLOP of ``layer`` (a ``models.LAYERS`` tuple), ``batch`` images."""
    cin, cout, k, stride, groups, size = layer
    out = (size + 2 * (k // 2) - k) // stride + 1
    return 2.0 * batch * cout * out * out * (cin // groups) * k * k


def cmd_device(args) -> int:
    """Time every recorded kernel of the bundle's cases on the OpenCL device (runtime only)."""
    import numpy as np  # pylint: disable=import-outside-toplevel
    import tvm  # pylint: disable=import-outside-toplevel

    if not tvm.runtime.enabled("opencl"):
        lib = os.path.join(os.path.dirname(tvm.__file__), "lib", "libtvm_runtime_opencl.so")
        ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)
    dev = tvm.opencl(0)
    cases = []
    for path in sorted(args.bundle.glob("cases-*.json")):
        cases += json.loads(path.read_text(encoding="utf-8"))
    rng = np.random.default_rng(20261201)
    outputs = {}
    rows = []
    for case in cases:
        layer = tuple(case["layer"])
        row = {
            "device": dev.device_name,
            "layer": ",".join(map(str, layer)),
            "label": case["label"],
            "batch": case.get("batch", 1),
        }
        try:
            lib = tvm.runtime.load_module(str(args.bundle / "lib" / case["lib"]))
            total, kernels, parts = 0.0, [], {"host": 0.0, "event": 0.0}
            for name, infos in case["calls"]:
                median, tensors, host = _time_kernel(lib, name, infos, dev, rng, args.repeat)
                total += median
                kernels.append(f"{name}={median * 1e6:.1f}")
                event = _kernel_event_seconds(lib, name, tensors, dev)
                for part, seconds in (("host", host), ("event", event)):
                    parts[part] = None if None in (seconds, parts[part]) else parts[part] + seconds
                if len(case["calls"]) == 1:
                    outputs[(layer, case["label"])] = (
                        [t.numpy() for t in tensors[:-1]],
                        tensors[-1].numpy(),
                    )
            other_total, others = 0.0, []
            for name, infos in case.get("others", []):
                if module_tree.function_holder(lib, name) is None:
                    others.append(f"{name}=absent")
                    continue
                median, _, _ = _time_kernel(lib, name, infos, dev, rng, args.repeat)
                other_total += median
                others.append(f"{name}={median * 1e6:.1f}")
            row.update(
                kernel_us=round(total * 1e6, 2),
                **{
                    f"kernel_{part}_us": "" if seconds is None else round(seconds * 1e6, 2)
                    for part, seconds in parts.items()
                },
                gflops=round(layer_flop(layer, row["batch"]) / total / 1e9, 1),
                kernels=" ".join(kernels),
                other_us=round(other_total * 1e6, 2),
                others=" ".join(others),
                status="ok",
            )
        except Exception as err:  # pylint: disable=broad-except
            row.update(status="error", error=str(err).strip().splitlines()[-1][:200])
        rows.append(row)
        print(row, flush=True)
    _check_against_first(cases, outputs, rows, args, dev)
    fields = ["device", "layer", "label", "batch", "kernel_us", "kernel_host_us"]
    fields += ["kernel_event_us", "gflops", "max_abs_diff"]
    fields += ["status", "kernels", "other_us", "others", "error"]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    return 0


def _time_kernel(lib, name, infos, dev, rng, repeat):
    """Median seconds of one launch of kernel ``name`` on fresh random arguments (allocated in
    their scopes), the arguments after a first run, and the host's enqueue time per launch
    within those spans (the runtime's ``timed_spans``; None where it has none)."""
    import numpy as np  # pylint: disable=import-outside-toplevel
    import tvm  # pylint: disable=import-outside-toplevel

    holder = module_tree.function_holder(lib, name)
    tensors = []
    for shape, dtype, scope in infos:
        tensor = tvm.runtime.empty(tuple(shape), dtype, dev, mem_scope=scope)
        tensor.copyfrom(rng.uniform(-1, 1, size=shape).astype(dtype))
        tensors.append(tensor)
    holder[name](*tensors)
    probe = holder.time_evaluator(name, dev, number=5, repeat=3)(*tensors)
    number = max(1, min(2000, int(2e-3 / max(probe.mean, 1e-7))))
    take_spans = tvm.get_global_func("runtime.opencl.timed_spans", allow_missing=True)
    if take_spans is not None:
        take_spans(dev)  # forget the probe's spans
    res = holder.time_evaluator(name, dev, number=number, repeat=repeat)(*tensors)
    host = None
    if take_spans is not None:
        spans = [int(span["host_enqueue_ns"]) for span in take_spans(dev)]
        host = float(np.median(spans)) * 1e-9 / number if spans else None
    return float(np.median(res.results)), tensors, host


def _kernel_event_seconds(lib, name, tensors, dev, launches=50):
    """The median of kernel ``name``'s own profiling events (start to end) over ``launches``
    traced launches: its time on the device, whatever the host's pace; None where the runtime
    has no command trace."""
    import numpy as np  # pylint: disable=import-outside-toplevel
    import tvm  # pylint: disable=import-outside-toplevel

    start_trace = tvm.get_global_func("runtime.opencl.start_command_trace", allow_missing=True)
    if start_trace is None:
        return None
    holder = module_tree.function_holder(lib, name)
    dev.sync()
    start_trace(dev)
    try:
        for _ in range(launches):
            holder[name](*tensors)
        dev.sync()
    finally:
        commands = tvm.get_global_func("runtime.opencl.stop_command_trace")(dev)
    times = [int(end) - int(start) for _, start, end in commands]
    return float(np.median(times)) * 1e-9 if times else None


def _check_against_first(cases, outputs, rows, args, dev):
    """Run each single-kernel Adreno variant on the inputs of the first label's run of the same
    layer and batch and record the largest difference of the outputs."""
    import numpy as np  # pylint: disable=import-outside-toplevel
    import tvm  # pylint: disable=import-outside-toplevel

    first = {}
    for case, row in zip(cases, rows):
        layer_and_batch = (*case["layer"], case.get("batch", 1))
        key = (tuple(case["layer"]), case["label"])
        if key not in outputs or len(case["calls"]) != 1:
            continue
        if layer_and_batch not in first:
            first[layer_and_batch] = (case, outputs[key])
            row["max_abs_diff"] = 0.0
            continue
        ref_case, (inputs, want) = first[layer_and_batch]
        name, infos = case["calls"][0]
        if [i[:2] for i in infos] != [i[:2] for i in ref_case["calls"][0][1]]:
            continue  # another layout (the generic target): checked by the layer sweep
        lib = tvm.runtime.load_module(str(args.bundle / "lib" / case["lib"]))
        tensors = []
        # The output starts as NaN: a kernel that writes nothing cannot pass.
        for value, (shape, dtype, scope) in zip(inputs + [np.full_like(want, np.nan)], infos):
            tensor = tvm.runtime.empty(tuple(shape), dtype, dev, mem_scope=scope)
            tensor.copyfrom(value)
            tensors.append(tensor)
        module_tree.function_holder(lib, name)[name](*tensors)
        row["max_abs_diff"] = float(np.abs(tensors[-1].numpy() - want).max())


def main() -> int:
    """Parse the command line and run one step."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="step", required=True)
    build = sub.add_parser("build")
    build.add_argument("--out", type=pathlib.Path, required=True)
    build.add_argument("--label", required=True)
    build.add_argument("--variants", default="default")
    build.add_argument("--generic", action="store_true")
    build.add_argument("--tiny", action="store_true", help="small shapes for a CPU dry run")
    build.add_argument("--batch", type=int, default=1, help="images per layer (default 1)")
    build.add_argument(
        "--grid",
        help="more variants: every combination of RuleConfig.knob=v1/v2/... terms, "
        "comma-separated (e.g. GroupConv2dConfig.columns=1/2,GroupConv2dConfig.threads=64/128)",
    )
    build.add_argument(
        "--groups",
        choices=("all", "dense", "grouped"),
        default="all",
        help="the layers to build: all, the ungrouped ones or the depthwise ones (default all)",
    )
    build.add_argument(
        "--kernel", type=int, default=0, help="only the layers of this kernel size (e.g. 3)"
    )
    device = sub.add_parser("device")
    device.add_argument("--bundle", type=pathlib.Path, required=True)
    device.add_argument("--out", type=pathlib.Path, required=True)
    device.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    return cmd_build(args) if args.step == "build" else cmd_device(args)


if __name__ == "__main__":
    sys.exit(main())
