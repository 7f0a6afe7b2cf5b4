"""patches export: format, determinism and the topics file's errors."""

import subprocess

import pytest
from adreno_ws_fixtures import write

from adreno_ws import WsError
from adreno_ws.patches import build_series, check, export


def test_export_writes_series_in_topic_order(workspace):
    series = (workspace / "patches" / "series").read_text().split()
    assert series == ["0001-pipeline.patch", "0002-build-and-new.patch"]
    first = (workspace / "patches" / series[0]).read_text()
    assert first.startswith("From ")
    assert "Subject: [PATCH 1/2] [Adreno] Change the pipeline\n" in first
    assert "--- a/python/tvm/relax/backend/adreno/pipeline.py\n" in first
    assert "-line 20\n+line 20 changed\n" in first
    second = (workspace / "patches" / series[1]).read_text()
    assert "new file mode 100644\nindex 000000000000.." in second
    assert "--- /dev/null\n+++ b/python/tvm/topi/adreno/conv.py\n@@ -0,0 +1 @@\n" in second
    assert "+conv = 1\n\\ No newline at end of file\n" in second


def test_export_is_deterministic(workspace, fake_base):
    before = {p.name: p.read_bytes() for p in (workspace / "patches").iterdir()}
    assert export(workspace, fake_base) == []
    assert {p.name: p.read_bytes() for p in (workspace / "patches").iterdir()} == before
    assert build_series(workspace, fake_base) == build_series(workspace, fake_base)


def test_patches_apply_with_git_am(workspace, fake_base, tmp_path):
    """The patches are real format-patch mails: git am takes them onto the base."""
    repo = tmp_path / "am"
    (repo).mkdir()
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
        "HOME": str(tmp_path),
        "PATH": "/usr/bin:/bin",
    }
    write(
        repo,
        {
            p.relative_to(fake_base).as_posix(): p.read_text()
            for p in fake_base.rglob("*")
            if p.is_file()
        },
    )
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "base"]):
        subprocess.run(cmd, cwd=repo, env=env, check=True)
    patches = [
        str(workspace / "patches" / n)
        for n in (workspace / "patches" / "series").read_text().split()
    ]
    subprocess.run(["git", "am", "-q", "--keep-non-patch", *patches], cwd=repo, env=env, check=True)
    assert (repo / "python/tvm/topi/adreno/conv.py").read_text() == "conv = 1"
    log = subprocess.run(
        ["git", "log", "--format=%s"], cwd=repo, env=env, check=True, capture_output=True, text=True
    ).stdout.split("\n")
    assert log[0] == "[TIR] Build returns 2, add a module"


def test_unassigned_mirror_file_is_an_error(workspace, fake_base):
    write(workspace, {"python/tvm/stray.py": "x = 1\n"})
    with pytest.raises(WsError) as err:
        export(workspace, fake_base)
    assert any(
        "python/tvm/stray.py is in the mirror but in no topic of patches/topics.toml" in p
        for p in err.value.problems
    )


def test_file_in_two_topics_is_an_error(workspace, fake_base):
    topics = workspace / "patches" / "topics.toml"
    topics.write_text(
        topics.read_text().replace(
            '"python/tvm/topi/adreno/*"]', '"python/tvm/topi/adreno/*", "python/tvm/relax/*"]'
        )
    )
    with pytest.raises(WsError) as err:
        export(workspace, fake_base)
    assert any("assigned to topics 'pipeline' and 'build-and-new'" in p for p in err.value.problems)


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda t: t.replace('name = "pipeline"', 'name = "Bad Name"'), "must be lower-case"),
        (
            lambda t: t.replace("python/tvm/tirx/build.py", "python/tvm/nothere.py"),
            "'python/tvm/nothere.py' is not in the mirror",
        ),
        (lambda t: t + '\n[[topic]]\nname = "x"\nsubject = "s"\nmessage = "m"\n', "lists no files"),
        (lambda t: t.replace("subject =", "subjet ="), "unknown key 'subjet'"),
        (lambda t: t + "\n[oops\n", "not valid TOML"),
        (lambda t: t.replace('name = "build-and-new"', 'name = "pipeline"'), "used twice"),
    ],
)
def test_topics_file_errors(workspace, fake_base, edit, message):
    topics = workspace / "patches" / "topics.toml"
    topics.write_text(edit(topics.read_text()))
    with pytest.raises(WsError) as err:
        export(workspace, fake_base)
    assert any(message in p for p in err.value.problems), err.value.problems
    assert check(workspace, fake_base)  # check reports the same problem instead of passing


def test_delete_entry_removes_a_base_file(workspace, fake_base):
    topics = workspace / "patches" / "topics.toml"
    topics.write_text(topics.read_text() + 'delete = ["python/tvm/old.py"]\n')
    export(workspace, fake_base)
    text = (workspace / "patches" / "0002-build-and-new.patch").read_text()
    assert "deleted file mode 100644\n" in text and "+++ /dev/null\n" in text
    assert check(workspace, fake_base) == []
