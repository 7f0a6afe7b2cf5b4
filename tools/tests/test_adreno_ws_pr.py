"""The series as a stack of pull requests: patches/stack.toml, ``pr list|branch|mail``, and
``series check`` per PR (tests at each PR's tip, lint of each PR).

The stack here cuts a four-patch series into three PRs:

1. ``pipeline``: patch 1, the pipeline's line 20 changes;
2. ``conv``: patches 2-3, build() returns 2, a new module conv.py and its test, old.py goes;
3. ``extend``: patch 4, conv.py gets a second line and the test a second test.
"""

import importlib.util
from email.header import decode_header, make_header
import subprocess

import pytest
from adreno_ws_fixtures import REAL_REPO, TEST_PATH, commit, one_error, run_cli, write

from adreno_ws import WsError
from adreno_ws.pr import fill_cover_letter
from adreno_ws.prlint import black_lines
from adreno_ws.series import check, commits, export

CONV = "python/tvm/topi/adreno/conv.py"
PR_TITLES = (
    ("pipeline", "[Relax][Adreno] Change the pipeline", 1),
    ("conv", "[TIR][TOPI] Build returns 2, and a conv module", 2),
    ("extend", "[TOPI][Adreno] Extend conv", 1),
)
CONV_TEST = "from tvm.topi.adreno import conv\n\n\ndef test_conv():\n    assert conv.conv == 1\n"
EXTRA_TEST = "\n\ndef test_extra():\n    assert conv.extra == 2\n"


def write_stack(workspace, prs, letters=True):
    """patches/stack.toml for ``prs`` ((slug, title, patches) ...), and their letters."""
    text = ""
    for number, (slug, title, count) in enumerate(prs, 1):
        letter = f"letters/{number:02d}-{slug}.md"
        text += (
            f'[[pr]]\nslug = "{slug}"\ntitle = "{title}"\npatches = {count}\n'
            f'letter = "{letter}"\n\n'
        )
        if letters:
            write(workspace / "patches", {letter: f"Letter of {slug}.\n\nWhy it matters.\n"})
    (workspace / "patches/stack.toml").write_text(text, encoding="utf-8")


def git_out(cwd, *args):
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.fixture(name="stacked")
def fixture_stacked(workspace, tmp_path):
    """The workspace with a fourth patch and a stack of three PRs over the four patches."""
    series = tmp_path / "series"
    commit(
        series,
        {CONV: "conv = 1\nextra = 2\n", TEST_PATH: CONV_TEST + EXTRA_TEST},
        "[Adreno] Extend conv\n\nWith a second value.",
        1_700_000_300,
    )
    export(workspace, series)
    write_stack(workspace, PR_TITLES)
    return workspace


# ---------------------------------------------------------------------------- pr list


EXPECTED_LIST = [
    " 1 pipeline: [Relax][Adreno] Change the pipeline | patches 1-1 (1) | code +1/-1 "
    "| tests +0/-0 | no test files",
    " 2 conv: [TIR][TOPI] Build returns 2, and a conv module | patches 2-3 (2) | code +2/-2 "
    f"| tests +5/-0 | {TEST_PATH}",
    f" 3 extend: [TOPI][Adreno] Extend conv | patches 4-4 (1) | code +2/-1 | tests +4/-0 "
    f"| {TEST_PATH}",
    "",
    # Added per patch: 1 + (1 + 1 + 5) + 0 + (2 + 4) = 14; net: pipeline 1, build 1, conv.py
    # 2, the test 9 = 13 (patch 4 rewrites conv.py's one line that patch 2 added).
    "lines added: 14 by the 4 patches, 13 net (adreno-ws-base..tip): 1.077, 7.7% above the "
    "net (target: at most 2%)",
    "patches that touch a file an earlier PR added: 1",
    '  0004 "[Adreno] Extend conv" (PR 3 (extend)) touches python/tvm/topi/adreno/conv.py '
    f"(added by PR 2), {TEST_PATH} (added by PR 2)",
]


