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
"""docs/build.sh builds the Sphinx site with warnings as errors and checks internal links."""

import subprocess
import sys
import time

import docs_testing as dt


def test_docs_build(tmp_path):
    """The whole site builds cleanly (no warning, no broken internal link) within 2 minutes."""
    env = dt.test_env()
    env["PYTHON"] = sys.executable
    start = time.monotonic()
    proc = subprocess.run(
        ["bash", str(dt.DOCS / "build.sh"), str(tmp_path / "out")],
        cwd=dt.REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    seconds = time.monotonic() - start
    assert (
        proc.returncode == 0
    ), f"docs/build.sh failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-8000:]}"
    html = tmp_path / "out" / "html"
    for page in (
        "index.html",
        "howto/deploy.html",
        "howto/testing.html",
        "contributing.html",
        "design/textures.html",
        "benchmarks/index.html",
        "api/adreno.html",
        "api/tooling.html",
        "reference/environment.html",
    ):
        assert (html / page).is_file(), f"{page} was not built"
    bench = (html / "benchmarks" / "index.html").read_text()
    if (dt.DOCS / "benchmarks" / "results.rst").is_file():
        assert "No benchmark results are committed yet" not in bench
    else:
        assert "No benchmark results are committed yet" in bench
    assert seconds < 300, f"the docs build took {seconds:.0f} s (budget: 2 minutes on CI machines)"
