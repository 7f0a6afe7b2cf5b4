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
"""``python -m adreno_ws census MODEL``: texture census of a model file, and its bad input.

Small ONNX models are written here: a conv network that runs on textures, the same with an
image too wide for the target (its conv falls back to buffers and the census says why), one
whose input shape is left dynamic, one with an operator no frontend converts, and corrupt
files.  Each bad input gives exit status 1 and one ``error:`` line, never a traceback.
"""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402  pylint: disable=wrong-import-position

_REPO = Path(__file__).resolve().parents[4]


def _conv_model(path: Path, shape, op_type: str = "Conv", dynamic: bool = False) -> Path:
    rng = np.random.default_rng(7)
    channels = shape[1]
    weight = helper.make_tensor(
        "w",
        TensorProto.FLOAT,
        [8, channels, 3, 3],
        rng.standard_normal((8, channels, 3, 3)).astype("float32").ravel().tolist(),
    )
    nodes = [
        helper.make_node(op_type, ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["y"]),
    ]
    dims = ["batch", channels, "h", "w"] if dynamic else list(shape)
    graph = helper.make_graph(
        nodes,
        "net",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        initializer=[weight],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    path.write_bytes(model.SerializeToString())
    return path


def _census(*args):
    env = dict(os.environ, PYTHONPATH=str(_REPO / "tools"))
    return subprocess.run(
        [sys.executable, "-m", "adreno_ws", "census", *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        cwd=_REPO,
        timeout=600,
        check=False,
    )


def _assert_one_error_line(result, *phrases):
    assert result.returncode == 1, result.stdout + result.stderr
    lines = [l for l in result.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr
    for phrase in phrases:
        assert phrase in lines[0], lines[0]


def test_census_of_a_conv_model(tmp_path):
    """A conv network fits the images: its conv runs on textures, nothing on buffers."""
    result = _census(_conv_model(tmp_path / "net.onnx", (1, 8, 16, 16)))
    assert result.returncode == 0, result.stderr
    first = result.stdout.splitlines()[0]
    assert first.startswith("net.onnx: ") and " 0 buffer kernels" in first, result.stdout
    assert "every operator runs on textures" in result.stdout


def test_float16_storage_census_names_half_and_float32_tensors(tmp_path):
    """With --float16-storage the census lowers to the texture storage plan: the conv's
    textures are half, the weight re-layout and the NCHW result stay float32 buffers."""
    result = _census(_conv_model(tmp_path / "net.onnx", (1, 8, 16, 16)), "--float16-storage")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    half = [l for l in lines if l.startswith("float16 texture storage: ")]
    assert len(half) == 1 and int(half[0].split(": ")[1].split()[0]) >= 1, result.stdout
    assert any(
        l.strip().startswith("float32, a buffer (global scope)") for l in lines
    ), result.stdout


def test_image_over_the_limits_falls_back_with_its_reason(tmp_path):
    """A map 20000 pixels wide cannot be an image (16384 per side): the conv runs on
    buffers and the census names the image limits as the reason."""
    result = _census(_conv_model(tmp_path / "wide.onnx", (1, 8, 2, 20000)))
    assert result.returncode == 0, result.stderr
    assert "on buffers, shape over the image limits of the target" in result.stdout, result.stdout
    assert ": 0 texture / 1 buffer kernels" in result.stdout.splitlines()[0], result.stdout


def test_dynamic_input_shape_needs_input_shape(tmp_path):
    """An input left dynamic: one line naming it and the option; with the option it works."""
    model = _conv_model(tmp_path / "dyn.onnx", (1, 8, 16, 16), dynamic=True)
    _assert_one_error_line(
        _census(model), "input shape not fixed", "x batchx8xhxw", "--input-shape x="
    )
    fixed = _census(model, "--input-shape", "x=1,8,16,16")
    assert fixed.returncode == 0, fixed.stderr
    assert "every operator runs on textures" in fixed.stdout
    _assert_one_error_line(_census(model, "--input-shape", "x=1,8,a"), "NAME=D0,D1")


def test_operator_no_frontend_converts(tmp_path):
    """An op the ONNX frontend does not know: one line naming the frontend's complaint."""
    model = _conv_model(tmp_path / "odd.onnx", (1, 8, 16, 16), op_type="FancyConv")
    _assert_one_error_line(_census(model), "odd.onnx", "onnx frontend", "FancyConv")


@pytest.mark.parametrize(
    "suffix, phrase", [(".onnx", "not a valid ONNX model"), (".tflite", "not a TFLite flatbuffer")]
)
def test_corrupt_model_file(tmp_path, suffix, phrase):
    path = tmp_path / f"broken{suffix}"
    path.write_bytes(np.random.default_rng(3).bytes(4096))
    _assert_one_error_line(_census(path), phrase, "check the file")


def test_missing_and_unknown_files(tmp_path):
    _assert_one_error_line(_census(tmp_path / "absent.onnx"), "no such file")
    other = tmp_path / "model.pb"
    other.write_bytes(b"\0")
    _assert_one_error_line(_census(other), "unknown model format")