def test_pr_list_lines_and_metrics(stacked, fake_base, tmp_path):
    proc = run_cli(stacked, "pr", "list", "--base-dir", str(fake_base))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == EXPECTED_LIST
    # The same from the materialized repository.
    proc = run_cli(stacked, "pr", "list", "--dir", str(tmp_path / "series"))
    assert proc.stdout.splitlines() == EXPECTED_LIST, proc.stderr


def test_pr_list_refuses_a_repository_cut_differently(stacked, tmp_path):
    series = tmp_path / "series"
    commit(series, {"python/tvm/more.py": "more = 1\n"}, "[TOPI] More", 1_700_000_400)
    line = one_error(run_cli(stacked, "pr", "list", "--dir", str(series)))
    assert "has 5 commits after adreno-ws-base, but patches/stack.toml cuts 4 patches" in line


# ---------------------------------------------------------------------------- pr branch


def test_pr_branch_stacks_one_branch_per_pr(stacked, tmp_path):
    """pr/NN-slug at each PR's last commit, made or moved, and stale ones named."""
    series = tmp_path / "series"
    ids = commits(series)
    proc = run_cli(stacked, "pr", "branch", str(series))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert [l.split()[0] for l in lines] == ["pr/01-pipeline", "pr/02-conv", "pr/03-extend"]
    assert lines[1].endswith("(2 patches): [TIR][TOPI] Build returns 2, and a conv module")
    for branch, last in (("pr/01-pipeline", 0), ("pr/02-conv", 2), ("pr/03-extend", 3)):
        assert git_out(series, "rev-parse", branch) == ids[last]
    # Stacked: each branch holds every earlier PR.
    assert git_out(series, "log", "--format=%s", "adreno-ws-base..pr/02-conv").splitlines() == [
        "[TIR] Remove old.py",
        "[TIR] Build returns 2, add a module",
        "[Adreno] Change the pipeline",
    ]
    assert git_out(series, "branch", "--show-current") == "series"
    # Again, after a PR's branch moved and with a branch the stack no longer has.
    git_out(series, "branch", "-f", "pr/02-conv", ids[0])
    git_out(series, "branch", "pr/04-gone", ids[0])
    proc = run_cli(stacked, "pr", "branch", str(series))
    assert git_out(series, "rev-parse", "pr/02-conv") == ids[2]
    assert proc.stdout.splitlines()[-1] == (
        "note: pr/04-gone is not in the stack: delete it (git branch -D pr/04-gone)"
    )


def test_pr_branch_needs_a_materialized_repository(stacked, tmp_path):
    line = one_error(run_cli(stacked, "pr", "branch", str(tmp_path)))
    assert "is not a git repository" in line


# ---------------------------------------------------------------------------- pr mail


