"""Git-compatible diffs and ``git format-patch``-style mail files, made with difflib.

The output is a pure function of its inputs (no dates, hosts or users read from the
machine), so exporting twice gives the same bytes.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from dataclasses import dataclass

MODE = "100644"
CONTEXT = 3
_ZERO = "0" * 40
_DIFF_HEADER = re.compile(r"^diff --git a/(\S+) b/(\S+)$", re.M)


@dataclass
class FileDiff:
    """The change of one file: ``old``/``new`` are None when the file is absent on that side."""

    path: str
    old: str | None
    new: str | None
    text: str = ""
    added: int = 0
    removed: int = 0

    @property
    def kind(self) -> str:
        """'create', 'delete' or 'modify'."""
        if self.old is None:
            return "create"
        return "delete" if self.new is None else "modify"


def blob_id(text: str | None) -> str:
    """The git blob id of a file's content (all zeros for an absent file)."""
    if text is None:
        return _ZERO
    data = text.encode("utf-8")
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def split_lines(text: str) -> list[str]:
    """Split on '\\n' only (as git does), keeping the line ends; a last line may lack one."""
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _range(start: int, length: int) -> str:
    first = start + 1
    if length == 1:
        return str(first)
    if length == 0:
        first -= 1
    return f"{first},{length}"


def _emit(prefix: str, line: str, out: list[str]) -> None:
    out.append(prefix + line)
    if not line.endswith("\n"):
        out.append("\n\\ No newline at end of file\n")


def make_diff(path: str, old: str | None, new: str | None) -> FileDiff:
    """A ``diff --git`` section for ``path`` (POSIX, relative to the TVM root)."""
    diff = FileDiff(path, old, new)
    a_lines, b_lines = split_lines(old or ""), split_lines(new or "")
    head = [f"diff --git a/{path} b/{path}\n"]
    if old is None:
        head.append(f"new file mode {MODE}\n")
        head.append(f"index {blob_id(None)[:12]}..{blob_id(new)[:12]}\n")
    elif new is None:
        head.append(f"deleted file mode {MODE}\n")
        head.append(f"index {blob_id(old)[:12]}..{blob_id(None)[:12]}\n")
    else:
        head.append(f"index {blob_id(old)[:12]}..{blob_id(new)[:12]} {MODE}\n")
    body: list[str] = []
    matcher = difflib.SequenceMatcher(None, a_lines, b_lines, autojunk=False)
    for group in matcher.get_grouped_opcodes(CONTEXT):
        a_len = group[-1][2] - group[0][1]
        b_len = group[-1][4] - group[0][3]
        body.append(f"@@ -{_range(group[0][1], a_len)} +{_range(group[0][3], b_len)} @@\n")
        for tag, a_lo, a_hi, b_lo, b_hi in group:
            if tag == "equal":
                for line in a_lines[a_lo:a_hi]:
                    _emit(" ", line, body)
                continue
            for line in a_lines[a_lo:a_hi]:
                _emit("-", line, body)
                diff.removed += 1
            for line in b_lines[b_lo:b_hi]:
                _emit("+", line, body)
                diff.added += 1
    if body:
        head.append("--- /dev/null\n" if old is None else f"--- a/{path}\n")
        head.append("+++ /dev/null\n" if new is None else f"+++ b/{path}\n")
    diff.text = "".join(head + body)
    return diff


def diffstat(diffs: list[FileDiff]) -> str:
    """A ``git format-patch`` style diffstat (graph at most 40 columns wide)."""
    if not diffs:
        return ""
    width = max(len(fdiff.path) for fdiff in diffs)
    most = max(fdiff.added + fdiff.removed for fdiff in diffs)
    digits = len(str(most))
    scale = min(1.0, 40 / most) if most else 1.0
    lines = []
    for fdiff in diffs:
        total = fdiff.added + fdiff.removed
        plus = max(int(round(fdiff.added * scale)), 1) if fdiff.added else 0
        minus = max(int(round(fdiff.removed * scale)), 1) if fdiff.removed else 0
        graph = "+" * plus + "-" * minus
        lines.append(
            f" {fdiff.path.ljust(width)} | {str(total).rjust(digits)} {graph}".rstrip() + "\n"
        )
    added = sum(fdiff.added for fdiff in diffs)
    removed = sum(fdiff.removed for fdiff in diffs)
    summary = f" {len(diffs)} file{'s' if len(diffs) != 1 else ''} changed"
    if added:
        summary += f", {added} insertion{'s' if added != 1 else ''}(+)"
    if removed:
        summary += f", {removed} deletion{'s' if removed != 1 else ''}(-)"
    lines.append(summary + "\n")
    for fdiff in diffs:
        if fdiff.kind != "modify":
            lines.append(f" {fdiff.kind} mode {MODE} {fdiff.path}\n")
    return "".join(lines)


def format_patch(
    index: int,
    count: int,
    subject: str,
    message: str,
    author: str,
    date: str,
    diffs: list[FileDiff],
) -> str:
    """One mail file, as ``git format-patch`` writes it (``git am`` takes it)."""
    changes = "".join(fdiff.text for fdiff in diffs)
    commit = hashlib.sha1(f"{subject}\n{message}\n{changes}".encode("utf-8")).hexdigest()
    return (
        f"From {commit} Mon Sep 17 00:00:00 2001\n"
        f"From: {author}\n"
        f"Date: {date}\n"
        f"Subject: [PATCH {index}/{count}] {subject}\n"
        "MIME-Version: 1.0\n"
        "Content-Type: text/plain; charset=UTF-8\n"
        "Content-Transfer-Encoding: 8bit\n"
        "\n"
        f"{message}\n"
        "---\n"
        f"{diffstat(diffs)}"
        "\n"
        f"{changes}"
        "-- \n"
        "adreno_ws\n"
        "\n"
    )


def touched_paths(patch_text: str) -> list[str]:
    """The paths a patch changes, from its ``diff --git`` lines, in order."""
    out = []
    for a_path, b_path in _DIFF_HEADER.findall(patch_text):
        for p in (a_path, b_path):
            if p not in out:
                out.append(p)
    return out
