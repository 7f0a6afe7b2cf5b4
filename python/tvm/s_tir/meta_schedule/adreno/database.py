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
"""A MetaSchedule JSON database that knows the device it was measured on.

A tuning database is a folder: MetaSchedule's ``database_workload.json`` and
``database_tuning_record.json`` (a :class:`~tvm.s_tir.meta_schedule.database.JSONDatabase`),
and ``device.json``: the OpenCL device name and driver version the times were measured with.
Times from one device say little about another, so :func:`load_database` skips a database from
another device (one warning line) and refuses a corrupt one (one error line); either way it
returns None and the compilation keeps the default schedules::

    database = load_database("tuning/adreno-740", device=tvm.opencl(0))
    with database or contextlib.nullcontext():
        executable = tvm.compile(mod, target)
"""

import json
import logging
import pathlib
from typing import Dict, Optional, Union

from ..database import JSONDatabase

logger = logging.getLogger(__name__)

DEVICE_FILE = "device.json"
WORKLOAD_FILE = "database_workload.json"
RECORD_FILE = "database_tuning_record.json"
FORMAT = "adreno-tuning-database/1"


class TuningDatabaseError(ValueError):
    """A tuning database that cannot be read."""


def device_of(device) -> Dict[str, str]:
    """``{"name", "driver"}`` of a ``tvm.runtime.Device`` (local or remote), or of a dict with
    those keys (a device that is not at hand: the one a cross-compiled model will run on)."""
    if isinstance(device, dict):
        return {"name": str(device.get("name", "")), "driver": str(device.get("driver", ""))}
    return {"name": str(device.device_name or ""), "driver": str(device.driver_version or "")}


def create_database(path: Union[str, pathlib.Path], device, target: str = "") -> JSONDatabase:
    """Open (or start) the database at ``path`` for results measured on ``device``.

    Parameters
    ----------
    path : Union[str, pathlib.Path]
        The database folder.
    device : tvm.runtime.Device | Dict[str, str]
        The device the times come from.
    target : str
        The target the candidates were compiled for (recorded for the reader).

    Returns
    -------
    database : JSONDatabase
        The MetaSchedule database; new records go to its files.

    Raises
    ------
    TuningDatabaseError
        When the folder holds a database of another device or a corrupt one.
    """
    folder = pathlib.Path(path)
    identity = device_of(device)
    if (folder / DEVICE_FILE).is_file():
        recorded = read_device(folder)
        if recorded != identity:
            raise TuningDatabaseError(
                f"tuning database {folder} was measured on {_label(recorded)}, not "
                f"{_label(identity)}: use another folder for this device"
            )
    folder.mkdir(parents=True, exist_ok=True)
    meta = {"format": FORMAT, "device": identity, "target": target}
    (folder / DEVICE_FILE).write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    return _open_json(folder, allow_missing=True)


def read_device(path: Union[str, pathlib.Path]) -> Dict[str, str]:
    """The device recorded in the database folder ``path``.

    Raises
    ------
    TuningDatabaseError
        When ``device.json`` is missing or not what :func:`create_database` writes.
    """
    file = pathlib.Path(path) / DEVICE_FILE
    try:
        meta = json.loads(file.read_text(encoding="utf-8"))
        if meta.get("format") != FORMAT:
            raise ValueError(f"format {meta.get('format')!r}, expected {FORMAT!r}")
        return device_of(meta["device"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as err:
        raise TuningDatabaseError(f"{file}: not a tuning database device record ({err})") from err


def _label(identity: Dict[str, str]) -> str:
    return f"{identity['name']!r} (driver {identity['driver'] or 'unknown'})"


def _open_json(folder: pathlib.Path, allow_missing: bool) -> JSONDatabase:
    try:
        return JSONDatabase(
            path_workload=str(folder / WORKLOAD_FILE),
            path_tuning_record=str(folder / RECORD_FILE),
            allow_missing=allow_missing,
        )
    except Exception as err:  # pylint: disable=broad-except
        # the C++ reader raises a TVM error with the parser's message as its last line
        lines = [line.strip() for line in str(err).strip().splitlines() if line.strip()]
        raise TuningDatabaseError(
            f"tuning database {folder} is corrupt ({lines[-1] if lines else type(err).__name__})"
        ) from err


def load_database(
    path: Union[str, pathlib.Path], device=None, strict: bool = False
) -> Optional[JSONDatabase]:
    """The database at ``path`` when it was measured on ``device``, else None.

    Parameters
    ----------
    path : Union[str, pathlib.Path]
        The database folder.
    device : tvm.runtime.Device | Dict[str, str] | None
        The device the compiled model will run on. None: the caller vouches that it is the
        device recorded in the database (cross-compiling for a device that is not at hand).
    strict : bool
        Raise :class:`TuningDatabaseError` instead of logging and returning None.

    Returns
    -------
    database : Optional[JSONDatabase]
        None (the default schedules are used) when the database is from another device
        (a warning line) or cannot be read (an error line).
    """
    folder = pathlib.Path(path)
    try:
        recorded = read_device(folder)
        if device is not None and recorded != device_of(device):
            message = (
                f"tuning database {folder} skipped: measured on {_label(recorded)}, this "
                f"device is {_label(device_of(device))}; using the default schedules"
            )
            if strict:
                raise TuningDatabaseError(message)
            logger.warning(message)
            return None
        return _open_json(folder, allow_missing=False)
    except TuningDatabaseError as err:
        if strict:
            raise
        logger.error("%s; using the default schedules", err)
        return None
