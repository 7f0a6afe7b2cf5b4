"""``pr list|branch|mail``: the pull requests of ``patches/stack.toml`` (see
:mod:`adreno_ws.stack`), over a materialized repository of the series.

* ``list``: one line per PR (its patches, lines changed outside and inside ``tests/``, the
  test files it adds or changes), then two measures of how well the series is cut: the lines
  its patches add against the net lines of the whole series (a patch that rewrites what an
  earlier one added counts twice), and the patches that touch a file an earlier PR created.
* ``branch DIR``: ``pr/NN-slug`` at each PR's last commit of a materialized repository.
* ``mail N``: ``git format-patch --cover-letter`` of PR N's commits, its title and letter in
  the cover letter.
"""

from __future__ import annotations

import contextlib
import tempfile
from email.header import Header
from pathlib import Path

from . import WsError
from .gitrepo import BASE_TAG, git, isolated_env
from .series import (
    FORMAT_PATCH_OPTIONS,
    am_series,
    check_base,
    commits,
    committed_series,
    init_base_repo,
    pin_label,
    require_materialized,
    tests_in,
    user_env,
)
from .stack import STACK_FILE, Pr, file_changes, numstat, require_stack, tip_of

_SUBJECT = "*** SUBJECT HERE ***"
_BLURB = "*** BLURB HERE ***"


@contextlib.contextmanager
def stack_repo(repo: Path, base: Path | None, dest: Path | None):
    """A materialized repository of the series and the stack cut over its commits.

    Parameters
    ----------
    repo : Path
        The workspace.
    base : Path or None
        The pristine base; used when ``dest`` is None, to materialize a scratch repository.
    dest : Path or None
        A repository made by ``series materialize``, used as it is.

    Yields
    ------
    tuple of (Path, list of str, list of Pr)
        The repository, its series' commits (oldest first) and the PRs.
    """
    patches = committed_series(repo)
    prs = require_stack(repo, len(patches))
    with tempfile.TemporaryDirectory(prefix="adreno-ws-stack-") as tmp:
        if dest is None:
            check_base(repo, base)
            dest = Path(tmp) / "series"
            init_base_repo(dest, base, pin_label(repo), shared=True)
            am_series(dest, patches, isolated_env())
        else:
            dest = dest.resolve()
            require_materialized(dest)
        series = commits(dest)
        if len(series) != prs[-1].last:
            raise WsError(
                f"{dest} has {len(series)} commits after {BASE_TAG}, but {STACK_FILE} cuts "
                f"{prs[-1].last} patches: export it (`series export {dest}`) and change the "
                "PRs' patches counts, or materialize it again"
            )
        yield dest, series, prs


def pr_test_files(dest: Path, series: list[str], pull: Pr) -> list[str]:
    """The test files ``pull``'s patches add or change, that its tip still has, in order."""
    return tests_in(
        [
            file_changes(dest, tip_of(series, position - 1), series[position - 1])
            for position in range(pull.first, pull.last + 1)
        ]
    )


# ---------------------------------------------------------------------------- pr list


def _subject(dest: Path, commit: str) -> str:
    return git(dest, "log", "-1", "--format=%s", commit).stdout.strip()


def list_lines(dest: Path, series: list[str], prs: list[Pr]) -> list[str]:
    """``pr list``'s output: one line per PR, then the two measures of the cut.

    Parameters
    ----------
    dest : Path
        A materialized repository.
    series : list of str
        Its series' commits, oldest first.
    prs : list of Pr
        The stack.

    Returns
    -------
    list of str
        The lines to print.
    """
    lines = []
    for pull in prs:
        rows = numstat(dest, tip_of(series, pull.first - 1), tip_of(series, pull.last))
        code = [r for r in rows if not r[2].startswith("tests/")]
        tests = [r for r in rows if r[2].startswith("tests/")]
        files = pr_test_files(dest, series, pull)
        span = f"{pull.first}-{pull.last} ({pull.count})"
        lines.append(
            f"{pull.number:2d} {pull.slug}: {pull.title} | patches {span}"
            f" | code +{sum(r[0] for r in code)}/-{sum(r[1] for r in code)}"
            f" | tests +{sum(r[0] for r in tests)}/-{sum(r[1] for r in tests)}"
            f" | {', '.join(files) if files else 'no test files'}"
        )
    lines.append("")
    total = sum(
        added
        for position, commit in enumerate(series, 1)
        for added, _, _ in numstat(dest, tip_of(series, position - 1), commit)
    )
    net = sum(added for added, _, _ in numstat(dest, BASE_TAG, tip_of(series, len(series))))
    ratio = total / net if net else float("inf")
    lines.append(
        f"lines added: {total} by the {len(series)} patches, {net} net ({BASE_TAG}..tip): "
        f"{ratio:.3f}, {100 * (ratio - 1):.1f}% above the net (target: at most 2%)"
    )
    touching = _touching_earlier_files(dest, series, prs)
    lines.append(f"patches that touch a file an earlier PR added: {len(touching)}")
    lines += [f"  {line}" for line in touching]
    return lines


