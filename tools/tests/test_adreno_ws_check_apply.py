"""patches apply: the package part of the series onto an installed TVM or a checkout."""

import json
import shutil

import pytest
from adreno_ws_fixtures import REAL_REPO, VERSION, commit, write

from adreno_ws import WsError
from adreno_ws.base import base_dir_for, is_fetched
from adreno_ws.patches import RECORD, apply_series
from adreno_ws.series import check, export, materialize

PIPELINE = "relax/backend/adreno/pipeline.py"
CONV = "python/tvm/topi/adreno/conv.py"


def snapshot(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_apply_to_pristine_site_packages(workspace, site_packages):
    tvm = site_packages / "tvm"
    message = apply_series(workspace, tvm)
    assert message.startswith("applied 3 patches")
    assert (tvm / PIPELINE).read_text().splitlines()[19] == "line 20 changed"
    assert (tvm / "tirx/build.py").read_text() == "def build():\n    return 2\n"
    assert (tvm / "topi/adreno/conv.py").read_bytes() == (workspace / CONV).read_bytes()
    assert not (tvm / "old.py").exists()
    # the upstream tests of the series are not installed into the package
    assert not list(site_packages.rglob("test_conv.py"))
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
    with pytest.raises(
        WsError, match="0002-TIR-Build-returns-2-add-a-module.patch does not apply .* nothing was"
    ):
        apply_series(workspace, tvm)
    # patch 1 applied cleanly in the staging copy, but the target is untouched
    assert snapshot(tvm) == before


def test_force_restores_pristine_files_then_applies(workspace, site_packages, fake_base, tmp_path):
    tvm = site_packages / "tvm"
    apply_series(workspace, tvm)
    # the series changes: the tree now carries an older version of it
    series = tmp_path / "series"
    commit(
        series,
        {"python/tvm/tirx/build.py": "def build():\n    return 3\n"},
        "[TIR] 3",
        1_700_000_500,
    )
    export(workspace, series)
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
def test_real_base_materialize_export_check_apply(tmp_path, monkeypatch):
    """A one-line change against the real pinned base: commit, export, check, apply a copy."""
    monkeypatch.setenv("ADRENO_WS_IDENTITY", "Series Tester <tester@example.com>")
    base = base_dir_for(REAL_REPO)
    rel = "python/tvm/tirx/build.py"
    repo = tmp_path / "repo"
    write(
        repo,
        {
            "ci/requirements-base.txt": (REAL_REPO / "ci/requirements-base.txt").read_text(),
            "patches/series": "",
        },
    )
    series = tmp_path / "series"
    materialize(repo, base, series)
    commit(series, {rel: (base / rel).read_text() + "# changed\n"}, "[TIR] s\n\nm", 1_700_000_000)
    export(repo, series)
    assert check(repo, base, run_tests=False).problems == []
    target = tmp_path / "site-packages"
    shutil.copytree(base / "python", target, ignore=shutil.ignore_patterns("3rdparty", "include"))
    message = apply_series(repo, target / "tvm")  # version read from tvm/_version.py
    assert message.startswith("applied 1 patches") and "tvm tree" in message
    assert (target / "tvm/tirx/build.py").read_text().endswith("# changed\n")
