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

A run is ``bench/results/<date>-<device>.csv`` with companions ``-startup.csv``,
``-checks.csv``, ``-profile.csv`` and ``-env.json``.  The newest run is reported (or --run).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import pathlib
import sys
from typing import Dict, List

REPO = pathlib.Path(__file__).resolve().parents[1]
CONFIGS = {
    "a": "(a) texture, patched",
    "b": "(b) texture, base",
    "c": "(c) generic OpenCL",
    "t": "(t) texture, patched, tuned",
}
COMPANIONS = ("-startup", "-checks", "-profile")
# Issue #14's latency targets (steady wall ms, fp32, the GPU box), for (a) and (t).
GOALS = {"resnet50": 2.3, "mobilenetv2": 0.8, "blazeface": 0.4, "palm_detection": 1.1}
PEER_ENGINES = ("mnn", "litert")


def read_csv(path: pathlib.Path) -> List[Dict[str, str]]:
    if not path.is_file():
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


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


def layer_label(model: str) -> str:
    cin, cout, k, s, g, hw = (int(v) for v in model.split(":")[1].split(","))
    kind = "dw 3x3" if g > 1 else f"{k}x{k}"
    return f"{kind} {cin}->{cout} s{s} @{hw}"


def plots(rows, ceilings, docs: pathlib.Path, device: str) -> List[str]:
    import matplotlib  # pylint: disable=import-outside-toplevel

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # pylint: disable=import-outside-toplevel

    made = []
    ok = [r for r in rows if r["status"] == "ok" and r["dtype"] == "float32"]
    # Network latency
    nets = sorted({r["model"] for r in rows if r["kind"] == "network"})
    if nets:
        fig, ax = plt.subplots(figsize=(8, 4))
        width = 0.27
        for i, cfg in enumerate("abc"):
            vals, hatch = [], []
            for net in nets:
                r = next((x for x in ok if x["model"] == net and x["config"] == cfg), None)
                vals.append(fnum(r["median_ms"]) if r else 0.0)
                hatch.append(r is not None and r.get("correct") == "NO")
            bars = ax.bar(
                [j + (i - 1) * width for j in range(len(nets))], vals, width, label=CONFIGS[cfg]
            )
            for bar, wrong, v in zip(bars, hatch, vals):
                if wrong:
                    bar.set_hatch("//")
                if v == 0:
                    ax.text(
                        bar.get_x() + bar.get_width() / 2,
                        0.1,
                        "n/a",
                        ha="center",
                        fontsize=7,
                        rotation=90,
                    )
        for j, net in enumerate(nets):
            if net in GOALS:
                ax.plot([j - 0.45, j + 0.45], [GOALS[net]] * 2, "k--", lw=1)
        ax.set_xticks(range(len(nets)), nets)
        ax.set_ylabel("median latency, ms (runtime.timer.opencl)")
        ax.set_title(
            f"Networks, batch 1, float32 on {device} (blazeface 128, palm 192, others 224 px)\n(hatched: wrong result; dashed: goal for (a))",
            fontsize=9,
        )
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(docs / "network_latency.png", dpi=110)
        plt.close(fig)
        made.append("network_latency.png")
    # Per-layer speedup of (a) over (b) and (c)
    layers = sorted(
        {r["model"] for r in rows if r["kind"] == "layer"},
        key=lambda m: [int(v) for v in m[6:].split(",")],
    )
    if layers:
        fig, ax = plt.subplots(figsize=(9, 4.5))
        width = 0.4
        for i, base in enumerate("bc"):
            vals = []
            for layer in layers:
                a = next((x for x in ok if x["model"] == layer and x["config"] == "a"), None)
                o = next((x for x in ok if x["model"] == layer and x["config"] == base), None)
                vals.append(fnum(o["median_ms"]) / fnum(a["median_ms"]) if a and o else 0.0)
            ax.bar(
                [j + (i - 0.5) * width for j in range(len(layers))],
                vals,
                width,
                label=f"(a) vs {CONFIGS[base]}",
            )
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_yscale("log")
        ax.set_xticks(
            range(len(layers)),
            [layer_label(l) for l in layers],
            rotation=60,
            ha="right",
            fontsize=7,
        )
        ax.set_ylabel("speedup of (a) (>1: (a) faster)")
        ax.set_title(
            f"Per-layer speedup of the patched texture pipeline on {device} (0: no bar = other config failed)",
            fontsize=9,
        )
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(docs / "layer_speedup.png", dpi=110)
        plt.close(fig)
        made.append("layer_speedup.png")
    # Roofline
    peak, bw = fnum(ceilings.get("peak")), fnum(ceilings.get("bw"))
    if layers and not math.isnan(peak) and not math.isnan(bw):
        fig, ax = plt.subplots(figsize=(7, 4.5))
        xs = [2 ** (i / 4) for i in range(-8, 48)]
        ax.plot(xs, [min(peak, bw * x) for x in xs], "k-", lw=1, label="roofline (measured)")
        for cfg, marker in zip("abc", "os^"):
            pts = [
                (fnum(r["gflop"]) * 1e3 / fnum(r["mbytes"]), fnum(r["gflops"]))
                for r in ok
                if r["kind"] == "layer" and r["config"] == cfg and fnum(r["mbytes"]) > 0
            ]
            if pts:
                ax.scatter(
                    [p[0] for p in pts], [p[1] for p in pts], marker=marker, label=CONFIGS[cfg]
                )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("arithmetic intensity, FLOP/byte (compulsory traffic)")
        ax.set_ylabel("GFLOP/s")
        ax.set_title(
            f"Conv layers on {device}: peak {peak / 1e3:.1f} TFLOP/s, {bw / 1e3:.2f} TB/s",
            fontsize=9,
        )
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(docs / "roofline.png", dpi=110)
        plt.close(fig)
        made.append("roofline.png")
    return made


