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
"""Device side of the benchmark: runs from a bundle with the TVM runtime only (no compiler).

    TVM_USE_RUNTIME_LIB=1 python bench/device_runner.py --bundle DIR --out OUTDIR \
        [--tasks ceilings,models,profile,startup,checks] [--rpc] [--repeat 50]

Every model/config row is measured independently: an error is recorded in the CSV and the run
goes on.  Writes OUTDIR/results.csv, OUTDIR/profile.csv, OUTDIR/checks.csv, OUTDIR/env.json.

How a row is timed: ``median_ms`` (with ``p90_ms`` and ``min_ms``) is the peers' method, the
host's wall clock of ``number`` back-to-back calls between a device sync before and after,
per call, over ``--repeat`` samples (``number`` makes a sample about 2 ms).  The same calls
timed by ``runtime.timer.opencl`` give ``device_span_ms`` (first timed command's start to the
end of the marker closing the span) and, from ``runtime.opencl.timed_spans``, where the span's
time went: ``span_start_delay_ms`` (enqueue to start of its first command),
``span_host_enqueue_ms`` (the host enqueueing the span) and ``span_drain_ms`` (the device
finishing after the last enqueue), all per call and medians over the samples.
"""

from __future__ import annotations

import argparse
import csv
import ctypes
import datetime
import functools
import glob
import json
import math
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import inputs as bench_inputs  # noqa: E402  pylint: disable=wrong-import-position

FIELDS = [
    "date",
    "device",
    "driver",
    "platform",
    "git_commit",
    "kind",
    "model",
    "config",
    "dtype",
    "status",
    "error",
    "gflop",
    "mbytes",
    "median_ms",
    "p90_ms",
    "min_ms",
    "device_span_ms",
    "span_start_delay_ms",
    "span_host_enqueue_ms",
    "span_drain_ms",
    "e2e_median_ms",
    "e2e_p90_ms",
    "conv_kernel_ms",
    "repeats",
    "gflops",
    "pct_peak",
    "gbs",
    "pct_bw",
    "max_abs_err",
    "rel_err",
    "correct",
    "compile_s",
    "lifted",
    "vdevices",
    # One steady-state call of main: runtime.opencl.counters() and the VM's own builtin calls.
    "launches",
    # What the build's launch census (launch_census.py, in the meta) says one call launches.
    "census_launches",
    "buffer_image_copies",
    "host_device_copies",
    "objects_created",
    "queue_waits",
    "vm_alloc_storage",
    "vm_alloc_tensor",
    "vm_to_device",
    "vm_null_value",
    # Back-to-back steady-state calls, per call: the sum of the commands' device times from a
    # runtime.opencl command trace (busy), the wall clock of the same number of calls without
    # trace or timer (steady_wall: the median of 7 such rounds, as single rounds spread by up
    # to a third on the GPU box) and with the trace on (traced_wall: events cost host time),
    # and busy over traced_wall. On NVIDIA's OpenCL an event adds device time to its command
    # (busy exceeds steady_wall on launch-heavy networks), so busy is compared with the wall
    # clock taken under the same trace; steady_wall is the throughput to set beside the peers.
    "busy_ms",
    "steady_wall_ms",
    "traced_wall_ms",
    "busy_pct",
    "notes",
]
CONFIG_NAMES = {
    "a": "texture (patched)",
    "b": "texture (base)",
    "c": "generic OpenCL",
    "t": "texture (patched, tuned)",
    "f": "texture (patched, depthwise and 1x1 convolutions fused)",
    "g": "texture (patched, tuned, depthwise and 1x1 convolutions fused)",
    "u": "texture (patched, tuned warm)",
    "w": "texture (patched, conv weights in textures)",
    "h": "texture (patched, float16 texture storage)",
    "k": "texture (patched, tuned, float16 texture storage)",
}
REL_TOL = 1e-3  # |err| / max|ref| above this is wrong for float32
# With float16 texture storage every tensor between kernels is rounded to half (2**-11): the
# real-model bound of the texture suite (HALF_STORAGE_TOLERANCE in test_texture_models.py).
HALF_STORAGE_REL_TOL = 2e-2
FLOAT16_STORAGE_CONFIGS = ("h", "k")


def rel_tol(config: str) -> float:
    """The relative error above which a configuration's output is wrong."""
    return HALF_STORAGE_REL_TOL if config in FLOAT16_STORAGE_CONFIGS else REL_TOL


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def one_line(err: BaseException) -> str:
    lines = [l.strip() for l in str(err).strip().splitlines() if l.strip()]
    return f"{type(err).__name__}: {lines[-1] if lines else ''}"[:300]


def load_tvm():
    import tvm  # pylint: disable=import-outside-toplevel

    if not tvm.runtime.enabled("opencl"):
        path = os.path.join(os.path.dirname(tvm.__file__), "lib", "libtvm_runtime_opencl.so")
        ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    return tvm


