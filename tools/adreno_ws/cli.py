"""``python -m adreno_ws``: the workspace's one command line."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from . import WsError
from .repo import default_repo_root


def _base_dir(args) -> Path:
    from .base import ensure_base  # pylint: disable=import-outside-toplevel

    if args.base_dir:
        base = Path(args.base_dir)
        if not (base / "python" / "tvm").is_dir():
            raise WsError(
                f"{base} has no python/tvm: pass a directory laid out like the base cache"
            )
        return base
    return ensure_base(args.repo, Path(args.cache) if args.cache else None)


def cmd_base(args) -> int:
    """Fetch and cache the pristine base."""
    from .base import ensure_base  # pylint: disable=import-outside-toplevel

    base = ensure_base(
        args.repo,
        Path(args.cache) if args.cache else None,
        Path(args.wheel) if args.wheel else None,
    )
    print(base / "python" / "tvm")
    return 0


def cmd_export_gone(_args) -> int:
    """The mirror is no longer the source of the series."""
    raise WsError(
        "`patches export` is gone: the series in patches/ is the source now. Make the change "
        "in a materialized repository (`series materialize DIR`), commit it there and run "
        "`series export DIR` (see patches/README.md)"
    )


def cmd_apply(args) -> int:
    """Apply the series to an installed TVM or a checkout."""
    from .patches import apply_series  # pylint: disable=import-outside-toplevel
    from .repo import find_venv_tvm  # pylint: disable=import-outside-toplevel

    if bool(args.target) == bool(args.venv):
        raise WsError("give exactly one of --target DIR or --venv PATH")
    target = Path(args.target) if args.target else find_venv_tvm(Path(args.venv))
    print(
        apply_series(
            args.repo,
            target,
            force=args.force,
            skip_version_check=args.skip_version_check,
            pristine=lambda: _base_dir(args),
        )
    )
    return 0


def cmd_series_materialize(args) -> int:
    """Make a git repository of the base and the series."""
    from . import series  # pylint: disable=import-outside-toplevel

    print(series.materialize(args.repo, _base_dir(args), Path(args.dir)))
    return 0


def cmd_series_export(args) -> int:
    """format-patch a materialized repository back into patches/ and the mirror."""
    from . import series  # pylint: disable=import-outside-toplevel

    changed = series.export(args.repo, Path(args.dir))
    for line in changed:
        print(f"series: {line}")
    print(f"series: {len(changed)} file(s) changed" if changed else "series: up to date")
    return 0


def cmd_series_check(args) -> int:
    """Apply, re-export, compare the mirror, run every patch's tests at its position."""
    from . import series  # pylint: disable=import-outside-toplevel

    result = series.check(
        args.repo,
        _base_dir(args),
        venv=Path(args.venv) if args.venv else args.repo / ".venv",
        run_tests=not args.no_tests,
        log_dir=Path(args.log_dir) if args.log_dir else args.repo / "build" / "series-check",
        progress=series.main_progress,
        only=args.only,
        jobs=args.jobs,
        lint=not args.no_lint,
    )
    if result.problems:
        raise WsError(*result.problems)
    print("series: ok (" + "; ".join(result.notes) + ")")
    return 0


def cmd_series_rebase(args) -> int:
    """Move a materialized series onto a newer base; report conflicting patches."""
    import tempfile  # pylint: disable=import-outside-toplevel

    from . import series  # pylint: disable=import-outside-toplevel

    if bool(args.wheel) == bool(args.tree):
        raise WsError("give exactly one of --wheel WHEEL or --tree TVM_CHECKOUT")
    with tempfile.TemporaryDirectory(prefix="adreno-ws-newbase-") as tmp:
        if args.wheel:
            root, label = series.tree_from_wheel(Path(args.wheel), Path(tmp))
        else:
            root, label = series.tree_from_checkout(Path(args.tree))
        for line in series.rebase(Path(args.dir), root, label):
            print(f"series: {line}")
    return 0


