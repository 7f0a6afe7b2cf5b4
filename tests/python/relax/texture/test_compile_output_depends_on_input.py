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
"""The compiled module depends on its input and its target only.

The same network is compiled for the Adreno texture target in two fresh processes: one with
the workspace's OpenCL runtime library loaded (as ``import tvm`` does when it is installed),
one where ``import tvm`` is kept from loading it, so that neither its device API, its codegen
hook (``ffi.Module.create.opencl``) nor its VM builtin (``vm.builtin.cached_static_alloc``) is
registered. The VM code (``as_text``) and the OpenCL source must be the same. A pass that asked
the process what is registered (as ``HoistStaticAllocations`` once did) breaks this.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import tvm

HERE = Path(__file__).resolve().parent

_COMPILE = r"""
import json, sys
if sys.argv[1] == "without":
    import tvm_ffi.libinfo as libinfo
    _load = libinfo.load_lib_ctypes

    def _refuse_opencl_runtime(package, target_name, *args, **kwargs):
        if target_name == "tvm_runtime_opencl":
            raise OSError("kept from loading by the test")
        return _load(package, target_name, *args, **kwargs)

    libinfo.load_lib_ctypes = _refuse_opencl_runtime
import tvm
from tvm import relax
sys.path.insert(0, sys.argv[2])
import texture_testing as tt

nb = tt.NetBuilder()
x = nb.input((1, 8, 16, 16))
y = nb.emit(relax.op.nn.relu(nb.bias(nb.conv2d(x, 16))))
y = nb.emit(relax.op.nn.max_pool2d(y, pool_size=(2, 2), strides=(2, 2)))
mod = nb.finish(nb.emit(relax.op.add(y, y)))
ex = tvm.compile(mod, target=tvm.target.Target("qcom/adreno-opencl-texture", host="llvm"))
print(json.dumps({
    "runtime_loaded": tvm.runtime.enabled("opencl"),
    "builtin": tvm.get_global_func("vm.builtin.cached_static_alloc", allow_missing=True)
    is not None,
    "vm": ex.as_text(),
    "opencl": tt.device_sources(ex),
}))
"""


def _compile_in_a_fresh_process(runtime: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", _COMPILE, runtime, str(HERE)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(
    not tvm.runtime.enabled("opencl"),
    reason="the OpenCL runtime library is not installed: there is no process with it to compare",
)
def test_same_executable_with_and_without_the_runtime_library():
    loaded = _compile_in_a_fresh_process("with")
    kept_out = _compile_in_a_fresh_process("without")
    assert loaded["runtime_loaded"] and loaded["builtin"]
    assert not kept_out["runtime_loaded"] and not kept_out["builtin"]
    assert "__kernel" in loaded["opencl"]
    assert "vm.builtin.cached_static_alloc" in loaded["vm"]
    assert kept_out["vm"] == loaded["vm"]
    assert kept_out["opencl"] == loaded["opencl"]
