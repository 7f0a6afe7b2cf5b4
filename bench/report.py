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
"""Regenerate docs/benchmarks/results.rst and the plots from the committed CSVs only.

    python bench/report.py [--results bench/results] [--docs docs/benchmarks] [--run NAME]
                           [--peers bench/peers] [--call NAME]

The page opens with the current comparison: the newest peers call
(``bench/peers/<date>-<device>-peers.csv``, one device call of ``../shared/peers``: the
project's configurations beside LiteRT, tinygrad and PyTorch + cuDNN; or --call), with
``peers_latency.png``. Then the newest full run of ``bench/run.py``
(``bench/results/<date>-<device>.csv`` with companions ``-startup.csv``, ``-checks.csv``,
``-profile.csv`` and ``-env.json``; or --run): every configuration, the conv layers, the
kernels, start-up and the runtime checks.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import math
import pathlib
import sys
from typing import Dict, List, Optional

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

# pylint: disable-next=wrong-import-position
from launch_census import KINDS, POSITION_FIELDS, csv_field  # noqa: E402

CONFIGS = {
    "a": "(a) texture, patched",
    "b": "(b) texture, base",
    "c": "(c) generic OpenCL",
    "t": "(t) texture, patched, tuned",
    "f": "(f) texture, patched, depthwise and 1x1 convolutions fused",
    "g": "(g) texture, patched, tuned, depthwise and 1x1 convolutions fused",
    "u": "(u) texture, patched, tuned warm",
    "w": "(w) texture, patched, conv weights in textures",
    "h": "(h) texture, patched, float16 texture storage",
    "k": "(k) texture, patched, tuned, float16 texture storage",
}
COMPANIONS = ("-startup", "-checks", "-profile")
# Issue #14's latency targets (steady wall ms, fp32, the GPU box), for (a) and (t).
GOALS = {"resnet50": 2.3, "mobilenetv2": 0.8, "blazeface": 0.4, "palm_detection": 1.1}
PEER_ENGINES = ("mnn", "litert")
#: The comparison's columns: (engine, config prefix, header). The fastest right row of each.
COMPARISON = (
    ("litert", "gpu/fp32", "LiteRT fp32 (WebGPU)"),
    ("tinygrad", "cl/buffer", "tinygrad OpenCL buffers"),
    ("tinygrad", "cl/image2", "tinygrad IMAGE=2"),
    ("mnn", "", "MNN OpenCL (history)"),
    ("pytorch-cudnn", "eager", "PyTorch + cuDNN eager"),
    ("pytorch-cudnn", "cuda-graph", "PyTorch + cuDNN CUDA graph"),
)
#: Engines whose outputs are not checked (their own graphs and weights): a speed anchor.
ANCHORS = ("pytorch-cudnn",)
NETWORK_NAMES = {
    "resnet50": "ResNet-50",
    "mobilenetv2": "MobileNetV2",
    "blazeface": "BlazeFace",
    "palm_detection": "palm detection",
}
PEER_TOL = 1e-3  # a peer's result is right up to this rel err (device_runner.py's REL_TOL)
KERNEL_CATEGORIES = (
    "conv",
    "conv (winograd)",
    "depthwise conv",
    "layout transform",
    "pooling",
    "dense",
    "elementwise/other",
)


def read_csv(path: pathlib.Path) -> List[Dict[str, str]]:
    """The rows of a CSV file, none if it is missing."""
    if not path.is_file():
        return []
    with open(path, newline="", encoding="utf-8") as csv_file:
        return list(csv.DictReader(csv_file))


def runs(results: pathlib.Path) -> List[pathlib.Path]:
    """The main result CSVs of device_runner.py runs (other sweeps have no ``kind`` column)."""

    def is_run(path: pathlib.Path) -> bool:
        with path.open() as f:
            return "kind" in f.readline().strip().split(",")

    return sorted(
        p
        for p in results.glob("*.csv")
        if not any(p.stem.endswith(c) for c in COMPANIONS) and is_run(p)
    )


def fnum(value, default=float("nan")) -> float:
    """``value`` as a float, ``default`` where it is no number."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


def table(header: List[str], rows: List[List[str]], title: str = "") -> str:
    """An RST list-table."""
    out = [f".. list-table:: {title}".rstrip(), "   :header-rows: 1", ""]
    for row in [header] + rows:
        out.append("   * - " + (str(row[0]) or " "))
        out.extend("     - " + (str(c) if str(c) else " ") for c in row[1:])
    return "\n".join(out) + "\n"


def heading(title: str) -> List[str]:
    """An RST section title."""
    return [title, "-" * len(title), ""]


def layer_label(model: str) -> str:
    """``layer:cin,cout,k,s,g,hw`` as a short label: ``3x3 64->64 s1 @56``."""
    cin, cout, k, stride, groups, size = (int(v) for v in model.split(":")[1].split(","))
    kind = "dw 3x3" if groups > 1 else f"{k}x{k}"
    return f"{kind} {cin}->{cout} s{stride} @{size}"


def layer_kind(model: str) -> str:
    """The kind a layer is grouped under in the findings: ``1x1``, ``3x3 s2``, ``stem ...``."""
    if model.split(":")[1].startswith("3,"):
        return "stem (3 input channels)"
    label = layer_label(model)
    return label.split(" ")[0] + (" s2" if " s2 " in label else "")


def kernel_category(name: str) -> Optional[str]:
    """The category of a profiled kernel (one of KERNEL_CATEGORIES), None for VM builtins."""
    if name.startswith("vm.builtin."):
        return None
    if "winograd" in name:
        return "conv (winograd)"
    if "depthwise" in name or "group" in name:
        return "depthwise conv"
    if "conv2d" in name:
        return "conv"
    if "layout_transform" in name:
        return "layout transform"
    if "pool" in name:
        return "pooling"
    if "matmul" in name or "dense" in name:
        return "dense"
    return "elementwise/other"


@dataclasses.dataclass
class Run:
    """One device_runner.py run: its rows, its companions and the peers of the same call."""

    path: pathlib.Path
    rows: List[Dict[str, str]]
    startup: List[Dict[str, str]]
    checks: List[Dict[str, str]]
    profile: List[Dict[str, str]]
    peers: List[Dict[str, str]]
    env: Dict
    ceilings: Dict[str, Optional[str]]

    @property
    def first(self) -> Dict[str, str]:
        """The first row, which carries the device, driver, commit and date."""
        return self.rows[0] if self.rows else {}

    @property
    def device(self) -> str:
        """The device's name."""
        return self.first.get("device", "?")

    @property
    def layers(self) -> List[str]:
        """The sweep's conv layers, by their parameters."""
        return sorted(
            {r["model"] for r in self.rows if r["kind"] == "layer"},
            key=lambda m: [int(v) for v in m[6:].split(",")],
        )

    @property
    def by_layer(self) -> Dict[tuple, Dict[str, str]]:
        """The layer rows by (model, config)."""
        return {(r["model"], r["config"]): r for r in self.rows if r["kind"] == "layer"}

    @property
    def networks(self) -> Dict[tuple, Dict[str, str]]:
        """The float32 network rows by (model, config)."""
        return {
            (r["model"], r["config"]): r
            for r in self.rows
            if r["kind"] == "network" and r["dtype"] == "float32"
        }