def cmd_series_fold(args) -> int:
    """Turn workspace commits' mirror edits into fixups of the owning patches."""
    from . import series  # pylint: disable=import-outside-toplevel

    message = Path(args.new_patch).read_text(encoding="utf-8") if args.new_patch else None
    for line in series.fold(
        args.repo, Path(args.dir), args.range, not args.no_autosquash, message=message
    ):
        print(f"series: {line}")
    return 0


def _stack_repo(args, dest: str | None):
    """The materialized repository ``dest`` (or a scratch one) with its commits and PRs."""
    from .pr import stack_repo  # pylint: disable=import-outside-toplevel

    return stack_repo(args.repo, None if dest else _base_dir(args), Path(dest) if dest else None)


def cmd_pr_list(args) -> int:
    """The PRs of patches/stack.toml, and how well the series is cut."""
    from .pr import list_lines  # pylint: disable=import-outside-toplevel

    with _stack_repo(args, args.dir) as (dest, series, prs):
        for line in list_lines(dest, series, prs):
            print(line)
    return 0


def cmd_pr_branch(args) -> int:
    """Branches pr/NN-slug at each PR's last commit of a materialized repository."""
    from .pr import make_branches  # pylint: disable=import-outside-toplevel

    with _stack_repo(args, args.dir) as (dest, series, prs):
        for line in make_branches(dest, series, prs):
            print(line)
    return 0


def cmd_pr_mail(args) -> int:
    """git format-patch --cover-letter of one PR, with its title and letter."""
    from .pr import pick, write_mail  # pylint: disable=import-outside-toplevel

    with _stack_repo(args, args.dir) as (dest, series, prs):
        pull = pick(prs, args.number)
        if args.output:
            out, clear = Path(args.output), False
        else:
            out, clear = args.repo / "build" / "pr-mail" / pull.branch.split("/", 1)[1], True
        for path in write_mail(dest, series, pull, out, clear):
            print(path)
    return 0


def _site_packages(args) -> Path:
    from .repo import find_venv_tvm  # pylint: disable=import-outside-toplevel

    return find_venv_tvm(Path(args.venv)).parent


def cmd_runtime_build(args) -> int:
    """Build the OpenCL runtime (and install it unless --no-install)."""
    from . import runtime  # pylint: disable=import-outside-toplevel

    site = _site_packages(args)
    build_dir = Path(args.build_dir) if args.build_dir else args.repo / "build" / "opencl-runtime"
    so_path = runtime.build(site, build_dir, jobs=args.jobs)
    print(f"runtime: built {so_path}")
    if not args.no_install:
        print(f"runtime: installed {runtime.install(so_path, site)}")
    return 0


def cmd_runtime_install(args) -> int:
    """Install an already built OpenCL runtime library."""
    from . import runtime  # pylint: disable=import-outside-toplevel

    print(f"runtime: installed {runtime.install(Path(args.so), _site_packages(args))}")
    return 0


def cmd_setup(args) -> int:
    """Create and fill the venv, OpenCL, patches, runtime."""
    from .setup_env import setup  # pylint: disable=import-outside-toplevel

    setup(
        args.repo,
        Path(args.venv),
        args.skip_opencl,
        args.skip_runtime,
        args.jobs,
        skip_intel=args.skip_intel,
    )
    return 0


def cmd_opencl(args) -> int:
    """List OpenCL devices; with --select, fail unless one matches."""
    from . import opencl  # pylint: disable=import-outside-toplevel

    found = opencl.devices()
    if found is None:
        raise WsError("no OpenCL ICD loader (libOpenCL.so.1): run `python -m adreno_ws setup`")
    chosen = opencl.devices(args.select) if args.select else found
    for dev in chosen:
        print(dev)
    if not chosen:
        what = f"matching '{args.select}' " if args.select else ""
        raise WsError(
            f"no OpenCL device {what}(have: {', '.join(found) or 'none'}): "
            "install one (python -m adreno_ws setup) or change TVM_OPENCL_DEVICE"
        )
    return 0


