"""Run the texture suite's seed-dependent fast tests under many seeds, on each OpenCL device.

The suite's ``rng`` fixture draws a fresh seed per run, so a test whose assertion holds for most
draws but not all fails on a fraction of CI runs. ``seed_sweep`` runs pytest once per device with
``TEXTURE_TESTS_SEED_SWEEP=N`` (see the suite's conftest): only tests taking ``rng`` are
collected, each body runs once per seed, and a failure lists the seeds that failed. The result is
one line per test that failed under any seed, with its device and failing seeds.
"""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from . import WsError
from .opencl import with_venv_icds
from .repo import require_python

_SEED_LINE = re.compile(r"seed=(\d+) \(replay: TEXTURE_TESTS_SEED=\d+\)")
_FAILED_OF = re.compile(r"(\d+) of (\d+) seeds failed")


@dataclasses.dataclass(frozen=True)
class SweepFailure:
    """One test that failed under at least one seed of the sweep on one device."""

    device: str
    test: str
    seeds: tuple[int, ...]
    total: int
    message: str

    def line(self) -> str:
        shown = ", ".join(str(s) for s in self.seeds[:5])
        more = f", ... ({len(self.seeds)} in all)" if len(self.seeds) > 5 else ""
        replay = f"TEXTURE_TESTS_SEED={self.seeds[0]} " if self.seeds else ""
        return (
            f"{self.device}: {self.test}: {len(self.seeds)}/{self.total} seeds failed "
            f"(seeds {shown}{more}); replay: {replay}pytest '{self.test}'\n"
            f"    {self.message}"
        )


def parse_junit(path: Path, device: str) -> list[SweepFailure]:
    """The failing tests of one sweep run's JUnit XML file."""
    if not path.is_file():
        raise WsError(f"{path}: no JUnit results: the sweep on '{device}' did not run (see above)")
    failures = []
    for case in ET.parse(path).getroot().iter("testcase"):
        node = case.find("failure")
        if node is None:
            node = case.find("error")
        if node is None:
            continue
        text = (node.get("message") or "") + "\n" + (node.text or "")
        seeds = tuple(dict.fromkeys(int(s) for s in _SEED_LINE.findall(text)))
        counted = _FAILED_OF.search(text)
        total = int(counted.group(2)) if counted else 0
        first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
        module = case.get("classname", "").replace(".", "/")
        test = f"{module}.py::{case.get('name')}" if module else case.get("name", "?")
        failures.append(SweepFailure(device, test, seeds, total, first[:300]))
    return failures


def run_sweep(
    repo: Path,
    python: Path,
    devices: list[str],
    seeds: int,
    base: int,
    paths: list[str],
    workers: int,
    extra: list[str],
    slow: bool = False,
) -> list[SweepFailure]:
    """Run the sweep on each device; returns every failure (empty: all seeds passed). The tests
    marked ``slow`` (the real models) are left out unless ``slow``."""
    if seeds < 1:
        raise WsError(f"--seeds {seeds}: give at least 1 seed (the issue asks for 30 or more)")
    require_python(python)
    out = repo / "build" / "seed-sweep"
    out.mkdir(parents=True, exist_ok=True)
    failures: list[SweepFailure] = []
    for device in devices:
        xml = out / f"{re.sub(r'[^A-Za-z0-9]+', '-', device).strip('-') or 'default'}.xml"
        xml.unlink(missing_ok=True)
        env = dict(os.environ)
        env.update(
            TVM_OPENCL_DEVICE=device,
            TEXTURE_TESTS_SEED_SWEEP=str(seeds),
            TEXTURE_TESTS_SEED_SWEEP_BASE=str(base),
        )
        env.pop("TEXTURE_TESTS_SEED", None)
        with_venv_icds(env, python.parent.parent)
        cmd = [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        if not slow:
            cmd += ["-m", "not slow"]
        if workers > 1:
            cmd += ["-n", str(workers)]
        cmd += [f"--junitxml={xml}", *extra, *paths]
        print(f"seed-sweep: {seeds} seeds (base {base}) on '{device}': {' '.join(cmd[1:])}")
        sys.stdout.flush()
        code = subprocess.run(cmd, cwd=repo, env=env, check=False).returncode
        if code not in (0, 1):
            raise WsError(
                f"pytest exited {code} on '{device}' (not a test failure: collection or usage "
                "error): run the printed command by hand to see why"
            )
        failures += parse_junit(xml, device)
    return failures
