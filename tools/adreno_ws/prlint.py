"""TVM's lint of each pull request of the stack, at the PR's tip (a part of ``series check``).

For the Python files a PR adds or changes, in a checkout of its last commit:

* the ASF license header (the check of ``adreno_ws headers``);
* ``black --check -l 100``: the whole file when the PR adds it, and in a file that was there
  before only what black would change on the lines the PR changes, since upstream files need
  not be formatted as the pinned black formats them;
* ``pylint --rcfile=pylintrc`` on the files under ``python/`` (what TVM lints), keeping the
  messages on files the PR adds and on the lines it changes in others.

Why full pylint, filtered by line, rather than ``pylint -E``: measured on the 60-patch series
(2 shared cores), pylint on the 28 upstream files the series changes took 33 s with ``-E`` and
26 s for the two frontends alone without it: astroid's inference is the cost, not the checks.
``-E`` still reported five errors of upstream's own code in the TFLite frontend
(possibly-used-before-assignment, function-redefined) and would miss the convention and
refactoring messages on our lines. Keeping the messages on the PR's own lines is as fast as
``-E`` and blames a PR only for what it wrote. Linting a trial cut of the 60 patches into ten
PRs took 162 CPU s (392 s wall beside other jobs at load 7 on 2 cores), most of it pylint;
``series check`` runs it in a thread beside the tests.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from .gitrepo import git
from .report import Failure, missing_asf_header
from .stack import Pr, changed_lines, file_changes, tip_of

#: ``path:line: [Cnnnn(symbol), object] message`` (pylint's parseable output).
_PYLINT_LINE = re.compile(r"^(?P<path>[^:\s]+\.py):(?P<line>\d+): \[(?P<id>\w+)\((?P<sym>[\w-]+)")
_HUNK_HEAD = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,(\d+))? @@")
LINT_MODULES = ("black", "pylint")


def missing_tools(python: Path) -> list[str]:
    """The linters (black, pylint) that ``python`` cannot import."""
    missing = []
    for module in LINT_MODULES:
        proc = subprocess.run(
            [str(python), "-c", f"import {module}"], capture_output=True, check=False
        )
        if proc.returncode != 0:
            missing.append(module)
    return missing


def _touched_python(dest: Path, old: str, new: str) -> tuple[list[str], list[str]]:
    """(files added, files changed) among the ``.py`` files ``old..new`` leaves in place."""
    added, changed = [], []
    for status, path in file_changes(dest, old, new):
        if path.endswith(".py") and status != "D":
            (added if status == "A" else changed).append(path)
    return added, changed


def _run(cmd: list[str], cwd: Path, log: list[str]) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    log.append(f"$ {' '.join(cmd)}\n(exit {proc.returncode})\n{proc.stdout}{proc.stderr}")
    return proc


def _black(python, tree, added, ranges, log) -> list[str]:
    """The files black would reformat: new ones at all, others where the PR changed lines."""
    files = added + list(ranges)
    if not files:
        return []
    cmd = [str(python), "-m", "black", "--check", "--diff", "-l", "100", *files]
    proc = _run(cmd, tree, log)
    if proc.returncode not in (0, 1):
        return [f"(black failed, exit {proc.returncode})"]
    touched = black_lines(proc.stdout)
    bad = []
    for path in files:
        lines = touched.get(path, set())
        if lines and (path in added or any(a <= n <= b for n in lines for a, b in ranges[path])):
            bad.append(path)
    return bad


def black_lines(diff: str) -> dict[str, set[int]]:
    """The lines of each file that black's ``--diff`` output rewrites or inserts next to.

    Black runs on whole files: ``--line-ranges`` (black 26) misjudges blank lines next to a
    range (it wanted to remove one of the two blank lines between imports and a function
    that an import added above them), so the whole file's diff is read instead.
    """
    touched: dict[str, set[int]] = {}
    path, line, old_left, new_left = "", 0, 0, 0
    for text in diff.split("\n"):  # not splitlines(): a form feed is not a new line here
        if text.startswith("\\"):
            continue  # "\ No newline at end of file"
        if old_left or new_left:  # inside a hunk: its counts say where it ends
            if text.startswith("-"):
                touched.setdefault(path, set()).add(line)
                line, old_left = line + 1, old_left - 1
            elif text.startswith("+"):
                # An insertion between the lines line - 1 and line belongs to both.
                touched.setdefault(path, set()).update((line - 1, line))
                new_left -= 1
            else:
                line, old_left, new_left = line + 1, old_left - 1, new_left - 1
        elif text.startswith("--- "):
            path = text[4:].split("\t", 1)[0]
        elif match := _HUNK_HEAD.match(text):
            line = int(match[1])
            old_left = 1 if match[2] is None else int(match[2])
            new_left = 1 if match[3] is None else int(match[3])
    return touched


def _pylint(python, tree, rcfile, added, ranges, log) -> list[str]:
    """``path:line symbol`` of each pylint message on the PR's own lines."""
    files = [p for p in added + list(ranges) if p.startswith("python/")]
    if not files:
        return []
    cmd = [str(python), "-m", "pylint", f"--rcfile={rcfile}", "-j", "1"]
    cmd += ["--output-format=parseable", "--score=n", "--persistent=n", *files]
    proc = _run(cmd, tree, log)
    if proc.returncode & 1 or proc.returncode & 32:
        # A fatal message or a usage error: pylint did not check the files.
        return [f"pylint could not run (exit {proc.returncode})"]
    found = []
    for line in proc.stdout.splitlines():
        match = _PYLINT_LINE.match(line)
        if not match:
            continue
        path, number = match["path"], int(match["line"])
        if path in added or any(a <= number <= b for a, b in ranges.get(path, [])):
            found.append(f"{path}:{number} {match['id']}({match['sym']})")
    return found