def load_run(path: pathlib.Path) -> Run:
    """Read a run's CSV, its companions and env.json, and ``bench/peers/<run>-peers.csv``."""
    rows = read_csv(path)
    stem = str(path.with_suffix(""))
    env_path = pathlib.Path(stem + "-env.json")
    ceil = {r["model"]: r for r in rows if r["kind"] == "ceiling"}
    return Run(
        path=path,
        rows=rows,
        startup=read_csv(pathlib.Path(stem + "-startup.csv")),
        checks=read_csv(pathlib.Path(stem + "-checks.csv")),
        profile=read_csv(pathlib.Path(stem + "-profile.csv")),
        peers=read_csv(REPO / "bench" / "peers" / (path.stem + "-peers.csv")),
        env=json.loads(env_path.read_text(encoding="utf-8")) if env_path.is_file() else {},
        ceilings={
            "peak": ceil.get("fp32_fma_peak", {}).get("gflops"),
            "bw": ceil.get("copy_bandwidth", {}).get("gbs"),
        },
    )


def speedup(mine: Dict[str, str], other: Dict[str, str]) -> Optional[float]:
    """``other``'s median over ``mine``'s where both ran (>1: ``mine`` faster), else None."""
    if mine.get("status") != "ok" or other.get("status") != "ok":
        return None
    return fnum(other["median_ms"]) / fnum(mine["median_ms"])


def steady_wall(row: Optional[Dict[str, str]]) -> float:
    """A network row's steady wall ms where it ran and its result is not wrong, else NaN."""
    if not row or row.get("status") != "ok" or row.get("correct") == "NO":
        return float("nan")
    return fnum(row.get("steady_wall_ms"))


def best_peer(peers, model: str, engine: str, mode: str = "") -> Optional[Dict[str, str]]:
    """The fastest right row of ``engine`` on ``model`` (status ok, rel err <= PEER_TOL) among
    its modes starting with ``mode``; None if there is none."""
    right = [
        r
        for r in peers
        if r["model"] == model
        and r["engine"] == engine
        and r["config"].startswith(mode)
        and r["status"] == "ok"
        and (engine in ANCHORS or fnum(r["rel_err"], 1.0) <= PEER_TOL)
        and r["median_ms"]
    ]
    return min(right, key=lambda r: fnum(r["median_ms"]), default=None)


def plot_networks(plt, ok_rows, rows, docs: pathlib.Path, device: str) -> List[str]:
    """Bar chart of the networks' median latency per configuration, with the goals."""
    nets = sorted({r["model"] for r in rows if r["kind"] == "network"})
    if not nets:
        return []
    fig, axes = plt.subplots(figsize=(8, 4))
    width = 0.27
    for i, cfg in enumerate("abc"):
        vals, hatch = [], []
        for net in nets:
            row = next((x for x in ok_rows if x["model"] == net and x["config"] == cfg), None)
            vals.append(fnum(row["median_ms"]) if row else 0.0)
            hatch.append(row is not None and row.get("correct") == "NO")
        rects = axes.bar(
            [j + (i - 1) * width for j in range(len(nets))], vals, width, label=CONFIGS[cfg]
        )
        for rect, wrong, val in zip(rects, hatch, vals):
            if wrong:
                rect.set_hatch("//")
            if val == 0:
                axes.text(
                    rect.get_x() + rect.get_width() / 2,
                    0.1,
                    "n/a",
                    ha="center",
                    fontsize=7,
                    rotation=90,
                )
    for j, net in enumerate(nets):
        if net in GOALS:
            axes.plot([j - 0.45, j + 0.45], [GOALS[net]] * 2, "k--", lw=1)
    axes.set_xticks(range(len(nets)), nets)
    axes.set_ylabel("median latency, ms")
    axes.set_title(
        f"Networks, batch 1, float32 on {device} (blazeface 128, palm 192, others 224 px)\n"
        "(hatched: wrong result; dashed: goal for (a))",
        fontsize=9,
    )
    axes.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(docs / "network_latency.png", dpi=110)
    plt.close(fig)
    return ["network_latency.png"]


def plot_layer_speedup(plt, ok_rows, layers, docs: pathlib.Path, device: str) -> List[str]:
    """Bar chart of the per-layer speedup of (a) over (b) and over (c)."""
    if not layers:
        return []
    fig, axes = plt.subplots(figsize=(9, 4.5))
    width = 0.4
    for i, base in enumerate("bc"):
        vals = []
        for layer in layers:
            mine = next((x for x in ok_rows if x["model"] == layer and x["config"] == "a"), None)
            other = next((x for x in ok_rows if x["model"] == layer and x["config"] == base), None)
            vals.append(
                fnum(other["median_ms"]) / fnum(mine["median_ms"]) if mine and other else 0.0
            )
        axes.bar(
            [j + (i - 0.5) * width for j in range(len(layers))],
            vals,
            width,
            label=f"(a) vs {CONFIGS[base]}",
        )
    axes.axhline(1.0, color="k", lw=0.8)
    axes.set_yscale("log")
    axes.set_xticks(
        range(len(layers)),
        [layer_label(layer) for layer in layers],
        rotation=60,
        ha="right",
        fontsize=7,
    )
    axes.set_ylabel("speedup of (a) (>1: (a) faster)")
    axes.set_title(
        f"Per-layer speedup of the patched texture pipeline on {device} "
        "(0: no bar = other config failed)",
        fontsize=9,
    )
    axes.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(docs / "layer_speedup.png", dpi=110)
    plt.close(fig)
    return ["layer_speedup.png"]