def cmd_census(args) -> int:
    """Print one line per model of a TEXTURE_CENSUS_FILE: right or wrong on each device, then
    the kernels on textures / buffers / layout transforms (the last census of each model)."""
    from .model_census import format_census  # pylint: disable=import-outside-toplevel

    path = Path(args.file)
    records, results = {}, {}
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
                if "right" in record:
                    results.setdefault(record["model"], {})[record["device"]] = record["right"]
                else:
                    records[record["model"]] = record
            except (ValueError, KeyError, TypeError):
                print(f"  (skipped a malformed census line in {path})")
    if not records and not results:
        print("  (no model census recorded)")
    for name in sorted(set(records) | set(results)):
        runs = results.get(name, {})
        verdict = (
            "; ".join(
                f"{'right' if ok else 'WRONG'} on {device}" for device, ok in sorted(runs.items())
            )
            or "not run"
        )
        line = f"  {name}: {verdict}"
        if name in records:
            record = records[name]
            line += "; " + format_census(name, record).split(": ", 1)[1]
            reasons = record.get("buffer_reasons") or {}
            if reasons:
                line += "; buffer calls by reason: " + ", ".join(
                    f"{key} {count}" for key, count in sorted(reasons.items())
                )
        print(line)
    return 0


def cmd_census_model(args) -> int:
    """Texture census of a model file, with the reason for every kernel left on buffers."""
    try:
        from . import model_census  # pylint: disable=import-outside-toplevel
        import tvm  # noqa: F401  pylint: disable=import-outside-toplevel,unused-import
    except ImportError as err:
        raise WsError(
            f"census needs TVM ({err}): run it with the venv's python "
            "(PYTHONPATH=tools .venv/bin/python -m adreno_ws census MODEL)"
        ) from None
    shapes = model_census.parse_input_shapes(args.input_shape or [])
    # The progress goes to stderr: stdout stays the census alone (--json: one JSON line).
    counts, reasons = model_census.census_model(
        Path(args.model), shapes, stream=sys.stderr, float16_storage=args.float16_storage
    )
    if args.json:
        print(json.dumps({"model": Path(args.model).name, **counts, "buffers": reasons}))
        return 0
    print(model_census.format_census(Path(args.model).name, counts))
    for line in model_census.format_reasons(reasons) or ["every operator runs on textures"]:
        print(line)
    if args.float16_storage:
        for line in model_census.format_half_storage(counts["float16_storage"]):
            print(line)
    return 0


def cmd_junit(args) -> int:
    """Print per-file and total pass/fail/skip counts of JUnit XML files."""
    from .report import junit_counts  # pylint: disable=import-outside-toplevel

    total = {"passed": 0, "failed": 0, "skipped": 0, "errors": 0}
    for name in args.files:
        counts = junit_counts(Path(name))
        for key, value in counts.items():
            total[key] += value
        print(
            f"  {Path(name).stem}: {counts['passed']} passed, {counts['failed']} failed, "
            f"{counts['skipped']} skipped, {counts['errors']} errors"
        )
    print(
        f"total: {total['passed']} passed, {total['failed'] + total['errors']} failed, "
        f"{total['skipped']} skipped"
    )
    return 0


def cmd_model_margins(args) -> int:
    """Measure how much tolerance a real model's outputs need, in the workspace's venv."""
    import os  # pylint: disable=import-outside-toplevel
    import subprocess  # pylint: disable=import-outside-toplevel

    from .opencl import with_venv_icds  # pylint: disable=import-outside-toplevel
    from .repo import require_python  # pylint: disable=import-outside-toplevel

    python = require_python(Path(args.venv or args.repo / ".venv") / "bin" / "python")
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    with_venv_icds(env, python.parent.parent)
    cmd = [str(python), "-m", "adreno_ws.model_margins", args.model]
    cmd += ["--draws", str(args.draws), "--base", str(args.base)]
    return subprocess.run(cmd, cwd=args.repo, env=env, check=False).returncode


