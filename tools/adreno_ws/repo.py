"""Where things are in the workspace, and what the pinned base is."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from . import WsError

BASE_REQUIREMENTS = Path("ci/requirements-base.txt")
TEST_REQUIREMENTS = Path("ci/requirements-test.txt")
# Optional requirement files, installed when present: the real-model tests, the docs build,
# the linters `series check` runs on each PR of patches/stack.toml (black and pylint: a few
# seconds to install), and packages that must come without their declared dependencies (see
# each file's header).
EXTRA_REQUIREMENTS = (
    Path("ci/requirements-models.txt"),
    Path("ci/requirements-docs.txt"),
    Path("ci/requirements-lint.txt"),
)
NODEPS_REQUIREMENTS = Path("ci/requirements-models-nodeps.txt")
INTEL_OPENCL_SCRIPT = Path("ci/opencl-intel.sh")
PATCH_DIR = Path("patches")
SERIES_FILE = Path("patches/series")
# Mirror files live under python/; only python/tvm/ has a counterpart in the base wheel.
MIRROR_ROOT = Path("python")
MIRROR_PACKAGE = Path("python/tvm")
BASE_DIST = "apache-tvm"

_PIN = re.compile(r"^\s*([A-Za-z0-9_.\-]+)\s*==\s*([A-Za-z0-9_.+!\-]+)\s*(?:#.*)?$")


def default_repo_root() -> Path:
    """The workspace this package belongs to: tools/adreno_ws/ -> the repository root."""
    return Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class BasePin:
    """The pinned base as ``ci/requirements-base.txt`` names it."""

    name: str
    version: str


def read_base_pin(repo: Path) -> BasePin:
    """Read the ``apache-tvm==X`` pin from ci/requirements-base.txt (the one place naming it)."""
    req = repo / BASE_REQUIREMENTS
    if not req.is_file():
        raise WsError(f"{req} is missing: it must pin the base, e.g. '{BASE_DIST}==0.27.0.post1'")
    for line in req.read_text(encoding="utf-8").splitlines():
        match = _PIN.match(line)
        if match and _canonical(match.group(1)) == BASE_DIST:
            return BasePin(BASE_DIST, match.group(2))
    raise WsError(f"{req} has no '{BASE_DIST}==VERSION' line: add the pinned base there")


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def mirror_files(repo: Path) -> list[str]:
    """Every file of the mirror (under python/), as sorted POSIX paths relative to the repo.

    Byte-compiled files and editor leftovers are not part of the mirror.
    """
    root = repo / MIRROR_ROOT
    if not root.is_dir():
        return []
    out = []
    for path in root.rglob("*"):
        if not path.is_file() or _ignored(path.relative_to(repo)):
            continue
        out.append(path.relative_to(repo).as_posix())
    return sorted(out)


def _ignored(rel: Path) -> bool:
    if any(
        part in ("__pycache__", ".pytest_cache") or part.endswith(".egg-info") for part in rel.parts
    ):
        return True
    return rel.suffix in (".pyc", ".pyo", ".swp", ".orig", ".rej") or rel.name.endswith("~")


def require_python(python: Path) -> Path:
    """``python`` (a venv's interpreter) if it exists, else a one-line error."""
    if not python.is_file():
        raise WsError(f"{python}: no interpreter: run `python -m adreno_ws setup` first")
    return python


def find_venv_tvm(venv: Path) -> Path:
    """``<venv>/lib/pythonX.Y/site-packages/tvm``."""
    found = sorted(venv.glob("lib/python3*/site-packages/tvm"))
    if not found:
        raise WsError(
            f"{venv} has no site-packages/tvm: install the base first "
            f"(pip install -r ci/requirements-base.txt, or `python -m adreno_ws setup`)"
        )
    return found[-1]