def plot_roofline(plt, ok_rows, ceilings, docs: pathlib.Path, device: str) -> List[str]:
    """The conv layers of each configuration on the measured roofline."""
    peak, bandwidth = fnum(ceilings.get("peak")), fnum(ceilings.get("bw"))
    if math.isnan(peak) or math.isnan(bandwidth):
        return []
    fig, axes = plt.subplots(figsize=(7, 4.5))
    intensities = [2 ** (i / 4) for i in range(-8, 48)]
    axes.plot(
        intensities,
        [min(peak, bandwidth * x) for x in intensities],
        "k-",
        lw=1,
        label="roofline (measured)",
    )
    for cfg, marker in zip("abc", "os^"):
        pts = [
            (fnum(r["gflop"]) * 1e3 / fnum(r["mbytes"]), fnum(r["gflops"]))
            for r in ok_rows
            if r["kind"] == "layer" and r["config"] == cfg and fnum(r["mbytes"]) > 0
        ]
        if pts:
            axes.scatter(
                [p[0] for p in pts], [p[1] for p in pts], marker=marker, label=CONFIGS[cfg]
            )
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("arithmetic intensity, FLOP/byte (compulsory traffic)")
    axes.set_ylabel("GFLOP/s")
    axes.set_title(
        f"Conv layers on {device}: peak {peak / 1e3:.1f} TFLOP/s, {bandwidth / 1e3:.2f} TB/s",
        fontsize=9,
    )
    axes.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(docs / "roofline.png", dpi=110)
    plt.close(fig)
    return ["roofline.png"]


def plots(run: Run, docs: pathlib.Path) -> List[str]:
    """Draw the run's plots into ``docs``; the names of the files made."""
    import matplotlib  # pylint: disable=import-outside-toplevel

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # pylint: disable=import-outside-toplevel

    ok_rows = [r for r in run.rows if r["status"] == "ok" and r["dtype"] == "float32"]
    made = plot_networks(plt, ok_rows, run.rows, docs, run.device)
    made += plot_layer_speedup(plt, ok_rows, run.layers, docs, run.device)
    if run.layers:
        made += plot_roofline(plt, ok_rows, run.ceilings, docs, run.device)
    return made


def latency_method(row: Dict[str, str]) -> str:
    """How the run's median latency was taken: rows with a device span column are timed by the
    peers' method, earlier ones by ``runtime.timer.opencl``, whose meaning changed twice."""
    if "device_span_ms" in row:
        return (
            "Latency is the median of the peers' method (warm-up excluded): the wall clock of "
            "back-to-back calls between a device sync before and after, per call; *device span* "
            "is ``runtime.timer.opencl`` over as many calls (the first timed command's start to "
            "the end of a closing marker), *start delay*, *host enqueue* and *drain* where that "
            "span went (``runtime.opencl.timed_spans``: the first command waiting to start, the "
            "host enqueueing the calls, the device finishing after the last enqueue)"
        )
    return (
        "Latency is the median of ``time_evaluator`` with ``runtime.timer.opencl`` (warm-up "
        "excluded): up to workspace commit ``b2f2b4b`` that timer was a host clock around two "
        "queue waits (VM and launch overhead included), later it is device time from profiling "
        "events: up to the 2026-12-02b run an event on every timed command (on NVIDIA's OpenCL "
        "an event stretches the run, so on launch-heavy networks that median ran above the "
        "steady wall), from the 2026-12-02c run an event on the span's first command and on a "
        "marker that closes it"
    )


def section_header(run: Run) -> List[str]:
    """The page title, how the run was made and measured, and the measured ceilings."""
    first, env = run.first, run.env
    driver, commit = first.get("driver", "?"), first.get("git_commit", "?")
    title = f"The newest full run: {run.path.stem}"
    out = [title, "=" * len(title), ""]
    out.append(
        f"Generated by ``bench/report.py`` from ``bench/results/{run.path.name}`` (do not edit by "
        f"hand). Device **{run.device}** ({first.get('platform', '')}), driver **{driver}**, "
        f"workspace commit ``{commit}``, date {first.get('date', '')}.  Runtime-only TVM "
        f"(``TVM_USE_RUNTIME_LIB=1``, Python {env.get('python', '?')}) with the workspace OpenCL "
        f"runtime; models compiled on the host and exported.  Configurations: (a) "
        f"``qcom/adreno-opencl-texture`` with the workspace patches; (b) the same target on the "
        f"unpatched base (Adreno TIR pipeline passed by name); (c) ``opencl`` (generic GPU "
        f"pipeline, dlight rules, buffers), compiled by the patched stack from the same Relax "
        f"graph as (a).  Batch 1, float32, random weights regenerated on the device from a seed; "
        f"weight re-layouts are lifted into ``main_transform_params`` and run once at load.  "
        f"{latency_method(first)}; *e2e* adds the image upload and the output read-back (wall "
        f"clock).  *steady wall* is the wall clock per call of back-to-back calls with no timer "
        f"or trace (what the peers' medians measure); *busy* is the sum of the device times of "
        f"the call's kernels and copies from ``runtime.opencl`` command traces (an event on every "
        f"command), and *busy %* busy over the wall clock of the same traced calls; on NVIDIA "
        f"the trace's events stretch both, so busy can exceed the untraced device time.  *rel "
        f"err* is ``max(abs(out - ref)) / max(abs(ref))`` against the LLVM CPU reference (wrong "
        f"above 1e-3).\n"
    )
    if run.ceilings["peak"]:
        peak, bandwidth = fnum(run.ceilings["peak"]), fnum(run.ceilings["bw"])
        out.append(
            f"Measured ceilings (plain OpenCL kernels, ``bench/clbench.py``): fp32 FMA peak "
            f"**{peak / 1e3:.1f} TFLOP/s**, copy bandwidth **{bandwidth / 1e3:.2f} TB/s** "
            f"(read + write).  cl_khr_fp16: {'yes' if env.get('cl_khr_fp16') else 'no'}.\n"
        )
    return out


SPAN_COLUMNS = ("device_span_ms", "span_start_delay_ms", "span_host_enqueue_ms", "span_drain_ms")


def network_cells(row: Dict[str, str]) -> List[str]:
    """One row of the networks' table: the measurements, or the status and the error."""
    cells = [row["model"], CONFIGS.get(row["config"], row["config"]), row["dtype"]]
    if row["status"] != "ok":
        blanks = 7 + sum(k in row for k in SPAN_COLUMNS)
        return (
            cells + [row["status"]] + [""] * blanks + [row["error"][:90], row.get("compile_s", "")]
        )
    cells += [row[k][:6] for k in ("median_ms", "p90_ms", "e2e_median_ms")]
    cells += [row.get(k, "")[:6] for k in SPAN_COLUMNS if k in row]
    cells += [row.get(k, "")[:6] for k in ("steady_wall_ms", "busy_ms")]
    return cells + [
        row.get("busy_pct", ""),
        row["gflops"],
        row["pct_peak"],
        f"{row['correct']} ({row['rel_err']})",
        row["compile_s"],
    ]


