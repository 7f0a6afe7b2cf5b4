"""Running git for the series tooling: one helper, errors as one line.

Commands that produce the series (``format-patch``, ``am`` in a scratch repository) run with
the user's and the system's git configuration hidden, so that nothing in a contributor's
``~/.gitconfig`` (``diff.noprefix``, ``format.signature``, ``diff.algorithm``, ...) changes the
bytes written to ``patches/``.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from . import WsError

#: The identity of the base commit and of commits made in scratch repositories.
TOOL_NAME = "adreno_ws"
TOOL_EMAIL = "adreno-ws@localhost"
TOOL_DATE = "2000-01-01T00:00:00+0000"
#: The tag of a materialized repository's base commit.
BASE_TAG = "adreno-ws-base"


def isolated_env(identity: bool = True) -> dict[str, str]:
    """The environment for git runs whose output must not depend on anyone's configuration."""
    env = dict(os.environ)
    env.update(
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_TERMINAL_PROMPT="0",
        LC_ALL="C",
    )
    for key in [k for k in env if k.startswith("GIT_CONFIG_") and k[11:].isdigit()]:
        env.pop(key)
    env.pop("GIT_CONFIG_COUNT", None)
    if identity:
        env.update(
            GIT_AUTHOR_NAME=TOOL_NAME,
            GIT_AUTHOR_EMAIL=TOOL_EMAIL,
            GIT_COMMITTER_NAME=TOOL_NAME,
            GIT_COMMITTER_EMAIL=TOOL_EMAIL,
            GIT_AUTHOR_DATE=TOOL_DATE,
            GIT_COMMITTER_DATE=TOOL_DATE,
        )
    return env


def git(
    cwd: Path,
    *args: str,
    env: dict[str, str] | None = None,
    check: bool = True,
    what: str | None = None,
) -> subprocess.CompletedProcess:
    """Run ``git args`` in ``cwd``; with ``check``, a failure raises WsError (one line)."""
    if env is None:
        env = dict(os.environ)
    # Never let git walk up into an enclosing repository (the workspace itself).
    env.setdefault("GIT_CEILING_DIRECTORIES", str(Path(cwd).resolve().parent))
    try:
        proc = subprocess.run(
            ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
        )
    except FileNotFoundError as err:
        raise WsError("git is not installed: install git (apt-get install git)") from err
    if check and proc.returncode != 0:
        raise WsError(f"{what or 'git ' + args[0]} failed in {cwd}: {first_error(proc)}")
    return proc


def first_error(proc: subprocess.CompletedProcess) -> str:
    """The line of git's output that says what went wrong."""
    lines = [l.strip() for l in (proc.stderr + "\n" + proc.stdout).splitlines() if l.strip()]
    for prefix in ("error:", "fatal:", "CONFLICT", "Patch failed"):
        for line in lines:
            if line.startswith(prefix):
                return line
    return lines[0] if lines else f"exit status {proc.returncode}"
