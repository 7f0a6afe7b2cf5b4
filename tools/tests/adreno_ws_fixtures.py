"""Fixtures and helpers of the tooling tests (imported by conftest.py and the tests):

The fake base mimics the pristine cache layout (``<base>/python/tvm/...``) and a venv's
site-packages (``apache_tvm-<v>.dist-info`` next to ``tvm/``), so export, check and apply run
in milliseconds without the 100 MB wheel.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parents[1]
REAL_REPO = TOOLS.parent
if str(TOOLS) not in sys.path:
    sys.path.insert(0, str(TOOLS))

VERSION = "9.9.9"
BASE_FILES = {
    "python/tvm/__init__.py": '"""tvm"""\n',
    "python/tvm/_version.py": f"__version__ = version = '{VERSION}'\n",
    "python/tvm/relax/backend/adreno/pipeline.py": "".join(f"line {i}\n" for i in range(1, 40)),
    "python/tvm/tirx/build.py": "def build():\n    return 1\n",
    "python/tvm/old.py": "obsolete = True\n",
}
TEST_PATH = "tests/python/relax/backend/adreno/test_conv.py"
IDENTITY = "Series Tester <tester@example.com>"


def commit(repo: Path, files: dict, message: str, when: int) -> None:
    """Write ``files`` (None deletes) in the git repository ``repo`` and commit them."""
    for rel, text in files.items():
        path = repo / rel
        if text is None:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="Series Tester",
        GIT_AUTHOR_EMAIL="tester@example.com",
        GIT_COMMITTER_NAME="Series Tester",
        GIT_COMMITTER_EMAIL="tester@example.com",
        GIT_AUTHOR_DATE=f"@{when} +0000",
        GIT_COMMITTER_DATE=f"@{when} +0000",
    )
    subprocess.run(["git", "add", "-A"], cwd=repo, env=env, check=True)
    subprocess.run(["git", "commit", "-q", "-m", message], cwd=repo, env=env, check=True)


def run_cli(repo: Path, *args: str) -> subprocess.CompletedProcess:
    """``python -m adreno_ws --repo REPO ARGS...`` in a clean environment, as a user runs it."""
    cmd = [sys.executable, "-m", "adreno_ws", "--repo", str(repo), *args]
    env = {"PYTHONPATH": str(TOOLS), "PATH": "/usr/bin:/bin", "HOME": str(repo)}
    env["ADRENO_WS_IDENTITY"] = "CLI Tester <cli@example.com>"
    return subprocess.run(cmd, env=env, check=False, capture_output=True, text=True)


def one_error(proc: subprocess.CompletedProcess) -> str:
    """The single ``error:`` line of a failed command."""
    assert proc.returncode == 1, proc.stdout + proc.stderr
    errors = [l for l in proc.stderr.splitlines() if l.startswith("error: ")]
    assert len(errors) == 1, proc.stderr
    return errors[0]


def write(root: Path, files: dict) -> None:
    """Write ``{relative path: text}`` under ``root``."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


@pytest.fixture
def fake_base(tmp_path) -> Path:
    """A pristine base laid out like the cache: ``<base>/python/tvm``."""
    base = tmp_path / "base"
    write(base, BASE_FILES)
    return base


@pytest.fixture
def workspace(tmp_path, fake_base, monkeypatch) -> Path:
    """A workspace pinned to the fake base with a three-patch series, exported from the
    materialized repository ``tmp_path / "series"``:

    1. the pipeline's line 20 changes;
    2. build() returns 2, a new module topi/adreno/conv.py and its upstream test;
    3. the base's old.py goes.
    """
    from adreno_ws.series import export, materialize  # pylint: disable=import-outside-toplevel

    monkeypatch.setenv("ADRENO_WS_IDENTITY", IDENTITY)
    repo = tmp_path / "repo"
    write(
        repo,
        {
            "ci/requirements-base.txt": f"apache-tvm=={VERSION}\napache-tvm-ffi==0.1\n",
            "patches/series": "",
        },
    )
    series = tmp_path / "series"
    materialize(repo, fake_base, series)
    pipeline = BASE_FILES["python/tvm/relax/backend/adreno/pipeline.py"].replace(
        "line 20\n", "line 20 changed\n"
    )
    commit(
        series,
        {"python/tvm/relax/backend/adreno/pipeline.py": pipeline},
        "[Adreno] Change the pipeline\n\nChange line 20 of the pipeline.",
        1_700_000_000,
    )
    commit(
        series,
        {
            "python/tvm/tirx/build.py": "def build():\n    return 2\n",
            "python/tvm/topi/adreno/conv.py": "conv = 1",  # no newline at the end
            TEST_PATH: "from tvm.topi.adreno import conv\n\n\n"
            "def test_conv():\n    assert conv.conv == 1\n",
        },
        "[TIR] Build returns 2, add a module\n\nWith its test.",
        1_700_000_100,
    )
    commit(series, {"python/tvm/old.py": None}, "[TIR] Remove old.py", 1_700_000_200)
    export(repo, series)
    return repo


@pytest.fixture
def venv(tmp_path, fake_base) -> Path:
    """A fake virtual environment: the pristine fake base installed, this Python (with pytest
    and the linters)."""
    root = tmp_path / "venv"
    site = root / "lib" / "python3.11" / "site-packages"
    shutil.copytree(fake_base / "python" / "tvm", site / "tvm")
    (root / "bin").mkdir()
    # A script, not a link: a Python started through a link to a venv's interpreter, with no
    # pyvenv.cfg beside the link, falls back to the base installation and its packages. The
    # fake site comes after what the caller puts on PYTHONPATH, as a venv's site-packages do.
    python = root / "bin" / "python"
    python.write_text(
        f'#!/bin/sh\nPYTHONPATH="${{PYTHONPATH:+$PYTHONPATH:}}{site}" exec "{sys.executable}" "$@"\n'
    )
    python.chmod(0o755)
    return root


@pytest.fixture
def site_packages(tmp_path, fake_base) -> Path:
    """A fake venv site-packages holding the pristine base as an installed wheel."""
    site = tmp_path / "site-venv" / "lib" / "python3.11" / "site-packages"
    shutil.copytree(fake_base / "python" / "tvm", site / "tvm")
    dist = site / f"apache_tvm-{VERSION}.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: apache-tvm\nVersion: {VERSION}\n")
    return site