class Session:
    """Local device or a remote one over TVM RPC (tracker from TVM_TRACKER_HOST/PORT/KEY)."""

    def __init__(self, tvm, rpc: bool):
        self.tvm = tvm
        self.remote = None
        if rpc:
            from tvm import rpc as tvm_rpc  # pylint: disable=import-outside-toplevel

            tracker = tvm_rpc.connect_tracker(
                os.environ["TVM_TRACKER_HOST"], int(os.environ.get("TVM_TRACKER_PORT", "9190"))
            )
            self.remote = tracker.request(
                os.environ.get("TVM_TRACKER_KEY", "android"), priority=0, session_timeout=3600
            )
            self.dev = self.remote.cl(0)
        else:
            self.dev = tvm.opencl(0)

    def load(self, path: str):
        if self.remote is None:
            return self.tvm.runtime.load_module(path)
        self.remote.upload(path)
        return self.remote.load_module(os.path.basename(path))

    def tensor(self, array):
        return self.tvm.runtime.tensor(array, self.dev)

    def array(self, items):
        """A list argument (the weights tuple of main_transform_params); over RPC the Array is
        built on the remote side, since a local Array of remote tensors cannot be passed."""
        if self.remote is None:
            return list(items)
        return self.remote.get_function("ffi.Array")(*items)

    def unpack(self, result):
        if self.remote is None or hasattr(result, "numpy"):
            return outputs_of(result)
        size = self.remote.get_function("ffi.ArraySize")(result)
        get = self.remote.get_function("ffi.ArrayGetItem")
        return [get(result, i) for i in range(size)]


