"""patches check and patches apply, on the fake base and (when cached) the real one."""

import json
import shutil
import subprocess
import sys

import pytest
from adreno_ws_fixtures import REAL_REPO, TOOLS, VERSION, write

from adreno_ws import WsError
from adreno_ws.base import base_dir_for, is_fetched
from adreno_ws.patches import RECORD, apply_series, check

PIPELINE = "relax/backend/adreno/pipeline.py"


def snapshot(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_check_passes_on_a_consistent_tree(workspace, fake_base):
    assert check(workspace, fake_base) == []


def test_check_fails_on_mirror_edit_without_export(workspace, fake_base):
    path = workspace / "python/tvm/tirx/build.py"
    path.write_text(path.read_text() + "# edited\n")
    problems = check(workspace, fake_base)
    assert "patches/0002-build-and-new.patch is out of date with the mirror" in problems[0]
    assert "patches export" in problems[0]
    assert any("python/tvm/tirx/build.py: base + patches != mirror" in p for p in problems)


def test_check_fails_when_patch_does_not_apply(workspace, fake_base):
    (fake_base / "python/tvm" / PIPELINE).write_text("a different base\n")
    problems = check(workspace, fake_base)
    assert any("does not apply to the pristine base" in p for p in problems), problems


def test_check_cli_exit_status(workspace, fake_base):
    cmd = [
        sys.executable,
        "-m",
        "adreno_ws",
        "--repo",
        str(workspace),
        "patches",
        "check",
        "--base-dir",
        str(fake_base),
    ]
    env = {"PYTHONPATH": str(TOOLS), "PATH": "/usr/bin:/bin"}
    assert subprocess.run(cmd, env=env, check=False, capture_output=True).returncode == 0
    (workspace / "patches/series").unlink()
    proc = subprocess.run(cmd, env=env, check=False, capture_output=True, text=True)
    assert proc.returncode == 1
    assert (
        "error: patches/series is missing: run `python -m adreno_ws patches export`" in proc.stderr
    )


def test_apply_to_pristine_site_packages(workspace, site_packages):
    tvm = site_packages / "tvm"
    message = apply_series(workspace, tvm)
    assert message.startswith("applied 2 patches")
    for rel in (PIPELINE, "tirx/build.py", "topi/adreno/conv.py"):
        assert (tvm / rel).read_bytes() == (workspace / "python/tvm" / rel).read_bytes()
    assert json.loads((tvm / RECORD).read_text())["base"] == VERSION


def test_apply_twice_says_already_applied(workspace, site_packages):
    tvm = site_packages / "tvm"
    apply_series(workspace, tvm)
    before = snapshot(tvm)
    assert apply_series(workspace, tvm).startswith("already applied")
    (tvm / RECORD).unlink()  # without the record, a reverse check still finds it
    assert "already applied" in apply_series(workspace, tvm)
    assert {k: v for k, v in snapshot(tvm).items() if k != RECORD} == {
        k: v for k, v in before.items() if k != RECORD
    }


def test_apply_refuses_wrong_base_version(workspace, site_packages):
    dist = site_packages / f"apache_tvm-{VERSION}.dist-info"
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: apache-tvm\nVersion: 0.26.0\n")
    before = snapshot(site_packages)
    with pytest.raises(WsError, match=r"is TVM 0\.26\.0 .* made against 9\.9\.9"):
        apply_series(workspace, site_packages / "tvm")
    assert snapshot(site_packages) == before


def test_apply_refuses_bad_patch_changes_nothing(workspace, site_packages):
    tvm = site_packages / "tvm"
    (tvm / "tirx/build.py").write_text("def build():\n    return 'local edit'\n")
    before = snapshot(tvm)
    with pytest.raises(WsError, match="0002-build-and-new.patch does not apply .* nothing was"):
        apply_series(workspace, tvm)
    # patch 1 applied cleanly in the staging copy, but the target is untouched
    assert snapshot(tvm) == before


def test_force_restores_pristine_files_then_applies(workspace, site_packages, fake_base):
    tvm = site_packages / "tvm"
    apply_series(workspace, tvm)
    # the series changes: the tree now carries an older version of it
    (workspace / "python/tvm/tirx/build.py").write_text("def build():\n    return 3\n")
    from adreno_ws.patches import export  # pylint: disable=import-outside-toplevel

    export(workspace, fake_base)
    with pytest.raises(WsError, match="another version of the series"):
        apply_series(workspace, tvm)
    assert apply_series(workspace, tvm, force=True, pristine=lambda: fake_base).startswith(
        "applied"
    )
    assert (tvm / "tirx/build.py").read_text() == "def build():\n    return 3\n"


def test_apply_detects_source_checkout(workspace, fake_base, tmp_path):
    checkout = tmp_path / "tvm-src"
    shutil.copytree(fake_base / "python", checkout / "python")
    (checkout / "include" / "tvm").mkdir(parents=True)
    message = apply_series(workspace, checkout)
    assert "TVM source checkout" in message


@pytest.mark.skipif(not is_fetched(base_dir_for(REAL_REPO)), reason="real base not cached")
def test_real_base_export_check_apply(tmp_path):
    """A one-line change against the real pinned base: export, check, apply to a copy of it."""
    from adreno_ws.patches import export  # pylint: disable=import-outside-toplevel

    base = base_dir_for(REAL_REPO)
    rel = "python/tvm/tirx/build.py"
    repo = tmp_path / "repo"
    write(
        repo,
        {
            "ci/requirements-base.txt": (REAL_REPO / "ci/requirements-base.txt").read_text(),
            "patches/topics.toml": '[[topic]]\nname = "t"\nsubject = "s"\nmessage = "m"\n'
            f'files = ["{rel}"]\n',
            rel: (base / rel).read_text() + "# changed\n",
        },
    )
    export(repo, base)
    assert check(repo, base) == []
    target = tmp_path / "site-packages"
    shutil.copytree(base / "python", target, ignore=shutil.ignore_patterns("3rdparty", "include"))
    message = apply_series(repo, target / "tvm")  # version read from tvm/_version.py
    assert message.startswith("applied 1 patches") and "tvm tree" in message
    assert (target / "tvm/tirx/build.py").read_text().endswith("# changed\n")
