"""The patch series on git: materialize, export, check, rebase, fold.

``patches/`` holds ``git format-patch`` mails and ``series`` (their order). They are the
source of truth:

* ``materialize DIR``: a git repository whose first commit is the pristine base (the wheel's
  ``tvm/`` tree at ``python/tvm``, tagged ``adreno-ws-base``) and which has one commit per
  patch, made by ``git am``. Contributors change the series there with git itself.
* ``export DIR``: ``git format-patch`` of ``adreno-ws-base..HEAD`` back into ``patches/``, and
  the files the series adds (new to TVM) into the workspace at their upstream paths, the
  *mirror*. Changes to upstream files exist only as diffs in the patches.
* ``check``: the patches apply in order to the pristine base; they are what ``format-patch``
  writes for the commits they make; the mirror equals the tip; and every patch's own tests
  (the test files it adds or changes) pass with the series applied up to that patch.
* ``rebase DIR``: move the series onto a newer base with git's three-way merge.
* ``fold DIR``: turn workspace commits that edited mirror files into ``fixup!`` commits of the
  patches that own those files.
"""

from __future__ import annotations

import hashlib
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path

from . import WsError
from .base import read_version_py
from .gitrepo import BASE_TAG, first_error, git, isolated_env
from .opencl import with_venv_icds
from .prlint import lint_stack, missing_tools
from .repo import (
    BASE_DIST,
    MIRROR_PACKAGE,
    PATCH_DIR,
    SERIES_FILE,
    _ignored,
    find_venv_tvm,
    read_base_pin,
)
from .report import Failure
from .stack import STACK_FILE, file_changes, read_stack

#: Where the mirror lives: the package, upstream's test tree (except the workspace's own
#: end-to-end suite, which is not part of the series), and the compiler C++ the series adds
#: (built by ``setup`` into an extension library, see ``compiler_ext``).
MIRROR_ROOTS = ("python", "tests/python", "src/relax/backend/adreno")
WORKSPACE_TESTS = ("tests/python/relax/texture", "tests/python/runtime/opencl")
PATCH_GLOB = "[0-9][0-9][0-9][0-9]-*.patch"
#: Every option that decides the bytes of a mail, spelled out (the user's config is hidden too).
FORMAT_PATCH_OPTIONS = (
    "--no-signature",
    "--zero-commit",
    "--abbrev=12",
    "--numbered",
    "--subject-prefix=PATCH",
    "--no-cover-letter",
    "--no-thread",
    "--no-renames",
    "--diff-algorithm=myers",
    "--unified=3",
    "--stat=72",
    "--encode-email-headers",
    "--no-attach",
)
MATERIALIZE_HINT = (
    "make the change in a materialized repository (`python -m adreno_ws series materialize DIR`),"
    " commit it there and run `python -m adreno_ws series export DIR`"
)
_CFG = "adreno-ws"
_EXCLUDE = "__pycache__/\n*.pyc\n*.so\n*.so.*\n.pytest_cache/\n"


# ---------------------------------------------------------------------------- the base


def pin_label(repo: Path) -> str:
    """``apache-tvm==<version>``: the base the workspace pins."""
    return f"{BASE_DIST}=={read_base_pin(repo).version}"


def check_base(repo: Path, base: Path) -> None:
    """Raise unless ``base`` (holding ``python/tvm``) is the TVM version the workspace pins."""
    pin = read_base_pin(repo)
    found = read_version_py(base / "python" / "tvm" / "_version.py")
    if found != pin.version:
        raise WsError(
            f"the base at {base} is TVM {found or '(unknown: no _version.py)'}, but "
            f"ci/requirements-base.txt pins {pin.version}: pass the pinned base "
            "(`python -m adreno_ws base`), or move the series with `series rebase`"
        )


def _commit_tree(
    dest: Path, tree_root: Path, message: str, parent: str | None, index: Path | None = None
) -> str:
    """Commit ``tree_root/python/tvm`` as the whole tree of a new commit; return its id."""
    env = isolated_env()
    with tempfile.TemporaryDirectory(prefix="adreno-ws-index-") as tmp:
        env["GIT_INDEX_FILE"] = str(index or Path(tmp) / "index")
        gitdir = git(dest, "rev-parse", "--absolute-git-dir", env=env).stdout.strip()
        git(
            tree_root,
            f"--git-dir={gitdir}",
            f"--work-tree={tree_root}",
            "add",
            "-A",
            "--",
            "python/tvm",
            env=env,
        )
        tree = git(dest, "write-tree", env=env).stdout.strip()
    args = ["commit-tree", tree, "-m", message] + (["-p", parent] if parent else [])
    return git(dest, *args, env=env).stdout.strip()


def _base_message(label: str) -> str:
    return f"Pristine base: {label}\n\nThe python/tvm tree only."


def _base_store(base: Path, label: str) -> Path | None:
    """A bare repository beside the base holding its commit, made once (None: read-only).

    Its index records the base's files, so a base changed since is noticed (``git status``)
    and the store is made again.
    """
    store = base / "series.git"
    env = dict(isolated_env(), GIT_INDEX_FILE=str(store / "index"))
    if store.is_dir():
        found = git(
            store, "rev-parse", "-q", "--verify", f"refs/tags/{BASE_TAG}", env=env, check=False
        )
        status = git(
            base,
            f"--git-dir={store}",
            f"--work-tree={base}",
            "status",
            "--porcelain",
            "-uall",
            "--",
            "python/tvm",
            env=env,
            check=False,
        )
        if found.returncode == 0 and status.returncode == 0 and not status.stdout.strip():
            return store
    try:
        shutil.rmtree(store, ignore_errors=True)
        store.mkdir()
        git(store, "init", "-q", "--bare", env=env)
        (store / "info").mkdir(exist_ok=True)
        (store / "info" / "exclude").write_text(_EXCLUDE, encoding="utf-8")
        commit = _commit_tree(store, base, _base_message(label), None, index=store / "index")
        git(store, "tag", "-f", BASE_TAG, commit, env=env)
    except (OSError, WsError):
        shutil.rmtree(store, ignore_errors=True)
        return None
    return store