def percentile(values, q):
    vals = sorted(values)
    if not vals:
        return float("nan")
    k = (len(vals) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return vals[lo] + (vals[hi] - vals[lo]) * (k - lo)


def outputs_of(result):
    if isinstance(result, (list, tuple)) or type(result).__name__ == "Array":
        return [a for r in result for a in outputs_of(r)]
    return [result]


class ModelRun:
    """One exported model: VM, device inputs (weights transformed once), run helpers."""

    def __init__(self, sess: Session, bundle: pathlib.Path, meta: dict, data):
        from tvm.runtime.vm import VirtualMachine  # pylint: disable=import-outside-toplevel

        self.sess, self.meta = sess, meta
        self.lib = sess.load(str(bundle / "lib" / meta["lib"]))
        devs = [sess.dev] * int(meta.get("vdevices", 1))
        self.vm = VirtualMachine(self.lib, devs)
        self.x_host = data[0]
        dev_data = [sess.tensor(a) for a in data]
        self.weights = dev_data[1:]
        if meta.get("lifted"):
            self.weights = sess.unpack(self.vm["main_transform_params"](sess.array(dev_data[1:])))
        self.x = dev_data[0]

    def run(self, x=None):
        return self.sess.unpack(self.vm["main"](self.x if x is None else x, *self.weights))

    def e2e(self):
        """Upload the image, run, read every output back."""
        x = self.sess.tensor(self.x_host)
        return [o.numpy() for o in self.run(x)]


def correctness(outs, ref_path: pathlib.Path):
    ref = np.load(ref_path)
    worst_abs, worst_rel = 0.0, 0.0
    for i, out in enumerate(outs):
        got = bench_inputs.sample(np.asarray(out, dtype=np.float32))
        want = ref[f"out{i}"]
        if got.shape != want.shape:
            raise ValueError(f"output {i}: sample shape {got.shape} != reference {want.shape}")
        err = np.abs(got.astype(np.float64) - want.astype(np.float64))
        err = np.where(np.isnan(err), np.inf, err)
        scale = max(float(ref[f"scale{i}"]), 1e-30)
        worst_abs = max(worst_abs, float(err.max()))
        worst_rel = max(worst_rel, float(err.max()) / scale)
    return worst_abs, worst_rel


def measure_model(sess, bundle, meta, ceil, args, ref_meta):
    row = dict(
        kind="layer" if meta["model"].startswith("layer:") else "network",
        model=meta["model"],
        config=meta["config"],
        dtype="float32",
        gflop=round(meta.get("gflop", 0), 4),
        mbytes=round(meta.get("bytes", 0) / 1e6, 3),
        compile_s=round(meta.get("compile_s", 0), 2),
        lifted=meta.get("lifted", ""),
        vdevices=meta.get("vdevices", ""),
    )
    if not meta.get("ok"):
        row.update(status="compile_error", error=meta.get("error", ""))
        return row, None
    fixed = {}
    if meta.get("weights_file"):
        fixed = dict(np.load(bundle / "weights" / meta["weights_file"]))
    data = bench_inputs.make_inputs(meta["params"], meta["seed"], fixed)
    notes = []
    if ref_meta and abs(bench_inputs.checksum(data) - ref_meta["input_checksum"]) > 1e-6 * max(
        1, abs(ref_meta["input_checksum"])
    ):
        notes.append("inputs differ from the reference's (numpy stream changed)")
    try:
        mr = ModelRun(sess, bundle, meta, data)
        outs = [o.numpy() for o in mr.run()]
    except Exception as err:  # pylint: disable=broad-except
        row.update(status="run_error", error=one_line(err))
        return row, None
    if ref_meta and ref_meta.get("ok"):
        try:
            abs_err, rel_err = correctness(outs, bundle / "refs" / ref_meta["ref"])
            row.update(
                max_abs_err=f"{abs_err:.3g}",
                rel_err=f"{rel_err:.3g}",
                correct="yes" if rel_err <= rel_tol(meta["config"]) and not notes else "NO",
            )
        except Exception as err:  # pylint: disable=broad-except
            notes.append("compare: " + one_line(err))
    dev = sess.dev
    try:
        for _ in range(3):
            mr.run()
        dev.sync()
        mr.vm.set_input("main", mr.x, *mr.weights)
        probe = mr.vm.time_evaluator("invoke_stateful", dev, number=1, repeat=3)("main").mean
        number = max(1, min(100, int(2e-3 / max(probe, 1e-6))))
        repeat = args.repeat
        take_timed_spans(sess)  # forget the probe's spans
        res = mr.vm.time_evaluator("invoke_stateful", dev, number=number, repeat=repeat)("main")
        span_ms = [t * 1e3 for t in res.results]
        row.update(span_columns(span_ms, take_timed_spans(sess), number))
        if sess.remote is None:
            call = functools.partial(mr.vm.invoke_stateful, "main")
            samples = [wall_clock_ms(call, dev, number) for _ in range(repeat)]
        else:
            # Over RPC this host's clock would time the network: the device timer stands in.
            samples = span_ms
            notes.append("median_ms: device timer (RPC)")
        e2e = []
        for _ in range(max(10, repeat // 2)):
            t = time.perf_counter()
            mr.e2e()
            e2e.append((time.perf_counter() - t) * 1e3)
    except Exception as err:  # pylint: disable=broad-except
        row.update(status="run_error", error="timing: " + one_line(err))
        return row, mr
    med = statistics.median(samples)
    row.update(
        status="ok",
        median_ms=f"{med:.4f}",
        p90_ms=f"{percentile(samples, 0.9):.4f}",
        min_ms=f"{min(samples):.4f}",
        e2e_median_ms=f"{statistics.median(e2e):.4f}",
        e2e_p90_ms=f"{percentile(e2e, 0.9):.4f}",
        repeats=f"{repeat}x{number}",
        notes="; ".join(notes),
    )
    try:
        row.update(busy_fraction(mr))
    except Exception as err:  # pylint: disable=broad-except
        notes.append("command trace: " + one_line(err))
        row["notes"] = "; ".join(notes)
    try:
        row.update(inference_counts(mr))
    except Exception as err:  # pylint: disable=broad-except
        notes.append("inference counts: " + one_line(err))
        row["notes"] = "; ".join(notes)
    if row["kind"] == "layer":
        # The conv kernel alone (sync around each VM call), without the layout transforms of
        # the texture configurations: the profile runs last, the instrument stays in this VM.
        try:
            prof = profile_model(mr, runs=10)
            row["conv_kernel_ms"] = f"{sum(ms for name, ms, _ in prof if 'conv2d' in name):.4f}"
            row["notes"] = "; ".join(
                notes
                + [
                    "calls: "
                    + " ".join(
                        f"{name.replace('vm.builtin.', '')}={ms:.3f}" for name, ms, _ in prof[:6]
                    )
                ]
            )
        except Exception as err:  # pylint: disable=broad-except
            notes.append("kernel profile: " + one_line(err))
            row["notes"] = "; ".join(notes)
    gflops = meta.get("gflop", 0) / (med * 1e-3)
    row["gflops"] = f"{gflops:.1f}"
    if ceil.get("peak_gflops"):
        row["pct_peak"] = f"{100 * gflops / ceil['peak_gflops']:.2f}"
    if meta.get("bytes"):
        gbs = meta["bytes"] / (med * 1e-3) / 1e9
        row["gbs"] = f"{gbs:.1f}"
        if ceil.get("bandwidth_gbs"):
            row["pct_bw"] = f"{100 * gbs / ceil['bandwidth_gbs']:.2f}"
    return row, mr


def wall_clock_ms(call, dev, calls: int) -> float:
    """One sample of the peers' method: the wall clock per call (ms) of ``calls`` back-to-back
    ``call()`` between a sync of ``dev`` before and after."""
    dev.sync()
    begin = time.perf_counter()
    for _ in range(calls):
        call()
    dev.sync()
    return (time.perf_counter() - begin) * 1e3 / calls


def take_timed_spans(sess):
    """The spans of the device timers finished since the last call (runtime.opencl.timed_spans),
    or [] where the runtime has no such function or the device is remote."""
    take = sess.tvm.get_global_func("runtime.opencl.timed_spans", allow_missing=True)
    if sess.remote is not None or take is None:
        return []
    return [{key: int(value) for key, value in span.items()} for span in take(sess.dev)]


def span_columns(span_ms, spans, number: int) -> dict:
    """The device timer's median span per call and, where every sample reported where its time
    went, the medians of those parts per call (ms)."""
    columns = {"device_span_ms": f"{statistics.median(span_ms):.4f}"}
    if spans and len(spans) == len(span_ms):
        for part in ("start_delay", "host_enqueue", "drain"):
            part_ns = statistics.median(span[f"{part}_ns"] for span in spans)
            columns[f"span_{part}_ms"] = f"{part_ns * 1e-6 / number:.4f}"
    return columns


def trace_calls(mr, calls: int):
    """The OpenCL commands of ``calls`` back-to-back steady-state calls of ``main`` (runtime
    command trace: profiling events, no sync between calls) and the wall clock of those calls
    up to the end of their last command."""
    tvm, dev = mr.sess.tvm, mr.sess.dev
    start_trace = tvm.get_global_func("runtime.opencl.start_command_trace", allow_missing=True)
    if mr.sess.remote is not None or start_trace is None:
        raise RuntimeError("needs a local OpenCL runtime with runtime.opencl.start_command_trace")
    mr.run()
    dev.sync()
    start_trace(dev)
    try:
        begin = time.perf_counter()
        for _ in range(calls):
            mr.run()
        dev.sync()
        wall = time.perf_counter() - begin
    finally:
        commands = tvm.get_global_func("runtime.opencl.stop_command_trace")(dev)
    return [(str(label), int(a), int(b)) for label, a, b in commands], wall


def busy_fraction(mr, calls: int = 20, rounds: int = 7):
    """Per call: device busy time (sum of kernel and copy device times, traced), the wall time
    of untraced back-to-back calls (median of ``rounds`` rounds of ``calls`` calls) and of
    traced ones, and the fraction of the traced wall time the device spends on commands."""
    commands, traced_wall = trace_calls(mr, calls)
    busy = sum(end - start for _, start, end in commands) * 1e-9
    # The box's wall clock spreads by up to a third between moments: the median of rounds.
    wall_ms = statistics.median(wall_clock_ms(mr.run, mr.sess.dev, calls) for _ in range(rounds))
    return dict(
        busy_ms=f"{busy * 1e3 / calls:.4f}",
        steady_wall_ms=f"{wall_ms:.4f}",
        traced_wall_ms=f"{traced_wall * 1e3 / calls:.4f}",
        busy_pct=f"{100 * busy / traced_wall:.1f}",
    )


def device_profile(mr, calls: int = 10):
    """Per kernel (or copy kind): device ms per call and launches per call, from the command
    trace of back-to-back calls (no sync around each kernel, unlike ``profile_model``)."""
    commands, _ = trace_calls(mr, calls)
    totals, counts = {}, {}
    for label, start, end in commands:
        totals[label] = totals.get(label, 0) + (end - start)
        counts[label] = counts.get(label, 0) + 1
    return sorted(
        ((k, v * 1e-6 / calls, counts[k] // calls) for k, v in totals.items()),
        key=lambda r: -r[1],
    )


def inference_counts(mr):
    """What one steady-state call of ``main`` issues: OpenCL commands and objects from
    ``runtime.opencl.counters()`` (local runs with a runtime that has them), and the VM's own
    builtin calls, counted by an instrument without syncs (it stays set: call this after the
    timings)."""
    tvm, row = mr.sess.tvm, {}
    row["census_launches"] = mr.meta.get("census", {}).get("launches", "")
    counters = tvm.get_global_func("runtime.opencl.counters", allow_missing=True)
    if mr.sess.remote is None and counters is not None:
        mr.run()
        mr.sess.dev.sync()
        tvm.get_global_func("runtime.opencl.reset_counters")()
        mr.run()
        got = {str(k): int(v) for k, v in counters().items()}  # before our own sync
        mr.sess.dev.sync()
        row.update(
            launches=got.get("kernel_launches", ""),
            buffer_image_copies=got.get("buffer_image_copies", ""),
            host_device_copies=got.get("host_device_copies", ""),
            objects_created=sum(
                got.get(k, 0)
                for k in ("buffers_created", "images_created", "programs_built", "kernels_created")
            ),
            queue_waits=got.get("queue_finishes", ""),
        )
    calls = {}

    def count(func, func_symbol, before_run, ret_value, *args):  # pylint: disable=unused-argument
        if before_run:
            calls[func_symbol] = calls.get(func_symbol, 0) + 1
        return 0

    mr.vm.set_instrument(count)
    mr.run()
    for name in ("alloc_storage", "alloc_tensor", "to_device", "null_value"):
        row[f"vm_{name}"] = calls.get(f"vm.builtin.{name}", 0)
    return row


def profile_model(mr, runs: int = 5):
    """Per-kernel wall time with a device sync around every VM call (instrument)."""
    dev = mr.sess.dev
    totals, counts, start = {}, {}, [0.0]

    def instrument(
        func, func_symbol, before_run, ret_value, *args
    ):  # pylint: disable=unused-argument
        dev.sync()
        if before_run:
            start[0] = time.perf_counter()
        else:
            dt = time.perf_counter() - start[0]
            totals[func_symbol] = totals.get(func_symbol, 0.0) + dt
            counts[func_symbol] = counts.get(func_symbol, 0) + 1
        return 0

    mr.vm.set_instrument(instrument)
    mr.run()
    totals.clear()
    counts.clear()
    for _ in range(runs):
        mr.run()
    # The VM keeps the instrument: profile a model only after its timings are taken.
    return sorted(
        ((k, v * 1e3 / runs, counts[k] // runs) for k, v in totals.items()), key=lambda r: -r[1]
    )


STARTUP_CHILD = r"""
import ctypes, json, os, sys, time
t0 = time.perf_counter()
import numpy as np
sys.path.insert(0, sys.argv[3])
import tvm
if not tvm.runtime.enabled("opencl"):
    ctypes.CDLL(os.path.join(os.path.dirname(tvm.__file__), "lib", "libtvm_runtime_opencl.so"), mode=ctypes.RTLD_GLOBAL)
from tvm.runtime.vm import VirtualMachine
import inputs as bench_inputs
meta = json.load(open(sys.argv[2]))
data = bench_inputs.make_inputs(meta["params"], meta["seed"])
t1 = time.perf_counter()
lib = tvm.runtime.load_module(sys.argv[1])
dev = tvm.opencl(0)
vm = VirtualMachine(lib, [dev] * int(meta.get("vdevices", 1)))
dd = [tvm.runtime.tensor(a, dev) for a in data]
w = dd[1:]
if meta.get("lifted"):
    w = list(vm["main_transform_params"](w))
out = vm["main"](dd[0], *w)
out = out.numpy() if hasattr(out, "numpy") else out[0].numpy()
t2 = time.perf_counter()
vm["main"](dd[0], *w)
dev.sync()
t3 = time.perf_counter()
stats = tvm.get_global_func("runtime.opencl.program_cache_stats")()
print("RESULT " + json.dumps({"import_s": t1 - t0, "first_result_s": t2 - t1, "second_run_s": t3 - t2,
      "checksum": float(np.sum(out)), "stats": {k: int(v) for k, v in stats.items()}}))
"""


def startup(bundle, meta, repeat, workdir):
    """Fresh processes: cold (empty TVM program cache, empty driver cache), warm (TVM cache
    filled, driver cache still empty: what a phone sees), driver-warm (both filled)."""
    lib = str(bundle / "lib" / meta["lib"])
    meta_path = str(bundle / "meta" / (meta["stem"] + ".json"))
    results = {"cold": [], "warm": [], "driver_warm": []}
    for i in range(repeat):
        tvm_cache = pathlib.Path(workdir) / f"tvmcache-{meta['stem']}-{i}"
        shutil.rmtree(tvm_cache, ignore_errors=True)
        driver_cache = pathlib.Path(workdir) / f"drvcache-{meta['stem']}-{i}"
        for mode in ("cold", "warm", "driver_warm"):
            if mode != "driver_warm":
                shutil.rmtree(driver_cache, ignore_errors=True)
            with tempfile.TemporaryDirectory(prefix="pocl-") as pocl:
                pocl_dir = pocl if mode != "driver_warm" else str(driver_cache) + "-pocl"
                env = dict(
                    os.environ,
                    TVM_OPENCL_CACHE_DIR=str(tvm_cache),
                    TVM_USE_RUNTIME_LIB="1",
                    CUDA_CACHE_PATH=str(driver_cache),
                    POCL_CACHE_DIR=pocl_dir,
                )
                t = time.perf_counter()
                proc = subprocess.run(
                    [sys.executable, "-c", STARTUP_CHILD, lib, meta_path, str(HERE)],
                    env=env,
                    capture_output=True,
                    text=True,
                    check=False,
                )
                total = time.perf_counter() - t
            if proc.returncode != 0:
                raise RuntimeError(f"startup child failed: {proc.stderr.strip().splitlines()[-1:]}")
            line = [l for l in proc.stdout.splitlines() if l.startswith("RESULT ")][-1]
            r = json.loads(line[len("RESULT ") :])
            r["process_s"] = total
            results[mode].append(r)
    return results


class CheckSkipped(Exception):
    """A runtime check that the bundle cannot run; its message says why."""


def checks(sess, bundle, metas, refs, workdir):
    """Runtime checks without the compiler: image round trips per scope, copies, a texture conv
    vs the CPU reference, export/load, precompiled programs, program cache cold/warm."""
    tvm = sess.tvm
    dev = sess.dev
    rows = []

    def check(name, fn):
        try:
            detail = fn() or ""
            rows.append(dict(check=name, result="pass", detail=detail))
        except CheckSkipped as why:
            rows.append(dict(check=name, result="skip", detail=str(why)))
        except Exception as err:  # pylint: disable=broad-except
            rows.append(dict(check=name, result="FAIL", detail=one_line(err)))

    scopes = ["global", "global.texture", "global.texture-nhwc", "global.texture-weight"]
    for scope in scopes:
        for dtype in ("float32", "float16"):
            big = (64, 16, 3, 3, 4) if scope.endswith("weight") else (1, 16, 56, 56, 4)
            for shape in [(1, 2, 3, 5, 4), (2, 7, 4), (3, 1, 13, 4), big]:

                def _rt(scope=scope, dtype=dtype, shape=shape):
                    data = (np.arange(np.prod(shape)) % 251).astype(dtype).reshape(shape)
                    t = tvm.runtime.empty(shape, dtype, dev, mem_scope=scope)
                    t.copyfrom(data)
                    np.testing.assert_array_equal(t.numpy(), data)

                check(f"round_trip {scope} {dtype} {'x'.join(map(str, shape))}", _rt)

    def _copies():
        shape = (1, 2, 3, 5, 4)
        data = np.random.default_rng(1).random(shape, dtype="float32")
        buf = tvm.runtime.tensor(data, dev)
        a = tvm.runtime.empty(shape, "float32", dev, mem_scope="global.texture")
        b = tvm.runtime.empty(shape, "float32", dev, mem_scope="global.texture")
        c = tvm.runtime.empty(shape, "float32", dev, mem_scope="global.texture-nhwc")
        out = tvm.runtime.empty(shape, "float32", dev)
        buf.copyto(a)
        a.copyto(b)
        b.copyto(c)
        c.copyto(out)
        np.testing.assert_array_equal(out.numpy(), data)

    check("copies buffer->image->image->image(other geometry)->buffer", _copies)

    # Texture modules (config a) vs the LLVM reference: every layer and network that ran.
    for meta in metas:
        if meta["config"] != "a" or not meta.get("ok"):
            continue
        ref = refs.get(meta["model"])
        if not ref or not ref.get("ok"):
            continue

        def _conv(meta=meta, ref=ref):
            data = bench_inputs.make_inputs(meta["params"], meta["seed"], _fixed(bundle, meta))
            mr = ModelRun(sess, bundle, meta, data)
            abs_err, rel_err = correctness(
                [o.numpy() for o in mr.run()], bundle / "refs" / ref["ref"]
            )
            assert rel_err <= rel_tol(
                meta["config"]
            ), f"max |err| {abs_err:.3g} ({rel_err:.3g} of the output scale)"
            return f"max |err| {abs_err:.3g}"

        check(f"texture module vs CPU reference: {meta['model']}", _conv)

    def _precompiled():
        meta = next(
            (
                m
                for m in metas
                if m["config"] == "a" and m.get("ok") and m["model"].startswith("layer:")
            ),
            None,
        )
        if meta is None:
            raise CheckSkipped("the bundle holds no layer built for configuration (a)")
        data = bench_inputs.make_inputs(meta["params"], meta["seed"])
        first = ModelRun(sess, bundle, meta, data)
        out1 = first.run()[0].numpy()
        blob = _opencl_module(first.lib).get_function("opencl.GetPreCompiledPrograms")()
        second_lib = sess.load(str(bundle / "lib" / meta["lib"]))
        _opencl_module(second_lib).get_function("opencl.SetPreCompiledPrograms")(blob)
        from tvm.runtime.vm import VirtualMachine  # pylint: disable=import-outside-toplevel

        vm = VirtualMachine(second_lib, [dev] * int(meta.get("vdevices", 1)))
        w = [tvm.runtime.tensor(a, dev) for a in data[1:]]
        if meta.get("lifted"):
            w = list(outputs_of(vm["main_transform_params"](w)))
        out2 = outputs_of(vm["main"](tvm.runtime.tensor(data[0], dev), *w))[0].numpy()
        np.testing.assert_allclose(out2, out1, rtol=1e-6, atol=1e-6)
        return f"{len(bytes(blob))} bytes of program binaries"

    check("export/load + GetPreCompiledPrograms/SetPreCompiledPrograms round trip", _precompiled)
    return rows


def _fixed(bundle, meta):
    if meta.get("weights_file"):
        return dict(np.load(bundle / "weights" / meta["weights_file"]))
    return {}


def _opencl_module(module):
    stack = [module]
    while stack:
        mod = stack.pop()
        if mod.kind == "opencl":
            return mod
        stack.extend(mod.imports)
    raise RuntimeError("no opencl module")


PROFILE_FIELDS = ["model", "config", "kernel", "ms_per_run", "calls", "timed"]
CHECK_FIELDS = ["check", "result", "detail"]
STARTUP_FIELDS = [
    "model",
    "config",
    "mode",
    "runs",
    "first_result_s",
    "import_s",
    "process_s",
    "cache_hits",
    "cache_misses",
    "cache_stores",
    "notes",
]


def parse_args() -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", type=pathlib.Path, required=True)
    parser.add_argument("--out", type=pathlib.Path, required=True)
    parser.add_argument("--tasks", default="ceilings,models,profile,startup,checks")
    parser.add_argument("--rpc", action="store_true")
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--startup-repeat", type=int, default=3)
    parser.add_argument("--startup-models", default="resnet50__a,mobilenetv2__a,resnet50__c")
    parser.add_argument("--only", default="", help="comma-separated model substrings")
    return parser.parse_args()


def write_csv(path: pathlib.Path, fields, rows, extrasaction: str = "raise") -> None:
    """Write ``rows`` (dicts) under the header ``fields``."""
    with open(path, "w", newline="", encoding="utf-8") as csv_file:
        writer = csv.DictWriter(csv_file, fieldnames=fields, extrasaction=extrasaction)
        writer.writeheader()
        writer.writerows(rows)


def read_metas(bundle: pathlib.Path):
    """Every model/config description of the bundle (``meta/*.json``), references included."""
    return [json.loads(p.read_text()) for p in sorted((bundle / "meta").glob("*.json"))]


def measure_ceilings(tasks, select: str) -> dict:
    """The device's description and, with the ``ceilings`` task, its measured fp32 peak and
    copy bandwidth (``clbench.py``); empty if OpenCL C kernels cannot run."""
    ceil = {}
    try:
        import clbench  # pylint: disable=import-outside-toplevel

        ceil = clbench.measure(select) if "ceilings" in tasks else clbench.describe(select)
        log(
            f"device {ceil['device']} ({ceil['platform']}), driver {ceil['driver']}: fp32 peak "
            f"{ceil.get('peak_gflops', '?')} GFLOP/s, copy {ceil.get('bandwidth_gbs', '?')} GB/s"
        )
    except Exception as err:  # pylint: disable=broad-except
        log(f"ceilings failed: {one_line(err)}")
    return ceil


def write_env(args, ceil: dict, sess: Session, import_s: float, build_info: dict) -> dict:
    """Write OUTDIR/env.json: the ceilings, the Python and TVM set-up and the bundle's build."""
    env = dict(
        ceil,
        tvm_import_s=round(import_s, 2),
        python=sys.version.split()[0],
        tvm_runtime_only=os.environ.get("TVM_USE_RUNTIME_LIB") == "1",
        tvm_device_name=getattr(sess.dev, "device_name", ""),
        build=build_info,
    )
    (args.out / "env.json").write_text(json.dumps(env, indent=1))
    return env


def common_fields(ceil: dict, env: dict, build_info: dict) -> dict:
    """The fields every result row shares: date, device, driver, platform, workspace commit."""
    return {
        "date": datetime.date.today().isoformat(),
        "device": ceil.get("device", env["tvm_device_name"]),
        "driver": ceil.get("driver", ""),
        "platform": ceil.get("platform", ""),
        "git_commit": build_info.get("git_commit", ""),
    }


def models_to_run(args):
    """The bundle's model/configs to measure (--only applied) and its LLVM references by
    model."""
    metas = read_metas(args.bundle)
    refs = {m["model"]: m for m in metas if m["config"] == "ref"}
    metas = [m for m in metas if m["config"] != "ref"]
    if args.only:
        metas = [m for m in metas if any(s in m["model"] for s in args.only.split(","))]
    return metas, refs


def ceiling_rows(ceil: dict):
    """The result rows of the measured fp32 peak and copy bandwidth (none if not measured)."""
    if not ceil.get("peak_gflops"):
        return []
    return [
        {
            "kind": "ceiling",
            "model": "fp32_fma_peak",
            "config": "opencl-c",
            "status": "ok",
            "gflops": ceil["peak_gflops"],
            "notes": "8 float4 FMA chains per work item",
        },
        {
            "kind": "ceiling",
            "model": "copy_bandwidth",
            "config": "opencl-c",
            "status": "ok",
            "gbs": ceil["bandwidth_gbs"],
            "notes": f"float4 copy kernel, {ceil['copy_mib']} MiB, read+write; "
            f"clEnqueueCopyBuffer {ceil['copy_buffer_gbs']} GB/s",
        },
    ]


def measure_one(sess, args, meta: dict, ceil: dict, refs: dict):
    """Measure one model/config (an unexpected error becomes a ``run_error`` row) and log it;
    the row and the ModelRun (None if it did not load)."""
    start = time.perf_counter()
    try:
        row, model_run = measure_model(sess, args.bundle, meta, ceil, args, refs.get(meta["model"]))
    except Exception as err:  # pylint: disable=broad-except
        traceback.print_exc()
        row = {
            "kind": "network",
            "model": meta["model"],
            "config": meta["config"],
            "status": "run_error",
            "error": one_line(err),
        }
        model_run = None
    log(
        f"{meta['model']:<34} {meta['config']} ({CONFIG_NAMES.get(meta['config'], '')}): "
        f"{row.get('status')} median {row.get('median_ms', '-')} ms, "
        f"e2e {row.get('e2e_median_ms', '-')} ms, {row.get('gflops', '-')} GFLOP/s, "
        f"correct={row.get('correct', '?')} rel_err={row.get('rel_err', '-')} "
        f"{row.get('error', '')} [{time.perf_counter() - start:.1f} s]"
    )
    return row, model_run


def measure_models(sess, args, metas, refs: dict, ceil: dict):
    """Measure every model/config, networks first; the rows and the networks' ModelRuns by
    (model, config), kept for the profile (a layer's VM is dropped once it is measured)."""
    rows, keep = [], {}
    order = sorted(metas, key=lambda m: (m["model"].startswith("layer:"), m["model"], m["config"]))
    for meta in order:
        row, model_run = measure_one(sess, args, meta, ceil, refs)
        rows.append(row)
        if model_run is not None and not meta["model"].startswith("layer:"):
            keep[(meta["model"], meta["config"])] = model_run
        del model_run
    return rows, keep


def fp16_rows(metas, ceil: dict):
    """A ``skipped`` float16 row per network where the device lacks cl_khr_fp16."""
    if ceil.get("cl_khr_fp16", True):
        return []
    return [
        {
            "kind": "network",
            "model": model,
            "config": "a",
            "dtype": "float16",
            "status": "skipped",
            "error": "device lacks cl_khr_fp16 (half arithmetic, read_imageh)",
        }
        for model in sorted({m["model"] for m in metas if not m["model"].startswith("layer:")})
    ]


def profile_rows(model: str, config: str, model_run):
    """The 25 slowest kernels and copies of a network (by device time from a command trace
    where the runtime has it, else synced wall time) and its 5 slowest VM builtins."""
    try:
        kernels, how = device_profile(model_run), "device events"
    except RuntimeError:
        kernels, how = None, "wall, synced"
    prof = profile_model(model_run)
    builtins = [p for p in prof if p[0].startswith("vm.builtin.")]
    if kernels is None:
        kernels = [p for p in prof if not p[0].startswith("vm.builtin.")]
    return [
        {
            "model": model,
            "config": config,
            "kernel": name,
            "ms_per_run": f"{ms:.4f}",
            "calls": calls,
            "timed": timed,
        }
        for entries, timed in ((kernels[:25], how), (builtins[:5], "wall, synced"))
        for name, ms, calls in entries
    ]


def write_profile(args, keep: dict) -> None:
    """Profile every network that ran and write OUTDIR/profile.csv (a failure is logged)."""
    rows = []
    for (model, config), model_run in sorted(keep.items()):
        try:
            rows.extend(profile_rows(model, config, model_run))
            log(f"profiled {model} {config}")
        except Exception as err:  # pylint: disable=broad-except
            log(f"profile {model} {config} failed: {one_line(err)}")
    write_csv(args.out / "profile.csv", PROFILE_FIELDS, rows)


def write_checks(sess, args, refs: dict) -> None:
    """Run the runtime checks on every model of the bundle, write OUTDIR/checks.csv and log
    the failures."""
    metas = [m for m in read_metas(args.bundle) if m["config"] != "ref"]
    rows = checks(sess, args.bundle, metas, refs, args.out)
    write_csv(args.out / "checks.csv", CHECK_FIELDS, rows)
    npass = sum(r["result"] == "pass" for r in rows)
    nskip = sum(r["result"] == "skip" for r in rows)
    log(f"runtime checks: {npass} passed, {len(rows) - npass - nskip} failed, {nskip} skipped")
    for row in rows:
        if row["result"] != "pass":
            log(f"  {row['result'].upper()} {row['check']}: {row['detail']}")


def startup_rows(args, stem: str, meta: dict, work: str):
    """Start-up of the model ``stem`` in fresh processes: a row per mode with the medians, or
    one ``error`` row; the ratios are logged."""
    try:
        res = startup(args.bundle, meta, args.startup_repeat, work)
    except Exception as err:  # pylint: disable=broad-except
        log(f"startup {stem} failed: {one_line(err)}")
        return [
            {
                "model": meta["model"],
                "config": meta["config"],
                "mode": "error",
                "notes": one_line(err),
            }
        ]

    def median(results, key):
        return statistics.median(r[key] for r in results)

    rows = [
        {
            "model": meta["model"],
            "config": meta["config"],
            "mode": mode,
            "runs": len(results),
            "first_result_s": f"{median(results, 'first_result_s'):.3f}",
            "import_s": f"{median(results, 'import_s'):.3f}",
            "process_s": f"{median(results, 'process_s'):.3f}",
            "cache_hits": results[-1]["stats"].get("hits", ""),
            "cache_misses": results[-1]["stats"].get("misses", ""),
            "cache_stores": results[-1]["stats"].get("stores", ""),
        }
        for mode, results in res.items()
    ]
    cold, warm = median(res["cold"], "first_result_s"), median(res["warm"], "first_result_s")
    log(
        f"startup {stem}: cold {cold:.3f} s, warm (TVM program cache) {warm:.3f} s, "
        f"ratio {cold / warm:.1f}x; driver-warm "
        f"{median(res['driver_warm'], 'first_result_s'):.3f} s"
    )
    return rows


def write_startup(args) -> None:
    """Measure the start-up of each of --startup-models that compiled and write
    OUTDIR/startup.csv."""
    rows = []
    work = tempfile.mkdtemp(prefix="bench-startup-")
    for stem in [s for s in args.startup_models.split(",") if s]:
        path = args.bundle / "meta" / f"{stem}.json"
        if not path.is_file():
            continue
        meta = json.loads(path.read_text())
        if meta.get("ok"):
            rows.extend(startup_rows(args, stem, meta, work))
    shutil.rmtree(work, ignore_errors=True)
    write_csv(args.out / "startup.csv", STARTUP_FIELDS, rows)


def main() -> int:
    """Run the tasks in order: ceilings and env.json, the models (results.csv), the profile,
    the runtime checks and the start-up."""
    args = parse_args()
    tasks = set(args.tasks.split(","))
    args.out.mkdir(parents=True, exist_ok=True)
    build_json = args.bundle / "build.json"
    build_info = json.loads(build_json.read_text()) if build_json.is_file() else {}
    ceil = measure_ceilings(tasks, os.environ.get("TVM_OPENCL_DEVICE", ""))
    start = time.perf_counter()
    tvm = load_tvm()
    import_s = time.perf_counter() - start
    sess = Session(tvm, args.rpc)
    env = write_env(args, ceil, sess, import_s, build_info)
    metas, refs = models_to_run(args)
    rows, keep = ceiling_rows(ceil), {}
    if "models" in tasks:
        measured, keep = measure_models(sess, args, metas, refs, ceil)
        rows += measured + fp16_rows(metas, ceil)
    common = common_fields(ceil, env, build_info)
    for row in rows:
        for key, value in common.items():
            row.setdefault(key, value)
    write_csv(args.out / "results.csv", FIELDS, rows, extrasaction="ignore")
    if "profile" in tasks:
        write_profile(args, keep)
    keep.clear()
    if "checks" in tasks:
        write_checks(sess, args, refs)
    if "startup" in tasks and not args.rpc:
        write_startup(args)
    log("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
