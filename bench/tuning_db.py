# Licensed to the Apache Software Foundation (ASF) under one
# or more contributor license agreements.  See the NOTICE file
# distributed with this work for additional information
# regarding copyright ownership.  The ASF licenses this file
# to you under the Apache License, Version 2.0 (the
# "License"); you may not use this file except in compliance
# with the License.  You may obtain a copy of the License at
#
#   http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing,
# software distributed under the License is distributed on an
# "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY
# KIND, either express or implied.  See the License for the
# specific language governing permissions and limitations
# under the License.
"""The committed tuning databases, stored xz-compressed.

A database under ``bench/tuning/<device>/`` is what
``tvm.s_tir.meta_schedule.adreno.create_database`` writes (``device.json``, MetaSchedule's
``database_workload.json`` and ``database_tuning_record.json``, and ``summary.json``), except
that the two MetaSchedule files are committed as ``<name>.xz`` (48 MB of JSON on the H200 is
0.6 MB compressed). Readers get a plain folder:

- :func:`plain_folder` decompresses into a cache folder keyed by the SHA-256 of the committed
  files (``BENCH_TUNING_CACHE``, default ``.cache/tuning-db`` of the repository) and returns
  it; a folder without ``.xz`` files (a database a tuning run just wrote) is returned as is;
- :func:`load` is ``load_database`` on that folder, with the committed folder's name in its
  messages;
- :func:`updating` gives a writable plain copy and compresses what changed back on exit (for
  ``bench/tune.py collect`` and ``migrate``).

A file that is not xz, is truncated or fails its check raises :class:`TuningDatabaseError`
with one line naming the file.
"""

import contextlib
import hashlib
import logging
import lzma
import os
import pathlib
import shutil
import tempfile
from typing import Iterator, Optional, Union

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent

WORKLOAD_FILE = "database_workload.json"
RECORD_FILE = "database_tuning_record.json"
COMPRESSED = (WORKLOAD_FILE, RECORD_FILE)
SUFFIX = ".xz"
PRESET = 9 | lzma.PRESET_EXTREME

logger = logging.getLogger("bench.tuning_db")

PathLike = Union[str, pathlib.Path]


def _error_class():
    """The series' TuningDatabaseError when TVM is importable (so callers catch one class),
    else a ValueError of the same name."""
    try:
        # pylint: disable-next=import-outside-toplevel
        from tvm.s_tir.meta_schedule.adreno import TuningDatabaseError as series_error

        return series_error
    except ImportError:
        return type("TuningDatabaseError", (ValueError,), {})


TuningDatabaseError = _error_class()


def is_compressed(path: PathLike) -> bool:
    """Whether the folder holds a compressed database (any ``<name>.xz`` of the two files)."""
    folder = pathlib.Path(path)
    return any((folder / (name + SUFFIX)).is_file() for name in COMPRESSED)


def cache_root() -> pathlib.Path:
    """Where decompressed databases are kept (``BENCH_TUNING_CACHE``)."""
    return pathlib.Path(os.environ.get("BENCH_TUNING_CACHE") or REPO / ".cache" / "tuning-db")


def _decompress(file: pathlib.Path) -> bytes:
    try:
        return lzma.decompress(file.read_bytes(), format=lzma.FORMAT_XZ)
    except (lzma.LZMAError, EOFError) as err:
        raise TuningDatabaseError(f"{file}: not a readable xz file ({err})") from err


def _check_layout(folder: pathlib.Path) -> None:
    for name in COMPRESSED:
        if (folder / name).exists() and (folder / (name + SUFFIX)).exists():
            raise TuningDatabaseError(
                f"tuning database {folder} holds both {name} and {name}{SUFFIX}: keep one"
            )
        if not (folder / (name + SUFFIX)).is_file():
            raise TuningDatabaseError(f"tuning database {folder} has no {name}{SUFFIX}")


def _key(folder: pathlib.Path) -> str:
    digest = hashlib.sha256()
    for file in sorted(p for p in folder.iterdir() if p.is_file()):
        digest.update(file.name.encode() + b"\0")
        digest.update(hashlib.sha256(file.read_bytes()).digest())
    return digest.hexdigest()[:32]


