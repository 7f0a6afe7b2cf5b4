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
"""Helpers of the docs tests: where things are, and the code blocks of the reST pages."""

from __future__ import annotations

import dataclasses
import os
import re
import sys
from pathlib import Path
from typing import Dict, List

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
EXAMPLES = DOCS / "examples"

# Directives that show code. Each one found in a page must be one of ALLOWED_CODE.
CODE_DIRECTIVES = ("code-block", "code", "sourcecode", "literalinclude", "runblock", "code-not-run")
ALLOWED_CODE = ("literalinclude", "runblock", "code-not-run")

_DIRECTIVE_RE = re.compile(r"^(?P<indent>[ \t]*)\.\. (?P<name>[\w-]+)::[ \t]*(?P<arg>.*)$")
_OPTION_RE = re.compile(r"^:(?P<key>[\w-]+):[ \t]*(?P<value>.*)$")


@dataclasses.dataclass
class Block:
    """One directive of a page: its name, argument, options and content."""

    page: str  # path relative to docs/
    line: int  # 1-based
    name: str
    argument: str
    options: Dict[str, str]
    content: str

    def __str__(self):
        return f"{self.page}:{self.line} ({self.name})"


def pages() -> List[Path]:
    """The reST sources of the docs (not the build output)."""
    return sorted(
        p for p in DOCS.rglob("*.rst") if "_build" not in p.parts and "examples" not in p.parts
    )


def blocks(path: Path) -> List[Block]:
    """Every directive of a page, with its options and de-indented content."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out: List[Block] = []
    i = 0
    while i < len(lines):
        match = _DIRECTIVE_RE.match(lines[i])
        if not match:
            i += 1
            continue
        indent = len(match["indent"].expandtabs())
        start = i
        i += 1
        body: List[str] = []
        while i < len(lines) and (
            not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > indent
        ):
            body.append(lines[i])
            i += 1
        while body and not body[-1].strip():
            body.pop()
        # Options: the first lines of the body, up to a blank line.
        options: Dict[str, str] = {}
        key = None
        rest = list(body)
        while rest and rest[0].strip():
            text = rest[0].strip()
            opt = _OPTION_RE.match(text)
            if opt:
                key = opt["key"]
                options[key] = opt["value"]
            elif key is not None:
                options[key] += " " + text  # a continued option value
            else:
                break
            rest.pop(0)
        content_lines = [ln for ln in rest]
        while content_lines and not content_lines[0].strip():
            content_lines.pop(0)
        margin = min((len(ln) - len(ln.lstrip()) for ln in content_lines if ln.strip()), default=0)
        content = "\n".join(ln[margin:] for ln in content_lines)
        out.append(
            Block(
                str(path.relative_to(DOCS)),
                start + 1,
                match["name"],
                match["arg"].strip(),
                options,
                content,
            )
        )
        # Nested directives (a code-not-run inside a list item) are found by scanning on.
        i = start + 1
    return out


def all_blocks() -> List[Block]:
    return [b for page in pages() for b in blocks(page)]


def code_blocks() -> List[Block]:
    return [b for b in all_blocks() if b.name in CODE_DIRECTIVES]


def test_env() -> Dict[str, str]:
    """The environment docs snippets run in: the test interpreter's bin first on PATH."""
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env.pop("PYTHONPATH", None)
    return env


def opencl_available() -> bool:
    """Whether TVM sees an OpenCL device (our runtime installed, a device visible)."""
    import tvm  # pylint: disable=import-outside-toplevel

    return bool(tvm.runtime.enabled("opencl")) and bool(tvm.opencl(0).exist)