def init_base_repo(dest: Path, base: Path, label: str, shared: bool = False) -> str:
    """Create ``dest`` as a git repository whose one commit is the base; return its id.

    The base commit is made once per base (``<base>/series.git``, fixed identity and date, so
    its id is always the same) and cloned from there; ``shared`` borrows its objects instead of
    copying them (for scratch repositories that live shorter than the base).
    """
    if dest.exists() and any(dest.iterdir()):
        raise WsError(f"{dest} exists and is not empty: pass a new directory")
    env = isolated_env()
    store = _base_store(base, label)
    if store is not None:
        dest.parent.mkdir(parents=True, exist_ok=True)
        git(
            dest.parent,
            "clone",
            "-q",
            "--no-checkout",
            *(["--shared"] if shared else []),
            str(store),
            str(dest),
            env=env,
        )
        git(dest, "remote", "remove", "origin", env=env)
        commit = git(dest, "rev-parse", f"{BASE_TAG}^{{commit}}", env=env).stdout.strip()
        git(dest, "checkout", "-q", "-b", "series", commit, env=env)
    else:
        dest.mkdir(parents=True, exist_ok=True)
        git(dest, "init", "-q", "-b", "series", env=env)
        commit = _commit_tree(dest, base, _base_message(label), None)
        git(dest, "update-ref", "refs/heads/series", commit, env=env)
        git(dest, "reset", "-q", "--hard", commit, env=env)
        git(dest, "tag", "-f", BASE_TAG, commit, env=env)
    (dest / ".git" / "info").mkdir(exist_ok=True)
    (dest / ".git" / "info" / "exclude").write_text(_EXCLUDE, encoding="utf-8")
    git(dest, "config", f"{_CFG}.base", label, env=env)
    return commit


# ---------------------------------------------------------------------------- patches/


