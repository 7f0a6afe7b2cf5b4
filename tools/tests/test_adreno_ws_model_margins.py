"""model-margins: the need it reports is the exact tolerance at which the suite's comparison
starts to hold, and bad arguments are one line."""

import numpy as np
import pytest

from adreno_ws.model_margins import atol_needed, main, summarize


def _holds(actual, desired, atol_share, rtol, scale):
    """The texture suite's comparison (test_texture_models._assert_matches)."""
    err = np.abs(actual.astype("float64") - desired.astype("float64"))
    return bool(np.all(err <= atol_share * scale + rtol * np.abs(desired)))


@pytest.mark.parametrize("output_range", [0.0, 50.0])
def test_need_is_where_the_comparison_starts_to_hold(output_range):
    rng = np.random.default_rng()
    desired = rng.uniform(-3.0, 3.0, size=(4, 17)).astype("float32")
    actual = desired + rng.normal(0.0, 1e-3, size=desired.shape).astype("float32")
    rtol = 1e-3
    need = atol_needed(actual, desired, rtol, output_range)
    scale = max(float(np.abs(desired.astype("float64")).max()), output_range)
    assert need > 0
    assert _holds(actual, desired, need * (1 + 1e-9), rtol, scale)
    assert not _holds(actual, desired, need * (1 - 1e-6), rtol, scale)


def test_need_of_a_nan_is_infinite():
    desired = np.random.default_rng().uniform(1.0, 2.0, size=8)
    actual = desired.copy()
    actual[3] = np.nan
    assert atol_needed(actual, desired, 1e-3) == float("inf")


def test_summary_is_per_output():
    rng = np.random.default_rng()
    needs = rng.uniform(0.0, 1.0, size=(200, 3)) * np.array([1.0, 10.0, 100.0])
    stats = summarize(needs)
    assert np.array_equal(stats["max"], needs.max(axis=0))
    assert np.all(stats["q90"] <= stats["q99"]) and np.all(stats["q99"] <= stats["max"])
    # each output's statistics come from its own column
    assert np.all(stats["q90"][1:] > stats["max"][:-1] * 2)


def test_bad_arguments_are_one_line(capsys):
    assert main(["blazeface", "--draws", "0"]) == 2
    assert capsys.readouterr().out.strip() == "model-margins: --draws 0: give at least 1"
    assert main(["no_such_model", "--draws", "1"]) == 2
    out = capsys.readouterr().out.strip()
    assert out.startswith("model-margins: no model 'no_such_model' in the suite (one of: ")
    assert "pose_landmark" in out and "\n" not in out
