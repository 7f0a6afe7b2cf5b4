"""``setup``: the environment both CI scripts (and a developer) need, idempotent.

Steps, each skipped when its stamp says it is done:

1. a virtual environment (default ``.venv`` at the repository root);
2. ``pip install -r ci/requirements-base.txt -r ci/requirements-test.txt``, and the optional
   requirements that exist (models, docs, and the linters of ``ci/requirements-lint.txt``,
   which ``series check`` runs on each PR) (stamp: the hashes of the files and the Python
   version);
3. the OpenCL packages (PoCL, the ICD loader, headers, clinfo) through apt-get when root,
   then at least one OpenCL device must be visible;
4. the patch series applied to the venv's tvm (its own record makes this a no-op when done;
   a changed series restores the pristine files first);
5. the OpenCL runtime built and installed when ``src/runtime/opencl`` exists
   (stamp: the hash of its sources, the builder and the base version).

Stamps live in ``<venv>/.adreno_ws/``; delete that folder (or the venv) to redo everything.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
import sys
import venv as venv_mod
from pathlib import Path

from . import WsError, compiler_ext, opencl, runtime
from .base import ensure_base
from .patches import apply_series
from .repo import (
    BASE_REQUIREMENTS,
    EXTRA_REQUIREMENTS,
    INTEL_OPENCL_SCRIPT,
    NODEPS_REQUIREMENTS,
    TEST_REQUIREMENTS,
    find_venv_tvm,
    read_base_pin,
)


def _hash_files(paths: list[Path], extra: str = "") -> str:
    digest = hashlib.sha256(extra.encode())
    for path in paths:
        digest.update(path.as_posix().encode() + b"\0")
        digest.update(path.read_bytes() if path.is_file() else b"<absent>")
    return digest.hexdigest()


class Stamps:
    """Small JSON stamps, one per step, in ``<venv>/.adreno_ws/``."""

    def __init__(self, venv: Path):
        self.dir = venv / ".adreno_ws"

    def get(self, step: str) -> dict:
        """The stamp of ``step``, or {} when absent."""
        try:
            return json.loads((self.dir / f"{step}.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}

    def put(self, step: str, value: dict) -> None:
        """Record ``step`` as done."""
        self.dir.mkdir(parents=True, exist_ok=True)
        (self.dir / f"{step}.json").write_text(json.dumps(value) + "\n", encoding="utf-8")


def _say(msg: str) -> None:
    print(f"adreno_ws setup: {msg}", flush=True)


def venv_python(venv: Path) -> Path:
    """The interpreter of a venv."""
    return venv / "bin" / "python"


def ensure_venv(venv: Path) -> None:
    """Create the venv unless it works already."""
    if venv_python(venv).exists():
        return
    _say(f"creating virtual environment {venv}")
    venv_mod.EnvBuilder(with_pip=True, clear=venv.exists()).create(venv)


def _pip_install(venv: Path, args: list[str]) -> None:
    cmd = [str(venv_python(venv)), "-m", "pip", "install", "--disable-pip-version-check"]
    cmd += ["--progress-bar", "off", "-q", *args]
    if subprocess.run(cmd, check=False).returncode != 0:
        raise WsError("pip install failed (see above): fix the requirement or the network, rerun")


def ensure_requirements(repo: Path, venv: Path, stamps: Stamps) -> None:
    """pip install the base, test and optional requirements, unless the stamp matches."""
    reqs = [repo / BASE_REQUIREMENTS, repo / TEST_REQUIREMENTS]
    for req in reqs:
        if not req.is_file():
            raise WsError(f"{req.relative_to(repo)} is missing: restore it from git")
    reqs += [repo / extra for extra in EXTRA_REQUIREMENTS if (repo / extra).is_file()]
    nodeps = repo / NODEPS_REQUIREMENTS
    key = _hash_files(reqs + ([nodeps] if nodeps.is_file() else []), platform.python_version())
    if stamps.get("pip").get("key") == key:
        _say("requirements already installed")
        return
    _say("pip install -r " + " -r ".join(str(r.relative_to(repo)) for r in reqs))
    _pip_install(venv, [arg for req in reqs for arg in ("-r", str(req))])
    if nodeps.is_file():
        _say(f"pip install --no-deps -r {NODEPS_REQUIREMENTS}")
        _pip_install(venv, ["--no-deps", "-r", str(nodeps)])
    stamps.put("pip", {"key": key})


def ensure_intel_opencl(repo: Path, venv: Path) -> Path:
    """Install Intel's CPU OpenCL runtime into the venv; return the ICD vendors folder.

    The folder registers Intel's runtime and a copy of PoCL's, so that with
    ``OCL_ICD_VENDORS`` set to it both host devices are visible (ci/lib.sh exports it).
    """
    script = repo / INTEL_OPENCL_SCRIPT
    if not script.is_file():
        raise WsError(
            f"{INTEL_OPENCL_SCRIPT} is missing: restore it from git, or pass --skip-intel"
        )
    result = subprocess.run(
        ["bash", str(script), str(venv)], check=False, stdout=subprocess.PIPE, text=True
    )
    lines = result.stdout.strip().splitlines()
    if result.returncode != 0 or not lines or "OCL_ICD_VENDORS=" not in lines[-1]:
        raise WsError(
            f"{INTEL_OPENCL_SCRIPT} failed (see above): fix it, or pass --skip-intel to test "
            "on PoCL only"
        )
    return Path(lines[-1].split("OCL_ICD_VENDORS=", 1)[1])


def ensure_opencl_packages(allow_apt: bool = True) -> None:
    """Install the OpenCL packages (PoCL, ICD loader, headers, clinfo) when missing, as root."""
    missing = opencl.missing_packages()
    if missing:
        names = " ".join(missing)
        if not (allow_apt and opencl.is_root()):
            raise WsError(
                f"OpenCL packages missing ({names}): run `sudo apt-get install -y {names}`, "
                "or pass --skip-opencl"
            )
        _say(f"apt-get install {names}")
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        for cmd in (
            ["apt-get", "update", "-qq"],
            ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing],
        ):
            if subprocess.run(cmd, env=env, check=False).returncode != 0:
                raise WsError(f"`{' '.join(cmd)}` failed (see above): install {names} by hand")


def visible_opencl_devices() -> list[str]:
    """The OpenCL devices the ICD loader lists; an error with what to do when there is none.

    The loader reads ``OCL_ICD_VENDORS`` once per process: call this after setting it.
    """
    found = opencl.devices()
    if not found:
        raise WsError(
            "no OpenCL platform is visible (is /etc/OpenCL/vendors/pocl.icd there, or "
            "OCL_ICD_VENDORS set?): reinstall pocl-opencl-icd, or pass --skip-opencl"
        )
    return found


def ensure_patches(repo: Path, venv: Path) -> str:
    """Apply the series to the venv's tvm (restoring pristine files when the series changed)."""
    tvm = find_venv_tvm(venv)
    return apply_series(repo, tvm, force=True, pristine=lambda: ensure_base(repo))


