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
"""Build the compiler C++ of the series (``src/relax/backend/adreno``) into an extension library.

The series adds a little C++ to TVM's compiler: the registration of the Adreno passes'
PassContext options (``TVM_REGISTER_PASS_CONFIG_OPTION``), which Python cannot do. Upstream it
is compiled into ``libtvm_compiler.so``; the wheel cannot be rebuilt, so the workspace compiles
it against the wheel into ``tvm/lib/libtvm_adreno_compiler_ext.so`` and lets ``import tvm``
load it through the wheel's own hook for out-of-tree extensions, the ``tvm.backends``
entry-point group (``tvm/backend/_autoload_backends.py``). A process that imports only the
runtime (``TVM_USE_RUNTIME_LIB=1``) does not load it.
"""

from __future__ import annotations

import os
import pathlib
import shutil
from typing import List

from .runtime_build import REPO_ROOT, RuntimeBuildError, _compiler, _run

LIB_NAME = "libtvm_adreno_compiler_ext.so"
SOURCE_DIR = REPO_ROOT / "src" / "relax" / "backend" / "adreno"
COMPAT_DIR = REPO_ROOT / "src" / "compat"
#: The distribution that carries the entry point (no code of its own but the loader module).
DIST_NAME = "adreno_ws_compiler_ext"

LOADER = f'''"""Load {LIB_NAME}, the series' compiler C++ (written by adreno_ws setup)."""

import ctypes
import pathlib


def load():
    """Entry point of the ``tvm.backends`` group, called by ``import tvm``."""
    import tvm  # pylint: disable=import-outside-toplevel

    if getattr(tvm, "_RUNTIME_ONLY", False):
        return
    lib = pathlib.Path(tvm.__file__).parent / "lib" / "{LIB_NAME}"
    if lib.is_file():
        ctypes.CDLL(str(lib), mode=ctypes.RTLD_LOCAL)
'''


def sources() -> List[pathlib.Path]:
    """The C++ files of the series' compiler part (empty before the series adds any)."""
    return sorted(SOURCE_DIR.glob("*.cc"))


def build(site_packages: pathlib.Path, build_dir: pathlib.Path) -> pathlib.Path:
    """Compile and link :data:`LIB_NAME` against the wheel in ``site_packages``."""
    site_packages = pathlib.Path(site_packages).resolve()
    srcs = sources()
    if not srcs:
        raise RuntimeBuildError(f"no C++ sources in {SOURCE_DIR}")
    build_dir = pathlib.Path(build_dir).resolve()
    build_dir.mkdir(parents=True, exist_ok=True)
    lib_dirs = [site_packages / "tvm" / "lib", site_packages / "tvm_ffi" / "lib"]
    out = build_dir / LIB_NAME
    cmd = [_compiler(), "-std=c++17", "-O2", "-fPIC", "-shared", "-Wall"]
    cmd += [f"-I{COMPAT_DIR}", f"-I{site_packages / 'tvm_ffi' / 'include'}"]
    cmd += [*map(str, srcs), "-o", str(out) + ".tmp"]
    cmd += [f"-L{d}" for d in lib_dirs] + ["-ltvm_compiler", "-ltvm_ffi"]
    cmd += ["-Wl,-rpath,$ORIGIN:$ORIGIN/../../tvm_ffi/lib", "-Wl,--no-undefined"]
    _run(cmd, f"building {LIB_NAME}")
    os.replace(str(out) + ".tmp", out)
    return out


def install(so_path: pathlib.Path, site_packages: pathlib.Path) -> pathlib.Path:
    """Install the library beside ``libtvm_compiler.so`` and its ``tvm.backends`` entry point."""
    site_packages = pathlib.Path(site_packages)
    lib_dir = site_packages / "tvm" / "lib"
    if not (lib_dir / "libtvm_compiler.so").is_file():
        raise RuntimeBuildError(f"no libtvm_compiler.so in {lib_dir}: wrong site-packages")
    dest = lib_dir / LIB_NAME
    shutil.copy2(so_path, str(dest) + ".tmp")
    os.replace(str(dest) + ".tmp", dest)
    (site_packages / f"{DIST_NAME}.py").write_text(LOADER)
    dist_info = site_packages / f"{DIST_NAME}-0.dist-info"
    dist_info.mkdir(exist_ok=True)
    (dist_info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {DIST_NAME}\nVersion: 0\n")
    (dist_info / "entry_points.txt").write_text(
        f"[tvm.backends]\nadreno_compiler_ext = {DIST_NAME}:load\n"
    )
    return dest