def committed_series(repo: Path) -> list[Path]:
    """The patch files ``patches/series`` lists, in order."""
    series = repo / SERIES_FILE
    if not series.is_file():
        raise WsError(f"{SERIES_FILE} is missing: {MATERIALIZE_HINT}")
    names = [
        line.strip()
        for line in series.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    missing = [n for n in names if not (repo / PATCH_DIR / n).is_file()]
    if missing:
        raise WsError(*(f"{SERIES_FILE} lists {n}, which does not exist" for n in missing))
    stray = sorted(p.name for p in (repo / PATCH_DIR).glob(PATCH_GLOB) if p.name not in names)
    if stray:
        raise WsError(*(f"patches/{n} is not listed in {SERIES_FILE}: remove it" for n in stray))
    return [repo / PATCH_DIR / n for n in names]


def series_digest(patches: list[Path]) -> str:
    """One hash over the series, names and contents, in order."""
    digest = hashlib.sha256()
    for patch in patches:
        digest.update(patch.name.encode() + b"\0" + patch.read_bytes() + b"\0")
    return digest.hexdigest()


def user_env() -> dict[str, str]:
    """The contributor's environment; ``ADRENO_WS_IDENTITY="Name <email>"`` fixes an identity."""
    env = dict(os.environ)
    ident = os.environ.get("ADRENO_WS_IDENTITY", "").strip()
    if ident:
        if not (ident.endswith(">") and " <" in ident):
            raise WsError(f"ADRENO_WS_IDENTITY={ident!r} is not 'Name <email>': fix it")
        name, email = ident[:-1].split(" <", 1)
        for role in ("AUTHOR", "COMMITTER"):
            env[f"GIT_{role}_NAME"], env[f"GIT_{role}_EMAIL"] = name, email
    return env


def _require_identity(dest: Path, env: dict[str, str]) -> None:
    proc = git(dest, "var", "GIT_COMMITTER_IDENT", env=env, check=False)
    if proc.returncode != 0:
        raise WsError(
            "git has no identity for your commits: run `git config --global user.name 'Your "
            "Name'` and `git config --global user.email you@example.com` (or set "
            "ADRENO_WS_IDENTITY='Name <email>')"
        )


def am_series(dest: Path, patches: list[Path], env: dict[str, str]) -> None:
    """``git am`` the patches in order; the first that fails raises WsError naming it."""
    if not patches:
        return
    proc = git(dest, "am", "-q", "--keep-non-patch", *map(str, patches), env=env, check=False)
    if proc.returncode == 0:
        return
    index = 0
    next_file = dest / ".git" / "rebase-apply" / "next"
    if next_file.is_file():
        index = int(next_file.read_text().strip() or 1) - 1
    git(dest, "am", "--abort", env=env, check=False)
    name = patches[min(index, len(patches) - 1)].name
    raise WsError(
        f"patches/{name} does not apply on the pristine base with the patches before it: "
        f"{first_error(proc)}; {MATERIALIZE_HINT}"
    )


def format_series(dest: Path) -> dict[str, bytes]:
    """``git format-patch`` of ``adreno-ws-base..HEAD``: ``{file name: mail}`` plus ``series``."""
    with tempfile.TemporaryDirectory(prefix="adreno-ws-mails-") as tmp:
        env = isolated_env(identity=False)
        git(
            dest,
            "format-patch",
            "-q",
            *FORMAT_PATCH_OPTIONS,
            "-o",
            tmp,
            f"{BASE_TAG}..HEAD",
            env=env,
        )
        names = sorted(p.name for p in Path(tmp).glob("*.patch"))
        out = {name: (Path(tmp) / name).read_bytes() for name in names}
    out[SERIES_FILE.name] = "".join(f"{name}\n" for name in names).encode("utf-8")
    return out


# ---------------------------------------------------------------------------- materialized repos


def commits(dest: Path, env=None) -> list[str]:
    """The series' commits in ``dest``, oldest first."""
    out = git(dest, "rev-list", "--reverse", f"{BASE_TAG}..HEAD", env=env).stdout
    return out.split()


def added_files(dest: Path, rev: str = "HEAD") -> dict[str, bytes]:
    """The files ``rev`` has that the base does not: the mirror's content."""
    names = git(
        dest, "diff", "--name-only", "--no-renames", "--diff-filter=A", "-z", BASE_TAG, rev
    ).stdout.split("\0")
    return {name: show(dest, rev, name) for name in names if name}


def show(dest: Path, rev: str, path: str) -> bytes:
    """The content of ``path`` at ``rev``."""
    proc = subprocess.run(
        ["git", "show", f"{rev}:{path}"], cwd=dest, capture_output=True, check=False
    )
    if proc.returncode != 0:
        raise WsError(f"git show {rev}:{path} failed in {dest}: {proc.stderr.decode().strip()}")
    return proc.stdout


def _show_or_none(dest: Path, rev: str, path: str) -> bytes | None:
    proc = subprocess.run(
        ["git", "show", f"{rev}:{path}"], cwd=dest, capture_output=True, check=False
    )
    return proc.stdout if proc.returncode == 0 else None


def require_materialized(dest: Path) -> None:
    """Raise unless ``dest`` is a repository made by ``materialize``, with no git op pending."""
    if not (dest / ".git").is_dir():
        raise WsError(f"{dest} is not a git repository: make one with `series materialize {dest}`")
    if git(dest, "rev-parse", "-q", "--verify", f"refs/tags/{BASE_TAG}", check=False).returncode:
        raise WsError(f"{dest} has no tag {BASE_TAG}: it was not made by `series materialize`")
    gitdir = dest / ".git"
    for marker, what in (
        ("rebase-merge", "a rebase"),
        ("rebase-apply", "a rebase or git am"),
        ("MERGE_HEAD", "a merge"),
        ("CHERRY_PICK_HEAD", "a cherry-pick"),
    ):
        if (gitdir / marker).exists():
            raise WsError(f"{dest} is in the middle of {what}: finish it (--continue) or --abort")


def require_clean(dest: Path) -> None:
    """Raise when ``dest`` has changes that are not committed."""
    dirty = git(dest, "status", "--porcelain", "--untracked-files=no").stdout.strip()
    if dirty:
        raise WsError(
            f"{dest} has uncommitted changes ({dirty.splitlines()[0].strip()} ...): commit them "
            "(git commit --fixup=<commit of the patch>) or stash them first"
        )


def materialize(repo: Path, base: Path, dest: Path) -> str:
    """Make ``dest``: the base commit, then one commit per patch by ``git am``."""
    check_base(repo, base)
    patches = committed_series(repo)
    dest = dest.resolve()
    created = not dest.exists()
    env = user_env()
    try:
        init_base_repo(dest, base, pin_label(repo))
        _require_identity(dest, env)
        am_series(dest, patches, env)
    except WsError:
        if created:
            shutil.rmtree(dest, ignore_errors=True)
        raise
    git(dest, "config", f"{_CFG}.workspace", str(repo))
    git(dest, "config", f"{_CFG}.synced", git(dest, "rev-parse", "HEAD").stdout.strip())
    git(dest, "config", f"{_CFG}.digest", series_digest(patches))
    return f"materialized {len(patches)} patches in {dest} (branch series, base tag {BASE_TAG})"


# ---------------------------------------------------------------------------- the mirror


def workspace_mirror(repo: Path) -> list[str]:
    """The workspace's mirror files: everything under MIRROR_ROOTS (POSIX, sorted)."""
    out = []
    for root in MIRROR_ROOTS:
        top = repo / root
        if not top.is_dir():
            continue
        for path in top.rglob("*"):
            rel = path.relative_to(repo)
            own = any(rel.as_posix().startswith(w + "/") for w in WORKSPACE_TESTS)
            if path.is_file() and not own and not _ignored(rel):
                out.append(rel.as_posix())
    return sorted(out)


def mirror_problems(repo: Path, tip: dict[str, bytes]) -> list[str]:
    """Every way the workspace mirror differs from the files the series adds."""
    problems = []
    have = set(workspace_mirror(repo))
    for path in sorted(have | set(tip)):
        if path not in tip:
            problems.append(
                f"{path} is in the mirror but the series does not add it (a change to an upstream "
                f"file lives only in a patch): {MATERIALIZE_HINT}"
            )
        elif path not in have:
            problems.append(
                f"{path} is added by the series but missing from the mirror: "
                "run `series export DIR`, or `series check --write-mirror`"
            )
        elif (repo / path).read_bytes() != tip[path]:
            problems.append(
                f"{path} differs from the series tip (edited without export?): {MATERIALIZE_HINT}"
            )
    return problems


def export(repo: Path, dest: Path) -> list[str]:
    """Write ``dest``'s series into ``patches/`` and its new files into the mirror."""
    dest = dest.resolve()
    require_materialized(dest)
    require_clean(dest)
    label = git(dest, "config", f"{_CFG}.base", check=False).stdout.strip()
    if label != pin_label(repo):
        raise WsError(
            f"{dest} is based on {label or 'an unknown base'}, but the workspace pins "
            f"{pin_label(repo)} (ci/requirements-base.txt): update the pin to the new base "
            "first (export writes patches against the pinned base only)"
        )
    digest = git(dest, "config", f"{_CFG}.digest", check=False).stdout.strip()
    try:
        current = series_digest(committed_series(repo))
    except WsError:
        current = ""
    if digest and current and digest != current:
        raise WsError(
            f"patches/ changed since {dest} was materialized or last exported (a pull?): "
            f"materialize it again and redo your commits there (git cherry-pick), nothing written"
        )
    mails = format_series(dest)
    tip = added_files(dest)
    synced = git(dest, "config", f"{_CFG}.synced", check=False).stdout.strip()
    lost = []
    for path in workspace_mirror(repo):
        now = (repo / path).read_bytes()
        # Safe to replace: what the series had when DIR was materialized or last exported.
        if tip.get(path) != now and (not synced or _show_or_none(dest, synced, path) != now):
            lost.append(
                f"{path} was edited in the workspace and the series does not have the edit: "
                f"copy it into {dest}, commit it there (git commit --fixup=...) and export "
                f"again, or `git checkout -- {path}`; nothing was written"
            )
    if lost:
        raise WsError(*lost)
    changed = _write_series(repo, mails) + _write_mirror(repo, tip)
    git(dest, "config", f"{_CFG}.synced", git(dest, "rev-parse", "HEAD").stdout.strip())
    git(dest, "config", f"{_CFG}.digest", series_digest(committed_series(repo)))
    return changed


def _write_series(repo: Path, mails: dict[str, bytes]) -> list[str]:
    pdir = repo / PATCH_DIR
    pdir.mkdir(exist_ok=True)
    changed = []
    for stale in sorted(pdir.glob(PATCH_GLOB)):
        if stale.name not in mails:
            stale.unlink()
            changed.append(f"removed patches/{stale.name}")
    for name, data in mails.items():
        path = pdir / name
        if not path.is_file() or path.read_bytes() != data:
            path.write_bytes(data)
            changed.append(f"wrote patches/{name}")
    return changed


def _write_mirror(repo: Path, tip: dict[str, bytes]) -> list[str]:
    changed = []
    for path in workspace_mirror(repo):
        if path not in tip:
            (repo / path).unlink()
            changed.append(f"removed {path}")
    for path, data in sorted(tip.items()):
        dest = repo / path
        if not dest.is_file() or dest.read_bytes() != data:
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data)
            changed.append(f"wrote {path}")
    return changed