def section_networks(run: Run) -> List[str]:
    """Every network row of the run: latencies, throughput, correctness, compile time."""
    nets = sorted(
        (r for r in run.rows if r["kind"] == "network"),
        key=lambda r: (r["model"], r["config"], r["dtype"]),
    )
    header = ["model", "config", "dtype", "median ms", "p90 ms", "e2e ms"]
    if nets and "device_span_ms" in nets[0]:
        header += ["device span ms", "start delay ms", "host enqueue ms", "drain ms"]
    header += ["steady wall ms"]
    header += ["busy ms", "busy %", "GFLOP/s", "% peak", "correct (rel err)", "compile s"]
    return heading("Networks") + [table(header, [network_cells(r) for r in nets])]


def layer_cells(run: Run, layer: str) -> List[str]:
    """One row of the conv layers' table: the times of (a), (b), (c) and the speedups of (a)."""
    by_layer = run.by_layer
    mine = by_layer.get((layer, "a"), {})
    cells = [layer_label(layer), mine.get("gflop", "")]
    for cfg in "abc":
        row = by_layer.get((layer, cfg))
        if row is None:
            cells.append("")
        elif row["status"] != "ok":
            cells.append(row["status"])
        else:
            wrong = " (wrong)" if row.get("correct") == "NO" else ""
            cells.append(f"{fnum(row['median_ms']):.4f}" + wrong)
    for base in "bc":
        ratio = speedup(mine, by_layer.get((layer, base), {}))
        cells.append(f"{ratio:.2f}x" if ratio is not None else "")
    kernels = (by_layer.get((layer, c), {}).get("conv_kernel_ms", "") or "-" for c in "abc")
    return cells + [mine.get("pct_peak", ""), mine.get("gbs", ""), " / ".join(kernels)]


def section_layers(run: Run) -> List[str]:
    """The conv layers of the sweep: whole-module times per configuration, conv kernels alone."""
    if not run.layers:
        return []
    text = (
        "Distinct conv layers of ResNet-50 and MobileNetV2 (conv2d alone, no bias).  The "
        "(a)/(b)/(c) times are the whole module, so the texture configurations include the "
        "layout transforms of the activation into and out of NCHW4c; the last column is the "
        "conv kernels alone (device sync around each call: about 20 us of overhead per call on "
        "the NVIDIA driver, so it is meaningful for the slower layers only).  "
        "Speedup = time of (b) or (c) / time of (a).\n"
    )
    header = ["layer", "GFLOP", "(a) ms", "(b) ms", "(c) ms", "a vs b", "a vs c", "(a) % peak"]
    header += ["(a) GB/s", "conv kernel alone ms a / b / c"]
    rows = [layer_cells(run, layer) for layer in run.layers]
    return heading("Conv layers") + [text, table(header, rows)]


def geomean(vals: List[float]) -> float:
    """The geometric mean of positive numbers."""
    return math.exp(sum(map(math.log, vals)) / len(vals))


def section_findings(run: Run) -> List[str]:
    """The geometric-mean speedup of (a) over (b) and (c) per conv kind."""
    kinds = {}
    for layer in run.layers:
        mine = run.by_layer.get((layer, "a"), {})
        for base in "bc":
            ratio = speedup(mine, run.by_layer.get((layer, base), {}))
            if ratio is not None:
                kinds.setdefault((layer_kind(layer), base), []).append(ratio)
    rows = []
    for kind in sorted({k for k, _ in kinds}):
        cells = [kind]
        for base in "bc":
            vals = kinds.get((kind, base), [])
            cells.append(f"{geomean(vals):.2f}x ({len(vals)})" if vals else "n/a")
        rows.append(cells)
    if not rows:
        return []
    text = (
        "Speedup of (a) per conv kind (geometric mean over the sweep's layers of that kind, "
        "count in brackets; >1: (a) faster).  (b)'s results are wrong except on the stems, so "
        "'a vs b' is a speed comparison only.\n"
    )
    return heading("Findings") + [text, table(["layer kind", "(a) vs (b)", "(a) vs (c)"], rows)]


def section_time_shares(run: Run) -> List[str]:
    """Where the networks' time goes: the share of each kernel category in the profile."""
    if not run.profile:
        return []
    rows = []
    for model in sorted({r["model"] for r in run.profile}):
        for cfg in "abc":
            mine = [r for r in run.profile if r["model"] == model and r["config"] == cfg]
            if not mine:
                continue
            share = {}
            for row in mine:
                category = kernel_category(row["kernel"])
                if category:
                    share[category] = share.get(category, 0.0) + fnum(row["ms_per_run"])
            total = sum(share.values()) or 1.0
            rows.append(
                [model, cfg] + [f"{100 * share.get(c, 0) / total:.0f}%" for c in KERNEL_CATEGORIES]
            )
    how = "device events" if device_timed(run.profile) else "synced profile"
    header = ["model", "config", "conv", "winograd", "depthwise", "layout", "pool", "dense"]
    return [
        f"Where the time goes (share of the 25 slowest kernels per network, {how}):\n",
        table(header + ["other"], rows),
    ]


def device_timed(profile: List[Dict[str, str]]) -> bool:
    """Whether the profile holds device times from command traces (not synced wall times)."""
    return any(r.get("timed") == "device events" for r in profile)


def latency_goals(run: Run) -> List[List[str]]:
    """Issue #14's latency target per network, for (a) untuned, (t), (u) tuned and the fused
    (f), (g)."""
    goals = []
    for model, goal in GOALS.items():
        for cfg in ("a", "t", "u", "f", "g"):
            row = run.networks.get((model, cfg), {})
            if not row:
                continue
            wall = fnum(row.get("steady_wall_ms"))
            ran = row.get("status") == "ok" and not math.isnan(wall)
            got = f"{wall:.3f} ms steady wall" if ran else row.get("status", "not run")
            met = ran and wall <= goal and row.get("correct") != "NO"
            goals.append([f"{model} with ({cfg}) <= {goal} ms", got, "met" if met else "short"])
    return goals


