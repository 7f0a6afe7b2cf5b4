"""The seed sweep: the suite's sweep mode finds exactly the seeds a flaky test fails on, and
``adreno_ws seed-sweep`` reports them per device."""

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from adreno_ws import WsError
from adreno_ws.seed_sweep import parse_junit, run_sweep

REPO = Path(__file__).resolve().parents[2]
PLUGIN_DIR = REPO / "tests" / "python" / "relax" / "texture"

# A test that fails for roughly a third of its seeds, the same marked slow (swept only when
# asked), one that never depends on the seed, and one that does not take rng at all (the sweep
# must not collect it).
FLAKY_SUITE = """
import numpy as np
import pytest

@pytest.mark.slow
def test_slow_flaky(rng):
    assert rng.uniform() < 0.66, "drew a large value"

def test_flaky(rng):
    assert rng.uniform() < 0.66, "drew a large value"

def test_steady(rng):
    assert 0 <= rng.uniform() < 1

def test_no_rng():
    raise AssertionError("collected although it takes no rng")
"""


def _make_suite(tmp_path: Path) -> Path:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "conftest.py").write_text(textwrap.dedent(f"""
            import sys
            sys.path.insert(0, {str(PLUGIN_DIR)!r})
            import numpy as np
            import pytest
            from seed_sweep_plugin import pytest_collection_modifyitems, pytest_pyfunc_call

            @pytest.fixture
            def rng():
                return np.random.default_rng(0)
            """))
    (suite / "test_flaky.py").write_text(FLAKY_SUITE)
    return suite


def _expected_failing_seeds(count: int, base: int) -> list:
    seeds = [int(s) for s in np.random.SeedSequence(base).generate_state(count)]
    return [s for s in seeds if not np.random.default_rng(s).uniform() < 0.66]


def _sweep(suite: Path, slow: bool = False):
    """30 seeds of sweep 7 over ``suite`` on one device, in this interpreter."""
    return run_sweep(
        suite,
        Path(sys.executable),
        ["dev-a"],
        seeds=30,
        base=7,
        paths=[str(suite)],
        workers=1,
        extra=["-p", "no:xdist"],
        slow=slow,
    )


def test_sweep_lists_exactly_the_failing_seeds(tmp_path):
    suite = _make_suite(tmp_path)
    failures = _sweep(suite)
    expected = _expected_failing_seeds(30, 7)
    assert expected, "the sample must contain failing seeds for this test to mean anything"
    assert [f.test.split("::")[-1] for f in failures] == ["test_flaky"]
    (flaky,) = failures
    assert list(flaky.seeds) == expected
    assert flaky.total == 30
    assert flaky.device == "dev-a"
    assert f"TEXTURE_TESTS_SEED={expected[0]}" in flaky.line()


def test_slow_tests_are_swept_when_asked(tmp_path):
    failures = _sweep(_make_suite(tmp_path), slow=True)
    expected = _expected_failing_seeds(30, 7)
    assert sorted(f.test.split("::")[-1] for f in failures) == ["test_flaky", "test_slow_flaky"]
    assert all(list(f.seeds) == expected for f in failures)


def test_sweep_off_runs_each_test_once(tmp_path):
    suite = _make_suite(tmp_path)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(suite)],
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": "/usr/bin:/bin"},
    )
    # Seed 0 draws 0.637: both flaky tests pass once; test_no_rng is collected and fails.
    assert "1 failed, 3 passed" in result.stdout, result.stdout


def test_bad_arguments_are_one_line_errors(tmp_path):
    with pytest.raises(WsError, match="at least 1 seed"):
        run_sweep(tmp_path, Path(sys.executable), ["x"], 0, 0, [], 1, [])
    with pytest.raises(WsError, match="no interpreter"):
        run_sweep(tmp_path, tmp_path / "nope" / "python", ["x"], 3, 0, [], 1, [])
    with pytest.raises(WsError, match="no JUnit results"):
        parse_junit(tmp_path / "absent.xml", "x")