# ---------------------------------------------------------------------------- check


@dataclass
class CheckResult:
    """What ``check`` found: problems (empty when all is well) and what it ran."""

    problems: list[str]
    notes: list[str]


def check(  # pylint: disable=too-many-arguments
    repo: Path,
    base: Path,
    venv: Path | None = None,
    run_tests: bool = True,
    log_dir: Path | None = None,
    progress=print,
    only: list[str] | None = None,
    jobs: int = 1,
    lint: bool = True,
) -> CheckResult:
    """Apply, re-export, compare the mirror, then test every prefix (see the module doc).

    With ``patches/stack.toml`` the prefixes are the pull requests': each PR's tests (the
    test files its patches add or change) run at its last patch, and, with ``lint``, each PR
    is linted at its tip (:mod:`adreno_ws.prlint`) while the tests run. ``only`` selects
    patches (or PRs) by number or name prefix; ``jobs`` scratch copies test at once.
    """
    notes: list[str] = []
    check_base(repo, base)
    patches = committed_series(repo)
    with tempfile.TemporaryDirectory(prefix="adreno-ws-check-") as tmp:
        # Work on a copy, so that a checkout or rebase during the (long) test runs is harmless.
        (Path(tmp) / "mails").mkdir()
        for patch in patches:
            shutil.copyfile(patch, Path(tmp) / "mails" / patch.name)
        patches = [Path(tmp) / "mails" / patch.name for patch in patches]
        dest = Path(tmp) / "series"
        init_base_repo(dest, base, pin_label(repo), shared=True)
        am_series(dest, patches, isolated_env())
        mails = format_series(dest)
        problems = []
        for patch in patches:
            if mails.get(patch.name) != patch.read_bytes():
                problems.append(
                    f"patches/{patch.name} is not what `git format-patch` writes for the commit "
                    f"it makes (edited by hand?): {MATERIALIZE_HINT}"
                )
        if mails[SERIES_FILE.name] != (repo / SERIES_FILE).read_bytes():
            problems.append(
                f"{SERIES_FILE} does not list the patches as export names them: "
                f"{MATERIALIZE_HINT}"
            )
        problems += mirror_problems(repo, added_files(dest))
        prs = None
        try:
            prs = read_stack(repo, len(patches))
        except WsError as err:
            problems += err.problems
        notes.append(f"{len(patches)} patches apply to the pristine base and re-export unchanged")
        if prs:
            notes.append(f"{len(prs)} PRs in {STACK_FILE}")
        if problems or not run_tests:
            return CheckResult(problems, notes)
        if venv is None or not venv.is_dir():
            return CheckResult(
                [
                    f"no virtual environment at {venv} to run the patches' tests in: run "
                    "`python -m adreno_ws setup` (or pass --no-tests)"
                ],
                notes,
            )
        checks = PrefixChecks(repo, dest, patches, venv, Path(tmp), log_dir or Path(tmp) / "logs")
        return CheckResult(*checks.run(prs, progress, only, jobs, lint, notes))


def is_test_file(path: str) -> bool:
    """A test module at upstream's test paths: ``tests/.../test_*.py``."""
    return (
        path.startswith("tests/") and Path(path).name.startswith("test_") and path.endswith(".py")
    )


def tests_in(steps: list[list[tuple[str, str]]]) -> list[str]:
    """The test files that consecutive commits (their ``(status, path)`` changes) add or
    change and do not delete again, in the order they first appear."""
    found: dict[str, None] = {}
    for changes in steps:
        for status, path in changes:
            if status == "D":
                found.pop(path, None)
            elif is_test_file(path):
                found[path] = None
    return list(found)


@dataclass
class TestUnit:
    """Tests that run together at one position of the series: one patch's, or one PR's."""

    #: How a failure names it: ``patches/0002-x.patch`` or ``PR 2 (slug)``.
    name: str
    #: The patch's or the PR's number (``--only`` matches it, or a prefix of ``key``).
    number: int
    #: The patch's file name or the PR's slug.
    key: str
    #: The position (from 1) of the patch after which the tests run.
    last: int
    #: The test files.
    tests: list[str]
    #: The stem of its log file.
    log: str

    def failure(self, total: int, first: str, summary: str) -> str:
        """What failed, for the one line naming the unit."""
        if self.name.startswith("PR "):
            where = f"at its tip (patch {self.last} of {total})"
            return f"its tests fail {where}: {first} ({summary})"
        where = f"at its position in the series ({self.last} of {total})"
        return f"its own tests fail {where}: {first} ({summary})"