def lint_pr(  # pylint: disable=too-many-arguments
    dest: Path, series: list[str], pull: Pr, tree: Path, python: Path, rcfile: Path, log: Path
) -> Failure | None:
    """Lint ``pull`` at its tip; None when it is clean.

    Parameters
    ----------
    dest : Path
        The materialized repository.
    series : list of str
        Its series' commits, oldest first.
    pull : Pr
        The pull request.
    tree : Path
        A worktree of ``dest``, checked out at the PR's tip here.
    python : Path
        The interpreter that has black and pylint.
    rcfile : Path
        The pylintrc.
    log : Path
        Where the linters' output goes.

    Returns
    -------
    Failure or None
        What failed, in a few words, and the log.
    """
    old, new = tip_of(series, pull.first - 1), tip_of(series, pull.last)
    git(tree, "checkout", "-q", "--detach", "--force", new)
    added, changed = _touched_python(dest, old, new)
    ranges = {path: changed_lines(dest, old, new, path) for path in changed}
    out: list[str] = []
    problems = []
    headers = [p for p in added + changed if missing_asf_header(tree / p)]
    if headers:
        problems.append(f"no ASF license header: {', '.join(headers)}")
    reformat = _black(python, tree, added, ranges, out)
    if reformat:
        problems.append(f"black -l 100 would reformat {', '.join(reformat)}")
    messages = _pylint(python, tree, rcfile, added, ranges, out)
    if messages:
        more = f" and {len(messages) - 3} more" if len(messages) > 3 else ""
        problems.append(f"pylint: {', '.join(messages[:3])}{more}")
    log.write_text("\n".join(out) + "\n", encoding="utf-8")
    if not problems:
        return None
    return Failure("lint: " + "; ".join(problems), log)


def lint_stack(  # pylint: disable=too-many-arguments
    dest: Path,
    series: list[str],
    prs: list[Pr],
    python: Path,
    rcfile: Path,
    log_dir: Path,
    tree: Path,
) -> dict[int, Failure]:
    """Lint every PR of ``prs`` in a new worktree ``tree`` of ``dest``.

    Returns
    -------
    dict of int to Failure
        The PRs whose lint fails, by number.
    """
    git(dest, "worktree", "add", "-q", "--detach", str(tree), series[prs[0].last - 1])
    failures = {}
    try:
        for pull in prs:
            log = log_dir / f"pr-{pull.number:02d}-{pull.slug}-lint.log"
            failure = lint_pr(dest, series, pull, tree, python, rcfile, log)
            if failure:
                failures[pull.number] = failure
    finally:
        git(dest, "worktree", "remove", "--force", str(tree), check=False)
    return failures
