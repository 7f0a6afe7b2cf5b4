"""Smaller pieces: the dpkg check behind setup, JUnit totals, the base pin, the CLI."""

import pytest

from adreno_ws import WsError
from adreno_ws.cli import main
from adreno_ws.opencl import PACKAGES, missing_packages
from adreno_ws.report import junit_counts, missing_asf_header
from adreno_ws.repo import read_base_pin


def test_missing_packages_reads_dpkg_status(tmp_path):
    status = tmp_path / "status"
    status.write_text(
        "Package: clinfo\nStatus: install ok installed\n\n"
        "Package: pocl-opencl-icd\nStatus: deinstall ok config-files\n\n"
    )
    assert missing_packages(status) == [p for p in PACKAGES if p != "clinfo"]
    assert missing_packages(tmp_path / "absent") == list(PACKAGES)


def test_junit_counts(tmp_path):
    xml = tmp_path / "r.xml"
    xml.write_text(
        '<testsuites><testsuite tests="7" failures="1" errors="1" skipped="2"/></testsuites>'
    )
    assert junit_counts(xml) == {"passed": 3, "failed": 1, "skipped": 2, "errors": 1}
    assert junit_counts(tmp_path / "none.xml")["passed"] == 0


def test_base_pin_errors(tmp_path):
    (tmp_path / "ci").mkdir()
    with pytest.raises(WsError, match="requirements-base.txt is missing"):
        read_base_pin(tmp_path)
    (tmp_path / "ci/requirements-base.txt").write_text("# comment\napache-tvm-ffi==1\n")
    with pytest.raises(WsError, match="no 'apache-tvm==VERSION' line"):
        read_base_pin(tmp_path)
    (tmp_path / "ci/requirements-base.txt").write_text("apache_tvm == 1.2.post3  # pin\n")
    assert read_base_pin(tmp_path).version == "1.2.post3"


def test_cli_errors_are_one_line_each(workspace, capsys):
    assert main(["--repo", str(workspace), "patches", "apply"]) == 1
    assert capsys.readouterr().err == "error: give exactly one of --target DIR or --venv PATH\n"


def test_asf_header_check(tmp_path):
    bad = tmp_path / "a.py"
    bad.write_text("x = 1\n")
    assert missing_asf_header(bad)


def test_census_summary_keeps_the_last_record_per_model(tmp_path, capsys):
    census = tmp_path / "census.jsonl"
    census.write_text(
        '{"model": "net", "kernels_texture": 1, "kernels_buffer": 9, "kernels_layout_transform": 0}\n'
        "not json\n"
        '{"model": "net", "kernels_texture": 7, "kernels_buffer": 2, "kernels_layout_transform": 3}\n'
        '{"model": "net", "device": "intel", "right": true}\n'
        '{"model": "net", "device": "portable", "right": false}\n'
        '{"model": "other", "kernels_texture": 1, "kernels_buffer": 0, "kernels_layout_transform": 0}\n',
        encoding="utf-8",
    )
    assert main(["census-summary", str(census)]) == 0
    out = capsys.readouterr().out
    assert (
        "net: right on intel; WRONG on portable; 7 texture / 2 buffer kernels "
        "(+3 layout transforms)" in out
    )
    assert "other: not run; 1 texture / 0 buffer kernels" in out
    assert "net: right on intel; WRONG on portable; 1 texture" not in out
    assert "malformed census line" in out


def test_census_summary_without_records(tmp_path, capsys):
    assert main(["census-summary", str(tmp_path / "absent.jsonl")]) == 0
    assert "no model census recorded" in capsys.readouterr().out