class PrefixChecks:
    """The per-patch (or per-PR) part of ``check``: tests at each position, lint per PR.

    Parameters
    ----------
    repo : Path
        The workspace.
    dest : Path
        The scratch repository ``check`` materialized.
    patches : list of Path
        The mails, in series order.
    venv : Path
        The virtual environment to test (and lint) with.
    tmp, log_dir : Path
        Scratch space, and where the logs go.
    """

    def __init__(self, repo, dest, patches, venv, tmp, log_dir):
        # pylint: disable=too-many-arguments
        self.repo, self.dest, self.venv, self.tmp, self.log_dir = repo, dest, venv, tmp, log_dir
        self.patches = patches
        self.series = commits(dest)
        self.changes = [file_changes(dest, f"{commit}^", commit) for commit in self.series]
        log_dir.mkdir(parents=True, exist_ok=True)

    def units(self, prs) -> list[TestUnit]:
        """Per patch without a stack, else per PR; only those that have tests."""
        if prs is None:
            units = [
                TestUnit(f"patches/{p.name}", i, p.name, i, tests_in([self.changes[i - 1]]), p.stem)
                for i, p in enumerate(self.patches, 1)
            ]
        else:
            units = [
                TestUnit(
                    pr.label,
                    pr.number,
                    pr.slug,
                    pr.last,
                    tests_in(self.changes[pr.first - 1 : pr.last]),
                    f"pr-{pr.number:02d}-{pr.slug}",
                )
                for pr in prs
            ]
        return [unit for unit in units if unit.tests]

    def lint_problem(self) -> str | None:
        """Why the PRs cannot be linted, or None."""
        missing = missing_tools(self.venv / "bin" / "python")
        if missing:
            return (
                f"{' and '.join(missing)} not installed in {self.venv} (series check lints "
                "each PR with them): run `python -m adreno_ws setup`, which installs "
                "ci/requirements-lint.txt, or pass --no-lint"
            )
        if not (self.repo / "pylintrc").is_file():
            return (
                "pylintrc is missing from the workspace (series check lints each PR with "
                "it): restore it from git, or pass --no-lint"
            )
        return None

    def start_lint(self, prs) -> tuple:
        """Lint ``prs`` in a thread: (the thread, {PR number: Failure}, errors)."""
        failures: dict[int, Failure] = {}
        errors: list[str] = []

        def run_lint():
            try:
                failures.update(
                    lint_stack(
                        self.dest,
                        self.series,
                        prs,
                        self.venv / "bin" / "python",
                        self.repo / "pylintrc",
                        self.log_dir,
                        self.tmp / "lint-tree",
                    )
                )
            except WsError as err:
                errors.extend(err.problems)

        # Lint works beside the tests: one more process, its pylint runs cost about as much
        # as a PR's tests (see prlint's doc).
        thread = threading.Thread(target=run_lint)
        thread.start()
        return thread, failures, errors

    def run(self, prs, progress, only, jobs, lint, notes) -> tuple[list[str], list[str]]:
        """Run the tests (and lint, per PR); return (problems, notes)."""
        # pylint: disable=too-many-arguments,too-many-locals

        def chosen(number, key):
            return not only or any(_selects(o, number, key) for o in only)

        units = [u for u in self.units(prs) if chosen(u.number, u.key)]
        linted = [p for p in prs if chosen(p.number, p.slug)] if prs and lint else []
        started, cpu_before = time.time(), _children_cpu()
        thread, lint_failures, lint_errors = None, {}, []
        if linted:
            problem = self.lint_problem()
            if problem:
                return [problem], notes
            thread, lint_failures, lint_errors = self.start_lint(linted)
        jobs = max(1, min(jobs, len(units) or 1))
        test_failures = prefix_tests(self, units, progress, jobs)
        if thread is not None:
            thread.join()
        if lint_errors:
            return lint_errors, notes
        names = {u.number: u.name for u in units} | {p.number: p.label for p in linted}
        # The first unit whose tests fail (later ones may fail for its reason), and every PR
        # whose lint fails: one line each.
        failed = dict(sorted(test_failures.items())[:1])
        problems = []
        for number in sorted(set(failed) | set(lint_failures)):
            parts = [f for f in (failed.get(number), lint_failures.get(number)) if f]
            problems.append(
                f"{names[number]}: {'; '.join(p.what for p in parts)}; "
                f"log: {', '.join(str(p.log) for p in parts)}"
            )
        if problems:
            return problems, notes
        notes.append(
            (
                f"the tests of {len(units)} PRs pass at their tips"
                if prs
                else f"the own tests of {len(units)} patches pass at their position in the series"
            )
            + (f", {len(linted)} PRs lint clean" if linted else "")
            + f" ({time.time() - started:.0f} s, {_children_cpu() - cpu_before:.0f} CPU s, "
            f"{jobs} job{'s' if jobs > 1 else ''})"
        )
        return [], notes


def _place(dest: Path, commit: str, path: str, target: Path, status: str, stamp: float) -> None:
    if status == "D":
        target.unlink(missing_ok=True)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.is_symlink():
        target.unlink()
    target.write_bytes(show(dest, commit, path))
    # A new mtime per step, so that no stale .pyc of an earlier prefix is ever used.
    os.utime(target, (stamp, stamp))


