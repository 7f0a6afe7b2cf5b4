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
"""Run the example scripts that the how-to pages include, on the host's OpenCL device."""

import contextlib
import importlib.util
import os
import signal
import subprocess
import sys

import pytest

import docs_testing as dt

# (script, arguments, Python modules it needs beyond the test requirements, needs a device)
EXAMPLES = [
    ("compile_and_run.py", [], [], True),
    ("compile_and_run.py", ["--dtype", "float16", "--compile-only"], [], False),
    ("compile_and_run.py", ["--dtype", "float16_acc32", "--compile-only"], [], False),
    ("import_onnx.py", [], ["onnx", "onnxruntime"], True),
    ("import_pytorch.py", [], ["torch"], True),
    ("import_tflite.py", [], ["tflite", "mediapipe"], True),
    ("export_and_rpc.py", ["--local-rpc"], ["tornado", "cloudpickle"], True),
    ("program_cache.py", [], [], True),
    ("tune_rpc.py", ["--local-rpc"], ["tornado", "cloudpickle"], True),
    ("tune_farm.py", ["--local-farm"], ["tornado", "cloudpickle"], True),
]


def test_every_example_is_run():
    scripts = {p.name for p in dt.EXAMPLES.glob("*.py")}
    assert scripts == {e[0] for e in EXAMPLES}, "add the new example to EXAMPLES"


@pytest.mark.parametrize(
    "script,args,modules,device", EXAMPLES, ids=[" ".join([e[0]] + e[1]) for e in EXAMPLES]
)
def test_example(script, args, modules, device, tmp_path):
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"needs {', '.join(missing)} (pip install -r ci/requirements-docs.txt)")
    if device and not dt.opencl_available():
        pytest.skip("no OpenCL device")
    env = dt.test_env()
    # Keep the runtime's program cache of the examples out of the user's cache folder.
    env["TVM_OPENCL_CACHE_DIR"] = str(tmp_path / "opencl-cache")
    out, err = tmp_path / "stdout.txt", tmp_path / "stderr.txt"
    # Output to files, not pipes: a process the example leaves behind cannot hang the test.
    # The example runs in a session of its own; whatever is left of it is stopped afterwards.
    with open(out, "wb") as fout, open(err, "wb") as ferr:
        proc = subprocess.Popen(
            [sys.executable, str(dt.EXAMPLES / script), *args],
            cwd=dt.REPO,
            env=env,
            stdout=fout,
            stderr=ferr,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            returncode = proc.wait(timeout=900)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    stdout, stderr = out.read_text(errors="replace"), err.read_text(errors="replace")
    assert returncode == 0, (
        f"{script} {' '.join(args)} exited {returncode}\n--- stdout\n{stdout[-4000:]}"
        f"\n--- stderr\n{stderr[-6000:]}"
    )
    assert "ok" in stdout or "compiled" in stdout, stdout
