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
"""Seed-sweep mode of the texture suite (no TVM import, so the tooling tests can load it).

``TEXTURE_TESTS_SEED_SWEEP=N`` (N > 0) keeps only the tests that take the ``rng`` fixture and
runs each body once per seed of a sweep of N seeds (``TEXTURE_TESTS_SEED_SWEEP_BASE`` picks the
sweep, default 0). A test fails with the list of every seed that failed, each with its replay
line (``TEXTURE_TESTS_SEED=S``), so one run tells how often a test fails.
"""

import os
import traceback

import numpy as np
import pytest


def sweep_seeds() -> list:
    """The seeds of the seed sweep (empty when the sweep is off)."""
    count = int(os.environ.get("TEXTURE_TESTS_SEED_SWEEP", "0") or 0)
    if count <= 0:
        return []
    base = int(os.environ.get("TEXTURE_TESTS_SEED_SWEEP_BASE", "0") or 0)
    return [int(s) for s in np.random.SeedSequence(base).generate_state(count)]


def pytest_collection_modifyitems(config, items):
    """In sweep mode keep only the tests whose data depends on the seed."""
    if not sweep_seeds():
        return
    kept = [item for item in items if "rng" in getattr(item, "fixturenames", ())]
    dropped = [item for item in items if "rng" not in getattr(item, "fixturenames", ())]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = kept


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    """Sweep mode: run the test body once per sweep seed with a fresh Generator each time,
    and fail with the list of seeds that failed (every seed runs, not only up to the first
    failure, so one run tells how often a test fails)."""
    seeds = sweep_seeds()
    if not seeds or "rng" not in pyfuncitem.funcargs:
        return None
    names = pyfuncitem._fixtureinfo.argnames  # pylint: disable=protected-access
    kwargs = {name: pyfuncitem.funcargs[name] for name in names}
    failures = []
    for seed in seeds:
        kwargs["rng"] = np.random.default_rng(seed)
        try:
            pyfuncitem.obj(**kwargs)
        except (pytest.skip.Exception, pytest.xfail.Exception):
            raise
        except Exception as err:  # pylint: disable=broad-except
            last = traceback.format_exception_only(type(err), err)[-1].strip()
            failures.append(f"seed={seed} (replay: TEXTURE_TESTS_SEED={seed}): {last[:300]}")
    pyfuncitem.user_properties.append(("sweep", f"{len(failures)}/{len(seeds)} seeds failed"))
    if failures:
        raise AssertionError(
            f"{len(failures)} of {len(seeds)} seeds failed:\n" + "\n".join(failures)
        )
    return True


