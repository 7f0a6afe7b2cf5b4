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
"""The vendor's conv kernels on the layer sweep: PyTorch + cuDNN, one layer at a time.

On the GPU box (PyTorch with CUDA, no TVM), in the same call as ``conv_schedules.py device``:

    python3 bench/cudnn_layers.py --cases CONV_BUNDLE/cases-a.json --out cudnn.csv
    python3 bench/cudnn_layers.py compare --conv conv.csv --cudnn cudnn.csv --peak-gflops P

The layers are those the conv bundle was built from (its ``cases-*.json``: cin, cout, k,
stride, groups, hw), so both sides time the same shapes. Each layer is one ``Conv2d`` (no
bias, padding ``k // 2``), float32 with TF32 off and ``cudnn.benchmark`` on (cuDNN picks its
fastest algorithm for the shape). ``graph_us``: per conv, from CUDA events around the replay of
a CUDA graph that holds ``--chain`` convs back to back (the vendor's kernel with no launch gap
between calls), median of ``--repeat`` replays; ``eager_us``: the same chain issued from
Python. ``compare`` joins them with the project's untuned kernel times of ``conv.csv``
(``kernel_us``: the device timer over back-to-back launches of the layer's conv kernels, as
the graph replays cuDNN's) and prints each side's share of the fp32 peak measured in the same
call.
"""

import argparse
import csv
import json
import pathlib
import statistics
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import conv_schedules  # noqa: E402  pylint: disable=wrong-import-position

#: The columns of a layer (a ``models.LAYERS`` tuple) in this script's CSV.
LAYER_FIELDS = ("cin", "cout", "k", "stride", "groups", "hw")


def layer_gflop(layer) -> float:
    """GFLOP of one image through ``layer`` (the direct convolution's, as ``conv_schedules``)."""
    return conv_schedules.layer_flop(layer) / 1e9


def time_layer(torch, layer, chain: int, repeat: int) -> dict:
    """CUDA-graph and eager time per conv of one layer (microseconds)."""
    cin, cout, k, stride, groups, size = layer
    conv = torch.nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False).cuda().eval()
    x = torch.randn(1, cin, size, size, device="cuda")

    def run_chain():
        for _ in range(chain):
            y = conv(x)
        return y

    with torch.no_grad():
        for _ in range(3):  # cudnn.benchmark picks its algorithm on the first calls
            run_chain()
        torch.cuda.synchronize()
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            run_chain()
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            run_chain()

        def per_conv_us(step) -> float:
            samples = []
            for _ in range(repeat):
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                start.record()
                step()
                end.record()
                end.synchronize()
                samples.append(start.elapsed_time(end) * 1e3 / chain)
            return statistics.median(samples)

        graph.replay()
        return {"graph_us": per_conv_us(graph.replay), "eager_us": per_conv_us(run_chain)}


def cmd_time(args) -> int:
    """Time every distinct layer of the conv bundle's cases with cuDNN."""
    try:
        import torch  # pylint: disable=import-outside-toplevel
    except ImportError:
        print("cudnn_layers: PyTorch is not installed here (it runs on the GPU box)")
        return 2
    if not torch.cuda.is_available():
        print("cudnn_layers: no CUDA device: run it on the GPU box")
        return 2
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    with open(args.cases, encoding="utf-8") as f:
        layers = sorted({tuple(case["layer"]) for case in json.load(f)}, key=str)
    rows = []
    for layer in layers:
        row = dict(zip(LAYER_FIELDS, layer))
        row["gflop"] = round(layer_gflop(layer), 6)
        try:
            row.update(
                {
                    key: round(v, 3)
                    for key, v in time_layer(torch, layer, args.chain, args.repeat).items()
                }
            )
            row["error"] = ""
        except RuntimeError as err:  # one layer cuDNN refuses is a row, not an aborted call
            row.update(graph_us="", eager_us="", error=str(err).splitlines()[0])
        print(row, flush=True)
        rows.append(row)
    with open(args.out, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    device = torch.cuda.get_device_name()
    print(
        f"wrote {args.out}: {len(rows)} layers on {device}, cuDNN {torch.backends.cudnn.version()}"
    )
    return 0


def cmd_compare(args) -> int:
    """Print ours (untuned, back-to-back) beside cuDNN's CUDA-graph time, as shares of the peak."""
    with open(args.cudnn, encoding="utf-8") as f:
        vendor = {tuple(int(r[key]) for key in LAYER_FIELDS): r for r in csv.DictReader(f)}
    with open(args.conv, encoding="utf-8") as f:
        ours = [r for r in csv.DictReader(f) if r.get("label") == args.label]
    writer = csv.writer(sys.stdout)
    writer.writerow(
        [
            "layer",
            "gflop",
            "ours_us",
            "ours_pct_peak",
            "cudnn_graph_us",
            "cudnn_pct_peak",
            "ours_over_cudnn",
        ]
    )
    for row in ours:
        layer = tuple(int(v) for v in row["layer"].split(","))
        match = vendor.get(layer)
        if match is None or not match["graph_us"] or not row.get("kernel_us"):
            continue
        gflop = layer_gflop(layer)
        mine, theirs = float(row["kernel_us"]), float(match["graph_us"])
        writer.writerow(
            [
                row["layer"],
                f"{gflop:.4f}",
                f"{mine:.2f}",
                f"{100 * gflop / (mine * 1e-6) / args.peak_gflops:.1f}",
                f"{theirs:.2f}",
                f"{100 * gflop / (theirs * 1e-6) / args.peak_gflops:.1f}",
                f"{mine / theirs:.2f}",
            ]
        )
    return 0


def main() -> int:
    """Time the layers with cuDNN, or compare two CSVs of one call."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command")
    parser.add_argument("--cases", help="a conv bundle's cases-LABEL.json")
    parser.add_argument("--out", help="the CSV to write")
    parser.add_argument("--chain", type=int, default=20, help="convs per CUDA graph")
    parser.add_argument("--repeat", type=int, default=30, help="timed replays per layer")
    compare = sub.add_parser("compare")
    compare.add_argument("--conv", required=True, help="conv_schedules.py device's CSV")
    compare.add_argument("--cudnn", required=True, help="this script's CSV of the same call")
    compare.add_argument("--peak-gflops", type=float, required=True)
    compare.add_argument("--label", default="a")
    args = parser.parse_args()
    if args.command == "compare":
        return cmd_compare(args)
    if not args.cases or not args.out:
        parser.error("--cases and --out (or the compare command)")
    return cmd_time(args)


if __name__ == "__main__":
    sys.exit(main())