def peer_rows(run: pathlib.Path, rows) -> List[str]:
    """The peers' section: per network our (a) and (t) beside the best fp32 mode of each peer
    engine, from ``bench/peers/<run>-peers.csv`` (the same device call as ``run``)."""
    peers = read_csv(REPO / "bench" / "peers" / (run.stem + "-peers.csv"))
    if not peers:
        return []
    ours = {
        (r["model"], r["config"]): r
        for r in rows
        if r["kind"] == "network" and r["status"] == "ok" and r["dtype"] == "float32"
    }
    body = []
    for model in sorted({m for m, _ in ours}):
        best = {}
        for r in peers:
            exact = r["status"] == "ok" and fnum(r["rel_err"], 1.0) <= 1e-3
            peer = r["engine"] in PEER_ENGINES  # the file also holds our own rows
            if r["model"] != model or not peer or not exact or not r["median_ms"]:
                continue
            if r["engine"] not in best or fnum(r["median_ms"]) < fnum(
                best[r["engine"]]["median_ms"]
            ):
                best[r["engine"]] = r
        cells = [model]
        for cfg in ("a", "t"):
            mine = ours.get((model, cfg), {})
            cells.append(mine.get("steady_wall_ms", ""))
        for engine in PEER_ENGINES:
            peer = best.get(engine)
            cells.append(f"{peer['median_ms']} ({peer['config']})" if peer else "n/a")
        fastest = min((fnum(b["median_ms"]) for b in best.values()), default=float("nan"))
        for cfg in ("a", "t"):
            mine = fnum(ours.get((model, cfg), {}).get("steady_wall_ms"))
            cells.append(f"{fastest / mine:.2f}x" if best and mine == mine else "n/a")
        body.append(cells)
    text = (
        "Measured in the same device call as the table above (``../shared/peers``, same graphs, "
        "weights and input). Ours: *steady wall* ms of (a) untuned and (t) tuned; the peers: the "
        "median ms of back-to-back runs of their fastest float32 mode whose result is right "
        "(rel err <= 1e-3). *vs best peer*: the best peer's time over ours (>1: ours faster). "
        "One run each: no spread between runs is measured here.\n"
    )
    return [
        "Peers",
        "-----",
        "",
        text,
        table(
            [
                "network",
                "(a) ms",
                "(t) ms",
                "MNN (mode)",
                "LiteRT (mode)",
                "(a) vs best peer",
                "(t) vs best peer",
            ],
            body,
        ),
    ]


