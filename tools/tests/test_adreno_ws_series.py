"""The series on git: materialize/export round trip, check, rebase, fold, and their errors.

Every failure must be one line naming what is wrong, a non-zero exit, and no file changed.
"""

import subprocess

import pytest
from adreno_ws_fixtures import TEST_PATH, VERSION, commit, one_error, run_cli, write

from adreno_ws import WsError
from adreno_ws.series import (
    FORMAT_PATCH_OPTIONS,
    check,
    commits,
    export,
    fold,
    format_series,
    materialize,
    rebase,
)

CONV = "python/tvm/topi/adreno/conv.py"
PIPELINE = "python/tvm/relax/backend/adreno/pipeline.py"


def snapshot(root):
    """Every file under ``root`` (git's own files excluded) and its bytes."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


def test_export_writes_mails_and_only_new_files(workspace):
    names = (workspace / "patches/series").read_text().split()
    assert names == [
        "0001-Adreno-Change-the-pipeline.patch",
        "0002-TIR-Build-returns-2-add-a-module.patch",
        "0003-TIR-Remove-old.py.patch",
    ]
    first = (workspace / "patches" / names[0]).read_text()
    assert first.startswith("From 0000000000000000000000000000000000000000 Mon Sep 17")
    assert "From: Series Tester <tester@example.com>\n" in first
    assert "Subject: [PATCH 1/3] [Adreno] Change the pipeline\n" in first
    assert not first.rstrip().endswith(("--", "2.39.5")), "no signature"
    # The mirror holds what the series adds, not the upstream files it changes.
    assert (workspace / CONV).read_text() == "conv = 1"
    assert (workspace / TEST_PATH).is_file()
    assert not (workspace / PIPELINE).exists()
    assert not (workspace / "python/tvm/tirx/build.py").exists()


def test_round_trip_is_byte_identical(workspace, fake_base, tmp_path):
    before = snapshot(workspace)
    again = tmp_path / "again"
    materialize(workspace, fake_base, again)
    assert export(workspace, again) == []
    assert snapshot(workspace) == before
    mails = format_series(again)
    for name in (workspace / "patches/series").read_text().split():
        assert mails[name] == (workspace / "patches" / name).read_bytes()
    # materialize -> export -> materialize gives the same trees
    log = ["log", "--format=%T %an %ad %s", "adreno-ws-base..HEAD"]
    original = subprocess.run(["git", *log], cwd=tmp_path / "series", capture_output=True)
    copied = subprocess.run(["git", *log], cwd=again, capture_output=True)
    assert original.stdout == copied.stdout


def test_export_ignores_the_contributors_git_config(workspace, tmp_path, monkeypatch):
    gitconfig = tmp_path / "gitconfig"
    gitconfig.write_text(
        "[diff]\n\tnoprefix = true\n\tcontext = 7\n[format]\n\tsignature = mine\n"
        "\tnumbered = false\n"
    )
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    before = snapshot(workspace)
    assert export(workspace, tmp_path / "series") == []
    assert snapshot(workspace) == before
    assert "--zero-commit" in FORMAT_PATCH_OPTIONS and "--no-signature" in FORMAT_PATCH_OPTIONS


def test_check_passes_and_runs_each_patchs_tests(workspace, fake_base, venv, tmp_path):
    result = check(workspace, fake_base, venv=venv, log_dir=tmp_path / "logs", progress=print)
    assert result.problems == []
    assert "the own tests of 1 patches pass" in result.notes[-1]
    assert (tmp_path / "logs" / "0002-TIR-Build-returns-2-add-a-module.log").is_file()


def test_hand_edited_patch(workspace, fake_base):
    patch = workspace / "patches/0001-Adreno-Change-the-pipeline.patch"
    text = patch.read_text()
    patch.write_text(text.replace("1 insertion(+), 1 deletion(-)", "2 insertions(+)"))
    before = snapshot(workspace)
    line = one_error(
        run_cli(workspace, "series", "check", "--no-tests", "--base-dir", str(fake_base))
    )
    assert (
        "patches/0001-Adreno-Change-the-pipeline.patch is not what `git format-patch` writes"
        in line
    )
    assert snapshot(workspace) == before


def test_mirror_file_edited_without_export(workspace, fake_base):
    (workspace / CONV).write_text("conv = 2")
    before = snapshot(workspace)
    line = one_error(
        run_cli(workspace, "patches", "check", "--no-tests", "--base-dir", str(fake_base))
    )
    assert f"{CONV} differs from the series tip" in line and "series materialize" in line
    assert snapshot(workspace) == before


def test_upstream_file_copied_into_the_mirror(workspace, fake_base):
    write(workspace, {"python/tvm/tirx/build.py": "def build():\n    return 2\n"})
    line = one_error(
        run_cli(workspace, "series", "check", "--no-tests", "--base-dir", str(fake_base))
    )
    assert "python/tvm/tirx/build.py is in the mirror but the series does not add it" in line


def test_patch_that_does_not_apply(workspace, fake_base):
    (fake_base / PIPELINE).write_text("a different base\n")
    before = snapshot(workspace)
    line = one_error(
        run_cli(workspace, "series", "check", "--no-tests", "--base-dir", str(fake_base))
    )
    assert "patches/0001-Adreno-Change-the-pipeline.patch does not apply" in line
    assert snapshot(workspace) == before


def test_wrong_base(workspace, fake_base, tmp_path):
    (fake_base / "python/tvm/_version.py").write_text("__version__ = version = '0.1.0'\n")
    before = snapshot(workspace)
    line = one_error(run_cli(workspace, "series", "check", "--base-dir", str(fake_base)))
    assert f"is TVM 0.1.0, but ci/requirements-base.txt pins {VERSION}" in line
    line = one_error(
        run_cli(
            workspace, "series", "materialize", str(tmp_path / "new"), "--base-dir", str(fake_base)
        )
    )
    assert "is TVM 0.1.0" in line and not (tmp_path / "new").exists()
    assert snapshot(workspace) == before


def test_prefix_whose_tests_fail(workspace, fake_base, venv, tmp_path):
    series = tmp_path / "series"
    # A test in patch 2 that needs what only patch 4 brings: fine at the tip, not at 2.
    subprocess.run(
        ["git", "rebase", "-q", "--exec", "true", "adreno-ws-base"], cwd=series, check=True
    )
    commit(
        series,
        {"python/tvm/topi/adreno/extra.py": "extra = 1\n"},
        "[TOPI] Add extra",
        1_700_000_300,
    )
    moved = tmp_path / "moved"
    subprocess.run(["git", "clone", "-q", str(series), str(moved)], check=True)
    commit(
        series,
        {
            TEST_PATH.replace(
                "test_conv", "test_extra"
            ): "def test_extra():\n    from tvm.topi.adreno import extra\n\n    assert extra.extra\n"
        },
        "fixup! [TIR] Build returns 2, add a module",
        1_700_000_400,
    )
    env = dict(
        GIT_SEQUENCE_EDITOR="true",
        PATH="/usr/bin:/bin",
        HOME=str(tmp_path),
        GIT_COMMITTER_NAME="x",
        GIT_COMMITTER_EMAIL="x@example.com",
    )
    subprocess.run(
        ["git", "rebase", "-q", "-i", "--autosquash", "adreno-ws-base"],
        cwd=series,
        env=env,
        check=True,
    )
    export(workspace, series)
    before = snapshot(workspace)
    line = one_error(
        run_cli(
            workspace,
            "series",
            "check",
            "--base-dir",
            str(fake_base),
            "--venv",
            str(venv),
            "--log-dir",
            str(tmp_path / "logs"),
        )
    )
    assert line.startswith(
        "error: patches/0002-TIR-Build-returns-2-add-a-module.patch: its own tests fail at its "
        "position in the series (2 of 4): tests/python/relax/backend/adreno/test_extra.py"
    ), line
    assert snapshot(workspace) == before


def test_export_keeps_a_mirror_edit_that_the_series_lacks(workspace, tmp_path):
    (workspace / CONV).write_text("conv = 'my edit'")
    before = snapshot(workspace)
    with pytest.raises(WsError, match=f"{CONV} was edited in the workspace"):
        export(workspace, tmp_path / "series")
    assert snapshot(workspace) == before


def test_export_refuses_uncommitted_changes(workspace, tmp_path):
    (tmp_path / "series" / CONV).write_text("conv = 3")
    before = snapshot(workspace)
    with pytest.raises(WsError, match="uncommitted changes"):
        export(workspace, tmp_path / "series")
    assert snapshot(workspace) == before


def test_fixup_autosquash_export_changes_one_patch(workspace, tmp_path):
    series = tmp_path / "series"
    target = subprocess.run(
        ["git", "log", "--format=%H", "-1", "--", CONV],
        cwd=series,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (series / CONV).write_text("conv = 1\n")
    env = dict(
        PATH="/usr/bin:/bin",
        HOME=str(tmp_path),
        GIT_SEQUENCE_EDITOR="true",
        GIT_AUTHOR_NAME="x",
        GIT_AUTHOR_EMAIL="x@example.com",
        GIT_COMMITTER_NAME="x",
        GIT_COMMITTER_EMAIL="x@example.com",
    )
    subprocess.run(
        ["git", "commit", "-q", "-a", f"--fixup={target}"], cwd=series, env=env, check=True
    )
    subprocess.run(
        ["git", "rebase", "-q", "-i", "--autosquash", "adreno-ws-base"],
        cwd=series,
        env=env,
        check=True,
    )
    before = snapshot(workspace)
    changed = export(workspace, series)
    assert changed == ["wrote patches/0002-TIR-Build-returns-2-add-a-module.patch", f"wrote {CONV}"]
    after = snapshot(workspace)
    assert {k for k in after if after[k] != before.get(k)} == {
        "patches/0002-TIR-Build-returns-2-add-a-module.patch",
        CONV,
    }


def test_rebase_onto_a_newer_base_reports_conflicts(workspace, fake_base, tmp_path):
    series = tmp_path / "series"
    newer = tmp_path / "newer"
    write(newer, {f: t for f, t in snapshot_text(fake_base).items()})
    write(
        newer,
        {
            PIPELINE: (fake_base / PIPELINE).read_text().replace("line 20\n", "line 20 upstream\n"),
            "python/tvm/upstream_new.py": "NEW = 1\n",
        },
    )
    with pytest.raises(WsError) as err:
        rebase(series, newer, "apache-tvm==10.0.0")
    lines = err.value.problems
    assert lines[0].startswith(
        'conflict: patch 0001 "[Adreno] Change the pipeline" in ' f"{PIPELINE}"
    ), lines
    assert "1 of 3 patches conflict on apache-tvm==10.0.0" in lines[1]
    assert "git rebase --continue" in lines[2]


def test_rebase_without_conflicts_then_export_needs_the_new_pin(workspace, fake_base, tmp_path):
    series = tmp_path / "series"
    newer = tmp_path / "newer"
    write(newer, {f: t for f, t in snapshot_text(fake_base).items()})
    write(newer, {"python/tvm/upstream_new.py": "NEW = 1\n"})
    report = rebase(series, newer, "apache-tvm==10.0.0")
    assert report == ["rebased 3 patches onto apache-tvm==10.0.0: no conflicts"]
    assert len(commits(series)) == 3
    assert (series / "python/tvm/upstream_new.py").read_text() == "NEW = 1\n"
    before = snapshot(workspace)
    with pytest.raises(WsError, match="based on apache-tvm==10.0.0, but the workspace pins"):
        export(workspace, series)
    assert snapshot(workspace) == before


def test_fold_turns_workspace_mirror_edits_into_fixups(workspace, tmp_path):
    env = dict(PATH="/usr/bin:/bin", HOME=str(tmp_path))
    subprocess.run(["git", "init", "-q"], cwd=workspace, env=env, check=True)
    commit(workspace, {}, "workspace", 1_700_001_000)
    commit(workspace, {CONV: "conv = 5"}, "an engineer edits the mirror", 1_700_001_100)
    series = tmp_path / "series"
    report = fold(workspace, series, "HEAD~1..HEAD")
    assert report[0] == f'fixup of "[TIR] Build returns 2, add a module": {CONV}'
    assert report[-1].startswith("squashed the fixups")
    assert len(commits(series)) == 3
    log = subprocess.run(
        ["git", "log", "-1", "--format=%s", "--", CONV],
        cwd=series,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert log == "[TIR] Build returns 2, add a module"
    assert (series / CONV).read_text() == "conv = 5"


def snapshot_text(root):
    return {k: v.decode() for k, v in snapshot(root).items() if k.startswith("python/")}


def test_fold_takes_the_workspace_version_when_an_edit_does_not_merge(workspace, tmp_path):
    """An edit that does not merge with the series commit by commit: the workspace's file at
    the end of the range wins (it was the whole file of the old mirror), and says so."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    subprocess.run(["git", "init", "-q"], cwd=workspace, env=env, check=True)
    commit(workspace, {}, "workspace", 1_700_001_000)
    commit(workspace, {CONV: "conv = 5"}, "an engineer edits the mirror", 1_700_001_100)
    series = tmp_path / "series"
    commit(series, {CONV: "conv = 7"}, "fixup! [TIR] Build returns 2, add a module", 1_700_001_200)
    report = fold(workspace, series, "HEAD~1..HEAD")
    assert (
        f"note: {CONV} did not merge commit by commit; the catch-up took the workspace's "
        "final version" in report
    )
    assert (series / CONV).read_text() == "conv = 5"
    assert len(commits(series)) == 3