def cmd_seed_sweep(args) -> int:
    """Run the seed-dependent texture tests (the fast ones, or with --slow all) under many
    seeds on each device."""
    from .seed_sweep import run_sweep  # pylint: disable=import-outside-toplevel

    python = Path(args.venv or args.repo / ".venv") / "bin" / "python"
    failures = run_sweep(
        args.repo,
        python,
        [d for d in args.devices.split(",") if d],
        args.seeds,
        args.base,
        args.paths or ["tests/python/relax/texture"],
        args.workers,
        args.pytest_args or [],
        slow=args.slow,
    )
    for failure in failures:
        print(failure.line())
    devices = args.devices.replace(",", ", ")
    if failures:
        raise WsError(f"seed-sweep: {len(failures)} test(s) failed under some seed on {devices}")
    print(f"seed-sweep: every test passed under all {args.seeds} seeds on {devices}")
    return 0


def cmd_headers(args) -> int:
    """Fail when a mirror file lacks the ASF license header."""
    from .report import missing_asf_header  # pylint: disable=import-outside-toplevel
    from .repo import mirror_files  # pylint: disable=import-outside-toplevel

    files = args.files or [f for f in mirror_files(args.repo) if f.endswith(".py")]
    bad = [
        f
        for f in files
        if missing_asf_header(args.repo / f if not Path(f).is_absolute() else Path(f))
    ]
    if bad:
        raise WsError(
            *(f"{f}: no ASF license header: copy it from any TVM source file" for f in bad)
        )
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for the tests and --help)."""
    parser = argparse.ArgumentParser(prog="python -m adreno_ws", description=__doc__)
    parser.add_argument(
        "--repo",
        type=Path,
        default=default_repo_root(),
        help="workspace root (default: the one holding this package)",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    def base_opts(p):
        p.add_argument("--cache", help="base cache directory (default .cache/base)")
        p.add_argument("--base-dir", help="use this pristine base (holding python/tvm) as is")

    def check_opts(p):
        """`series check` and its older name `patches check`."""
        p.add_argument(
            "--no-tests", action="store_true", help="skip the per-patch (per-PR) tests and lint"
        )
        p.add_argument(
            "--no-lint", action="store_true", help="skip the per-PR lint (black, pylint, header)"
        )
        p.add_argument("--venv", default=None, help="venv whose tvm the tests use (default .venv)")
        p.add_argument("--log-dir", default=None, help="pytest logs (default build/series-check)")
        p.add_argument(
            "--only",
            action="append",
            help="run only this patch's (with patches/stack.toml: this PR's) tests and lint "
            "(number, or name or slug prefix; repeatable)",
        )
        p.add_argument("--jobs", type=int, default=1, help="scratch copies testing at once")
        base_opts(p)
        p.set_defaults(func=cmd_series_check)

    p = sub.add_parser("base", help="fetch and cache the pristine base wheel tree")
    p.add_argument("--cache", help="base cache directory (default .cache/base)")
    p.add_argument("--wheel", help="use this local wheel instead of downloading")
    p.set_defaults(func=cmd_base)

    patches = sub.add_parser("patches", help="apply (or check) the patch series")
    psub = patches.add_subparsers(dest="patches_command", required=True)
    p = psub.add_parser("export", help="(gone: use `series export DIR`)")
    base_opts(p)
    p.set_defaults(func=cmd_export_gone)
    check_opts(psub.add_parser("check", help="the same as `series check`"))
    p = psub.add_parser("apply", help="apply patches/ to an installed TVM or a checkout")
    p.add_argument("--target", help="site-packages/tvm, or a TVM checkout's python/tvm")
    p.add_argument("--venv", help="a virtual environment whose tvm to patch")
    p.add_argument(
        "--force",
        action="store_true",
        help="restore the pristine files the series touches first, then apply",
    )
    p.add_argument(
        "--skip-version-check",
        action="store_true",
        help="apply even when the target's TVM version cannot be read",
    )
    base_opts(p)
    p.set_defaults(func=cmd_apply)

    series_p = sub.add_parser("series", help="the patch series as a git repository")
    ssub = series_p.add_subparsers(dest="series_command", required=True)
    p = ssub.add_parser("materialize", help="git repo: pristine base commit + one commit per patch")
    p.add_argument("dir", help="a new (or empty) directory")
    base_opts(p)
    p.set_defaults(func=cmd_series_materialize)
    p = ssub.add_parser("export", help="git format-patch DIR back into patches/ and the mirror")
    p.add_argument("dir", help="a repository made by `series materialize`")
    p.set_defaults(func=cmd_series_export)
    check_opts(
        ssub.add_parser("check", help="apply, re-export, mirror == tip, each patch's own tests")
    )
    p = ssub.add_parser("rebase", help="move DIR's series onto a newer base (three-way merge)")
    p.add_argument("dir", help="a repository made by `series materialize`")
    p.add_argument("--wheel", help="a newer apache-tvm wheel")
    p.add_argument("--tree", help="a TVM checkout (or its python/tvm)")
    p.set_defaults(func=cmd_series_rebase)
    p = ssub.add_parser("fold", help="workspace mirror edits OLD..NEW -> fixup commits in DIR")
    p.add_argument("dir", help="a repository made by `series materialize`")
    p.add_argument("range", help="workspace commits OLD..NEW whose mirror edits to fold in")
    p.add_argument("--no-autosquash", action="store_true", help="leave the fixup! commits")
    p.add_argument(
        "--new-patch",
        help="file with a commit message: the whole range becomes one "
        "new patch with it, at the end of the series",
    )
    p.set_defaults(func=cmd_series_fold)

    pr_p = sub.add_parser("pr", help="the pull requests of patches/stack.toml")
    prsub = pr_p.add_subparsers(dest="pr_command", required=True)
    p = prsub.add_parser("list", help="the PRs, their sizes and tests; how well the series is cut")
    p.add_argument("--dir", help="a materialized repository (default: a scratch one)")
    base_opts(p)
    p.set_defaults(func=cmd_pr_list)
    p = prsub.add_parser("branch", help="branches pr/NN-slug at each PR's last commit of DIR")
    p.add_argument("dir", help="a repository made by `series materialize`")
    p.set_defaults(func=cmd_pr_branch)
    p = prsub.add_parser("mail", help="git format-patch --cover-letter of PR N's commits")
    p.add_argument("number", type=int, help="the PR's number in patches/stack.toml (from 1)")
    p.add_argument("--dir", help="a materialized repository (default: a scratch one)")
    p.add_argument(
        "-o",
        "--output",
        metavar="OUTDIR",
        help="a directory without mails in it (default build/pr-mail/NN-slug, emptied first)",
    )
    base_opts(p)
    p.set_defaults(func=cmd_pr_mail)

    runtime_p = sub.add_parser("runtime", help="build or install the OpenCL runtime library")
    rsub = runtime_p.add_subparsers(dest="runtime_command", required=True)
    p = rsub.add_parser("build", help="build (and install) libtvm_runtime_opencl.so")
    p.add_argument("--venv", default=None, help="venv holding the base (default <repo>/.venv)")
    p.add_argument("--build-dir", default=None, help="default <repo>/build/opencl-runtime")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--no-install", action="store_true")
    p.set_defaults(func=cmd_runtime_build)
    p = rsub.add_parser("install", help="install a built library into the venv")
    p.add_argument("--so", required=True, help="the built libtvm_runtime_opencl.so")
    p.add_argument("--venv", default=None, help="venv holding the base (default <repo>/.venv)")
    p.set_defaults(func=cmd_runtime_install)

    p = sub.add_parser("setup", help="venv, requirements, OpenCL, patches, runtime (idempotent)")
    p.add_argument("--venv", default=None, help="virtual environment (default <repo>/.venv)")
    p.add_argument("--skip-opencl", action="store_true", help="no OpenCL packages or device check")
    p.add_argument("--skip-runtime", action="store_true", help="do not build the OpenCL runtime")
    p.add_argument(
        "--skip-intel", action="store_true", help="do not install Intel's CPU OpenCL runtime"
    )
    p.add_argument("--jobs", type=int, default=2)
    p.set_defaults(func=cmd_setup)

    p = sub.add_parser("opencl", help="list OpenCL devices")
    p.add_argument("--select", default="", help="substring of 'platform / device' to require")
    p.set_defaults(func=cmd_opencl)

    p = sub.add_parser("junit-summary", help="totals of pytest JUnit XML files")
    p.add_argument("files", nargs="+")
    p.set_defaults(func=cmd_junit)

    p = sub.add_parser("census-summary", help="per-model texture/buffer counts (JSON lines)")
    p.add_argument("file")
    p.set_defaults(func=cmd_census)

    p = sub.add_parser(
        "model-margins",
        help="the tolerance a real model's outputs need against the framework, over many draws",
    )
    p.add_argument("model", help="a model of tests/python/relax/texture/test_texture_models.py")
    p.add_argument("--draws", type=int, default=100, help="random inputs (default 100)")
    p.add_argument("--base", type=int, default=0, help="the first draw's seed (default 0)")
    p.add_argument("--venv", help="the venv to run in (default .venv)")
    p.set_defaults(func=cmd_model_margins)

    p = sub.add_parser(
        "seed-sweep", help="run the seed-dependent fast texture tests under many seeds"
    )
    p.add_argument("--seeds", type=int, default=30, help="seeds per test (default 30)")
    p.add_argument("--base", type=int, default=0, help="which sweep of seeds (default 0)")
    p.add_argument("--devices", default="portable,intel", help="OpenCL device selectors")
    p.add_argument("--venv", help="the venv to run pytest in (default .venv)")
    p.add_argument("--workers", type=int, default=2, help="pytest -n (default 2)")
    p.add_argument(
        "--slow",
        action="store_true",
        help="the tests marked slow too (the real models: each builds once, then runs per seed)",
    )
    p.add_argument(
        "--pytest-args", nargs="*", help="extra pytest arguments, e.g. --pytest-args=-kconv"
    )
    p.add_argument("paths", nargs="*", help="test paths (default the texture suite)")
    p.set_defaults(func=cmd_seed_sweep)

    p = sub.add_parser(
        "census", help="which operators of a model file run on textures, and why not"
    )
    p.add_argument("model", help="an .onnx or .tflite file")
    p.add_argument(
        "--input-shape",
        action="append",
        metavar="NAME=D0,D1,...",
        help="fix a dynamic input shape (repeat for several inputs)",
    )
    p.add_argument("--json", action="store_true", help="one JSON object instead of text")
    p.add_argument(
        "--float16-storage",
        action="store_true",
        help="also say which tensors float16 texture storage keeps in half, and why not",
    )
    p.set_defaults(func=cmd_census_model)

    p = sub.add_parser("headers", help="check the ASF license header on mirror files")
    p.add_argument("files", nargs="*", help="files to check (default: all mirror .py files)")
    p.set_defaults(func=cmd_headers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; WsError becomes ``error:`` lines and exit status 1."""
    args = build_parser().parse_args(argv)
    args.repo = Path(args.repo).resolve()
    if args.command in ("setup", "runtime") and args.venv is None:
        args.venv = str(args.repo / ".venv")
    elif getattr(args, "venv", None) and not Path(args.venv).is_absolute():
        args.venv = str(Path.cwd() / args.venv)
    try:
        return args.func(args)
    except WsError as err:
        for line in err.problems:
            print(f"error: {line}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
