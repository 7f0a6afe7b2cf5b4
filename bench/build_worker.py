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
"""Compile benchmark models for one configuration and export them (host side, needs the compiler).

Started by ``bench/run.py build`` once per configuration, in the Python environment of that
configuration (the patched stack for ``a`` and ``c``; the pristine base on PYTHONPATH for ``b``
only):

  a    qcom/adreno-opencl-texture (model BENCH_MODEL), patched pipeline (plain tvm.compile)
  b    qcom/adreno-opencl-texture, unpatched base (Adreno TIR pipeline passed by name: the base
       registers it as a single Pass, which tvm.compile cannot use)
  c    opencl (generic GPU pipeline, dlight rules, buffers)
  t    as a, compiled under the tuning database ``BENCH_TUNING_DB`` (default
       bench/tuning/nvidia-h200, written by bench/tune.py): the database's schedules where it
       has the workload, the default rules elsewhere
  u    as t, under ``BENCH_TUNING_DB_WARM`` (default bench/tuning/nvidia-h200-warm): the same
       candidates timed back to back (warm) instead of cold, for networks whose weights and
       activations stay in the device's cache between launches
  w    as a, with the convolutions' blocked weights in textures
       (option ``relax.adreno.conv_weights_in_textures``)
  f    as a, each depthwise convolution in one kernel with the 1x1 convolution reading it
       (option ``relax.adreno.fuse_depthwise_pointwise``)
  g    as t, with the depthwise and 1x1 convolutions fused as in f (the fused PrimFuncs are
       not in the database and take the default rules)
  h    as a, with float16 texture storage (``relax.adreno.float16_storage``: the images
       between kernels hold half pixels, the kernels compute in float32; no cl_khr_fp16)
  k    as t, with float16 texture storage as in h
  ref  llvm: runs here, writes the reference output samples instead of a library

Weights are parameters; ``main`` gets ``num_input = 1`` and the compile runs the target's own
Relax pipeline with ``LiftTransformParams`` between legalization and dataflow lowering, so
weight re-layouts (OIHW -> OIHW4o, into textures; the dense transpose) move into
``main_transform_params``, run once at load, as a deployment with bound weights would fold
them.  If lifting fails, the model is compiled without it and the meta says so.

Writes <out>/lib/<model>__<config>.so and <out>/meta/<model>__<config>.json.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import pathlib
import sys
import time
import traceback

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import inputs as bench_inputs  # noqa: E402  pylint: disable=wrong-import-position
import launch_census  # noqa: E402  pylint: disable=wrong-import-position
import module_tree  # noqa: E402  pylint: disable=wrong-import-position

import tvm  # noqa: E402  pylint: disable=wrong-import-position
from tvm import relax  # noqa: E402  pylint: disable=wrong-import-position

import models  # noqa: E402  pylint: disable=wrong-import-position

SEED = 20261130
WORKAROUND = "bench-adreno-base-tir"
#: The configurations compiled for the Adreno texture target.
TEXTURE_CONFIGS = ("a", "b", "f", "g", "h", "k", "t", "u", "w")
#: Per tuned configuration: the variable naming its database, its default folder in bench/tuning.
TUNING_DATABASES = {
    "g": ("BENCH_TUNING_DB", "nvidia-h200"),
    "k": ("BENCH_TUNING_DB", "nvidia-h200"),
    "t": ("BENCH_TUNING_DB", "nvidia-h200"),
    "u": ("BENCH_TUNING_DB_WARM", "nvidia-h200-warm"),
}
#: Per configuration compiled with an opt-in of the Adreno passes: its PassContext option.
COMPILE_OPTIONS = {
    "f": "relax.adreno.fuse_depthwise_pointwise",
    "g": "relax.adreno.fuse_depthwise_pointwise",
    "w": "relax.adreno.conv_weights_in_textures",
    "h": "relax.adreno.float16_storage",
    "k": "relax.adreno.float16_storage",
}


def _one_line(err: BaseException) -> str:
    lines = [l.strip() for l in str(err).strip().splitlines() if l.strip()]
    tail = lines[-1] if lines else ""
    return f"{type(err).__name__}: {tail}"[:300]


def _register_workaround():
    """On the base the Adreno TIR pipeline is a single Pass; tvm.compile wants a factory
    returning (pipeline, host finalize, device finalize)."""
    import tvm.s_tir.backend.adreno  # noqa: F401  pylint: disable=import-outside-toplevel
    from tvm.s_tir import pipeline as s_tir_pipeline  # pylint: disable=import-outside-toplevel
    from tvm.tirx import compilation_pipeline  # pylint: disable=import-outside-toplevel

    factory = compilation_pipeline.PIPELINE_MAP["adreno"]

    def _factory(**kwargs):
        result = factory(**kwargs)
        if isinstance(result, tuple):
            return result
        return result, s_tir_pipeline.finalize_host_passes, s_tir_pipeline.finalize_device_passes

    compilation_pipeline.register_tir_pipeline(WORKAROUND, _factory)


#: The device the texture configurations are compiled for: a ``model`` of the Adreno rules'
#: ``DEVICES`` (``tvm.s_tir.dlight.adreno.config``), whose facts (compute units, wave size)
#: steer their defaults. The GPU box's by default; ``BENCH_MODEL=adreno-740`` (or any other
#: entry) builds for that device, ``BENCH_MODEL=`` for a generic Adreno.
BENCH_MODEL = os.environ.get("BENCH_MODEL", "nvidia-h200")


def _register_gpu_box() -> None:
    """Add the GPU box to the rules' device table (a new device is a new entry there): the
    NVIDIA H100 and H200 have 132 streaming multiprocessors and warps of 32 threads."""
    try:
        # pylint: disable-next=import-outside-toplevel
        from tvm.s_tir.dlight.adreno import config as rule_config
    except ImportError:  # the pristine base of config (b) has no device table
        return
    facts = rule_config.DeviceFacts(132, 32, "NVIDIA H100/H200: 132 SMs, warps of 32")
    for model in ("nvidia-h100", "nvidia-h200"):
        rule_config.DEVICES.setdefault(model, facts)


def texture_target() -> tvm.target.Target:
    """The Adreno texture tag with the model of :data:`BENCH_MODEL`."""
    _register_gpu_box()
    spec = {"tag": "qcom/adreno-opencl-texture"}
    if BENCH_MODEL:
        spec["model"] = BENCH_MODEL
    return tvm.target.Target(spec, host="llvm")


def target_of(config: str) -> tvm.target.Target:
    if config in TEXTURE_CONFIGS:
        return texture_target()
    if config == "c":
        return tvm.target.Target("opencl", host="llvm")
    return tvm.target.Target("llvm")


def lifted_pipeline(target, kinds=None):
    """The target's default Relax pipeline with LiftTransformParams after legalization; with
    ``kinds`` (a dict), the launch census's kind of every PrimFunc is recorded into it there."""

    @tvm.transform.module_pass(opt_level=0)
    def _pipeline(mod, _ctx):
        record = [] if kinds is None else [launch_census.recorder(kinds)]
        with target:
            seq = tvm.transform.Sequential(
                relax.pipeline.library_dispatch_passes(target)
                + relax.pipeline.legalize_passes(target)
                + record
                + [relax.transform.LiftTransformParams(), relax.transform.DeadCodeElimination()]
                + relax.pipeline.dataflow_lower_passes(target)
                + relax.pipeline.finalize_passes(target)
            )
            return seq(mod)

    return _pipeline


