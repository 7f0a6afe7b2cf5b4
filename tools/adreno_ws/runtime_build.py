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
"""Build the OpenCL runtime library ``libtvm_runtime_opencl.so`` against an installed TVM wheel.

The official wheel ships with USE_OPENCL=OFF; this compiles ``src/runtime/opencl/*.cc`` with the
wheel's headers and links against its ``libtvm_runtime.so`` and ``libtvm_ffi.so`` (never against
libOpenCL, which the library opens lazily).

Standalone use::

    PYTHONPATH=tools python -m adreno_ws.runtime_build --site-packages SP --build-dir build/runtime
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import pathlib
import shutil
import subprocess
import sys
from typing import List, Sequence

LIB_NAME = "libtvm_runtime_opencl.so"
REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
SOURCE_DIR = REPO_ROOT / "src" / "runtime" / "opencl"

# Headers whose presence (and content) tell us the wheel is the base we build against.
_REQUIRED_HEADERS = {
    "tvm/include/tvm/runtime/device_api.h": "kImagePitchAlignment",
    "tvm/include/tvm/runtime/memory/memory_manager.h": "CreateView",
    "tvm/src/runtime/workspace_pool.h": "WorkspacePool",
    "tvm/src/runtime/metadata.h": "FunctionInfo",
    "tvm_ffi/include/tvm/ffi/extra/module.h": "SaveToBytes",
}
_REQUIRED_LIBS = ("tvm/lib/libtvm_runtime.so", "tvm_ffi/lib/libtvm_ffi.so")


class RuntimeBuildError(RuntimeError):
    """A build problem, described in one line."""


def _compiler() -> str:
    cxx = os.environ.get("CXX", "g++")
    found = shutil.which(cxx)
    if found is None:
        raise RuntimeBuildError(f"C++ compiler '{cxx}' not found: install g++ (or set CXX)")
    return found


def _check_base(site_packages: pathlib.Path) -> None:
    if not (site_packages / "tvm").is_dir():
        raise RuntimeBuildError(
            f"no TVM installation in {site_packages} (expected {site_packages}/tvm)"
        )
    for rel, marker in _REQUIRED_HEADERS.items():
        path = site_packages / rel
        if not path.is_file():
            raise RuntimeBuildError(
                f"missing header {path}: this TVM wheel does not ship the runtime headers "
                "(wrong base; apache-tvm==0.27.0.post1 is expected)"
            )
        if marker not in path.read_text(errors="replace"):
            raise RuntimeBuildError(
                f"{path} lacks '{marker}': wrong TVM base (apache-tvm==0.27.0.post1 is expected)"
            )
    for rel in _REQUIRED_LIBS:
        if not (site_packages / rel).is_file():
            raise RuntimeBuildError(
                f"missing library {site_packages / rel}: broken TVM installation"
            )
    if not pathlib.Path("/usr/include/CL/cl.h").is_file() and not os.environ.get("OPENCL_INCLUDE"):
        raise RuntimeBuildError(
            "OpenCL headers not found (/usr/include/CL/cl.h): install opencl-headers "
            "or set OPENCL_INCLUDE to the folder holding CL/cl.h"
        )


def _flags(site_packages: pathlib.Path) -> List[str]:
    flags = [
        "-std=c++17",
        "-O2",
        "-fPIC",
        # Our helpers (e.g. the support::Stream stand-in) must not interpose TVM's symbols.
        "-fvisibility=hidden",
        "-fvisibility-inlines-hidden",
        "-Wall",
        "-Wno-unused-function",
        f"-I{SOURCE_DIR / 'compat'}",
        f"-I{site_packages / 'tvm' / 'include'}",
        f"-I{site_packages / 'tvm' / 'src' / 'runtime'}",
        f"-I{site_packages / 'tvm_ffi' / 'include'}",
    ]
    if os.environ.get("OPENCL_INCLUDE"):
        flags.append(f"-I{os.environ['OPENCL_INCLUDE']}")
    return flags


def _sources() -> List[pathlib.Path]:
    sources = sorted(SOURCE_DIR.glob("*.cc"))
    if not sources:
        raise RuntimeBuildError(f"no sources in {SOURCE_DIR}")
    return sources


def _headers() -> List[pathlib.Path]:
    return sorted(SOURCE_DIR.rglob("*.h"))


def _newest_mtime(paths: Sequence[pathlib.Path]) -> float:
    return max((p.stat().st_mtime for p in paths), default=0.0)


def _run(cmd: List[str], what: str) -> None:
    proc = subprocess.run(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False
    )
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout)
        first = next(
            (line for line in proc.stdout.splitlines() if "error" in line), "see output above"
        )
        raise RuntimeBuildError(f"{what} failed: {first.strip()}")


def build_runtime(
    site_packages: pathlib.Path, build_dir: pathlib.Path, jobs: int = 2
) -> pathlib.Path:
    """Compile the OpenCL runtime library; returns the path of the .so (skips if up to date)."""
    site_packages = pathlib.Path(site_packages).resolve()
    build_dir = pathlib.Path(build_dir).resolve()
    cxx = _compiler()
    _check_base(site_packages)
    obj_dir = build_dir / "obj"
    obj_dir.mkdir(parents=True, exist_ok=True)
    flags = _flags(site_packages)
    # Objects depend on every header of ours, the wheel's headers and the flags.
    flags_file = build_dir / "flags.txt"
    flags_text = "\n".join([cxx] + flags)
    if not flags_file.is_file() or flags_file.read_text() != flags_text:
        flags_file.write_text(flags_text)
    dep_mtime = max(
        _newest_mtime(_headers()),
        flags_file.stat().st_mtime,
        (site_packages / "tvm" / "include" / "tvm" / "runtime" / "device_api.h").stat().st_mtime,
    )

    def compile_one(src: pathlib.Path) -> pathlib.Path:
        obj = obj_dir / (src.stem + ".o")
        if obj.is_file() and obj.stat().st_mtime >= max(src.stat().st_mtime, dep_mtime):
            return obj
        _run([cxx, *flags, "-c", str(src), "-o", str(obj)], f"compiling {src.name}")
        return obj

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        objects = list(pool.map(compile_one, _sources()))

    out = build_dir / LIB_NAME
    if out.is_file() and out.stat().st_mtime >= _newest_mtime(objects):
        return out
    lib_dirs = [site_packages / "tvm" / "lib", site_packages / "tvm_ffi" / "lib"]
    link = [cxx, "-shared", "-o", str(out) + ".tmp", *map(str, objects)]
    link += [f"-L{d}" for d in lib_dirs]
    link += ["-ltvm_runtime", "-ltvm_ffi", "-ldl", "-lpthread"]
    # Installed next to libtvm_runtime.so ($ORIGIN) or used from the build folder (absolute).
    link += ["-Wl,-rpath,$ORIGIN:$ORIGIN/../../tvm_ffi/lib:" + ":".join(map(str, lib_dirs))]
    # Every symbol must resolve now (no hidden link dependency on libOpenCL).
    link += ["-Wl,--no-undefined"]
    _run(link, f"linking {LIB_NAME}")
    os.replace(str(out) + ".tmp", out)
    return out


def install_runtime(so_path: pathlib.Path, site_packages: pathlib.Path) -> pathlib.Path:
    """Copy the built library into ``site_packages/tvm/lib`` (atomically); returns its new path."""
    so_path = pathlib.Path(so_path)
    if not so_path.is_file():
        raise RuntimeBuildError(f"{so_path} does not exist: build it first")
    lib_dir = pathlib.Path(site_packages) / "tvm" / "lib"
    if not lib_dir.is_dir():
        raise RuntimeBuildError(f"no TVM library folder {lib_dir}: wrong site-packages")
    dest = lib_dir / LIB_NAME
    tmp = lib_dir / (LIB_NAME + ".tmp")
    shutil.copy2(so_path, tmp)
    # Replace, never overwrite in place: running processes keep their mapped copy.
    os.replace(tmp, dest)
    return dest


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site-packages", type=pathlib.Path, required=True)
    parser.add_argument("--build-dir", type=pathlib.Path, default=pathlib.Path("build/runtime"))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--install", action="store_true", help="copy the library into the wheel")
    args = parser.parse_args(argv)
    try:
        so_path = build_runtime(args.site_packages, args.build_dir, args.jobs)
        print(so_path)
        if args.install:
            print(install_runtime(so_path, args.site_packages))
    except RuntimeBuildError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
