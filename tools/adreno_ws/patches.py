"""patches apply: the series onto an installed TVM or a TVM checkout, all or nothing.

Only the package part of each mail (``python/tvm/...``) is applied; the upstream tests the
patches carry are not installed. Making, exporting and checking the series is
:mod:`adreno_ws.series`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from . import WsError
from .base import read_version_py
from .repo import MIRROR_PACKAGE, read_base_pin
from .series import committed_series, series_digest

RECORD = ".adreno_ws_series.json"
_DIFF_HEADER = re.compile(r"^diff --git a/(\S+) b/(\S+)$", re.M)


def touched_paths(patch_text: str) -> list[str]:
    """The paths a mail changes, from its ``diff --git`` lines, in order."""
    out = []
    for a_path, b_path in _DIFF_HEADER.findall(patch_text):
        for path in (a_path, b_path):
            if path not in out:
                out.append(path)
    return out


def _git_apply(patch: Path, cwd: Path, *extra: str) -> str | None:
    """``git apply`` the package part of a mail in ``cwd``; None or git's error line."""
    env = dict(os.environ, GIT_CEILING_DIRECTORIES=str(cwd.parent))
    include = f"--include={MIRROR_PACKAGE.as_posix()}/*"
    cmd = ["git", "apply", "--whitespace=nowarn", include, *extra, str(patch)]
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    except FileNotFoundError as err:
        raise WsError("git is not installed: install git (apt-get install git)") from err
    if proc.returncode == 0:
        return None
    lines = [l for l in proc.stderr.strip().splitlines() if l.startswith("error:")]
    return (lines or proc.stderr.strip().splitlines() or ["git apply failed"])[0]


def _stage(paths: set[str], source, stage: Path) -> None:
    """Copy each of ``paths`` (``python/tvm/...``) that ``source(path)`` finds into ``stage``."""
    for path in paths:
        src = source(path)
        if src is not None and src.is_file():
            dest = stage / path
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dest)


def _apply_all(patches: list[Path], stage: Path, reverse: bool = False) -> tuple[Path, str] | None:
    """Apply (or reverse) the series in ``stage``; the first failing patch and git's error."""
    order = list(reversed(patches)) if reverse else patches
    extra = ("--reverse",) if reverse else ()
    for patch in order:
        if not _touched([patch]):
            continue  # a patch of tests only: nothing of it goes into the package
        error = _git_apply(patch, stage, *extra)
        if error:
            return patch, error
    return None


def _touched(patches: list[Path]) -> set[str]:
    """The package files (``python/tvm/...``) the patches change; tests and docs are skipped."""
    paths: set[str] = set()
    for patch in patches:
        paths.update(
            p
            for p in touched_paths(patch.read_text(encoding="utf-8"))
            if p.startswith(MIRROR_PACKAGE.as_posix() + "/")
        )
    return paths


# ---------------------------------------------------------------------------- apply


@dataclass
class Target:
    """A ``tvm`` package directory to patch, what it is, and its TVM version."""

    path: Path
    kind: str
    version: str | None


def resolve_target(target: Path) -> Target:
    """Accept site-packages, a checkout root, its python/ or the tvm/ directory itself."""
    target = target.resolve()
    for candidate in (target, target / "tvm", target / "python" / "tvm"):
        if (candidate / "__init__.py").is_file() and candidate.name == "tvm":
            target = candidate
            break
    else:
        raise WsError(
            f"{target} is not a tvm package directory (no tvm/__init__.py): pass "
            "site-packages/tvm or a TVM checkout's python/tvm"
        )
    dists = sorted(target.parent.glob("apache_tvm-*.dist-info"))
    if dists:
        meta = dists[-1] / "METADATA"
        version = _metadata_version(meta) if meta.is_file() else None
        return Target(target, "installed wheel (site-packages)", version)
    if target.parent.name == "python" and (target.parent.parent / "include" / "tvm").is_dir():
        return Target(target, "TVM source checkout", read_version_py(target / "_version.py"))
    return Target(target, "tvm tree", read_version_py(target / "_version.py"))


def _metadata_version(meta: Path) -> str | None:
    for line in meta.read_text(encoding="utf-8").splitlines():
        if line.startswith("Version:"):
            return line.split(":", 1)[1].strip()
        if not line.strip():
            break
    return None