def faster_everywhere(goal: str, pairs, expected: int, unit: str, other: str, listed=False):
    """A goal row for "(a) faster than ``other`` on every item": ``pairs`` holds (item, ms of
    (a), ms of ``other``) per comparable item, ``expected`` how many items the goal covers.  Met
    only if (a) is faster on all of them; not measured if none is comparable.  ``listed``: give
    every item's times too."""
    if not pairs:
        return [goal, f"no comparable {unit}", "not measured"]
    slower = [(mine / theirs, item) for item, mine, theirs in pairs if not mine < theirs]
    got = f"(a) faster on {len(pairs) - len(slower)} of {len(pairs)} comparable {unit}"
    if len(pairs) < expected:
        got += f" (of {expected})"
    if slower:
        ratio, item = max(slower)
        got += f"; {len(slower)} not, the worst {item}: (a) takes {ratio:.2f}x the time of {other}"
    if listed:
        times = (f"{item} {mine:.3f} vs {theirs:.3f} ms" for item, mine, theirs in pairs)
        got += " (" + ", ".join(times) + ")"
    if slower:
        status = "short"
    else:
        status = "met" if len(pairs) == expected else "partly measured"
    return [goal, got, status]


def mnn_image_goal(run: Run) -> List[str]:
    """(a) untuned ahead of MNN's image mode: (a)'s steady wall ms against the median ms of the
    fastest right MNN mode whose config starts with ``image``, on each network of GOALS."""
    pairs = []
    for model in GOALS:
        mine = steady_wall(run.networks.get((model, "a")))
        peer = best_peer(run.peers, model, "mnn", "image")
        if peer and not math.isnan(mine):
            pairs.append((f"{model} ({peer['config']})", mine, fnum(peer["median_ms"])))
    goal = "(a) untuned ahead of MNN's image mode on all four networks (steady wall)"
    return faster_everywhere(goal, pairs, len(GOALS), "networks", "MNN", listed=True)


def network_goal(run: Run) -> List[str]:
    """(a) faster than (c) on every network of the run, by steady wall ms."""
    models = sorted({model for model, _ in run.networks})
    pairs = []
    for model in models:
        mine = steady_wall(run.networks.get((model, "a")))
        other = steady_wall(run.networks.get((model, "c")))
        if not math.isnan(mine) and not math.isnan(other):
            pairs.append((model, mine, other))
    goal = "(a) faster than (c) on every network of the bench (steady wall)"
    return faster_everywhere(goal, pairs, len(models), "networks", "(c)", listed=True)


def layer_goal(run: Run) -> List[str]:
    """(a) faster than (c) on every conv layer of the sweep, by median ms where both ran."""
    pairs = []
    for layer in run.layers:
        mine = run.by_layer.get((layer, "a"), {})
        other = run.by_layer.get((layer, "c"), {})
        if speedup(mine, other) is not None:
            pairs.append((layer_label(layer), fnum(mine["median_ms"]), fnum(other["median_ms"])))
    goal = "(a) faster than (c) on every layer of the sweep (median)"
    row = faster_everywhere(goal, pairs, len(run.layers), "layers", "(c)")
    if row[2] == "short":
        row[1] += "; " + conv_kernel_note(run)
    return row


def conv_kernel_note(run: Run) -> str:
    """Why (a) loses a layer: the layer's module converts its input to NCHW4c textures and its
    output back (two layout-transform launches that a network pays once, at its ends), so
    compare the convolution kernels alone (``conv_kernel_ms``, from the per-kernel profile)."""
    pairs = []
    for layer in run.layers:
        mine = fnum(run.by_layer.get((layer, "a"), {}).get("conv_kernel_ms"))
        other = fnum(run.by_layer.get((layer, "c"), {}).get("conv_kernel_ms"))
        if not (math.isnan(mine) or math.isnan(other)):
            pairs.append((layer_label(layer), mine, other))
    if not pairs:
        return "no per-kernel profile to tell why"
    slower = sorted((mine / other, item) for item, mine, other in pairs if not mine < other)
    note = (
        f"the convolution kernel alone is faster with (a) on {len(pairs) - len(slower)} of "
        f"{len(pairs)}; the rest of (a)'s time is the layout transforms at the layer's ends"
    )
    if slower:
        worst = ", ".join(f"{item} {ratio:.2f}x" for ratio, item in slower[::-1])
        note += f"; the kernel itself is slower on {worst}"
    return note


def peak_3x3_goal(run: Run) -> List[str]:
    """The best fraction of the fp32 peak that (a) reaches on a 3x3 conv layer."""
    goal = "3x3 conv >= 25% of fp32 peak with (a)"
    reached = [
        fnum(run.by_layer[(layer, "a")].get("pct_peak"), 0)
        for layer in run.layers
        if (layer, "a") in run.by_layer
        and run.by_layer[(layer, "a")]["status"] == "ok"
        and layer_label(layer).startswith("3x3")
    ]
    if not reached:
        return [goal, "no 3x3 layer ran with (a)", "not measured"]
    best = max(reached)
    got = (
        f"best {best:.1f}% (direct-convolution FLOP count over the whole module; "
        f"Winograd kernels do fewer real FLOPs)"
    )
    return [goal, got, "met" if best >= 25 else "short"]


def warm_start_goals(run: Run) -> List[List[str]]:
    """Per start-up model of (a): the first result of a warm process against a cold one."""
    first_result = {
        (r["model"], r["config"], r["mode"]): fnum(r.get("first_result_s")) for r in run.startup
    }
    goals = []
    for model, cfg in sorted(
        {(r["model"], r["config"]) for r in run.startup if r["mode"] != "error"}
    ):
        cold = first_result.get((model, cfg, "cold"), float("nan"))
        warm = first_result.get((model, cfg, "warm"), float("nan"))
        dwarm = first_result.get((model, cfg, "driver_warm"), float("nan"))
        if cfg == "a" and not math.isnan(cold) and warm > 0:
            goals.append(
                [
                    f"warm start >= 10x faster than cold ({model}, (a))",
                    f"{cold / warm:.1f}x with the TVM program cache alone ({cold:.2f} s -> "
                    f"{warm:.2f} s); {cold / dwarm:.0f}x once the driver cache is warm too "
                    f"({dwarm:.2f} s)",
                    "met" if cold / warm >= 10 else "short",
                ]
            )
    return goals


def section_goals(run: Run) -> List[str]:
    """The issue's goals against this run."""
    goals = latency_goals(run) + [mnn_image_goal(run), network_goal(run), layer_goal(run)]
    goals += [peak_3x3_goal(run)] + warm_start_goals(run)
    text = "Stated goals, compared with this run (not asserted anywhere).\n"
    return heading("Goals") + [text, table(["goal", "measured", "status"], goals)]


