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
"""bench/cudnn_layers.py: the project's conv kernels beside cuDNN's, as shares of the peak."""

import csv
import io
import pathlib
import sys

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

import cudnn_layers  # noqa: E402  pylint: disable=wrong-import-position,import-error


def _write(path, fields, rows):
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)


def test_compare_gives_shares_of_the_peak(tmp_path, capsys, monkeypatch):
    """compare joins the label's layers with cuDNN's and computes each side's share."""
    rng = np.random.default_rng()
    ours_us, cudnn_us = rng.uniform(5, 50, size=2)
    peak = float(rng.uniform(1e4, 7e4))
    # 64 -> 64 channels, 3x3, stride 1, 56x56: 56 * 56 * 64 outputs of 64 * 9 multiply-adds.
    gflop = 2 * 56 * 56 * 64 * 64 * 9 / 1e9
    conv_fields = ["device", "layer", "label", "kernel_us", "status"]
    _write(
        tmp_path / "conv.csv",
        conv_fields,
        [
            dict(device="d", layer="64,64,3,1,1,56", label="a", kernel_us=ours_us, status="ok"),
            # another label and a layer cuDNN did not time are left out
            dict(device="d", layer="64,64,3,1,1,56", label="c", kernel_us=1.0, status="ok"),
            dict(device="d", layer="3,64,7,2,1,224", label="a", kernel_us=1.0, status="ok"),
        ],
    )
    cudnn_fields = ["cin", "cout", "k", "stride", "groups", "hw", "gflop", "graph_us", "eager_us"]
    _write(
        tmp_path / "cudnn.csv",
        cudnn_fields,
        [
            dict(
                cin=64,
                cout=64,
                k=3,
                stride=1,
                groups=1,
                hw=56,
                gflop=gflop,
                graph_us=cudnn_us,
                eager_us=cudnn_us,
            )
        ],
    )
    argv = [
        "cudnn_layers.py",
        "compare",
        "--conv",
        str(tmp_path / "conv.csv"),
        "--cudnn",
        str(tmp_path / "cudnn.csv"),
        "--peak-gflops",
        str(peak),
    ]
    monkeypatch.setattr(sys, "argv", argv)
    assert cudnn_layers.main() == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == 1
    row = rows[0]
    assert row["layer"] == "64,64,3,1,1,56"
    np.testing.assert_allclose(float(row["gflop"]), gflop, rtol=1e-3)
    np.testing.assert_allclose(
        float(row["ours_pct_peak"]), 100 * gflop / (ours_us * 1e-6) / peak, atol=0.06
    )
    np.testing.assert_allclose(
        float(row["cudnn_pct_peak"]), 100 * gflop / (cudnn_us * 1e-6) / peak, atol=0.06
    )
    np.testing.assert_allclose(float(row["ours_over_cudnn"]), ours_us / cudnn_us, atol=6e-3)


def test_timing_without_cuda_says_where_it_runs(tmp_path, capsys, monkeypatch):
    """Without PyTorch the timing step says so in one line and exits 2."""
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch fails as if not installed
    argv = ["cudnn_layers.py", "--cases", str(tmp_path / "cases.json"), "--out", "x.csv"]
    monkeypatch.setattr(sys, "argv", argv)
    assert cudnn_layers.main() == 2
    assert "PyTorch is not installed here" in capsys.readouterr().out