def _sha256(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def _read_record(tvm: Path) -> dict | None:
    try:
        return json.loads((tvm / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _record_intact(tvm: Path, record: dict) -> bool:
    return all(_sha256(_in_target(tvm, p)) == h for p, h in record.get("files", {}).items())


def _in_target(tvm: Path, path: str) -> Path:
    """``python/tvm/a/b.py`` -> ``<tvm>/a/b.py``."""
    return tvm / Path(path).relative_to(MIRROR_PACKAGE)


def apply_series(
    repo: Path,
    target_dir: Path,
    force: bool = False,
    skip_version_check: bool = False,
    pristine=None,
) -> str:
    """Apply ``patches/series`` to ``target_dir``; return what was done, or raise WsError.

    ``pristine`` is a callable returning the pristine base directory (used by ``force``).
    Nothing in the target changes unless every patch applies.
    """
    pin = read_base_pin(repo)
    target = resolve_target(target_dir)
    tvm = target.path
    if not skip_version_check:
        if target.version is None:
            raise WsError(
                f"cannot tell which TVM {tvm} is ({target.kind}: no dist-info, no _version.py): "
                f"the series is for {pin.version}; pass --skip-version-check if it is that base"
            )
        if target.version != pin.version:
            raise WsError(
                f"{tvm} is TVM {target.version} ({target.kind}), but the series is made against "
                f"{pin.version} (ci/requirements-base.txt): install {pin.name}=={pin.version} there"
            )
    patches = committed_series(repo)
    digest = series_digest(patches)
    record = _read_record(tvm)
    if record and record.get("series") == digest and _record_intact(tvm, record):
        return f"already applied: {len(patches)} patches in {tvm}"
    paths = _touched(patches)
    restore: set[str] = set()
    if force:
        restore = paths | set((record or {}).get("files", {}))
    with tempfile.TemporaryDirectory(prefix="adreno-ws-apply-") as tmp:
        stage = Path(tmp) / "tree"
        stage.mkdir()
        if restore:
            base = pristine()
            _stage(restore, lambda p: base / p, stage)
            _stage(paths - restore, lambda p: _in_target(tvm, p), stage)
        else:
            _stage(paths, lambda p: _in_target(tvm, p), stage)
        failed = _apply_all(patches, stage)
        if failed:
            return _explain_failure(tvm, patches, paths, record, digest, failed)
        changed = _swap_in(tvm, stage, paths | restore)
    files = {p: _sha256(_in_target(tvm, p)) for p in sorted(paths)}
    record = {
        "base": pin.version,
        "series": digest,
        "patches": [p.name for p in patches],
        "files": files,
    }
    (tvm / RECORD).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return f"applied {len(patches)} patches to {tvm} ({target.kind}, {changed} files changed)"


def _explain_failure(tvm, patches, paths, record, digest, failed) -> str:
    with tempfile.TemporaryDirectory(prefix="adreno-ws-reverse-") as tmp:
        stage = Path(tmp) / "tree"
        stage.mkdir()
        _stage(paths, lambda p: _in_target(tvm, p), stage)
        if _apply_all(patches, stage, reverse=True) is None:
            return f"already applied: {len(patches)} patches in {tvm} (found by reverse check)"
    if record and record.get("series") != digest:
        raise WsError(
            f"{tvm} carries another version of the series ({', '.join(record.get('patches', []))}):"
            " rerun with --force to restore the pristine files first"
        )
    raise WsError(
        f"patches/{failed[0].name} does not apply to {tvm}: {failed[1]}; nothing was changed. "
        "If the target was edited, reinstall the base or rerun with --force; if the patch is "
        "stale, re-export it"
    )


def _swap_in(tvm: Path, stage: Path, paths: set[str]) -> int:
    """Move the staged results into the target; on any error put the old files back."""
    saved: dict[Path, bytes | None] = {}
    changed = 0
    try:
        for path in sorted(paths):
            staged, dest = stage / path, _in_target(tvm, path)
            old = dest.read_bytes() if dest.is_file() else None
            new = staged.read_bytes() if staged.is_file() else None
            if old == new:
                continue
            saved[dest] = old
            _write_or_remove(dest, new)
            changed += 1
    except OSError as err:
        for dest, old in saved.items():
            _write_or_remove(dest, old)
        raise WsError(f"could not write {tvm}: {err}; the old files were put back") from err
    return changed


def _write_or_remove(dest: Path, data: bytes | None) -> None:
    if data is None:
        dest.unlink(missing_ok=True)
        return
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.adreno-ws-tmp")
    tmp.write_bytes(data)
    os.replace(tmp, dest)
