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
"""Sphinx configuration of the Adreno texture workspace docs (built by docs/build.sh)."""

import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
REPO = DOCS.parent
sys.path.insert(0, str(DOCS / "_ext"))
sys.path.insert(0, str(REPO / "tools"))  # adreno_ws, for the tooling API reference

# Autodoc imports tvm: keep it from touching an OpenCL device while the docs build.
os.environ.setdefault("TVM_OPENCL_CACHE", "0")

project = "Adreno textures for Apache TVM"
author = "the Adreno texture workspace contributors"
copyright = "The Apache Software Foundation"  # pylint: disable=redefined-builtin
release = (REPO / "ci" / "requirements-base.txt").read_text().split("apache-tvm==")[1].split()[0]
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
    "adreno_docs",
]

exclude_patterns = [
    "_build",
    "examples",
    # Written by the benchmark runner and pulled in by benchmarks/index.rst when present.
    "benchmarks/results.rst",
]
templates_path = []
html_static_path = []
html_theme = "furo"
html_title = "Adreno textures for TVM"
html_show_sourcelink = False
pygments_style = "sphinx"

autodoc_default_options = {"members": True, "show-inheritance": False}
autodoc_member_order = "bysource"
autodoc_typehints = "description"
napoleon_numpy_docstring = True
napoleon_google_docstring = False

napoleon_use_param = False  # parameter types as plain text, not cross references
napoleon_use_rtype = False
napoleon_preprocess_types = False

# Nitpicky: every cross reference must resolve (:doc:, :ref:, and the Python roles written in
# docstrings), except references into TVM, numpy and the standard library, which these docs do
# not hold, and the free-text types of numpy-style docstrings ("int or pair of int").
nitpicky = True
_EXTERNAL = (
    r"(tvm|tvm_ffi|te|tirx|tir|s_tir|relax|ir|topi|numpy|np|onnx|torch|pathlib|argparse|ctypes|"
    r"typing|collections|dataclasses|datetime|subprocess|os|re)(\..*)?"
)
nitpick_ignore_regex = [
    (r"py:.*", _EXTERNAL),
    (r"py:.*", r"[^.]*"),  # undotted names: builtins and free-text types
]

# Docstring problems in mirror files owned by other work, let through by exact match until
# their owners fix them: (substring of the location, substring of the message). Keep short;
# every entry is a bug in a docstring that renders wrongly on the API pages.
KNOWN_DOCSTRING_WARNINGS = []


class _KnownWarnings:  # pylint: disable=too-few-public-methods
    """A logging filter that drops the warnings listed in KNOWN_DOCSTRING_WARNINGS."""

    def filter(self, record):
        location = str(getattr(record, "location", "") or "")
        text = record.getMessage()
        return not any(loc in location and msg in text for loc, msg in KNOWN_DOCSTRING_WARNINGS)


def setup(app):  # pylint: disable=unused-argument
    import logging  # pylint: disable=import-outside-toplevel

    for handler in logging.getLogger("sphinx").handlers:
        handler.filters.insert(0, _KnownWarnings())