def section_startup(run: Run) -> List[str]:
    """Start-up in fresh processes: the first result cold, warm and driver-warm."""
    if not run.startup:
        return []
    text = (
        "Fresh processes.  *first result* = load the library, create the VM, upload inputs, "
        "transform weights, run once and read the output (import excluded).  *cold*: empty TVM "
        "program cache and empty driver cache (``CUDA_CACHE_PATH`` / ``POCL_CACHE_DIR`` fresh); "
        "*warm*: TVM program cache filled by the cold process, driver cache still empty (what a "
        "phone sees on its second launch); *driver_warm*: both caches filled.  Medians.\n"
    )
    header = ["model", "config", "mode", "runs", "first result s", "import s", "process s"]
    header += ["cache hits", "misses", "stores"]
    keys = ["runs", "first_result_s", "import_s", "process_s"]
    keys += ["cache_hits", "cache_misses", "cache_stores"]
    rows = [
        [r["model"], r["config"], r["mode"]] + [r.get(k, "") for k in keys] for r in run.startup
    ]
    return heading("Start-up") + [text, table(header, rows)]


def section_peers(run: Run) -> List[str]:
    """Per network our (a) and (t) beside the best fp32 mode of each peer engine, from
    ``bench/peers/<run>-peers.csv`` (the same device call as the run)."""
    if not run.peers:
        return []
    ours = {key: r for key, r in run.networks.items() if r["status"] == "ok"}
    body = []
    for model in sorted({m for m, _ in ours}):
        best = {e: best_peer(run.peers, model, e) for e in PEER_ENGINES}
        best = {e: r for e, r in best.items() if r is not None}
        cells = [model] + [ours.get((model, cfg), {}).get("steady_wall_ms", "") for cfg in "at"]
        for engine in PEER_ENGINES:
            peer = best.get(engine)
            cells.append(f"{peer['median_ms']} ({peer['config']})" if peer else "n/a")
        fastest = min((fnum(b["median_ms"]) for b in best.values()), default=float("nan"))
        for cfg in ("a", "t"):
            mine = fnum(ours.get((model, cfg), {}).get("steady_wall_ms"))
            cells.append(f"{fastest / mine:.2f}x" if best and not math.isnan(mine) else "n/a")
        body.append(cells)
    text = (
        "Measured in the same device call as the table above (``../shared/peers``, same graphs, "
        "weights and input). Ours: *steady wall* ms of (a) untuned and (t) tuned; the peers: the "
        "median ms of back-to-back runs of their fastest float32 mode whose result is right "
        "(rel err <= 1e-3). *vs best peer*: the best peer's time over ours (>1: ours faster). "
        "One run each: no spread between runs is measured here.\n"
    )
    header = ["network", "(a) ms", "(t) ms", "MNN (mode)", "LiteRT (mode)"]
    header += ["(a) vs best peer", "(t) vs best peer"]
    return heading("Peers") + [text, table(header, body)]


def peer_calls(peers: pathlib.Path) -> List[pathlib.Path]:
    """The peers calls' CSVs (``<date>-<device>-peers.csv``), oldest first."""
    return sorted(peers.glob("*-peers.csv"))


def project_row(rows, model: str, config: str) -> Optional[Dict[str, str]]:
    """The project's row of ``config`` on ``model`` in a peers CSV where it ran, else None."""
    for row in rows:
        if row["engine"].startswith("project") and row["model"] == model:
            if row["config"].split(":")[0] == config and row["status"] == "ok":
                return row
    return None


def project_cell(rows, model: str, config: str) -> str:
    """The project's median ms of ``config`` on ``model`` in a peers CSV, or ``n/a``."""
    row = project_row(rows, model, config)
    if row is None:
        return "n/a"
    wrong = " (wrong)" if row.get("correct") == "NO" else ""
    return f"{fnum(row['median_ms']):.3f}{wrong}"


def project_best(rows, model: str) -> Optional[Dict[str, str]]:
    """The faster of the project's (a) and (t) rows on ``model`` whose result is right."""
    right = [project_row(rows, model, c) for c in "at"]
    right = [r for r in right if r is not None and r.get("correct") != "NO"]
    return min(right, key=lambda r: fnum(r["median_ms"]), default=None)


def best_checked_peer(rows, model: str) -> Optional[Dict[str, str]]:
    """The fastest right row of any checked peer (not an anchor) on ``model``."""
    peers = {r["engine"] for r in rows if not r["engine"].startswith("project")}
    best = [best_peer(rows, model, e) for e in sorted(peers - set(ANCHORS) - {"ceiling"})]
    return min((b for b in best if b), key=lambda r: fnum(r["median_ms"]), default=None)


def anchor_rows(rows) -> List[List[str]]:
    """Per network: our best, the best checked peer's and the CUDA-graph anchor's median ms
    (the better of its NCHW and channels-last rows), ours over the anchor's and the best
    peer's over ours."""
    body = []
    for model in [m for m in NETWORK_NAMES if project_best(rows, m)]:
        ours, peer = project_best(rows, model), best_checked_peer(rows, model)
        anchor = best_peer(rows, model, "pytorch-cudnn", "cuda-graph")
        mine = fnum(ours["median_ms"])
        cells = [NETWORK_NAMES[model], f"{mine:.3f} ({ours['config'].split(':')[0]})"]
        cells.append(
            f"{fnum(peer['median_ms']):.3f} ({peer['engine']} {peer['config']})" if peer else "n/a"
        )
        cells.append(
            f"{fnum(anchor['median_ms']):.3f} ({anchor['config'].split('/')[-1]})"
            if anchor
            else "n/a"
        )
        cells.append(f"{mine / fnum(anchor['median_ms']):.2f}x" if anchor else "n/a")
        cells.append(f"{fnum(peer['median_ms']) / mine:.2f}x" if peer else "n/a")
        body.append(cells)
    header = ["network", "ours best ms", "best checked peer ms", "CUDA-graph anchor ms"]
    return [header + ["ours / anchor", "best peer / ours"]] + body


def comparison_rows(rows) -> List[List[str]]:
    """Per network: the project's (a), (t), (c) and each COMPARISON column present in the call,
    then the best OpenCL or Vulkan peer over (t) (>1: (t) faster)."""
    engines = {r["engine"] for r in rows}
    columns = [c for c in COMPARISON if c[0] in engines]
    models = [m for m in NETWORK_NAMES if any(r["model"] == m for r in rows)]
    body = []
    for model in models:
        cells = [NETWORK_NAMES[model]] + [project_cell(rows, model, c) for c in "atc"]
        peers = []
        for engine, mode, _ in columns:
            best = best_peer(rows, model, engine, mode)
            cells.append(f"{fnum(best['median_ms']):.3f}" if best else "n/a")
            if best and engine not in ANCHORS:
                peers.append(fnum(best["median_ms"]))
        mine = fnum(project_cell(rows, model, "t").split(" ")[0])
        ratio = min(peers) / mine if peers and not math.isnan(mine) else float("nan")
        cells.append("n/a" if math.isnan(ratio) else f"{ratio:.2f}x")
        body.append(cells)
    header = ["network", "(a) ms", "(t) ms", "(c) ms"] + [c[2] for c in columns]
    return [header + ["best peer / (t)"]] + body


