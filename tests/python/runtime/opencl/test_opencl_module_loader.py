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
"""Malformed-input tests and a bounded atheris fuzz run of the OpenCL module loader
(ffi.Module.load_from_bytes.opencl): bad bytes must raise a clear error, never crash."""

import ctypes
import os
import struct
import textwrap

import numpy as np
import pytest

import tvm
import tvm.testing

from opencl_testing import run_python

KERNEL_SRC = (
    "// Function: add_kernel\n"
    "__kernel void add_kernel(__global float* restrict a, __global float* restrict b) {\n"
    "  a[get_global_id(0)] += b[get_global_id(0)];\n}\n"
)


def _s(data):
    data = data.encode() if isinstance(data, str) else data
    return struct.pack("<Q", len(data)) + data


def _module_bytes(fmt="cl", names=("add_kernel",), source=KERNEL_SRC, count=None):
    out = _s(fmt) + struct.pack("<Q", len(names) if count is None else count)
    for name in names:
        out += _s(name) + _s(name)
        out += struct.pack("<Q", 2) + struct.pack("<BBH", 3, 64, 1) * 2  # two handles
        out += struct.pack("<Q", 2) + _s("blockIdx.x") + _s("threadIdx.x")
        out += struct.pack("<Q", 2) + struct.pack("<ii", 0, 0)
    return out + _s(source)


def _loader():
    f = tvm.get_global_func("ffi.Module.load_from_bytes.opencl", allow_missing=True)
    if f is None:
        pytest.skip("OpenCL runtime library not loaded (ffi.Module.load_from_bytes.opencl missing)")
    return f


def test_valid_bytes_load_without_device_use():
    mod = _loader()(_module_bytes())
    assert mod.kind == "opencl"
    assert mod.implements_function("add_kernel")
    assert "add_kernel" in mod.inspect_source()


def test_every_truncation_fails_cleanly():
    load = _loader()
    data = _module_bytes()
    for n in range(len(data)):
        with pytest.raises(ValueError, match="Malformed OpenCL module bytes"):
            load(data[:n])


@pytest.mark.parametrize(
    "data,message",
    [
        (_module_bytes(count=5), "Malformed OpenCL module bytes"),
        (_module_bytes(count=1 << 62), "function count"),
        (struct.pack("<Q", 1 << 63) + b"cl", "format string"),
        (_module_bytes(fmt="ptx"), "unsupported format"),
        (_module_bytes() + b"junk", "trailing bytes"),
        (_module_bytes(names=("add_kernel", "other_kernel")), "source has 1 kernel"),
        (_module_bytes(names=("wrong_name",)), "has no source unit"),
        (_module_bytes(names=("add_kernel", "add_kernel")), "appears twice"),
    ],
    ids=[
        "count-too-big",
        "count-huge",
        "length-huge",
        "format",
        "trailing",
        "kernel-count",
        "kernel-name",
        "duplicate",
    ],
)
def test_malformed_bytes_raise_clear_errors(data, message):
    with pytest.raises(ValueError, match=message):
        _loader()(data)


BROKEN_SRC = (
    "// Function: add_kernel\n"
    "__kernel void add_kernel(__global float* restrict a, __global float* restrict b) {\n"
    "  a[get_global_id(0)] += undeclared_value;\n}\n"
)


def test_build_failure_raises_with_kernel_name_and_build_log(dev, tmp_path, monkeypatch):
    """A program the driver cannot compile is a Python exception that names the kernel and
    carries the driver's build log, at the first launch and from GetPreCompiledPrograms; the
    process (this test session) survives and can still launch a module that compiles."""
    monkeypatch.setenv("TVM_OPENCL_CACHE_DIR", str(tmp_path / "clcache"))
    broken = _loader()(_module_bytes(source=BROKEN_SRC))
    # Two handles and the two launch extents; the build fails before any argument is read.
    with pytest.raises(RuntimeError) as info:
        broken["add_kernel"](None, None, 1, 1)
    message = str(info.value)
    assert "clBuildProgram" in message and "'add_kernel'" in message, message
    assert "undeclared_value" in message.split("Build log:", 1)[1], message
    with pytest.raises(RuntimeError, match="clBuildProgram.*'add_kernel'"):
        broken.get_function("opencl.GetPreCompiledPrograms")()

    working = _loader()(_module_bytes())
    a = np.random.default_rng(8).random(64, dtype="float32")
    b = np.random.default_rng(9).random(64, dtype="float32")
    ta, tb = tvm.runtime.tensor(a, dev), tvm.runtime.tensor(b, dev)
    # A kernel takes the runtime's memory handle (DLTensor::data), as the host code passes it.
    working["add_kernel"](ctypes.c_void_p(ta.data_ptr()), ctypes.c_void_p(tb.data_ptr()), 1, 64)
    np.testing.assert_allclose(ta.numpy(), a + b, rtol=1e-6)


def test_huge_string_length_in_entry():
    data = bytearray(_module_bytes())
    # The first function key's length field follows fmt (8 + 2) and the count (8).
    struct.pack_into("<Q", data, 18, (1 << 64) - 1)
    with pytest.raises(ValueError, match="Malformed OpenCL module bytes"):
        _loader()(bytes(data))


FUZZ_SCRIPT = textwrap.dedent("""
    import sys, struct
    import atheris
    with atheris.instrument_imports():
        pass
    import tvm
    load = tvm.get_global_func("ffi.Module.load_from_bytes.opencl")
    seed = bytes.fromhex(sys.argv[1])

    def one_input(data):
        fdp = atheris.FuzzedDataProvider(data)
        mode = fdp.ConsumeIntInRange(0, 2)
        if mode == 0:
            blob = fdp.ConsumeBytes(fdp.remaining_bytes())
        else:
            # Mutate the valid seed: overwrite a few bytes at chosen offsets.
            blob = bytearray(seed)
            for _ in range(fdp.ConsumeIntInRange(1, 8)):
                if not blob:
                    break
                pos = fdp.ConsumeIntInRange(0, len(blob) - 1)
                blob[pos] = fdp.ConsumeIntInRange(0, 255)
            if mode == 2:
                blob = blob[: fdp.ConsumeIntInRange(0, len(blob))]
            blob = bytes(blob)
        try:
            load(blob)
        except (ValueError, TypeError, RuntimeError):
            pass

    atheris.Setup([sys.argv[0], "-runs=" + sys.argv[2], "-seed=1234"], one_input)
    atheris.Fuzz()
    """)


def test_fuzz_module_loader(tmp_path):
    pytest.importorskip("atheris", reason="atheris is not installed (pip install atheris)")
    _loader()
    script = tmp_path / "fuzz_loader.py"
    script.write_text(FUZZ_SCRIPT)
    runs = os.environ.get("TVM_OPENCL_FUZZ_RUNS", "3000")
    proc = run_python([str(script), _module_bytes().hex(), runs], cwd=tmp_path)
    assert "Done" in proc.stderr, proc.stderr[-2000:]


if __name__ == "__main__":
    tvm.testing.main()
