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
"""What the OpenCL driver made of the conv kernels of a ``conv_schedules.py`` bundle.

On the GPU box ``CONV_PROGRAMS=1 bash bench/tune_round_box.sh`` keeps the runtime's program
cache of the conv run (``$OUT/programs.tgz``, ``TVM_OPENCL_CACHE_DIR``). NVIDIA's driver stores
PTX there. Here:

  python bench/conv_programs.py --bundle build/conv/bundle --programs DIR [--out DIR/ptx]

matches each conv kernel's cache entry to the bundle's case by the source length and FNV-1a
hash its key records (the sources are read from the bundle's libraries, split per kernel as
the runtime builds them), writes the binaries out, and for PTX prints what ``ptxas -v`` (CUDA's assembler, when installed) reports per conv kernel:
registers, stack frame and spilled bytes. A stack frame means a private array the compiler
could not keep in registers (an index it could not resolve).
"""

import argparse
import json
import pathlib
import re
import shutil
import struct
import subprocess
import sys

MAGIC = b"TVMCLPC1"


def fnv1a64(data: bytes) -> int:
    """The 64-bit FNV-1a hash the runtime's cache key records of a program's source."""
    value = 0xCBF29CE484222325
    for byte in data:
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return value


def read_entry(path: pathlib.Path):
    """``(key fields, binary)`` of a program cache entry (``opencl_program_cache.cc``: magic,
    version, reserved, key length, key, binary length, binary hash, binary); None for a file
    that is not a whole entry."""
    data = path.read_bytes()
    if len(data) < 24 or not data.startswith(MAGIC):
        return None
    (key_len,) = struct.unpack_from("<Q", data, 16)
    start = 24 + key_len
    if start + 16 > len(data):
        return None
    key = data[24:start].decode("utf-8", "replace")
    (binary_len,) = struct.unpack_from("<Q", data, start)
    binary = data[start + 16 :]
    if len(binary) != binary_len:
        return None
    fields = dict(line.split("=", 1) for line in key.splitlines() if "=" in line)
    return fields, binary


def kernel_units(code: bytes):
    """``{kernel: source}``: the runtime builds one program per kernel, from the text before
    the first ``// Function: NAME`` line (shared) and that kernel's part
    (``SplitUnits`` in ``src/runtime/opencl/opencl_module.cc``)."""
    starts = [m.start() for m in re.finditer(rb"(?m)^// Function: ", code)]
    units = {}
    for begin, end in zip(starts, starts[1:] + [len(code)]):
        line_end = code.find(b"\n", begin)
        line_end = end if line_end < 0 or line_end > end else line_end
        name = code[begin + len(b"// Function: ") : line_end].decode().rstrip("\r ")
        units[name] = code[: starts[0]] + code[begin:end]
    return units


def bundle_sources(bundle: pathlib.Path):
    """``{(source length, FNV-1a): (case library name, kernel)}`` for the kernels of the
    bundle's libraries (loaded with the TVM runtime), as the runtime's cache keys hash them."""
    import tvm  # pylint: disable=import-outside-toplevel

    found = {}

    def walk(module, lib):
        for imported in module.imports:
            try:
                code = imported.inspect_source().encode()
            except Exception:  # pylint: disable=broad-except
                code = b""
            for kernel, unit in kernel_units(code).items():
                found.setdefault((len(unit), fnv1a64(unit)), (lib, kernel))
            walk(imported, lib)

    for lib in sorted((bundle / "lib").glob("*.so")):
        walk(tvm.runtime.load_module(str(lib)), lib.name)
    return found


def ptxas_report(ptx: pathlib.Path) -> dict:
    """Per kernel whose name holds ``conv2d``: registers, stack frame and spill bytes from
    ``ptxas -v``; empty when ptxas is not installed."""
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        return {}
    target = re.search(r"^\.target\s+(sm_\d+)", ptx.read_text(errors="replace"), re.M)
    arch = target.group(1) if target else "sm_90"
    proc = subprocess.run(
        [ptxas, f"-arch={arch}", "-v", str(ptx), "-o", "/dev/null"],
        capture_output=True,
        text=True,
        check=False,
    )
    report, kernel = {}, None
    for line in proc.stderr.splitlines():
        entry = re.search(r"entry function '([^']+)'|Function properties for (\S+)", line)
        if entry:
            kernel = entry.group(1) or entry.group(2)
        numbers = dict(
            (name, int(value))
            for value, name in re.findall(
                r"(\d+) (?:bytes )?(registers|stack frame|spill stores|spill loads)", line
            )
        )
        if kernel and "conv2d" in kernel and numbers:
            report.setdefault(kernel, {}).update(numbers)
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", type=pathlib.Path, required=True)
    parser.add_argument("--programs", type=pathlib.Path, required=True)
    parser.add_argument("--out", type=pathlib.Path, default=None)
    args = parser.parse_args()
    out = args.out or args.programs.parent / "binaries"
    out.mkdir(parents=True, exist_ok=True)
    sources = bundle_sources(args.bundle)
    rows = []
    for path in sorted(args.programs.rglob("*.clbin")):
        entry = read_entry(path)
        if entry is None:
            print(f"{path.name}: not a whole program cache entry, left out")
            continue
        fields, binary = entry
        key = (int(fields.get("source_len", -1)), int(fields.get("source_fnv", "0"), 16))
        if key not in sources:
            continue  # a program of no case of this bundle (another build's)
        lib, kernel = sources[key]
        if "conv2d" not in kernel:
            continue
        is_ptx = b".version" in binary[:4096] and b".target" in binary[:4096]
        written = out / f"{lib[: -len('.so')]}__{kernel}{'.ptx' if is_ptx else '.bin'}"
        written.write_bytes(binary.rstrip(b"\0"))
        assembled = ptxas_report(written) if is_ptx else {}
        device = fields.get("device", "")
        rows.append(
            dict(lib=lib, kernel=kernel, device=device, ptxas=assembled, binary=written.name)
        )
        print(f"{lib} {kernel}: {json.dumps(assembled) if assembled else written.name}")
    (out / "report.json").write_text(json.dumps(rows, indent=1), encoding="utf-8")
    if not rows:
        print(f"no entry of {args.programs} belongs to a case of {args.bundle}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
