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
"""Tests of the persistent OpenCL program cache and of precompiled start-up.

Each scenario runs an exported model in a fresh process with its own cache folder
(TVM_OPENCL_CACHE_DIR) and its own PoCL kernel cache, and reads the counters of
runtime.opencl.program_cache_stats."""

import json
import os

import pytest

import tvm
import tvm.testing

from opencl_testing import ElementwiseChain, run_python

RUN_SCRIPT = r"""
import json, sys
import ctypes, os
import numpy as np
import tvm
# Runtime-only import (TVM_USE_RUNTIME_LIB=1) registers no backends: load the library ourselves.
if not tvm.runtime.enabled("opencl"):
    ctypes.CDLL(os.path.join(os.path.dirname(tvm.__file__), "lib", "libtvm_runtime_opencl.so"))
from tvm.runtime.vm import VirtualMachine
if os.environ.get("APP_CACHE_DIR"):
    # What an application does where no environment names a cache folder (Android: no $HOME).
    tvm.get_global_func("runtime.opencl.set_program_cache_dir")(os.environ["APP_CACHE_DIR"])
cache_dir = str(tvm.get_global_func("runtime.opencl.program_cache_dir")())
lib = tvm.runtime.load_module(sys.argv[1])
dev = tvm.opencl(0)
vm = VirtualMachine(lib, dev)
x = np.linspace(0, 1, 256, dtype="float32").reshape(4, 64)
out = vm["main"](tvm.runtime.tensor(x, dev), tvm.runtime.tensor(x, dev)).numpy()
stats = tvm.get_global_func("runtime.opencl.program_cache_stats")()
stats = {k: int(v) for k, v in stats.items()}
print("RESULT " + json.dumps({"sum": float(out.sum()), "stats": stats, "dir": cache_dir}))
"""


@pytest.fixture(name="model_path", scope="module")
def fixture_model_path(tmp_path_factory):
    if not tvm.opencl(0).exist:
        pytest.skip("no OpenCL device: tvm.opencl(0).exist is False")
    exe = tvm.compile(ElementwiseChain, target=tvm.target.Target("opencl", host="llvm"))
    path = tmp_path_factory.mktemp("model") / "model.so"
    exe.export_library(str(path))
    return str(path)


def _run(model_path, cache_dir, tmp_path, **extra_env):
    pocl = tmp_path / f"pocl-{len(list(tmp_path.glob('pocl-*')))}"
    env = {
        "TVM_OPENCL_CACHE_DIR": str(cache_dir),
        "POCL_CACHE_DIR": str(pocl),
        "TVM_USE_RUNTIME_LIB": "1",
        **extra_env,
    }
    proc = run_python(["-c", RUN_SCRIPT, model_path], env)
    line = [l for l in proc.stdout.splitlines() if l.startswith("RESULT ")][-1]
    result = json.loads(line[len("RESULT ") :])
    result["stderr"] = proc.stderr
    return result


def _entries(cache_dir):
    return sorted(p for p in cache_dir.glob("*.clbin"))


def test_cold_then_warm(model_path, tmp_path):
    cache = tmp_path / "cache"
    cold = _run(model_path, cache, tmp_path)
    assert cold["stats"]["hits"] == 0 and cold["stats"]["stores"] >= 1
    entries = _entries(cache)
    assert len(entries) == cold["stats"]["stores"]
    assert not list(cache.glob("*.tmp.*")), "temporary files left behind"
    warm = _run(model_path, cache, tmp_path)
    assert warm["stats"]["hits"] == len(entries) and warm["stats"]["misses"] == 0
    assert warm["stats"]["stores"] == 0
    assert warm["sum"] == pytest.approx(cold["sum"], rel=1e-6)