def ensure_runtime(repo: Path, venv: Path, stamps: Stamps, jobs: int) -> str:
    """Build and install the OpenCL runtime when its sources exist and changed."""
    src = repo / runtime.RUNTIME_SRC
    if not src.is_dir():
        return f"no {runtime.RUNTIME_SRC}: runtime build skipped"
    builder_file = Path(__file__).with_name("runtime_build.py")
    if not builder_file.is_file():
        return "warning: tools/adreno_ws/runtime_build.py is missing: runtime build skipped"
    site = runtime.site_packages_of(find_venv_tvm(venv))
    files = sorted(p for p in src.rglob("*") if p.is_file()) + [builder_file]
    key = _hash_files(files, read_base_pin(repo).version + str(site))
    done = stamps.get("runtime")
    if done.get("key") == key and Path(done.get("installed", "")).is_file():
        return f"runtime up to date: {done['installed']}"
    so_path = runtime.build(site, repo / "build" / "opencl-runtime", jobs=jobs)
    installed = runtime.install(so_path, site)
    stamps.put("runtime", {"key": key, "installed": str(installed)})
    return f"runtime installed: {installed}"


def ensure_compiler_ext(repo: Path, venv: Path, stamps: Stamps) -> str:
    """Build and install the series' compiler C++ (``compiler_ext``) when it changed."""
    sources = compiler_ext.sources()
    if not sources:
        return f"no {compiler_ext.SOURCE_DIR.relative_to(repo)}: compiler extension skipped"
    site = runtime.site_packages_of(find_venv_tvm(venv))
    files = sources + sorted(compiler_ext.COMPAT_DIR.rglob("*.h"))
    files.append(Path(compiler_ext.__file__))
    key = _hash_files(files, read_base_pin(repo).version + str(site))
    done = stamps.get("compiler_ext")
    if done.get("key") == key and Path(done.get("installed", "")).is_file():
        return f"compiler extension up to date: {done['installed']}"
    try:
        so_path = compiler_ext.build(site, repo / "build" / "compiler-ext")
        installed = compiler_ext.install(so_path, site)
    except compiler_ext.RuntimeBuildError as err:
        raise WsError(f"compiler extension: {err}") from err
    stamps.put("compiler_ext", {"key": key, "installed": str(installed)})
    return f"compiler extension installed: {installed}"


def setup(
    repo: Path,
    venv: Path,
    skip_opencl: bool,
    skip_runtime: bool,
    jobs: int,
    skip_intel: bool = False,
) -> None:
    """All steps, in order; raises WsError with what to do on the first that cannot finish."""
    if sys.version_info < (3, 11):
        raise WsError("Python 3.11 or newer is needed (tomllib): run with python3.11")
    read_base_pin(repo)
    ensure_venv(venv)
    stamps = Stamps(venv)
    ensure_requirements(repo, venv, stamps)
    if skip_opencl:
        _say("OpenCL check skipped (--skip-opencl)")
    else:
        ensure_opencl_packages()
        if skip_intel:
            _say("Intel CPU OpenCL skipped (--skip-intel)")
        else:
            vendors = ensure_intel_opencl(repo, venv)
            os.environ["OCL_ICD_VENDORS"] = str(vendors)
            _say(f"ICD vendors folder (PoCL + Intel): {vendors}")
        for dev in visible_opencl_devices():
            _say(f"OpenCL device: {dev}")
    _say(ensure_patches(repo, venv))
    if skip_runtime:
        _say("runtime build skipped (--skip-runtime)")
    else:
        _say(ensure_runtime(repo, venv, stamps, jobs))
    _say(ensure_compiler_ext(repo, venv, stamps))
    _say(f"ready: {venv_python(venv)}")