def test_fold_makes_a_new_topic_its_own_patch_with_its_wiring(workspace, tmp_path):
    """A commit adding a file of a topic new in topics.toml becomes that topic's patch, with
    the same commit's change to an upstream file (its wiring)."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    subprocess.run(["git", "init", "-q"], cwd=workspace, env=env, check=True)
    series = tmp_path / "series"
    pipeline = (series / PIPELINE).read_text()
    commit(workspace, {PIPELINE: pipeline}, "workspace (old mirror: whole files)", 1_700_001_000)
    topics = (
        '[[topic]]\nname = "extra"\nsubject = "[Adreno] Add extra"\n'
        'message = "Why extra."\nfiles = ["python/tvm/topi/adreno/extra.py"]\n'
    )
    commit(
        workspace,
        {
            "patches/topics.toml": topics,
            "python/tvm/topi/adreno/extra.py": "extra = 1\n",
            PIPELINE: pipeline.replace("line 30\n", "line 30 uses extra\n"),
        },
        "an engineer adds a topic",
        1_700_001_100,
    )
    report = fold(workspace, series, "HEAD~1..HEAD")
    assert report[0] == 'new patch "[Adreno] Add extra" (topic extra)'
    assert len(commits(series)) == 4
    show = subprocess.run(
        ["git", "show", "--stat", "--format=%s%n%n%b", "HEAD"],
        cwd=series,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert show.startswith("[Adreno] Add extra\n\nWhy extra.")
    assert PIPELINE.split("/")[-1] in show and "extra.py" in show