def test_pr_mail_writes_its_patches_and_letter(stacked, fake_base, tmp_path):
    """The cover letter has the title and letter; the mails are this PR's alone."""
    out = tmp_path / "mail"
    proc = run_cli(stacked, "pr", "mail", "2", "--base-dir", str(fake_base), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    names = [p.split("/")[-1] for p in proc.stdout.split()]
    assert names == [
        "0000-cover-letter.patch",
        "0001-TIR-Build-returns-2-add-a-module.patch",
        "0002-TIR-Remove-old.py.patch",
    ]
    assert sorted(p.name for p in out.iterdir()) == names
    cover = (out / names[0]).read_text()
    assert "Subject: [PATCH 0/2] [TIR][TOPI] Build returns 2, and a conv module\n" in cover
    assert "\nLetter of conv.\n\nWhy it matters.\n" in cover
    assert "***" not in cover
    # Only this PR's patches: numbered 1/2 and 2/2, nothing of PR 1 or PR 3.
    mails = "".join((out / n).read_text() for n in names[1:])
    assert "Subject: [PATCH 1/2] [TIR] Build returns 2, add a module" in mails
    assert "Subject: [PATCH 2/2] [TIR] Remove old.py" in mails
    assert "pipeline.py" not in cover + mails and "extra = 2" not in mails
    # A second run into the same directory would mix or overwrite mails: refused.
    again = run_cli(stacked, "pr", "mail", "2", "--base-dir", str(fake_base), "-o", str(out))
    assert "holds mails already (0000-cover-letter.patch ...)" in one_error(again)


def test_pr_mail_from_dir_into_build(stacked, tmp_path):
    """From a materialized repository into build/pr-mail/NN-slug, emptied first."""
    for _ in range(2):  # the default directory is emptied first
        proc = run_cli(stacked, "pr", "mail", "1", "--dir", str(tmp_path / "series"))
        assert proc.returncode == 0, proc.stderr
    out = stacked / "build/pr-mail/01-pipeline"
    assert [p.name for p in sorted(out.iterdir())] == [
        "0000-cover-letter.patch",
        "0001-Adreno-Change-the-pipeline.patch",
    ]
    assert (
        "Subject: [PATCH 0/1] [Relax][Adreno] Change the pipeline"
        in (out / "0000-cover-letter.patch").read_text()
    )
    line = one_error(run_cli(stacked, "pr", "mail", "4", "--dir", str(tmp_path / "series")))
    assert "there is no PR 4: patches/stack.toml has PRs 1 to 3" in line


def test_cover_letter_not_ascii():
    """A title that is not ASCII is encoded; a letter that is not gets a charset."""
    template = (
        "From: A <a@example.com>\nSubject: [PATCH 0/1] *** SUBJECT HERE ***\n\n"
        "*** BLURB HERE ***\n\nA (1):\n  x\n"
    )
    mail = fill_cover_letter(template, "[Relax] Größe", "Über die Größe.\n")
    subject = mail.split("Subject: ", 1)[1].split("\n", 1)[0]
    assert str(make_header(decode_header(subject))) == "[PATCH 0/1] [Relax] Größe"
    assert "Content-Type: text/plain; charset=UTF-8\n" in mail.split("\n\n")[0] + "\n"
    assert "\n\nÜber die Größe.\n\nA (1):" in mail
    with pytest.raises(WsError, match="cover letter has no"):
        fill_cover_letter("Subject: x\n\nbody\n", "t", "b")


# ---------------------------------------------------------------------------- a bad stack


@pytest.mark.parametrize(
    "change, message",
    [
        (
            lambda ws: write_stack(ws, [PR_TITLES[0], PR_TITLES[1]]),
            "patches/stack.toml: its PRs take 3 patches, but patches/series lists 4: change "
            "the PRs' patches counts to sum to 4",
        ),
        (
            lambda ws: (ws / "patches/letters/02-conv.md").unlink(),
            "patches/stack.toml: the letter of PR 2 (conv), patches/letters/02-conv.md, does "
            "not exist: write it",
        ),
        (
            lambda ws: (ws / "patches/stack.toml").write_text("[[pr]]\nslug = 'a\n"),
            "patches/stack.toml is not valid TOML (",
        ),
        (
            lambda ws: write_stack(ws, [("Bad Slug", "T", 4)]),
            "patches/stack.toml: [[pr]] number 1: slug 'Bad Slug' is not lower-case words",
        ),
        (
            lambda ws: (ws / "patches/stack.toml").write_text("[[pr]]\nslug = 'a'\n"),
            "patches/stack.toml: [[pr]] number 1 lacks title, patches, letter: fix it",
        ),
    ],
    ids=["counts", "letter", "toml", "slug", "keys"],
)
def test_bad_stack_gives_one_line(stacked, fake_base, change, message):
    """pr list and series check say what is wrong with the stack in one line."""
    change(stacked)
    for args in (("pr", "list"), ("series", "check", "--no-tests")):
        line = one_error(run_cli(stacked, *args, "--base-dir", str(fake_base)))
        assert line.startswith(f"error: {message}"), line


def test_pr_commands_need_the_stack(workspace, fake_base):
    line = one_error(run_cli(workspace, "pr", "list", "--base-dir", str(fake_base)))
    assert "patches/stack.toml is missing: write it" in line


# ---------------------------------------------------------------------------- check per PR


def test_check_tests_each_pr_at_its_tip(stacked, fake_base, venv, tmp_path):
    logs = tmp_path / "logs"
    result = check(stacked, fake_base, venv=venv, log_dir=logs, progress=print, lint=False)
    assert not result.problems
    assert result.notes[1] == "3 PRs in patches/stack.toml"
    assert result.notes[-1].startswith("the tests of 2 PRs pass at their tips (")
    assert sorted(p.name for p in logs.glob("pr-*.log")) == ["pr-02-conv.log", "pr-03-extend.log"]
    assert "2 passed" in (logs / "pr-03-extend.log").read_text()


def add_test_before_its_module(workspace, tmp_path):
    """Patch 5 adds a test of a module that patch 6 adds: fine per PR, not per patch."""
    series = tmp_path / "series"
    test = TEST_PATH.replace("test_conv", "test_later")
    commit(
        series,
        {test: "def test_later():\n    from tvm.topi.adreno import later\n\n    assert later.X\n"},
        "[TOPI] Test the later module",
        1_700_000_400,
    )
    commit(series, {"python/tvm/topi/adreno/later.py": "X = 1\n"}, "[TOPI] Later", 1_700_000_500)
    export(workspace, series)


def test_tests_run_per_pr_not_per_patch(stacked, fake_base, venv, tmp_path):
    """A test that needs a later patch of its own PR passes per PR, not per patch."""
    add_test_before_its_module(stacked, tmp_path)
    write_stack(stacked, PR_TITLES + (("later", "[TOPI] A later module", 2),))
    result = check(stacked, fake_base, venv=venv, log_dir=tmp_path / "logs", lint=False)
    assert not result.problems, result.problems
    assert result.notes[-1].startswith("the tests of 3 PRs pass at their tips")
    # Without the stack, patch 5's own test fails at its position.
    (stacked / "patches/stack.toml").unlink()
    result = check(stacked, fake_base, venv=venv, log_dir=tmp_path / "logs")
    assert len(result.problems) == 1
    assert result.problems[0].startswith(
        "patches/0005-TOPI-Test-the-later-module.patch: its own tests fail at its position in "
        "the series (5 of 6)"
    )


def test_check_names_the_pr_whose_tests_fail(stacked, fake_base, venv, tmp_path):
    """The one error line names the PR, the failing test and the log."""
    series = tmp_path / "series"
    git_out(series, "reset", "-q", "--hard", "HEAD~1")
    commit(
        series,
        {CONV: "conv = 1\nextra = 2\n", TEST_PATH: CONV_TEST + EXTRA_TEST.replace("2", "3")},
        "[Adreno] Extend conv\n\nWith a second value, tested wrong.",
        1_700_000_300,
    )
    export(stacked, series)
    proc = run_cli(
        stacked,
        "series",
        "check",
        "--no-lint",
        "--base-dir",
        str(fake_base),
        "--venv",
        str(venv),
        "--log-dir",
        str(tmp_path / "logs"),
    )
    line = one_error(proc)
    assert line.startswith(
        "error: PR 3 (extend): its tests fail at its tip (patch 4 of 4): "
        f"{TEST_PATH}::test_extra (1 failed, 1 passed"
    ), line
    assert line.endswith(f"; log: {tmp_path / 'logs' / 'pr-03-extend.log'}")


# ---------------------------------------------------------------------------- lint per PR


def test_black_lines_reads_the_lines_a_diff_changes():
    diff = (
        "--- a.py\t2026-01-01 00:00:00+00:00\n+++ a.py\t2026-01-01 00:00:01+00:00\n"
        "@@ -3,4 +3,4 @@\n x\n--- a removed line that looks like a header\n+y = 1\n z\n w\n"
        "@@ -20 +20,2 @@\n v\n+\n"
        "--- b.py\t2026-01-01 00:00:00+00:00\n+++ b.py\t2026-01-01 00:00:01+00:00\n"
        "@@ -1,2 +1 @@\n-import os\n q\n\\ No newline at end of file\n"
    )
    # Line 4 goes, "y = 1" comes between 4 and 5; a blank line comes after line 20.
    assert black_lines(diff) == {"a.py": {4, 5, 20, 21}, "b.py": {1}}


def lint_tools_missing():
    return [m for m in ("black", "pylint") if importlib.util.find_spec(m) is None]


needs_linters = pytest.mark.skipif(
    bool(lint_tools_missing()),
    reason="black and pylint are not installed (pip install -r ci/requirements-lint.txt)",
)

HEADER = "".join(
    f"# {l}".rstrip() + "\n"
    for l in (
        "Licensed to the Apache Software Foundation (ASF) under one",
        "or more contributor license agreements.  See the NOTICE file",
        "distributed with this work for additional information",
        "regarding copyright ownership.  The ASF licenses this file",
        "to you under the Apache License, Version 2.0 (the",
        '"License"); you may not use this file except in compliance',
        "with the License.  You may obtain a copy of the License at",
        "",
        "  http://www.apache.org/licenses/LICENSE-2.0",
        "",
        "Unless required by applicable law or agreed to in writing,",
        "software distributed under the License is distributed on an",
        '"AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY',
        "KIND, either express or implied.  See the License for the",
        "specific language governing permissions and limitations",
        "under the License.",
    )
)
MODULE = "python/tvm/topi/adreno/lint_me.py"
CLEAN = (
    HEADER
    + '"""A module."""\n\n\ndef double(value):\n    """Twice ``value``."""\n'
    + ("    return 2 * value\n")
)


def lint_stack_with(workspace, tmp_path, earlier, later):
    """PR 4 (``old``) adds MODULE as ``earlier``, PR 5 (``lint-me``) changes it to ``later``."""
    series = tmp_path / "series"
    git_out(series, "reset", "-q", "--hard", commits(series)[3])
    commit(series, {MODULE: earlier}, "[TOPI] Add lint_me", 1_700_000_400)
    if later is not None:
        commit(series, {MODULE: later}, "[TOPI] Change lint_me", 1_700_000_500)
    export(workspace, series)
    prs = PR_TITLES + (("old", "[TOPI] lint_me", 1),)
    write_stack(workspace, prs + ((("lint-me", "[TOPI] Change lint_me", 1),) if later else ()))
    (workspace / "pylintrc").write_text((REAL_REPO / "pylintrc").read_text())


def lint_check(workspace, fake_base, venv, tmp_path, only):
    return check(
        workspace, fake_base, venv=venv, log_dir=tmp_path / "logs", progress=print, only=only
    )


@needs_linters
def test_lint_passes_a_clean_pr(stacked, fake_base, venv, tmp_path):
    lint_stack_with(stacked, tmp_path, CLEAN, None)
    result = lint_check(stacked, fake_base, venv, tmp_path, ["4"])
    assert not result.problems
    assert ", 1 PRs lint clean (" in result.notes[-1]


@needs_linters
def test_lint_names_the_pr_and_what_failed(stacked, fake_base, venv, tmp_path):
    """Header, black and pylint failures of a PR in one line, the details in the log."""
    bad = CLEAN.replace(HEADER, "").replace("2 * value", "2*value") + "import os\n"
    lint_stack_with(stacked, tmp_path, bad, None)
    result = lint_check(stacked, fake_base, venv, tmp_path, ["old"])
    log = tmp_path / "logs" / "pr-04-old-lint.log"
    assert result.problems == [
        f"PR 4 (old): lint: no ASF license header: {MODULE}; black -l 100 would reformat "
        f"{MODULE}; pylint: {MODULE}:7 C0413(wrong-import-position), {MODULE}:7 "
        f"W0611(unused-import); log: {log}"
    ]
    assert "+    return 2 * value" in log.read_text()


@needs_linters
def test_lint_blames_only_the_lines_a_pr_changes(stacked, fake_base, venv, tmp_path):
    """A file that was there before the PR (upstream's, or an earlier PR's) is checked on the
    lines the PR changes: what black or pylint would say about the rest is not the PR's."""
    earlier = CLEAN.replace("2 * value", "2*value").replace('"""Twice', 'x=1\n    """Twice')
    lint_stack_with(stacked, tmp_path, earlier, earlier.replace("def double", "def triple"))
    assert not lint_check(stacked, fake_base, venv, tmp_path, ["5"]).problems
    lint_stack_with(
        stacked, tmp_path, earlier, earlier.replace("def double(value)", "def double(value,x)")
    )
    problems = lint_check(stacked, fake_base, venv, tmp_path, ["5"]).problems
    assert len(problems) == 1 and problems[0].startswith(
        f"PR 5 (lint-me): lint: black -l 100 would reformat {MODULE}; pylint: {MODULE}:20 "
        "W0613(unused-argument)"
    ), problems
