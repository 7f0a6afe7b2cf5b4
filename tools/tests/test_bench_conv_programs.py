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
"""bench/conv_programs.py: the driver's binaries of a conv bundle's kernels, found in the
runtime's program cache by the key the runtime wrote."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
BENCH = REPO / "bench"
sys.path.insert(0, str(BENCH))

import conv_programs  # noqa: E402  pylint: disable=wrong-import-position,import-error


def test_fnv1a64_is_the_standard_hash():
    """The published FNV-1a 64 test vectors: the empty string and "a"."""
    assert conv_programs.fnv1a64(b"") == 0xCBF29CE484222325
    assert conv_programs.fnv1a64(b"a") == 0xAF63DC4C8601EC8C


def test_kernel_units_split_as_the_runtime_does():
    code = b"#pragma x\n// Function: k1\nA\n// Function: k2 \nB\n"
    assert conv_programs.kernel_units(code) == {
        "k1": b"#pragma x\n// Function: k1\nA\n",
        "k2": b"#pragma x\n// Function: k2 \nB\n",
    }


def _run(args, env=None):
    proc = subprocess.run(
        [sys.executable, *args],
        env=dict(os.environ, **(env or {})),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return proc


def test_cached_programs_are_matched_to_their_cases(tmp_path):
    """A tiny 3x3 bundle run on the OpenCL device with the program cache in a folder: every
    case's conv kernel is found there by its key, its binary written out; an entry cut short
    is passed over with one line naming it."""
    tvm = pytest.importorskip("tvm")
    if not tvm.opencl(0).exist:
        pytest.skip("no OpenCL device (run python -m adreno_ws setup)")
    bundle, programs = tmp_path / "bundle", tmp_path / "programs"
    script = str(BENCH / "conv_schedules.py")
    _run([script, "build", "--tiny", "--out", str(bundle), "--label", "a", "--kernel", "3"])
    env = {"TVM_OPENCL_CACHE_DIR": str(programs)}
    _run([script, "device", "--bundle", str(bundle), "--out", str(tmp_path / "conv.csv")], env)
    cases = json.loads((bundle / "cases-a.json").read_text())
    entries = sorted(programs.glob("*.clbin"))
    entries[0].write_bytes(entries[0].read_bytes()[:-1])  # a binary one byte short
    proc = _run(
        [str(BENCH / "conv_programs.py"), "--bundle", str(bundle), "--programs", str(programs)]
    )
    assert f"{entries[0].name}: not a whole program cache entry, left out" in proc.stdout
    rows = json.loads((tmp_path / "binaries" / "report.json").read_text())
    found = {row["lib"] for row in rows}
    assert all("conv2d" in row["kernel"] for row in rows)
    assert all((tmp_path / "binaries" / row["binary"]).stat().st_size > 0 for row in rows)
    # every case but (at most) the one whose entry was cut short
    assert len(found) >= len(cases) - 1 and found <= {case["lib"] for case in cases}