def plot_comparison(plt, table_rows, docs: pathlib.Path, title: str) -> List[str]:
    """One panel per network: the comparison's ms per engine and configuration."""
    header, body = table_rows[0], table_rows[1:]
    if not body:
        return []
    labels = [h.replace(" ms", "") for h in header[1:-1]]
    fig, axes = plt.subplots(1, len(body), figsize=(3.0 * len(body), 4.2), squeeze=False)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for axis, row in zip(axes[0], body):
        vals = [fnum(c.split(" ")[0], 0.0) for c in row[1:-1]]
        axis.bar(range(len(vals)), vals, color=[colors[i % len(colors)] for i in range(len(vals))])
        axis.set_xticks(range(len(vals)), labels, rotation=70, ha="right", fontsize=7)
        axis.set_title(row[0], fontsize=9)
        axis.tick_params(axis="y", labelsize=7)
        for i, val in enumerate(vals):
            if val == 0:
                axis.text(i, 0, "n/a", ha="center", va="bottom", fontsize=6, rotation=90)
    axes[0][0].set_ylabel("median ms per call (lower is faster)")
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(docs / "peers_latency.png", dpi=110)
    plt.close(fig)
    return ["peers_latency.png"]


def newest(folder: pathlib.Path, suffix: str) -> List[Dict[str, str]]:
    """The rows of the newest ``*<suffix>.csv`` in ``folder`` (none if there is none)."""
    found = sorted(folder.glob(f"*{suffix}.csv"))
    return read_csv(found[-1]) if found else []


def launch_cost(run: Run):
    """The host's enqueue cost of a launch, in us, and where it comes from: the smallest
    ``span_host_enqueue_ms`` / ``launches`` over the run's network rows (the host-bound
    network's rate: its enqueue is all launches); NaN where the run has neither column."""
    rates = [
        (fnum(r.get("span_host_enqueue_ms")) * 1e3 / fnum(r["launches"]), r)
        for r in run.networks.values()
        if r["status"] == "ok" and fnum(r.get("launches"), 0) > 0
    ]
    rates = [(cost, r) for cost, r in rates if not math.isnan(cost)]
    if not rates:
        return float("nan"), "no run with launches and the host's enqueue time"
    cost, row = min(rates, key=lambda pair: pair[0])
    source = (
        f"``span_host_enqueue_ms`` / ``launches`` of {row['model']} ({row['config']}) in "
        f"``bench/results/{run.path.name}`` ({run.device})"
    )
    return cost, source


def launch_rows(call_rows, census, tinygrad, cost_us: float) -> List[List[str]]:
    """Per network and configuration (a), (t): the launches of one call by kind (the build's
    census), tinygrad's replayed kernels, and the call's median against launches x cost."""
    replayed = {(r["model"], r["config"]): r["kernels"] for r in tinygrad}
    order = {m: i for i, m in enumerate(NETWORK_NAMES)}
    mine = [r for r in census if r["model"] in NETWORK_NAMES and r["config"] in ("a", "t")]
    body = []
    for row in sorted(mine, key=lambda r: (order[r["model"]], r["config"])):
        model, config, launches = row["model"], row["config"], int(row["launches"])
        cells = [NETWORK_NAMES[model], f"({config})", str(launches)]
        cells += [row[csv_field(k)] for k in KINDS] + [row["runtime_copies"]]
        # Censuses before 2026-12-07c do not place the layout transforms.
        places = [row.get(field) or "?" for field in POSITION_FIELDS.values()]
        cells.append(" / ".join(places))
        cells += [replayed.get((model, mode), "n/a") for mode in ("cl/buffer", "cl/image2")]
        timed = project_row(call_rows, model, config)
        floor = launches * cost_us / 1e3
        median = fnum(timed["median_ms"]) if timed else float("nan")
        cells += ["n/a" if math.isnan(median) else f"{median:.3f}", f"{floor:.3f}"]
        cells.append("n/a" if math.isnan(median / floor) else f"{100 * floor / median:.0f}%")
        body.append(cells)
    header = ["network", "config", "launches"] + list(KINDS) + ["runtime copies"]
    header += ["layout transforms at input / output / inside"]
    header += ["tinygrad kernels (buffers)", "tinygrad kernels (IMAGE=2)", "median ms"]
    return [header + ["launches x cost ms", "launches x cost / median"]] + body


def section_launches(call: pathlib.Path, run: Run) -> List[str]:
    """Against the anchor, and the launches of each network: the call's rows, the newest
    committed launch census and tinygrad kernel count, the run's launch cost."""
    rows = read_csv(call)
    out = heading("Against the anchor")
    anchors = anchor_rows(rows)
    out.append(
        f"From the same call (``bench/peers/{call.name}``). *ours best*: the faster of (a) and "
        f"(t) whose result is right; *best checked peer*: the fastest peer mode whose result "
        f"is right; *CUDA-graph anchor*: PyTorch + cuDNN replayed from a CUDA graph, the "
        f"better of its NCHW and channels-last rows (the vendor's kernels with no launch cost "
        f"between them; it runs torchvision's ResNet-50 and MobileNetV2 only). *ours / anchor* "
        f"< 1: ours faster than the anchor; *best peer / ours* > 1: ours faster than every "
        f"checked peer.\n"
    )
    out.append(table(anchors[0], anchors[1:]))
    census = newest(run.path.parent, "-launch-census")
    if not census:
        return out
    tinygrad = newest(call.parent, "-tinygrad-kernels")
    cost, source = launch_cost(run)
    out += heading("Launches")
    out.append(
        f"What one call of ``main`` launches, by kind: the launch census of the builds "
        f"(``bench/launch_census.py``, newest ``bench/results/*-launch-census.csv``: the VM "
        f"code of ``main``, the OpenCL kernels of each PrimFunc, each PrimFunc's kind from its "
        f"blocks; *runtime copies* are the VM's copies between scopes, not kernel launches; "
        f"the layout transforms *at input* read only ``main``'s arguments, those *at output* "
        f"reach its result through data moves alone, the rest are *inside*). "
        f"Beside them the kernels tinygrad's JIT replays per call of the same network (newest "
        f"``bench/peers/*-tinygrad-kernels.csv``; ResNet-50 and MobileNetV2 only). *median ms* "
        f"is this call's; *launches x cost* takes {cost:.1f} us per launch, the host's enqueue "
        f"cost measured as {source}: near 100% the network is host-bound, and only fewer "
        f"launches make it faster.\n"
    )
    launches = launch_rows(rows, census, tinygrad, cost)
    out.append(table(launches[0], launches[1:]))
    return out


