"""The series as a stack of pull requests: ``patches/stack.toml``, read and checked.

``patches/stack.toml`` cuts ``patches/series`` into the pull requests a contributor sends to
apache/tvm, in order; each ``[[pr]]`` table takes the next ``patches`` patches::

    [[pr]]
    slug = "dlight-base-fixes"           # branch pr/NN-slug
    title = "[Dlight][TIR] Fixes to the base that the Adreno rules need"
    patches = 1                          # consecutive patches of patches/series
    letter = "letters/01-dlight-base-fixes.md"   # cover letter body, relative to patches/

The counts must sum to the number of patches ``patches/series`` lists and every letter must
exist. ``pr list|branch|mail`` (:mod:`adreno_ws.pr`) use it, and ``series check`` tests and
lints per PR with it (:func:`adreno_ws.series.check`, :mod:`adreno_ws.prlint`). Also here:
the git helpers those share.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from . import WsError
from .gitrepo import BASE_TAG, git
from .repo import PATCH_DIR, SERIES_FILE

STACK_FILE = PATCH_DIR / "stack.toml"
#: Slugs become branch names (``pr/NN-slug``) and file names: lower case, digits, dashes.
_SLUG = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", re.M)


@dataclass(frozen=True)
class Pr:
    """One pull request of the stack."""

    #: Its place in the stack, from 1.
    number: int
    #: Short name, used in its branch name.
    slug: str
    #: The pull request's title.
    title: str
    #: The 1-based position in ``patches/series`` of its first patch.
    first: int
    #: The 1-based position in ``patches/series`` of its last patch.
    last: int
    #: The cover letter body (markdown).
    letter: Path

    @property
    def label(self) -> str:
        """``PR 5 (slug)``: how messages name it."""
        return f"PR {self.number} ({self.slug})"

    @property
    def branch(self) -> str:
        """``pr/05-slug``."""
        return f"pr/{self.number:02d}-{self.slug}"

    @property
    def count(self) -> int:
        """How many patches it takes."""
        return self.last - self.first + 1


def _entry_problem(number: int, entry) -> str | None:
    """What is wrong with the ``number``-th ``[[pr]]`` table, or None."""
    if not isinstance(entry, dict):
        return f"entry {number} is not a [[pr]] table"
    missing = [k for k in ("slug", "title", "patches", "letter") if k not in entry]
    if missing:
        return f"[[pr]] number {number} lacks {', '.join(missing)}"
    slug, count = entry["slug"], entry["patches"]
    if not isinstance(slug, str) or not _SLUG.match(slug):
        return f"[[pr]] number {number}: slug {slug!r} is not lower-case words joined by '-'"
    if not isinstance(entry["title"], str) or not entry["title"].strip():
        return f"PR {number} ({slug}): title is not a non-empty string"
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        return f"PR {number} ({slug}): patches = {count!r} is not a whole number of at least 1"
    letter = entry["letter"]
    if not isinstance(letter, str) or Path(letter).is_absolute() or ".." in Path(letter).parts:
        return f"PR {number} ({slug}): letter {letter!r} is not a path inside patches/"
    return None


def read_stack(repo: Path, count: int) -> list[Pr] | None:
    """The PRs of ``patches/stack.toml``, checked against a series of ``count`` patches.

    Parameters
    ----------
    repo : Path
        The workspace.
    count : int
        How many patches ``patches/series`` lists.

    Returns
    -------
    list of Pr or None
        None when there is no ``patches/stack.toml``.

    Raises
    ------
    WsError
        With one line: malformed TOML, a malformed entry, counts that do not sum to
        ``count``, or letters that do not exist.
    """
    path = repo / STACK_FILE
    if not path.is_file():
        return None
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise WsError(f"{STACK_FILE} is not valid TOML ({err}): fix it") from None
    entries = data.get("pr")
    if not isinstance(entries, list) or not entries:
        raise WsError(f"{STACK_FILE} has no [[pr]] tables: add one per pull request")
    prs, position, slugs = [], 1, set()
    for number, entry in enumerate(entries, 1):
        problem = _entry_problem(number, entry)
        if problem is None and entry["slug"] in slugs:
            problem = f"PR {number}: slug {entry['slug']!r} is used twice"
        if problem:
            raise WsError(f"{STACK_FILE}: {problem}: fix it")
        slugs.add(entry["slug"])
        last = position + entry["patches"] - 1
        letter = repo / PATCH_DIR / entry["letter"]
        prs.append(Pr(number, entry["slug"], entry["title"].strip(), position, last, letter))
        position = last + 1
    if position - 1 != count:
        raise WsError(
            f"{STACK_FILE}: its PRs take {position - 1} patches, but {SERIES_FILE} lists "
            f"{count}: change the PRs' patches counts to sum to {count}"
        )
    missing = [pull for pull in prs if not pull.letter.is_file()]
    if missing:
        raise WsError(
            f"{STACK_FILE}: "
            + ", ".join(
                f"the letter of {pull.label}, {pull.letter.relative_to(repo).as_posix()},"
                for pull in missing
            )
            + f" {'does' if len(missing) == 1 else 'do'} not exist: write "
            + ("it" if len(missing) == 1 else "them")
        )
    return prs


def require_stack(repo: Path, count: int) -> list[Pr]:
    """:func:`read_stack`, with a missing file an error."""
    prs = read_stack(repo, count)
    if prs is None:
        raise WsError(
            f"{STACK_FILE} is missing: write it, one [[pr]] table per pull request "
            "(see docs/contributing.rst, 'Sending a pull request from the stack')"
        )
    return prs


# ---------------------------------------------------------------------------- git helpers


def tip_of(series: list[str], position: int) -> str:
    """The commit after ``position`` patches (0: the base)."""
    return series[position - 1] if position else BASE_TAG


def file_changes(dest: Path, old: str, new: str) -> list[tuple[str, str]]:
    """``(status, path)`` of every file ``old..new`` changes (no rename detection)."""
    out = git(dest, "diff", "--name-status", "--no-renames", "-z", old, new).stdout.split("\0")
    out = [x for x in out if x]
    return list(zip(out[0::2], out[1::2]))


def numstat(dest: Path, old: str, new: str) -> list[tuple[int, int, str]]:
    """``(added, deleted, path)`` per file of ``git diff --numstat --no-renames old new``."""
    out = git(dest, "diff", "--numstat", "--no-renames", "-z", old, new).stdout
    rows = []
    for record in filter(None, out.split("\0")):
        added, deleted, path = record.split("\t", 2)
        # A binary file shows "-": no lines.
        rows.append((_lines(added), _lines(deleted), path))
    return rows


def _lines(text: str) -> int:
    return int(text) if text.isdigit() else 0


def changed_lines(dest: Path, old: str, new: str, path: str) -> list[tuple[int, int]]:
    """The line ranges ``(first, last)`` of ``path`` at ``new`` that ``old..new`` changed."""
    diff = git(dest, "diff", "-U0", "--no-renames", old, new, "--", path).stdout
    ranges = []
    for start, length in _HUNK.findall(diff):
        length = 1 if length == "" else int(length)
        if length:
            ranges.append((int(start), int(start) + length - 1))
    return ranges
