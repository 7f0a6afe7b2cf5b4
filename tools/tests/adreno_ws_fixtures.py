"""Fixtures and helpers of the tooling tests (imported by conftest.py and the tests):

The fake base mimics the pristine cache layout (``<base>/python/tvm/...``) and a venv's
site-packages (``apache_tvm-<v>.dist-info`` next to ``tvm/``), so export, check and apply run
in milliseconds without the 100 MB wheel.
"""

import shutil
import sys
import textwrap
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
TOPICS = textwrap.dedent('''\
    [[topic]]
    name = "pipeline"
    subject = "[Adreno] Change the pipeline"
    message = """
    Change line 20 of the pipeline.
    """
    files = ["python/tvm/relax/backend/adreno/pipeline.py"]

    [[topic]]
    name = "build-and-new"
    subject = "[TIR] Build returns 2, add a module"
    message = "Two changes in one topic."
    files = ["python/tvm/tirx/build.py", "python/tvm/topi/adreno/*"]
    ''')


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
def workspace(tmp_path, fake_base) -> Path:
    """A workspace pinned to the fake base, with a two-topic mirror, exported."""
    from adreno_ws.patches import export  # pylint: disable=import-outside-toplevel

    repo = tmp_path / "repo"
    pipeline = BASE_FILES["python/tvm/relax/backend/adreno/pipeline.py"].replace(
        "line 20\n", "line 20 changed\n"
    )
    write(
        repo,
        {
            "ci/requirements-base.txt": f"apache-tvm=={VERSION}\napache-tvm-ffi==0.1\n",
            "patches/topics.toml": TOPICS,
            "python/tvm/relax/backend/adreno/pipeline.py": pipeline,
            "python/tvm/tirx/build.py": "def build():\n    return 2\n",
            "python/tvm/topi/adreno/conv.py": "conv = 1",  # no newline at the end
        },
    )
    export(repo, fake_base)
    return repo


@pytest.fixture
def site_packages(tmp_path, fake_base) -> Path:
    """A fake venv site-packages holding the pristine base as an installed wheel."""
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    shutil.copytree(fake_base / "python" / "tvm", site / "tvm")
    dist = site / f"apache_tvm-{VERSION}.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: apache-tvm\nVersion: {VERSION}\n")
    return site