def vdevice_count(mod, target) -> int:
    """Virtual devices after the target's legalization (the texture pipeline adds one per
    memory scope; the VM needs one physical device for each)."""
    with target:
        lowered = tvm.transform.Sequential(
            relax.pipeline.library_dispatch_passes(target) + relax.pipeline.legalize_passes(target)
        )(mod)
    return max(1, len(lowered.global_infos.get("vdevice", [])))


def tuning_database(config: str = "t"):
    """The database config ``t`` compiles under (``BENCH_TUNING_DB``, default the GPU box's),
    or config ``u`` (``BENCH_TUNING_DB_WARM``, the GPU box's warm-timed one).

    Opened strictly: a missing or corrupt database is an error of the (t) rows, not a silent
    untuned build. The device is not checked here: the bundle runs where it is carried, and
    the database names the device it was measured on (compared in the report). A committed
    database is xz-compressed; ``tuning_db`` hands the loader a decompressed copy."""
    import tuning_db  # pylint: disable=import-outside-toplevel

    variable, folder = TUNING_DATABASES[config]
    path = os.environ.get(variable, str(HERE / "tuning" / folder))
    return tuning_db.load(path, strict=True)


def compile_one(mod, config: str, lift: bool, kinds=None):
    """Compile ``mod`` for ``config``: its target, inside its tuning database and its opt-in
    option where it has them, with ``LiftTransformParams`` when ``lift`` (and then the kind of
    every PrimFunc recorded into ``kinds``, a dict, when given)."""
    target = target_of(config)
    kwargs = {}
    if config == "b":
        kwargs["tir_pipeline"] = WORKAROUND
    if lift:
        kwargs["relax_pipeline"] = lifted_pipeline(target, kinds)
    with contextlib.ExitStack() as stack:
        if config in TUNING_DATABASES:
            stack.enter_context(tuning_database(config))
        if config in COMPILE_OPTIONS:
            stack.enter_context(tvm.transform.PassContext(config={COMPILE_OPTIONS[config]: True}))
        return tvm.compile(mod, target=target, **kwargs)