def _scratch_tvm(installed: Path, dest: Path, site: Path) -> Path:
    """A copy of the installed ``tvm`` (sources copied, libraries linked), made pristine."""
    scratch = site / "tvm"

    def copy(src, dst):
        if src.endswith(".py"):
            shutil.copy2(src, dst)  # the mtime too: byte code cached by an earlier run stays valid
        else:
            os.symlink(os.path.realpath(src), dst)

    shutil.copytree(
        installed,
        scratch,
        copy_function=copy,
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )
    touched = git(
        dest,
        "diff",
        "--name-only",
        "--no-renames",
        "-z",
        BASE_TAG,
        "HEAD",
        "--",
        MIRROR_PACKAGE.as_posix(),
    ).stdout.split("\0")
    pristine = {p for p in touched if p}
    stamp = time.time() - 10
    for path in sorted(pristine):
        target = scratch / Path(path).relative_to(MIRROR_PACKAGE)
        in_base = git(dest, "cat-file", "-e", f"{BASE_TAG}:{path}", check=False).returncode == 0
        _place(dest, BASE_TAG, path, target, "M" if in_base else "D", stamp)
    return scratch


def prefix_tests(checks: PrefixChecks, units: list[TestUnit], progress, jobs: int) -> dict:
    """Advance scratch ``tvm`` copies commit by commit and run each unit's tests at its place.

    ``jobs`` copies work at once, each advancing through the series and running every
    ``jobs``-th unit's tests; a copy stops at its first failure, and every copy stops past the
    earliest failure found. Returns ``{unit number: Failure}``.
    """
    dest, series, changes, tmp = checks.dest, checks.series, checks.changes, checks.tmp
    groups = [{u.last: u for u in units[w::jobs]} for w in range(jobs)]
    (tmp / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n")
    installed = find_venv_tvm(checks.venv)
    failures: dict[int, Failure] = {}
    failed_at: list[int] = []

    def worker(number: int) -> None:
        # The scratch package sits at the same place every run, and its byte code is kept
        # (PYTHONPYCACHEPREFIX): only the files the series changes are compiled again.
        site, work = checks.log_dir / f"site{number}", tmp / f"work{number}"
        shutil.rmtree(site, ignore_errors=True)
        site.mkdir(parents=True)
        work.mkdir()
        scratch = _scratch_tvm(installed, dest, site)
        env = dict(
            os.environ,
            PYTHONPATH=str(site),
            PYTHONPYCACHEPREFIX=str(checks.log_dir / f"pycache{number}"),
        )
        env.setdefault("TVM_OPENCL_DEVICE", "portable")
        with_venv_icds(env, checks.venv)
        mine = groups[number]
        for index, commit in enumerate(series, 1):
            if index > max(mine, default=0) or failed_at and index > min(failed_at):
                break
            stamp = time.time() + index
            for status, path in changes[index - 1]:
                if path.startswith(MIRROR_PACKAGE.as_posix() + "/"):
                    target = scratch / Path(path).relative_to(MIRROR_PACKAGE)
                elif path.startswith("tests/"):
                    target = work / path
                else:
                    continue
                _place(dest, commit, path, target, status, stamp)
            if index not in mine:
                continue
            failure = _run_tests(checks, work, env, mine[index], progress)
            if failure:
                failures[mine[index].number] = failure
                failed_at.append(index)
                break
        shutil.rmtree(site, ignore_errors=True)

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(jobs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return failures


def _run_tests(checks: PrefixChecks, work: Path, env, unit: TestUnit, progress) -> Failure | None:
    """Run one unit's tests in ``work``; None, or what failed."""
    log = checks.log_dir / f"{unit.log}.log"
    cmd = [
        str(checks.venv / "bin" / "python"),
        "-m",
        "pytest",
        "-q",
        "-rfE",
        "-c",
        str(checks.tmp / "pytest.ini"),
        "--rootdir",
        str(work),
        *unit.tests,
    ]
    clock = time.time()
    proc = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, check=False)
    log.write_text(proc.stdout + proc.stderr, encoding="utf-8")
    summary = (proc.stdout.strip().splitlines() or ["(no output)"])[-1]
    total = len(checks.series)
    progress(
        f"series check: {unit.last:2d}/{total} {unit.name}: {summary} "
        f"({time.time() - clock:.0f} s)"
    )
    if proc.returncode == 0:
        return None
    failed = [
        l.split(" ", 1)[1] for l in proc.stdout.splitlines() if l.startswith(("FAILED ", "ERROR "))
    ]
    first = failed[0].split(" - ")[0] if failed else summary
    return Failure(unit.failure(total, first, summary), log)


def _selects(selector: str, index: int, name: str) -> bool:
    return (selector.isdigit() and int(selector) == index) or name.startswith(selector)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


# ---------------------------------------------------------------------------- rebase


def tree_from_wheel(wheel: Path, out: Path) -> tuple[Path, str]:
    """Unpack a wheel's ``tvm/`` as ``out/python/tvm``; return (out, its label)."""
    from .base import _extract, wheel_version  # pylint: disable=import-outside-toplevel

    version = wheel_version(wheel)
    _extract(wheel, out, version)
    return out, f"{BASE_DIST}=={version}"


def tree_from_checkout(tvm_dir: Path) -> tuple[Path, str]:
    """A TVM checkout's ``python/tvm`` (or a tree holding it): (the root, its label)."""
    tvm_dir = tvm_dir.resolve()
    for root in (tvm_dir, tvm_dir.parent.parent):
        if (root / "python" / "tvm" / "__init__.py").is_file() and (
            root == tvm_dir or tvm_dir.name == "tvm"
        ):
            version = read_version_py(root / "python" / "tvm" / "_version.py") or "unknown"
            return root, f"tree:{root} (TVM {version})"
    raise WsError(
        f"{tvm_dir} holds no python/tvm/__init__.py: pass a TVM checkout or its " "python/tvm"
    )


def rebase(dest: Path, new_root: Path, label: str) -> list[str]:
    """Move ``dest``'s series onto the tree at ``new_root``; report the patches that conflict.

    A scratch clone first replays every patch on the new base (skipping the ones that
    conflict) to list all conflicts; then ``git rebase`` runs in ``dest`` itself and, on a
    conflict, stops there for the contributor to resolve with git.
    """
    dest = dest.resolve()
    require_materialized(dest)
    require_clean(dest)
    env = user_env()
    _require_identity(dest, env)
    old_base = git(dest, "rev-parse", BASE_TAG).stdout.strip()
    branch = git(dest, "symbolic-ref", "-q", "--short", "HEAD", check=False).stdout.strip()
    if not branch:
        raise WsError(f"{dest} has a detached HEAD: check out the series branch first")
    new_base = _commit_tree(dest, new_root, _base_message(label), old_base)
    series = commits(dest)
    report, conflicts = [], []
    with tempfile.TemporaryDirectory(prefix="adreno-ws-rebase-") as tmp:
        clone = Path(tmp) / "clone"
        git(Path(tmp), "clone", "-q", "--shared", "--no-checkout", str(dest), str(clone))
        git(clone, "checkout", "-q", "--detach", new_base)
        for index, commit in enumerate(series, 1):
            proc = git(
                clone, "cherry-pick", "--allow-empty", commit, env=isolated_env(), check=False
            )
            if proc.returncode != 0:
                files = git(clone, "diff", "--name-only", "--diff-filter=U").stdout.split()
                subject = git(dest, "log", "-1", "--format=%s", commit).stdout.strip()
                conflicts.append(index)
                report.append(
                    f'conflict: patch {index:04d} "{subject}" in '
                    f"{', '.join(files) or 'its changes'}"
                )
                git(clone, "cherry-pick", "--abort", check=False)
    git(dest, "tag", "-f", BASE_TAG, new_base)
    git(dest, "config", f"{_CFG}.base", label)
    proc = git(dest, "rebase", "-q", "--onto", new_base, old_base, branch, env=env, check=False)
    if proc.returncode == 0:
        report.append(f"rebased {len(series)} patches onto {label}: no conflicts")
        return report
    report.append(
        f"{len(conflicts)} of {len(series)} patches conflict on {label}"
        + (" (later ones were tried without the earlier conflicting ones)" if conflicts else "")
    )
    report.append(
        f"git rebase stopped at the first conflict in {dest}: resolve it there "
        "(git status; edit; git add; git rebase --continue), then export"
    )
    raise WsError(*report)


# ---------------------------------------------------------------------------- fold


def _topics_at(repo: Path, rev: str) -> dict[str, dict]:
    proc = git(repo, "show", f"{rev}:patches/topics.toml", check=False)
    if proc.returncode != 0:
        return {}
    try:
        return {t["name"]: t for t in tomllib.loads(proc.stdout).get("topic", [])}
    except (tomllib.TOMLDecodeError, KeyError):
        return {}


def _fold_file(repo: Path, dest: Path, old: str, new: str, path: str) -> str:
    """Bring ``path`` of the workspace from ``old`` to ``new`` in ``dest``, three-way.

    The workspace holds whole files (the mirror used to hold complete copies of upstream
    files), so the change merges file by file (``git merge-file``) into the series' version.
    Returns 'same' (nothing to do), 'staged' or 'conflict'.
    """
    before, after = _show_or_none(repo, old, path), _show_or_none(repo, new, path)
    target = dest / path
    current = target.read_bytes() if target.is_file() else None
    if before is None and current is not None and after is not None:
        # A file the workspace did not hold yet but TVM has: the workspace's first copy of it
        # was made from the series' version, so that is the common ancestor.
        before = current
    if current == after:
        return "same"
    if current == before or (before is None and current is None):
        merged, clean = after, True
    elif before is None or after is None or current is None:
        return "conflict"  # added on both sides, or deleted on one and changed on the other
    else:
        with tempfile.TemporaryDirectory(prefix="adreno-ws-fold-") as tmp:
            files = []
            for name, data in (("series", current), ("base", before), ("workspace", after)):
                files.append(Path(tmp) / name)
                files[-1].write_bytes(data)
            proc = subprocess.run(
                ["git", "merge-file", "-p", *map(str, files)], capture_output=True, check=False
            )
            merged, clean = proc.stdout, proc.returncode == 0
    if merged is None:
        git(dest, "rm", "-q", "--", path)
        return "staged"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(merged)
    if not clean:
        return "conflict"
    git(dest, "add", "--", path)
    return "staged"


def _mirror_changes(repo: Path, old: str, new: str) -> list[str]:
    listing = git(
        repo,
        "diff",
        "--name-only",
        "--no-renames",
        "-z",
        old,
        new,
        "--",
        *MIRROR_ROOTS,
        *(f":(exclude){w}" for w in WORKSPACE_TESTS),
    ).stdout
    return [p for p in listing.split("\0") if p]


def _new_topic_of(path: str, topics: dict[str, dict]) -> str | None:
    for name, topic in topics.items():
        if any(fnmatch(path, pattern) for pattern in topic.get("files", [])):
            return name
    return None


def _commit_fold(dest, env, paths, topic, topics, made, report) -> None:
    """Commit ``paths``: into the new topic's patch, else as fixups of their last patch."""
    if topic is not None:
        if topic in made:
            git(dest, "commit", "-q", f"--fixup={made[topic]}", "--", *paths, env=env)
        else:
            entry = topics[topic]
            message = f"{entry['subject'].strip()}\n\n{entry['message'].strip()}\n"
            git(dest, "commit", "-q", "-m", message, "--", *paths, env=env)
            made[topic] = git(dest, "rev-parse", "HEAD").stdout.strip()
            report.append(f"new patch \"{entry['subject'].strip()}\" (topic {topic})")
        report.append(f"  {topic}: {', '.join(paths)}")
        return
    owners: dict[str, list[str]] = {}
    orphans: dict[str, list[str]] = {}
    for path in paths:
        touching = git(dest, "log", "--format=%H", f"{BASE_TAG}..HEAD", "--", path).stdout.split()
        # Skip fixups: the patch a fixup! belongs to is the one that should be named.
        real = [
            c
            for c in touching
            if not git(dest, "log", "-1", "--format=%s", c).stdout.startswith("fixup! ")
        ]
        if not real:
            listed = _new_topic_of(path, topics)
            if listed is None:
                raise WsError(
                    f"{path}: no patch changes it and no new topic of patches/topics.toml lists "
                    "it: commit it in the materialized repository, as a patch of its own or "
                    "into the patch it belongs to"
                )
            orphans.setdefault(listed, []).append(path)
            continue
        owners.setdefault(real[0], []).append(path)
        if len(real) > 1:
            report.append(
                f"note: {path} is changed by {len(real)} patches: its fixup went to the "
                "last; move hunks with git rebase -i if they belong to another"
            )
    for listed, owned in orphans.items():
        _commit_fold(dest, env, owned, listed, topics, made, report)
    for target, owned in owners.items():
        git(dest, "commit", "-q", f"--fixup={target}", "--", *owned, env=env)
        subject = git(dest, "log", "-1", "--format=%s", target).stdout.strip()
        report.append(f"fixup of \"{subject}\": {', '.join(owned)}")


def fold(  # pylint: disable=too-many-locals,too-many-branches
    repo: Path, dest: Path, rev_range: str, autosquash: bool = True, message: str | None = None
) -> list[str]:
    """Turn the workspace's mirror edits in ``rev_range`` into commits of ``dest``'s series.

    Workspace commits are folded one by one, each file three-way (``git merge-file``): a
    commit that adds a file of a topic new in ``patches/topics.toml`` (at the range's end)
    makes that topic's patch, at the end of the series, with all of its changes (its wiring);
    any other commit becomes ``fixup!`` commits of the last patch touching each file. Merge
    resolutions are caught up last, so the tip ends equal to the workspace's files.
    ``message`` (subject, blank line, body) makes all of the range one new patch instead.
    """
    dest = dest.resolve()
    require_materialized(dest)
    require_clean(dest)
    env = user_env()
    _require_identity(dest, env)
    if ".." not in rev_range:
        raise WsError(f"{rev_range!r} is not a range: pass OLD..NEW (workspace commits)")
    old, new = rev_range.split("..", 1)
    new = new or "HEAD"
    known = _topics_at(repo, old)
    topics = {n: t for n, t in _topics_at(repo, new).items() if n not in known}
    forced = None
    if message:
        subject, _, body = message.strip().partition("\n")
        forced = "(new patch)"
        topics = {forced: {"subject": subject, "message": body.strip() or subject}}
    report: list[str] = []
    for name, topic in _topics_at(repo, new).items():
        if name in known and known[name].get("message") != topic.get("message"):
            report.append(
                f"note: topic {name}'s message changed in topics.toml: reword its "
                "patch (git rebase -i, reword)"
            )
    made: dict[str, str] = {}
    final = {p: _show_or_none(repo, new, p) for p in _mirror_changes(repo, old, new)}
    done = {p for p, data in final.items() if _read_or_none(dest / p) == data}
    deferred: list[str] = []
    steps = git(repo, "rev-list", "--reverse", "--no-merges", f"{old}..{new}").stdout.split()
    for step in [*steps, None]:
        if step is None:
            # Last, catch up what merges resolved and what did not merge commit by commit:
            # the workspace's files at NEW are the truth for the tip.
            paths = [p for p, data in final.items() if _read_or_none(dest / p) != data]
            staged = [p for p in paths if _force_file(dest, p, final[p]) == "staged"]
            if staged:
                report.append(
                    "catch-up (merge resolutions, edits that did not merge one commit "
                    "at a time):"
                )
        else:
            staged = []
            for path in _mirror_changes(repo, f"{step}^", step):
                if path in done:
                    continue
                outcome = _fold_file(repo, dest, f"{step}^", step, path)
                if outcome == "conflict":
                    _restore(dest, path)
                    deferred.append(path)
                elif outcome == "staged":
                    staged.append(path)
        if not staged:
            continue
        topic = forced
        if step is not None and forced is None:
            added = git(
                repo, "diff", "--name-only", "--diff-filter=A", "-z", f"{step}^", step
            ).stdout
            for path in [p for p in added.split("\0") if p in staged]:
                topic = topic or _new_topic_of(path, topics)
        _commit_fold(dest, env, staged, topic, topics, made, report)
    for path in sorted(set(deferred)):
        report.append(
            f"note: {path} did not merge commit by commit; the catch-up took the "
            "workspace's final version"
        )
    if len(report) == 0:
        return [f"the mirror changes of {rev_range} are all in the series already"]
    if autosquash:
        seq = dict(env, GIT_SEQUENCE_EDITOR="true")
        proc = git(dest, "rebase", "-q", "-i", "--autosquash", BASE_TAG, env=seq, check=False)
        if proc.returncode != 0:
            report.append(
                f"autosquash stopped: {first_error(proc)}; resolve in {dest} "
                "(git rebase --continue)"
            )
        else:
            report.append("squashed the fixups into their patches (git rebase -i --autosquash)")
    return report


def _read_or_none(path: Path) -> bytes | None:
    return path.read_bytes() if path.is_file() else None


def _restore(dest: Path, path: str) -> None:
    """Put ``path`` back as the series' tip has it (after a merge that left markers)."""
    if git(dest, "cat-file", "-e", f"HEAD:{path}", check=False).returncode == 0:
        git(dest, "checkout", "-q", "HEAD", "--", path)
    else:
        git(dest, "rm", "-q", "--cached", "--ignore-unmatch", "--", path)
        (dest / path).unlink(missing_ok=True)


def _force_file(dest: Path, path: str, data: bytes | None) -> str:
    target = dest / path
    if data is None:
        git(dest, "rm", "-q", "--", path)
        return "staged"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    git(dest, "add", "--", path)
    return "staged"


def main_progress(line: str) -> None:
    """Progress lines of ``check`` (stderr keeps stdout for the verdict)."""
    print(line, file=sys.stderr, flush=True)
