"""Small reports for the CI scripts: JUnit totals, ASF license headers, check failures."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

ASF_HEADER_LINES = (
    "Licensed to the Apache Software Foundation (ASF) under one",
    "or more contributor license agreements.  See the NOTICE file",
    "KIND, either express or implied.  See the License for the",
)


def junit_counts(path: Path) -> dict[str, int]:
    """passed/failed/skipped/errors of one pytest JUnit XML file (zeros when absent)."""
    counts = {"passed": 0, "failed": 0, "skipped": 0, "errors": 0}
    if not path.is_file():
        return counts
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    for suite in suites:
        tests = int(suite.get("tests", 0))
        failed = int(suite.get("failures", 0))
        errors = int(suite.get("errors", 0))
        skipped = int(suite.get("skipped", 0))
        counts["failed"] += failed
        counts["errors"] += errors
        counts["skipped"] += skipped
        counts["passed"] += tests - failed - errors - skipped
    return counts


def missing_asf_header(path: Path) -> bool:
    """True when the first 25 lines of ``path`` lack TVM's ASF license header."""
    head = path.read_text(encoding="utf-8", errors="replace").splitlines()[:25]
    text = "\n".join(head)
    return not all(line in text for line in ASF_HEADER_LINES)


@dataclass
class Failure:
    """What failed in one part of ``series check`` (a few words), and the log with details."""

    what: str
    log: Path
