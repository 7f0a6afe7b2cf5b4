"""The pristine base: the pinned apache-tvm wheel, its ``tvm/`` tree laid out as ``python/tvm``.

Cache layout (``.cache/base/`` at the repository root unless ``--cache`` says otherwise)::

    .cache/base/apache-tvm-<version>/
        wheel/apache_tvm-<version>-....whl      what pip downloaded
        python/tvm/...                          the wheel's tvm/ tree, shared libraries left out
        COMPLETE                                written last: the version, once all is verified

A tree without ``COMPLETE`` is rebuilt, so an interrupted fetch never passes for a base.
"""

from __future__ import annotations

import email.parser
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from . import WsError
from .repo import BASE_DIST, read_base_pin

COMPLETE = "COMPLETE"
_VERSION_RE = re.compile(r"""^__version__\s*=\s*(?:version\s*=\s*)?['"]([^'"]+)['"]""", re.M)


def default_cache(repo: Path) -> Path:
    """The base cache, ``ADRENO_WS_CACHE`` or ``<repo>/.cache/base``."""
    env = os.environ.get("ADRENO_WS_CACHE")
    return Path(env) if env else repo / ".cache" / "base"


def base_dir_for(repo: Path, cache: Path | None = None) -> Path:
    """Where the pristine base of this repository's pin lives (may not be fetched yet)."""
    pin = read_base_pin(repo)
    return (cache or default_cache(repo)) / f"{BASE_DIST}-{pin.version}"


def is_fetched(base: Path) -> bool:
    """True when ``base`` holds a complete, verified pristine tree."""
    return (base / COMPLETE).is_file()


def ensure_base(repo: Path, cache: Path | None = None, wheel: Path | None = None) -> Path:
    """Return the pristine base directory (containing ``python/tvm``), fetching it if needed.

    ``wheel`` uses a local wheel file instead of downloading one with pip.
    """
    pin = read_base_pin(repo)
    base = base_dir_for(repo, cache)
    if is_fetched(base):
        recorded = (base / COMPLETE).read_text(encoding="utf-8").strip()
        if recorded == pin.version:
            return base
    wheel_dir = base / "wheel"
    if wheel is None:
        wheel = _find_wheel(wheel_dir, pin.version) or _download(pin.version, wheel_dir)
    _extract(wheel, base, pin.version)
    return base


def _find_wheel(wheel_dir: Path, version: str) -> Path | None:
    found = sorted(wheel_dir.glob(f"apache_tvm-{version}-*.whl")) if wheel_dir.is_dir() else []
    return found[0] if found else None


def _download(version: str, wheel_dir: Path) -> Path:
    wheel_dir.mkdir(parents=True, exist_ok=True)
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--disable-pip-version-check",
        "-q",
        "-d",
        str(wheel_dir),
        f"{BASE_DIST}=={version}",
    ]
    print(f"adreno_ws: downloading {BASE_DIST}=={version} into {wheel_dir}", flush=True)
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True)
    wheel = _find_wheel(wheel_dir, version)
    if proc.returncode != 0 or wheel is None:
        last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise WsError(
            f"could not download {BASE_DIST}=={version} with pip: {last}",
            "check the network to PyPI, or pass --wheel PATH to a local copy of the wheel",
        )
    return wheel


def wheel_version(wheel: Path) -> str:
    """The Version field of a wheel's METADATA."""
    with zipfile.ZipFile(wheel) as archive:
        meta = [n for n in archive.namelist() if re.fullmatch(r"[^/]+\.dist-info/METADATA", n)]
        if not meta:
            raise WsError(f"{wheel} has no dist-info/METADATA: not a wheel")
        msg = email.parser.Parser().parsestr(archive.read(meta[0]).decode("utf-8"))
    return msg.get("Version", "")


def read_version_py(path: Path) -> str | None:
    """The ``__version__`` a ``tvm/_version.py`` declares, or None."""
    if not path.is_file():
        return None
    match = _VERSION_RE.search(path.read_text(encoding="utf-8"))
    return match.group(1) if match else None


def _extract(wheel: Path, base: Path, version: str) -> None:
    got = wheel_version(wheel)
    if got != version:
        raise WsError(
            f"{wheel.name} is {BASE_DIST} {got}, but ci/requirements-base.txt pins {version}: "
            "use the pinned wheel"
        )
    base.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".extract-", dir=base))
    try:
        with zipfile.ZipFile(wheel) as archive:
            for info in archive.infolist():
                name = info.filename
                if info.is_dir() or not name.startswith("tvm/") or _is_binary_lib(name):
                    continue
                dest = tmp / "python" / name
                dest.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(info) as src, open(dest, "wb") as out:
                    shutil.copyfileobj(src, out)
        declared = read_version_py(tmp / "python" / "tvm" / "_version.py")
        if declared != version:
            raise WsError(f"{wheel.name}: tvm/_version.py says {declared!r}, expected {version!r}")
        shutil.rmtree(base / "python", ignore_errors=True)
        (tmp / "python").rename(base / "python")
        (base / COMPLETE).write_text(version + "\n", encoding="utf-8")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _is_binary_lib(name: str) -> bool:
    # The shared libraries (libtvm_compiler.so alone is 259 MB) are never patched.
    return bool(re.search(r"\.so(\.[0-9.]+)?$", name)) or name.endswith((".a", ".dylib", ".dll"))
