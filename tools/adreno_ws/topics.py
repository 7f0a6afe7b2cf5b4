"""The topics file (``patches/topics.toml``): which mirror files make which patch.

The file's own header documents the format; this module reads and validates it, and
assigns every mirror file to exactly one topic.
"""

from __future__ import annotations

import fnmatch
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from . import WsError
from .repo import MIRROR_PACKAGE, TOPICS_FILE, mirror_files

DEFAULT_AUTHOR = "Adreno texture workspace <adreno-ws@tvm.invalid>"
DEFAULT_DATE = "Thu, 1 Jan 2026 00:00:00 +0000"
_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_TOPIC_KEYS = {"name", "subject", "message", "files", "delete"}
_SERIES_KEYS = {"author", "date"}


@dataclass
class Topic:
    """One patch: its slug, subject line, message body and the files it carries."""

    name: str
    subject: str
    message: str
    patterns: list[str]
    delete: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # mirror files matched, sorted


@dataclass
class Topics:
    """The whole series declaration."""

    author: str
    date: str
    topics: list[Topic]


def _is_glob(pattern: str) -> bool:
    return any(ch in pattern for ch in "*?[")


def load_topics(repo: Path, files: list[str] | None = None) -> Topics:
    """Parse and validate the topics file against the mirror; raise WsError listing every problem.

    ``files`` is the mirror's file list (default: read from the repository).
    """
    path = repo / TOPICS_FILE
    if not path.is_file():
        raise WsError(f"{TOPICS_FILE} is missing: create it (see README.md, 'Patch workflow')")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as err:
        raise WsError(f"{TOPICS_FILE}: not valid TOML ({err}): fix the syntax") from err
    problems: list[str] = []
    series = data.get("series", {})
    for key in sorted(set(data) - {"series", "topic"}):
        problems.append(
            f"{TOPICS_FILE}: unknown top-level key '{key}': only [series] and [[topic]]"
        )
    for key in sorted(set(series) - _SERIES_KEYS):
        problems.append(f"{TOPICS_FILE}: unknown key series.{key}: use author or date")
    topics = [_parse_topic(i, raw, problems) for i, raw in enumerate(data.get("topic", []), 1)]
    names = [t.name for t in topics]
    for name in sorted({n for n in names if names.count(n) > 1}):
        problems.append(f"{TOPICS_FILE}: topic name '{name}' is used twice: names must be unique")
    if not topics:
        problems.append(f"{TOPICS_FILE}: declares no [[topic]]: add one per patch")
    _assign(topics, mirror_files(repo) if files is None else files, problems)
    if problems:
        raise WsError(*problems)
    return Topics(series.get("author", DEFAULT_AUTHOR), series.get("date", DEFAULT_DATE), topics)


def _parse_topic(index: int, raw: dict, problems: list[str]) -> Topic:
    where = f"{TOPICS_FILE}: topic #{index}"
    for key in sorted(set(raw) - _TOPIC_KEYS):
        problems.append(f"{where}: unknown key '{key}': use name, subject, message, files, delete")
    name = raw.get("name", "")
    if not isinstance(name, str) or not _NAME.match(name):
        problems.append(f"{where}: name {name!r} must be lower-case letters, digits and '-'")
        name = str(name)
    else:
        where = f"{TOPICS_FILE}: topic '{name}'"
    subject = raw.get("subject", "")
    if not isinstance(subject, str) or not subject.strip() or "\n" in subject.strip():
        problems.append(f"{where}: subject must be one non-empty line")
        subject = str(subject)
    elif not subject.isascii():
        problems.append(f"{where}: subject must be ASCII (it becomes a mail header)")
    message = raw.get("message", "")
    if not isinstance(message, str) or not message.strip():
        problems.append(f"{where}: message is empty: say what the patch does and why")
        message = str(message)
    lists = {}
    for key in ("files", "delete"):
        value = raw.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            problems.append(f"{where}: {key} must be a list of paths")
            value = []
        for entry in value:
            if not entry.startswith(MIRROR_PACKAGE.as_posix() + "/"):
                problems.append(f"{where}: '{entry}' is not under {MIRROR_PACKAGE}/")
        lists[key] = value
    if not lists["files"] and not lists["delete"]:
        problems.append(f"{where}: lists no files: add its files or remove the topic")
    return Topic(name, subject.strip(), message.strip(), lists["files"], lists["delete"])


def _assign(topics: list[Topic], files: list[str], problems: list[str]) -> None:
    """Give each mirror file to the one topic whose patterns match it."""
    owner: dict[str, str] = {}
    present = set(files)
    for topic in topics:
        matched: set[str] = set()
        for pattern in topic.patterns:
            hits = (
                fnmatch.filter(files, pattern)
                if _is_glob(pattern)
                else ([pattern] if pattern in present else [])
            )
            if not hits:
                what = "matches no mirror file" if _is_glob(pattern) else "is not in the mirror"
                problems.append(
                    f"{TOPICS_FILE}: topic '{topic.name}': '{pattern}' {what}: fix the entry "
                    "(a base file the patch removes goes under delete)"
                )
            matched.update(hits)
        for path in topic.delete:
            if path in present:
                problems.append(
                    f"{TOPICS_FILE}: topic '{topic.name}' deletes '{path}', but the mirror has it: "
                    "remove the file from the mirror or the delete entry"
                )
            matched.add(path)
        for path in sorted(matched):
            if path in owner and owner[path] != topic.name:
                problems.append(
                    f"{path} is assigned to topics '{owner[path]}' and '{topic.name}' in "
                    f"{TOPICS_FILE}: a file belongs to one topic (the mirror holds only its final "
                    "state), keep it in one"
                )
            owner.setdefault(path, topic.name)
        topic.files = sorted(p for p in matched if p in present)
    for path in files:
        if path not in owner:
            problems.append(
                f"{path} is in the mirror but in no topic of {TOPICS_FILE}: add it to a topic's "
                "files list"
            )
        elif not path.startswith(MIRROR_PACKAGE.as_posix() + "/"):
            problems.append(f"{path}: only {MIRROR_PACKAGE}/ is patched: move the file there")
