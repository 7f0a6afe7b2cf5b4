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
"""bench/tuning_db.py: the committed, xz-compressed tuning databases."""

import gzip
import json
import logging
import lzma
import pathlib
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

import tuning_db  # noqa: E402  pylint: disable=wrong-import-position,import-error

DEVICE = {"name": "Test GPU", "driver": "1.0"}
WORKLOAD = b'["abc", ["tir.PrimFunc"]]\n'


@pytest.fixture(name="cache")
def _cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("BENCH_TUNING_CACHE", str(folder))
    return folder


def _plain_database(folder: pathlib.Path, device=None) -> pathlib.Path:
    """A database folder as create_database writes it, with two files of made-up content
    (byte-exactness is what is checked; the MetaSchedule parse is checked on a real one)."""
    folder.mkdir(parents=True)
    meta = {"format": "adreno-tuning-database/1", "device": device or DEVICE, "target": "t"}
    (folder / "device.json").write_text(json.dumps(meta, indent=1) + "\n")
    (folder / "database_workload.json").write_bytes(WORKLOAD)
    (folder / "database_tuning_record.json").write_bytes(b"")
    (folder / "summary.json").write_text("[]\n")
    return folder


def test_store_then_plain_folder_is_byte_identical(tmp_path, cache):
    plain = _plain_database(tmp_path / "plain")
    committed = tmp_path / "committed"
    tuning_db.store(plain, committed)
    names = sorted(p.name for p in committed.iterdir())
    assert names == [
        "database_tuning_record.json.xz",
        "database_workload.json.xz",
        "device.json",
        "summary.json",
    ]
    read = tuning_db.plain_folder(committed)
    assert read.parent == cache
    for file in plain.iterdir():
        assert (read / file.name).read_bytes() == file.read_bytes(), file.name
    # the same committed bytes give the same folder; other bytes another one
    assert tuning_db.plain_folder(committed) == read
    (committed / "summary.json").write_text('[{"task": "x"}]\n')
    assert tuning_db.plain_folder(committed) != read


def test_a_plain_folder_is_used_as_it_is(tmp_path, cache):
    plain = _plain_database(tmp_path / "plain")
    assert tuning_db.plain_folder(plain) == plain
    assert not cache.exists()


def test_updating_compresses_back_and_leaves_unchanged_files_alone(tmp_path, cache):
    committed = tmp_path / "committed"
    tuning_db.store(_plain_database(tmp_path / "plain"), committed)
    record_xz = committed / "database_tuning_record.json.xz"
    before = (committed / "database_workload.json.xz").stat().st_mtime_ns
    with tuning_db.updating(committed) as work:
        assert (work / "database_workload.json").read_bytes() == WORKLOAD
        (work / "database_tuning_record.json").write_bytes(b"[0, []]\n")
    assert lzma.decompress(record_xz.read_bytes()) == b"[0, []]\n"
    assert (committed / "database_workload.json.xz").stat().st_mtime_ns == before
    assert not (committed / "database_tuning_record.json").exists()


def test_updating_a_new_folder_creates_it_compressed(tmp_path, cache):
    target = tmp_path / "new-device"
    with tuning_db.updating(target) as work:
        _plain_database(work / "x")
        for file in (work / "x").iterdir():
            file.rename(work / file.name)
        (work / "x").rmdir()
    assert tuning_db.is_compressed(target)
    assert (target / "device.json").is_file()


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda data: b"not xz at all", id="not-xz"),
        pytest.param(lambda data: gzip.compress(lzma.decompress(data)), id="gzip"),
        pytest.param(lambda data: data[: len(data) // 2], id="truncated"),
        pytest.param(lambda data: data[:-20] + bytes(20), id="bad-check"),
    ],
)
def test_a_corrupt_compressed_file_is_one_line_naming_it(tmp_path, cache, damage):
    committed = tmp_path / "committed"
    tuning_db.store(_plain_database(tmp_path / "plain"), committed)
    file = committed / "database_workload.json.xz"
    file.write_bytes(damage(file.read_bytes()))
    with pytest.raises(tuning_db.TuningDatabaseError) as info:
        tuning_db.plain_folder(committed)
    message = str(info.value)
    assert "\n" not in message and str(file) in message and "not a readable xz file" in message
    assert not list(cache.glob("*/database_workload.json"))


def test_both_forms_in_one_folder_are_refused(tmp_path, cache):
    committed = tmp_path / "committed"
    tuning_db.store(_plain_database(tmp_path / "plain"), committed)
    (committed / "database_workload.json").write_bytes(WORKLOAD)
    with pytest.raises(tuning_db.TuningDatabaseError, match="holds both"):
        tuning_db.plain_folder(committed)


def test_load_names_the_committed_folder(tmp_path, cache, caplog):
    """load_database's own lines (another device, a corrupt JSON) name the committed folder,
    not the cache; a working database loads as a JSONDatabase."""
    pytest.importorskip("tvm")
    from tvm.s_tir.meta_schedule import adreno as msa  # pylint: disable=import-outside-toplevel

    work = tmp_path / "work"
    msa.create_database(work, DEVICE, target="t")
    committed = tmp_path / "committed"
    tuning_db.store(work, committed)
    database = tuning_db.load(committed, device=DEVICE, strict=True)
    assert database is not None and len(database) == 0

    other = {"name": "Another GPU", "driver": "2"}
    with caplog.at_level(logging.WARNING):
        assert tuning_db.load(committed, device=other) is None
    (line,) = [r.getMessage() for r in caplog.records]
    assert str(committed) in line and str(cache) not in line and "skipped" in line
    with pytest.raises(msa.TuningDatabaseError, match="skipped"):
        tuning_db.load(committed, device=other, strict=True)

    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "device.json").write_bytes((committed / "device.json").read_bytes())
    for name in tuning_db.COMPRESSED:
        (foreign / (name + ".xz")).write_bytes(lzma.compress(b"<html>not json</html>\n"))
    caplog.clear()
    with caplog.at_level(logging.ERROR):
        assert tuning_db.load(foreign, device=DEVICE) is None
    (line,) = [r.getMessage() for r in caplog.records]
    assert "\n" not in line and f"tuning database {foreign} is corrupt" in line
