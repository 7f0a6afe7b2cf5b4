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
"""Every code block of the docs is checked: included from an executed example, run here, or
marked as not run with a reason.  The ``runblock`` snippets are run from the repository root."""

import re
import subprocess

import pytest

import docs_testing as dt

RUNBLOCKS = [b for b in dt.code_blocks() if b.name == "runblock"]


def test_pages_found():
    assert len(dt.pages()) >= 10, dt.pages()


@pytest.mark.parametrize("block", dt.code_blocks(), ids=str)
def test_code_block_is_checked(block):
    """No code the tests do not look at: code-block and friends are not allowed."""
    assert block.name in dt.ALLOWED_CODE, (
        f"{block}: use literalinclude of a docs/examples script, runblock, or code-not-run "
        "with a :reason:"
    )
    if block.name == "code-not-run":
        assert block.options.get("reason", "").strip(), f"{block}: code-not-run needs :reason:"
    if block.name == "runblock":
        assert block.argument == "bash", f"{block}: runblock runs bash only"
        assert block.content.strip(), f"{block}: empty runblock"


@pytest.mark.parametrize(
    "block", [b for b in dt.code_blocks() if b.name == "literalinclude"], ids=str
)
def test_literalinclude_is_an_example_with_its_markers(block):
    """Included code comes from docs/examples (run by test_examples.py), markers present."""
    path = (dt.DOCS / block.page).parent / block.argument
    path = path.resolve()
    assert path.parent == dt.EXAMPLES, f"{block}: include from docs/examples/, not {path}"
    assert path.is_file(), f"{block}: {path} does not exist"
    text = path.read_text()
    for key in ("start-after", "end-before"):
        marker = block.options.get(key)
        if marker:
            assert marker in text, f"{block}: marker {marker!r} is not in {path.name}"
    start, end = block.options.get("start-after"), block.options.get("end-before")
    if start and end:
        region = text.split(start, 1)[1].split(end, 1)[0]
        assert region.strip(), f"{block}: the region between the markers is empty"


def test_every_example_is_included_somewhere():
    """An example no page shows is dead weight (or a page lost its include)."""
    included = {
        ((dt.DOCS / b.page).parent / b.argument).resolve().name
        for b in dt.code_blocks()
        if b.name == "literalinclude"
    }
    scripts = {p.name for p in dt.EXAMPLES.glob("*.py")}
    assert scripts <= included, f"examples not shown on any page: {sorted(scripts - included)}"


@pytest.mark.parametrize("block", RUNBLOCKS, ids=str)
def test_runblock(block):
    """Run the shell snippet from the repository root; it must exit 0."""
    if block.options.get("requires") == "opencl" and not dt.opencl_available():
        pytest.skip("no OpenCL device")
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block.content],
        cwd=dt.REPO,
        env=dt.test_env(),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, (
        f"{block} exited {proc.returncode}:\n{block.content}\n--- stdout\n{proc.stdout[-3000:]}"
        f"\n--- stderr\n{proc.stderr[-3000:]}"
    )


def test_internal_link_checker_finds_broken_links(tmp_path):
    """check_links.py reports a missing page and a missing anchor, and accepts good links."""
    import importlib.util  # pylint: disable=import-outside-toplevel

    spec = importlib.util.spec_from_file_location("check_links", dt.DOCS / "check_links.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    (tmp_path / "a.html").write_text(
        '<a href="b.html#here">ok</a> <a href="b.html#gone">x</a> <a href="c.html">y</a>'
        '<a href="https://example.org/">external</a> <img src="pic.png">'
    )
    (tmp_path / "b.html").write_text('<h1 id="here">b</h1>')
    problems = module.broken_links(tmp_path)
    assert len(problems) == 3, problems
    assert any(re.search(r"#gone", p) for p in problems)
    assert any("c.html" in p for p in problems)
    assert any("pic.png" in p for p in problems)