def render(run: pathlib.Path, docs: pathlib.Path) -> str:
    rows = read_csv(run)
    stem = run.with_suffix("")
    startup = read_csv(pathlib.Path(str(stem) + "-startup.csv"))
    checks = read_csv(pathlib.Path(str(stem) + "-checks.csv"))
    profile = read_csv(pathlib.Path(str(stem) + "-profile.csv"))
    env_path = pathlib.Path(str(stem) + "-env.json")
    env = json.loads(env_path.read_text()) if env_path.is_file() else {}
    first = rows[0] if rows else {}
    device, driver, commit = (
        first.get("device", "?"),
        first.get("driver", "?"),
        first.get("git_commit", "?"),
    )
    ceil = {r["model"]: r for r in rows if r["kind"] == "ceiling"}
    ceilings = dict(
        peak=ceil.get("fp32_fma_peak", {}).get("gflops"),
        bw=ceil.get("copy_bandwidth", {}).get("gbs"),
    )
    docs.mkdir(parents=True, exist_ok=True)
    made = plots(rows, ceilings, docs, device)

    out = []
    title = "Benchmark results"
    out += [title, "=" * len(title), ""]
    out.append(
        f"Generated by ``bench/report.py`` from ``bench/results/{run.name}`` (do not edit by hand). "
        f"Device **{device}** ({first.get('platform', '')}), driver **{driver}**, workspace commit "
        f"``{commit}``, date {first.get('date', '')}.  Runtime-only TVM (``TVM_USE_RUNTIME_LIB=1``, "
        f"Python {env.get('python', '?')}) with the workspace OpenCL runtime; models compiled on the "
        f"host and exported.  Configurations: (a) ``qcom/adreno-opencl-texture`` with the workspace "
        f"patches; (b) the same target on the unpatched base (Adreno TIR pipeline passed by name); "
        f"(c) ``opencl`` (generic GPU pipeline, dlight rules, buffers), compiled by the patched stack "
        f"from the same Relax graph as (a).  "
        f"Batch 1, float32, random weights regenerated on the device from a seed; weight "
        f"re-layouts are lifted into ``main_transform_params`` and run once at load.  Latency is the "
        f"median of ``time_evaluator`` with ``runtime.timer.opencl`` (warm-up excluded): up to "
        f"workspace commit ``b2f2b4b`` that timer was a host clock around two queue waits (VM and "
        f"launch overhead included), later it is device time from profiling events; *e2e* adds "
        f"the image upload and the output read-back (wall clock).  *steady wall* is the wall "
        f"clock per call of back-to-back calls with no timer or trace (what the peers' medians "
        f"measure); *busy* is the sum of the device times of the call's kernels and copies from "
        f"``runtime.opencl`` command traces, and *busy %* busy over the wall clock of the same "
        f"traced calls (an event adds device time to its command on NVIDIA's OpenCL, so the "
        f"device-timer median runs above the steady wall on launch-heavy networks).  *rel err* is "
        f"``max(abs(out - ref)) / max(abs(ref))`` against the LLVM CPU reference (wrong above 1e-3).\n"
    )
    if ceilings["peak"]:
        out.append(
            f"Measured ceilings (plain OpenCL kernels, ``bench/clbench.py``): fp32 FMA peak "
            f"**{fnum(ceilings['peak']) / 1e3:.1f} TFLOP/s**, copy bandwidth **{fnum(ceilings['bw']) / 1e3:.2f} TB/s** "
            f"(read + write).  cl_khr_fp16: {'yes' if env.get('cl_khr_fp16') else 'no'}.\n"
        )
    # Networks
    net_rows = []
    for r in sorted(
        (r for r in rows if r["kind"] == "network"),
        key=lambda r: (r["model"], r["config"], r["dtype"]),
    ):
        if r["status"] == "ok":
            net_rows.append(
                [
                    r["model"],
                    CONFIGS.get(r["config"], r["config"]),
                    r["dtype"],
                    r["median_ms"][:6],
                    r["p90_ms"][:6],
                    r["e2e_median_ms"][:6],
                    r.get("steady_wall_ms", "")[:6],
                    r.get("busy_ms", "")[:6],
                    r.get("busy_pct", ""),
                    r["gflops"],
                    r["pct_peak"],
                    f"{r['correct']} ({r['rel_err']})",
                    r["compile_s"],
                ]
            )
        else:
            net_rows.append(
                [
                    r["model"],
                    CONFIGS.get(r["config"], r["config"]),
                    r["dtype"],
                    r["status"],
                    "",
                    "",
                    "",
                    "",
                    "",
                    "",
                    "",
                    r["error"][:90],
                    r.get("compile_s", ""),
                ]
            )
    out += ["Networks", "--------", ""]
    out.append(
        table(
            [
                "model",
                "config",
                "dtype",
                "median ms",
                "p90 ms",
                "e2e ms",
                "steady wall ms",
                "busy ms",
                "busy %",
                "GFLOP/s",
                "% peak",
                "correct (rel err)",
                "compile s",
            ],
            net_rows,
        )
    )
    # Layers
    layer_rows = []
    layers = sorted(
        {r["model"] for r in rows if r["kind"] == "layer"},
        key=lambda m: [int(v) for v in m[6:].split(",")],
    )
    by = {(r["model"], r["config"]): r for r in rows if r["kind"] == "layer"}
    for layer in layers:
        cells = [layer_label(layer), by.get((layer, "a"), {}).get("gflop", "")]
        for cfg in "abc":
            r = by.get((layer, cfg))
            if r is None:
                cells.append("")
            elif r["status"] != "ok":
                cells.append(r["status"])
            else:
                cells.append(
                    f"{fnum(r['median_ms']):.4f}" + (" (wrong)" if r.get("correct") == "NO" else "")
                )
        a = by.get((layer, "a"), {})
        for base in "bc":
            o = by.get((layer, base), {})
            ok = a.get("status") == "ok" and o.get("status") == "ok"
            cells.append(f"{fnum(o['median_ms']) / fnum(a['median_ms']):.2f}x" if ok else "")
        cells += [
            a.get("pct_peak", ""),
            a.get("gbs", ""),
            " / ".join(by.get((layer, c), {}).get("conv_kernel_ms", "") or "-" for c in "abc"),
        ]
        layer_rows.append(cells)
    if layer_rows:
        out += ["Conv layers", "-----------", ""]
        out.append(
            "Distinct conv layers of ResNet-50 and MobileNetV2 (conv2d alone, no bias).  The "
            "(a)/(b)/(c) times are the whole module, so the texture configurations include the "
            "layout transforms of the activation into and out of NCHW4c; the last column is the "
            "conv kernels alone (device sync around each call: about 20 us of overhead per call on "
            "the NVIDIA driver, so it is meaningful for the slower layers only).  "
            "Speedup = time of (b) or (c) / time of (a).\n"
        )
        out.append(
            table(
                [
                    "layer",
                    "GFLOP",
                    "(a) ms",
                    "(b) ms",
                    "(c) ms",
                    "a vs b",
                    "a vs c",
                    "(a) % peak",
                    "(a) GB/s",
                    "conv kernel alone ms a / b / c",
                ],
                layer_rows,
            )
        )
    # Findings: per layer kind, geometric-mean speedup of (a); network time by kernel category
    kinds = {}
    for layer in layers:
        kind = layer_label(layer).split(" ")[0] + (" s2" if " s2 " in layer_label(layer) else "")
        if layer.split(":")[1].startswith("3,"):
            kind = "stem (3 input channels)"
        a = by.get((layer, "a"), {})
        for base in "bc":
            o = by.get((layer, base), {})
            if a.get("status") == "ok" and o.get("status") == "ok":
                kinds.setdefault((kind, base), []).append(
                    fnum(o["median_ms"]) / fnum(a["median_ms"])
                )
    find = []
    for kind in sorted({k for k, _ in kinds}):
        cells = [kind]
        for base in "bc":
            vals = kinds.get((kind, base), [])
            cells.append(
                f"{math.exp(sum(map(math.log, vals)) / len(vals)):.2f}x ({len(vals)})"
                if vals
                else "n/a"
            )
        find.append(cells)
    if find:
        out += ["Findings", "--------", ""]
        out.append(
            "Speedup of (a) per conv kind (geometric mean over the sweep's layers of that kind, "
            "count in brackets; >1: (a) faster).  (b)'s results are wrong except on the stems, so "
            "'a vs b' is a speed comparison only.\n"
        )
        out.append(table(["layer kind", "(a) vs (b)", "(a) vs (c)"], find))
    if profile:

        def category(name):
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

        cat_rows = []
        for model in sorted({r["model"] for r in profile}):
            for cfg in "abc":
                mine = [r for r in profile if r["model"] == model and r["config"] == cfg]
                if not mine:
                    continue
                share = {}
                for r in mine:
                    c = category(r["kernel"])
                    if c:
                        share[c] = share.get(c, 0.0) + fnum(r["ms_per_run"])
                total = sum(share.values()) or 1.0
                cat_rows.append(
                    [model, cfg]
                    + [
                        f"{100 * share.get(c, 0) / total:.0f}%"
                        for c in (
                            "conv",
                            "conv (winograd)",
                            "depthwise conv",
                            "layout transform",
                            "pooling",
                            "dense",
                            "elementwise/other",
                        )
                    ]
                )
        how = (
            "device events"
            if any(r.get("timed") == "device events" for r in profile)
            else "synced profile"
        )
        out.append(f"Where the time goes (share of the 25 slowest kernels per network, {how}):\n")
        out.append(
            table(
                [
                    "model",
                    "config",
                    "conv",
                    "winograd",
                    "depthwise",
                    "layout",
                    "pool",
                    "dense",
                    "other",
                ],
                cat_rows,
            )
        )
    # Goals
    goals = []
    net = {
        (r["model"], r["config"]): r
        for r in rows
        if r["kind"] == "network" and r["dtype"] == "float32"
    }
    for model, goal in GOALS.items():
        for cfg in ("a", "t"):
            r = net.get((model, cfg), {})
            if not r:
                continue
            wall = fnum(r.get("steady_wall_ms"))
            ok = r.get("status") == "ok" and wall == wall
            got = f"{wall:.3f} ms steady wall" if ok else r.get("status", "not run")
            met = ok and wall <= goal and r.get("correct") != "NO"
            goals.append([f"{model} with ({cfg}) <= {goal} ms", got, "met" if met else "short"])
    cmp_ab = [(l, by.get((l, "a"), {}), by.get((l, "b"), {})) for l in layers]
    faster = sum(
        1
        for _, a, b in cmp_ab
        if a.get("status") == "ok"
        and b.get("status") == "ok"
        and fnum(a["median_ms"]) < fnum(b["median_ms"])
    )
    comparable = sum(1 for _, a, b in cmp_ab if a.get("status") == "ok" and b.get("status") == "ok")
    b_failed = sum(1 for _, a, b in cmp_ab if a.get("status") == "ok" and b.get("status") != "ok")
    if layers:
        goals.append(
            [
                "(a) faster than (b) on every conv layer",
                f"{faster} of {comparable} comparable layers; (b) fails to build {b_failed}",
                "met" if faster == comparable else "short",
            ]
        )
        best3 = max(
            (
                fnum(by[(l, "a")].get("pct_peak"), 0)
                for l in layers
                if (l, "a") in by
                and by[(l, "a")]["status"] == "ok"
                and layer_label(l).startswith("3x3")
            ),
            default=0,
        )
        goals.append(
            [
                "3x3 conv >= 25% of fp32 peak with (a)",
                f"best {best3:.1f}% (direct-convolution FLOP count over the whole module; "
                f"Winograd kernels do fewer real FLOPs)",
                "met" if best3 >= 25 else "short",
            ]
        )
    st = {(r["model"], r["config"], r["mode"]): r for r in startup}
    for model, cfg in sorted({(r["model"], r["config"]) for r in startup if r["mode"] != "error"}):
        cold = fnum(st.get((model, cfg, "cold"), {}).get("first_result_s"))
        warm = fnum(st.get((model, cfg, "warm"), {}).get("first_result_s"))
        dwarm = fnum(st.get((model, cfg, "driver_warm"), {}).get("first_result_s"))
        if cfg == "a" and not math.isnan(cold) and warm > 0:
            goals.append(
                [
                    f"warm start >= 10x faster than cold ({model}, (a))",
                    f"{cold / warm:.1f}x with the TVM program cache alone ({cold:.2f} s -> {warm:.2f} s); "
                    f"{cold / dwarm:.0f}x once the driver cache is warm too ({dwarm:.2f} s)",
                    "met" if cold / warm >= 10 else "short",
                ]
            )
    out += ["Goals", "-----", ""]
    out.append("Stated goals, compared with this run (not asserted anywhere).\n")
    out.append(table(["goal", "measured", "status"], goals))
    # Start-up
    if startup:
        out += ["Start-up", "--------", ""]
        out.append(
            "Fresh processes.  *first result* = load the library, create the VM, upload inputs, "
            "transform weights, run once and read the output (import excluded).  *cold*: empty TVM "
            "program cache and empty driver cache (``CUDA_CACHE_PATH`` / ``POCL_CACHE_DIR`` fresh); "
            "*warm*: TVM program cache filled by the cold process, driver cache still empty (what a "
            "phone sees on its second launch); *driver_warm*: both caches filled.  Medians.\n"
        )
        out.append(
            table(
                [
                    "model",
                    "config",
                    "mode",
                    "runs",
                    "first result s",
                    "import s",
                    "process s",
                    "cache hits",
                    "misses",
                    "stores",
                ],
                [
                    [
                        r["model"],
                        r["config"],
                        r["mode"],
                        r.get("runs", ""),
                        r.get("first_result_s", ""),
                        r.get("import_s", ""),
                        r.get("process_s", ""),
                        r.get("cache_hits", ""),
                        r.get("cache_misses", ""),
                        r.get("cache_stores", ""),
                    ]
                    for r in startup
                ],
            )
        )
    out += peer_rows(run, rows)
    if checks:
        npass = sum(r["result"] == "pass" for r in checks)
        out += ["Runtime checks on the device", "----------------------------", ""]
        out.append(
            f"{npass} passed, {len(checks) - npass} failed (image round trips per scope and dtype, "
            f"copies between scopes, each texture module vs the CPU reference, export/load and the "
            f"precompiled-programs round trip).\n"
        )
        failed = [[r["check"], r["detail"][:120]] for r in checks if r["result"] != "pass"]
        if failed:
            out.append(table(["failed check", "detail"], failed))
    if profile:
        out += ["Slowest kernels", "---------------", ""]
        if any(r.get("timed") == "device events" for r in profile):
            out.append(
                "Per-kernel device time from a ``runtime.opencl`` command trace of 10 back-to-back "
                "calls (no sync between kernels; an event adds some device time to each command "
                "on the NVIDIA driver), per call, top 8 per network for (a) and (c); copies are "
                "listed by kind; *% of listed* is the share of the 25 slowest entries.\n"
            )
        else:
            out.append(
                "Per-kernel wall time with a device sync around every VM call (so small kernels "
                "carry some sync overhead: about 20 us per call on the NVIDIA driver), mean of 5 "
                "runs, top 8 per network for (a) and (c); *% of listed* is the share of the 25 "
                "slowest kernels.\n"
            )
        prow = []
        for model in sorted({r["model"] for r in profile}):
            for cfg in ("a", "c"):
                mine = [
                    r
                    for r in profile
                    if r["model"] == model
                    and r["config"] == cfg
                    and not r["kernel"].startswith("vm.builtin.")
                ]
                sel = mine[:8]
                total = sum(fnum(r["ms_per_run"]) for r in mine)
                prow += [
                    [
                        model,
                        cfg,
                        r["kernel"],
                        r["ms_per_run"],
                        r["calls"],
                        f"{100 * fnum(r['ms_per_run']) / total:.1f}" if total else "",
                    ]
                    for r in sel
                ]
        out.append(table(["model", "config", "kernel", "ms per run", "calls", "% of listed"], prow))
    if made:
        out += ["Plots", "-----", ""]
        for name in made:
            out += [f".. image:: {name}", f"   :alt: {name[:-4].replace('_', ' ')}", ""]
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=pathlib.Path, default=REPO / "bench" / "results")
    parser.add_argument("--docs", type=pathlib.Path, default=REPO / "docs" / "benchmarks")
    parser.add_argument("--run", default="")
    args = parser.parse_args()
    available = runs(args.results)
    if args.run:
        available = [p for p in available if p.stem == args.run or p.name == args.run]
    if not available:
        print(f"no result CSV in {args.results}")
        return 1
    text = render(available[-1], args.docs)
    (args.docs / "results.rst").write_text(text)
    print(f"wrote {args.docs / 'results.rst'} from {available[-1].name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