def _touching_earlier_files(dest: Path, series: list[str], prs: list[Pr]) -> list[str]:
    """One line per patch that changes or deletes a file an earlier PR created."""
    created: dict[str, int] = {}
    out = []
    for pull in prs:
        mine: dict[str, int] = {}
        for position in range(pull.first, pull.last + 1):
            changes = file_changes(dest, tip_of(series, position - 1), series[position - 1])
            earlier = sorted({p for s, p in changes if s != "A" and p in created})
            if earlier:
                files = ", ".join(f"{p} (added by PR {created[p]})" for p in earlier)
                subject = _subject(dest, series[position - 1])
                out.append(f'{position:04d} "{subject}" ({pull.label}) touches {files}')
            mine.update({p: pull.number for s, p in changes if s == "A"})
        created.update(mine)
    return out


# ---------------------------------------------------------------------------- pr branch


def make_branches(dest: Path, series: list[str], prs: list[Pr]) -> list[str]:
    """Create or move ``pr/NN-slug`` to each PR's last commit; the lines to print."""
    lines = []
    for pull in prs:
        commit = series[pull.last - 1]
        git(dest, "branch", "-f", pull.branch, commit, what=f"git branch -f {pull.branch}")
        short = git(dest, "rev-parse", "--short=12", commit).stdout.strip()
        lines.append(f"{pull.branch} {short} ({pull.count} patches): {pull.title}")
    names = {pull.branch for pull in prs}
    stale = git(dest, "for-each-ref", "--format=%(refname:short)", "refs/heads/pr/").stdout
    for name in stale.split():
        if name not in names:
            lines.append(f"note: {name} is not in the stack: delete it (git branch -D {name})")
    return lines


# ---------------------------------------------------------------------------- pr mail


def _header_text(text: str) -> str:
    """``text`` as a mail header value (RFC 2047 when it is not ASCII)."""
    return text if text.isascii() else Header(text, "utf-8").encode()


def fill_cover_letter(mail: str, title: str, body: str) -> str:
    """Put the PR's title and letter into ``git format-patch``'s cover letter template."""
    if _SUBJECT not in mail or _BLURB not in mail:
        raise WsError(
            "git format-patch's cover letter has no *** SUBJECT HERE *** / *** BLURB HERE ***: "
            "check your git configuration (format.* settings)"
        )
    head, sep, rest = mail.partition("\n\n")
    head = head.replace(_SUBJECT, _header_text(title))
    if not body.isascii() and "Content-Type:" not in head:
        head += (
            "\nMIME-Version: 1.0\nContent-Type: text/plain; charset=UTF-8"
            "\nContent-Transfer-Encoding: 8bit"
        )
    return head + sep + rest.replace(_BLURB, body.strip())


def write_mail(  # pylint: disable=too-many-arguments
    dest: Path, series: list[str], pull: Pr, out: Path, clear: bool = False
) -> list[Path]:
    """``git format-patch --cover-letter`` of ``pull``'s commits into ``out``.

    With ``clear``, mails an earlier run left in ``out`` (``NNNN-*.patch``) are removed first;
    without, ``out`` must hold none (so that none is overwritten or left stale).

    Parameters
    ----------
    dest : Path
        A materialized repository.
    series : list of str
        Its series' commits, oldest first.
    pull : Pr
        The pull request.
    out : Path
        Where to write.
    clear : bool
        Remove the mails ``out`` holds first.

    Returns
    -------
    list of Path
        The files written, the cover letter first.
    """
    out.mkdir(parents=True, exist_ok=True)
    old = sorted(out.glob("[0-9][0-9][0-9][0-9]-*.patch"))
    if old and not clear:
        raise WsError(
            f"{out} holds mails already ({old[0].name} ...): remove them, or pass another -o"
        )
    for stale in old:
        stale.unlink()
    options = [o for o in FORMAT_PATCH_OPTIONS if o != "--no-cover-letter"]
    proc = git(
        dest,
        "format-patch",
        *options,
        "--cover-letter",
        # The placeholders, never a branch description (format.coverFromDescription).
        "--cover-from-description=none",
        "-o",
        str(out.resolve()),
        f"{tip_of(series, pull.first - 1)}..{tip_of(series, pull.last)}",
        env=user_env(),
    )
    written = [Path(line.strip()) for line in proc.stdout.splitlines() if line.strip()]
    cover = written[0]
    body = pull.letter.read_text(encoding="utf-8")
    cover.write_text(
        fill_cover_letter(cover.read_text(encoding="utf-8"), pull.title, body), encoding="utf-8"
    )
    return written


def pick(prs: list[Pr], number: int) -> Pr:
    """PR ``number`` of the stack, or a one-line error."""
    if not 1 <= number <= len(prs):
        raise WsError(f"there is no PR {number}: {STACK_FILE} has PRs 1 to {len(prs)}")
    return prs[number - 1]