def build(model: str, config: str, out: pathlib.Path, tiny: bool, lift: bool = True) -> dict:
    meta = dict(model=model, config=config, ok=False, error="")
    try:
        mod, info, fixed = models.get(model, tiny=tiny)
    except Exception as err:  # pylint: disable=broad-except
        meta["error"] = "model: " + _one_line(err)
        return meta
    meta.update(
        params=info["params"],
        gflop=info["gflop"],
        bytes=info.get("bytes", 0),
        layer=info.get("layer"),
        source=info.get("source", "relax"),
        seed=SEED,
    )
    mod["main"] = mod["main"].with_attr("num_input", 1)
    stem = f"{model.replace(':', '_').replace(',', '-')}__{config}"
    meta["stem"] = stem
    if fixed:
        np.savez(out / "weights" / f"{info['name']}.npz", **fixed)
        meta["weights_file"] = f"{info['name']}.npz"
    if config == "ref":
        return reference(mod, meta, fixed, out)
    target = target_of(config)
    start = time.perf_counter()
    ex, lifted, lift_error, kinds = None, lift, "", {}
    if lift:
        try:
            ex = compile_one(mod, config, lift=True, kinds=kinds)
        except Exception as err:  # pylint: disable=broad-except
            lift_error = _one_line(err)
            lifted = False
            kinds.clear()
    if ex is None:
        try:
            start = time.perf_counter()
            ex = compile_one(mod, config, lift=False)
        except Exception as err:  # pylint: disable=broad-except
            meta["error"] = "compile: " + _one_line(err)
            meta["compile_s"] = time.perf_counter() - start
            return meta
    meta["compile_s"] = time.perf_counter() - start
    meta["lifted"] = lifted
    meta["lift_error"] = lift_error
    try:
        meta["vdevices"] = vdevice_count(mod, target) if config in TEXTURE_CONFIGS else 1
    except Exception as err:  # pylint: disable=broad-except
        meta["vdevices"] = 1
        meta["vdevice_error"] = _one_line(err)
    try:
        path = out / "lib" / f"{stem}.so"
        ex.export_library(str(path))
        meta["lib"] = path.name
        meta["lib_bytes"] = path.stat().st_size
        src = "".join(m.inspect_source() for m in module_tree.opencl_modules(ex.mod))
        meta["kernels"] = src.count("__kernel void")
        meta["image_kernels"] = src.count("image2d_array_t")
        meta["ok"] = True
    except Exception as err:  # pylint: disable=broad-except
        meta["error"] = "export: " + _one_line(err)
        return meta
    try:
        # What one call of main launches, by kind (the PrimFuncs' kinds where the lifted
        # pipeline recorded them, their names elsewhere).
        meta["census"] = launch_census.census(ex.as_text(), src, kinds)
    except Exception as err:  # pylint: disable=broad-except
        meta["census_error"] = _one_line(err)
    return meta


def reference(mod, meta, fixed, out: pathlib.Path) -> dict:
    """LLVM CPU run with the generated inputs; saves strided output samples + checksums."""
    start = time.perf_counter()
    try:
        ex = tvm.compile(mod, target=tvm.target.Target("llvm"))
        meta["compile_s"] = time.perf_counter() - start
        data = bench_inputs.make_inputs(meta["params"], SEED, fixed)
        meta["input_checksum"] = bench_inputs.checksum(data)
        vm = relax.VirtualMachine(ex, tvm.cpu())
        t = time.perf_counter()
        result = vm["main"](*[tvm.runtime.tensor(a) for a in data])
        meta["run_s"] = time.perf_counter() - t
        outs = (
            result
            if isinstance(result, (list, tuple)) or type(result).__name__ == "Array"
            else [result]
        )
        arrays = {}
        for i, o in enumerate(outs):
            full = o.numpy()
            arrays[f"out{i}"] = bench_inputs.sample(full)
            arrays[f"scale{i}"] = np.array(float(np.max(np.abs(full))))
        np.savez(out / "refs" / f"{meta['stem']}.npz", **arrays)
        meta["ref"] = f"{meta['stem']}.npz"
        meta["ok"] = True
    except Exception as err:  # pylint: disable=broad-except
        meta["error"] = "reference: " + _one_line(err)
        traceback.print_exc()
    return meta


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--config", required=True, choices=["a", "b", "c", "f", "g", "h", "k", "t", "u", "w", "ref"]
    )
    parser.add_argument("--models", required=True, help="comma-separated; layer:cin,cout,k,s,g,hw")
    parser.add_argument("--out", type=pathlib.Path, required=True)
    parser.add_argument("--tiny", action="store_true")
    parser.add_argument(
        "--no-lift",
        action="store_true",
        help="keep weight re-layouts in main (for TVM RPC: a tuple of remote "
        "tensors returned by main_transform_params cannot be passed back)",
    )
    args = parser.parse_args()
    for sub in ("lib", "meta", "refs", "weights"):
        (args.out / sub).mkdir(parents=True, exist_ok=True)
    if args.config == "b":
        _register_workaround()
    names = [m for m in args.models.split(";") if m]
    for name in names:
        t = time.perf_counter()
        meta = build(name, args.config, args.out, args.tiny, lift=not args.no_lift)
        meta["tvm_file"] = tvm.__file__
        (args.out / "meta" / f"{meta.get('stem', name)}.json").write_text(
            json.dumps(meta, indent=1)
        )
        status = "ok" if meta["ok"] else meta["error"]
        print(
            f"[build {args.config}] {name}: {time.perf_counter() - t:.1f} s "
            f"{'(lifted) ' if meta.get('lifted') else ''}{status}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
