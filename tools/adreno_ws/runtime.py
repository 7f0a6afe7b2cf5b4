"""``runtime build`` / ``runtime install``: thin wrappers over ``runtime_build`` (owned elsewhere).

``runtime_build`` is imported only when needed, so every other command works without it.
"""

from __future__ import annotations

from pathlib import Path

from . import WsError

RUNTIME_SRC = Path("src/runtime/opencl")


def builder():
    """The ``adreno_ws.runtime_build`` module, or a WsError saying it is not there yet."""
    try:
        from . import runtime_build  # pylint: disable=import-outside-toplevel
    except ModuleNotFoundError as err:
        if err.name and err.name.endswith("runtime_build"):
            raise WsError(
                "tools/adreno_ws/runtime_build.py is missing: the OpenCL runtime cannot be built "
                "until it lands (skip with --skip-runtime)"
            ) from err
        raise
    return runtime_build


def site_packages_of(tvm_dir: Path) -> Path:
    """site-packages of an installed ``tvm`` package directory."""
    return tvm_dir.parent


def _call(func, *args, **kwargs) -> Path:
    module = builder()
    error = getattr(module, "RuntimeBuildError", RuntimeError)
    try:
        return Path(getattr(module, func)(*args, **kwargs))
    except error as err:
        raise WsError(f"OpenCL runtime {func.split('_')[0]} failed: {err}") from err


def build(site_packages: Path, build_dir: Path, jobs: int = 2) -> Path:
    """Build libtvm_runtime_opencl.so against the wheel in ``site_packages``; return its path."""
    return _call("build_runtime", site_packages, build_dir, jobs=jobs)


def install(so_path: Path, site_packages: Path) -> Path:
    """Install a built runtime library beside libtvm_runtime.so; return where it went."""
    if not so_path.is_file():
        raise WsError(f"{so_path} does not exist: run `python -m adreno_ws runtime build` first")
    return _call("install_runtime", so_path, site_packages)