def _expand_into(folder: pathlib.Path, dest: pathlib.Path) -> None:
    """Every file of ``folder`` into ``dest``, the ``.xz`` ones decompressed."""
    for file in sorted(p for p in folder.iterdir() if p.is_file()):
        if file.name.endswith(SUFFIX) and file.name[: -len(SUFFIX)] in COMPRESSED:
            (dest / file.name[: -len(SUFFIX)]).write_bytes(_decompress(file))
        else:
            shutil.copy2(file, dest / file.name)


def plain_folder(path: PathLike) -> pathlib.Path:
    """A folder holding the database at ``path`` as MetaSchedule reads it.

    Raises
    ------
    TuningDatabaseError
        When a compressed file cannot be read (one line naming it).
    """
    folder = pathlib.Path(path)
    if not is_compressed(folder):
        return folder
    _check_layout(folder)
    root = cache_root()
    target = root / _key(folder)
    if (target / WORKLOAD_FILE).is_file():
        return target
    root.mkdir(parents=True, exist_ok=True)
    staging = pathlib.Path(tempfile.mkdtemp(prefix=".staging-", dir=root))
    try:
        _expand_into(folder, staging)
        try:
            staging.rename(target)
        except OSError:
            # another process (a parallel build worker) expanded the same database first
            if not (target / WORKLOAD_FILE).is_file():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def load(path: PathLike, device=None, strict: bool = False):
    """``tvm.s_tir.meta_schedule.adreno.load_database`` on the database at ``path``,
    compressed or not; its messages name ``path``, not the cache folder."""
    # pylint: disable-next=import-outside-toplevel
    from tvm.s_tir.meta_schedule import adreno as msa

    folder = pathlib.Path(path)
    try:
        plain = plain_folder(folder)
        try:
            return msa.load_database(plain, device=device, strict=True)
        except msa.TuningDatabaseError as err:
            if plain == folder:
                raise
            raise msa.TuningDatabaseError(str(err).replace(str(plain), str(folder))) from err
    except msa.TuningDatabaseError as err:
        if strict:
            raise
        if "skipped" in str(err):
            logger.warning("%s", err)
        else:
            logger.error("%s; using the default schedules", err)
        return None


def _write_if_changed(dest: pathlib.Path, data: bytes, compress: bool) -> None:
    if dest.is_file():
        old = dest.read_bytes()
        if (_decompress(dest) if compress else old) == data:
            return
    payload = lzma.compress(data, format=lzma.FORMAT_XZ, preset=PRESET) if compress else data
    part = dest.with_name(dest.name + ".part")
    part.write_bytes(payload)
    part.replace(dest)


def store(plain: PathLike, path: PathLike) -> None:
    """Write the plain database folder ``plain`` to ``path`` in the committed form: the two
    MetaSchedule files as ``.xz`` (rewritten only when their content changed), the rest as is."""
    source, folder = pathlib.Path(plain), pathlib.Path(path)
    folder.mkdir(parents=True, exist_ok=True)
    for file in sorted(p for p in source.iterdir() if p.is_file()):
        if file.name in COMPRESSED:
            _write_if_changed(folder / (file.name + SUFFIX), file.read_bytes(), compress=True)
            (folder / file.name).unlink(missing_ok=True)
        else:
            _write_if_changed(folder / file.name, file.read_bytes(), compress=False)


@contextlib.contextmanager
def updating(path: PathLike) -> Iterator[pathlib.Path]:
    """A writable plain copy of the database at ``path`` (empty when there is none yet),
    stored back compressed when the block ends without an error."""
    folder = pathlib.Path(path)
    if folder.is_dir() and is_compressed(folder):
        _check_layout(folder)
    with tempfile.TemporaryDirectory(prefix="tuning-db-") as tmp:
        work = pathlib.Path(tmp) / (folder.name or "db")
        work.mkdir()
        if folder.is_dir():
            _expand_into(folder, work)
        yield work
        store(work, folder)


def main(argv: Optional[list] = None) -> int:
    """``python bench/tuning_db.py compress|expand FOLDER``: convert a database in place
    (compress: plain -> committed form; expand: print the cache folder it reads as)."""
    import argparse  # pylint: disable=import-outside-toplevel

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("action", choices=["compress", "expand"])
    parser.add_argument("folder", type=pathlib.Path)
    args = parser.parse_args(argv)
    try:
        if args.action == "compress":
            if not is_compressed(args.folder):
                store(args.folder, args.folder)
        else:
            print(plain_folder(args.folder))
    except TuningDatabaseError as err:
        print(f"error: {err}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