@pytest.mark.parametrize("damage", ["flip", "truncate", "garbage"])
def test_corrupted_entry_is_rebuilt(model_path, tmp_path, damage):
    cache = tmp_path / "cache"
    cold = _run(model_path, cache, tmp_path)
    victim = _entries(cache)[0]
    data = bytearray(victim.read_bytes())
    if damage == "flip":
        data[-10] ^= 0xFF
    elif damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "garbage":
        data = bytearray(b"not a cache entry" * 10)
    else:
        data = bytearray()
    victim.write_bytes(bytes(data))
    again = _run(model_path, cache, tmp_path)
    assert again["sum"] == pytest.approx(cold["sum"], rel=1e-6)
    assert again["stats"]["invalid"] == 1 and again["stats"]["stores"] == 1
    assert again["stderr"].count("is invalid") == 1, again["stderr"]
    third = _run(model_path, cache, tmp_path)  # the entry was replaced by a good one
    assert third["stats"]["invalid"] == 0 and third["stats"]["misses"] == 0


def test_stale_driver_key_is_rebuilt(model_path, tmp_path):
    """An entry whose stored key names another driver version is foreign: rebuilt, replaced."""
    cache = tmp_path / "cache"
    _run(model_path, cache, tmp_path)
    for entry in _entries(cache):
        data = entry.read_bytes()
        start = data.index(b"driver=") + len(b"driver=")
        end = data.index(b"\n", start)
        stale = b"X" * (end - start)  # same length, so only the key differs
        entry.write_bytes(data[:start] + stale + data[end:])
    again = _run(model_path, cache, tmp_path)
    assert again["stats"]["invalid"] == len(_entries(cache))
    assert "another device, driver or source" in again["stderr"]
    assert _run(model_path, cache, tmp_path)["stats"]["invalid"] == 0


def test_unwritable_cache_folder_degrades(model_path, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    result = _run(model_path, blocker / "cache", tmp_path)
    assert result["stats"]["stores"] == 0 and result["stats"]["write_failures"] >= 1
    assert result["stderr"].count("cannot be created") == 1


def test_read_only_cache_folder_degrades(model_path, tmp_path):
    if os.geteuid() == 0:
        pytest.skip(
            "running as root: file permissions do not stop writes (covered by the unwritable folder test)"
        )
    cache = tmp_path / "ro"
    cache.mkdir()
    cache.chmod(0o500)
    try:
        result = _run(model_path, cache, tmp_path)
        assert result["stats"]["stores"] == 0 and result["stats"]["write_failures"] >= 1
    finally:
        cache.chmod(0o700)


def test_application_places_the_cache(model_path, tmp_path):
    """With no HOME, XDG_CACHE_HOME or TVM_OPENCL_CACHE_DIR (an Android app) the cache is off;
    runtime.opencl.set_program_cache_dir puts it where the application says, and it takes
    precedence over TVM_OPENCL_CACHE_DIR."""
    no_folder = {"HOME": None, "XDG_CACHE_HOME": None, "TVM_OPENCL_CACHE_DIR": None}
    off = _run(model_path, tmp_path / "unused", tmp_path, **no_folder)
    assert off["stats"]["enabled"] == 0 and off["dir"] == "", off
    app = tmp_path / "app-cache"
    cold = _run(model_path, tmp_path / "unused", tmp_path, APP_CACHE_DIR=str(app), **no_folder)
    assert cold["dir"] == str(app) and cold["stats"]["stores"] >= 1, cold
    assert len(_entries(app)) == cold["stats"]["stores"]
    env_dir = tmp_path / "env-cache"
    warm = _run(model_path, env_dir, tmp_path, APP_CACHE_DIR=str(app))
    assert warm["dir"] == str(app) and warm["stats"]["hits"] == len(_entries(app)), warm
    assert not env_dir.exists()
    assert warm["sum"] == pytest.approx(cold["sum"], rel=1e-6)


def test_cache_can_be_disabled(model_path, tmp_path):
    cache = tmp_path / "cache"
    result = _run(model_path, cache, tmp_path, TVM_OPENCL_CACHE="0")
    assert result["stats"]["enabled"] == 0 and result["stats"]["stores"] == 0
    assert not cache.exists()


if __name__ == "__main__":
    tvm.testing.main()