def section_comparison(path: pathlib.Path, docs: pathlib.Path) -> List[str]:
    """The current comparison: one peers call, every engine on the same device."""
    rows = read_csv(path)
    project = [r for r in rows if r["engine"].startswith("project")]
    first = project[0] if project else (rows[0] if rows else {})
    title = "Current comparison"
    out = [title, "=" * len(title), ""]
    table_rows = comparison_rows(rows)
    device = first.get("device", "?")
    out.append(
        f"Generated by ``bench/report.py`` from ``bench/peers/{path.name}`` (one device call of "
        f"``../shared/peers``; do not edit by hand). Device **{device}**, driver "
        f"**{first.get('driver', '?')}**, date {first.get('date', '?')}, workspace commit "
        f"``{first.get('version', '?')}``. Batch 1, float32, the same graphs, weights and input "
        f"image for every engine but PyTorch. Median ms per call of back-to-back calls between "
        f"a device sync before and after (lower is faster). (a) the texture target, untuned; "
        f"(t) the same under the committed tuning database; (c) TVM's generic OpenCL target on "
        f"buffers. Each peer column is its fastest mode whose every output is right against "
        f"the project's LLVM reference (relative error at most 1e-3); PyTorch runs "
        f"torchvision's graphs with their own random weights and is not checked: it is the "
        f"vendor's speed anchor on CUDA, not an OpenCL peer, and is left out of *best peer*. "
        f"*best peer / (t)*: the fastest checked peer's time over (t)'s (>1: (t) faster).\n"
    )
    out.append(table(table_rows[0], table_rows[1:]))
    import matplotlib  # pylint: disable=import-outside-toplevel

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # pylint: disable=import-outside-toplevel

    made = plot_comparison(plt, table_rows, docs, f"{device}, {path.name}")
    for name in made:
        out += [f".. image:: {name}", f"   :alt: {name[:-4].replace('_', ' ')}", ""]
    failed = [
        f"{r['engine']} {r['model']} {r['config']}: {r['status']}"
        for r in rows
        if r["engine"] not in ("ceiling",) and r["status"] not in ("ok", "")
    ]
    if failed:
        out.append("Not run or failed in this call: " + "; ".join(failed) + ".\n")
    return out


def section_checks(run: Run) -> List[str]:
    """How many runtime checks passed on the device, and the failed ones."""
    if not run.checks:
        return []
    npass = sum(r["result"] == "pass" for r in run.checks)
    out = heading("Runtime checks on the device")
    out.append(
        f"{npass} passed, {len(run.checks) - npass} failed (image round trips per scope and "
        f"dtype, copies between scopes, each texture module vs the CPU reference, export/load and "
        f"the precompiled-programs round trip).\n"
    )
    failed = [[r["check"], r["detail"][:120]] for r in run.checks if r["result"] != "pass"]
    if failed:
        out.append(table(["failed check", "detail"], failed))
    return out


def section_slowest_kernels(run: Run) -> List[str]:
    """The 8 slowest kernels per network for (a) and (c), from the profile."""
    if not run.profile:
        return []
    if device_timed(run.profile):
        text = (
            "Per-kernel device time from a ``runtime.opencl`` command trace of 10 back-to-back "
            "calls (no sync between kernels; an event adds some device time to each command "
            "on the NVIDIA driver), per call, top 8 per network for (a) and (c); copies are "
            "listed by kind; *% of listed* is the share of the 25 slowest entries.\n"
        )
    else:
        text = (
            "Per-kernel wall time with a device sync around every VM call (so small kernels "
            "carry some sync overhead: about 20 us per call on the NVIDIA driver), mean of 5 "
            "runs, top 8 per network for (a) and (c); *% of listed* is the share of the 25 "
            "slowest kernels.\n"
        )
    rows = []
    for model in sorted({r["model"] for r in run.profile}):
        for cfg in ("a", "c"):
            mine = [
                r
                for r in run.profile
                if r["model"] == model
                and r["config"] == cfg
                and not r["kernel"].startswith("vm.builtin.")
            ]
            total = sum(fnum(r["ms_per_run"]) for r in mine)
            for row in mine[:8]:
                share = f"{100 * fnum(row['ms_per_run']) / total:.1f}" if total else ""
                rows.append([model, cfg, row["kernel"], row["ms_per_run"], row["calls"], share])
    header = ["model", "config", "kernel", "ms per run", "calls", "% of listed"]
    return heading("Slowest kernels") + [text, table(header, rows)]


def section_plots(made: List[str]) -> List[str]:
    """The plots drawn for the page."""
    if not made:
        return []
    out = heading("Plots")
    for name in made:
        out += [f".. image:: {name}", f"   :alt: {name[:-4].replace('_', ' ')}", ""]
    return out


def render(path: pathlib.Path, docs: pathlib.Path, call: Optional[pathlib.Path] = None) -> str:
    """The results page: the peers call ``call`` (if any), then the run ``path``; the plots
    are drawn into ``docs``."""
    run = load_run(path)
    docs.mkdir(parents=True, exist_ok=True)
    out = section_comparison(call, docs) + section_launches(call, run) if call else []
    made = plots(run, docs)
    out += section_header(run) + section_networks(run) + section_layers(run)
    out += section_findings(run) + section_time_shares(run) + section_goals(run)
    out += section_startup(run) + section_peers(run) + section_checks(run)
    out += section_slowest_kernels(run) + section_plots(made)
    return "\n".join(out)


def main() -> int:
    """Write the results page of the newest run (or --run)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=pathlib.Path, default=REPO / "bench" / "results")
    parser.add_argument("--docs", type=pathlib.Path, default=REPO / "docs" / "benchmarks")
    parser.add_argument("--run", default="")
    parser.add_argument("--peers", type=pathlib.Path, default=REPO / "bench" / "peers")
    parser.add_argument("--call", default="", help="a peers CSV's name (default the newest)")
    args = parser.parse_args()
    calls = [p for p in peer_calls(args.peers) if not args.call or args.call in (p.stem, p.name)]
    available = runs(args.results)
    if args.run:
        available = [p for p in available if args.run in (p.stem, p.name)]
    if not available:
        print(f"no result CSV in {args.results}")
        return 1
    text = render(available[-1], args.docs, calls[-1] if calls else None)
    (args.docs / "results.rst").write_text(text)
    origin = f"{calls[-1].name} and " if calls else ""
    print(f"wrote {args.docs / 'results.rst'} from {origin}{available[-1].name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
