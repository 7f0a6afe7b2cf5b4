"""The workspace's OpenCL enumeration without TVM (adreno_ws.opencl) and its users."""

import sys
from pathlib import Path

import pytest

from adreno_ws import opencl

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture(name="listed")
def fixture_listed():
    lib = opencl.load_library()
    if lib is None:
        pytest.skip("no OpenCL ICD loader (libOpenCL.so.1) on this machine")
    listed = opencl.device_handles(lib)
    if not listed:
        pytest.skip("the OpenCL ICD loader lists no device (check OCL_ICD_VENDORS)")
    return listed


def test_devices_are_the_enumerated_handles(listed):
    """``devices()`` names exactly the devices ``device_handles`` enumerates, in its order, and
    every handle is a live pointer."""
    assert opencl.devices() == [f"{pname} / {dname}" for _, pname, _, dname in listed]
    for platform, pname, device, dname in listed:
        assert platform and device and pname != "?" and dname != "?", (pname, dname)


def test_clbench_picks_its_device_from_the_enumeration(listed, monkeypatch):
    """bench/clbench.py opens the first enumerated device whose platform or name contains the
    selection, and refuses a selection that matches none in one line."""
    monkeypatch.syspath_prepend(str(BENCH))
    sys.modules.pop("clbench", None)
    import clbench  # pylint: disable=import-outside-toplevel

    dname = listed[-1][3]
    cl = clbench.OpenCL(dname)
    first = next(d for d in listed if dname.lower() in f"{d[1]} {d[3]}".lower())
    assert (cl.platform, cl.device) == (first[0], first[2])
    assert cl.info()["device"] == first[3]
    with pytest.raises(RuntimeError, match="no OpenCL device matches 'no-such-opencl-device'"):
        clbench.OpenCL("no-such-opencl-device")


def test_venv_icds_fill_only_an_unset_vendors_variable(tmp_path):
    with_venv_icds = opencl.with_venv_icds
    assert with_venv_icds({}, tmp_path) == {}  # setup wrote no ICD list: nothing to point at
    vendors = tmp_path / "etc" / "OpenCL" / "vendors-tvm"
    vendors.mkdir(parents=True)
    assert with_venv_icds({"A": "1"}, tmp_path) == {"A": "1", "OCL_ICD_VENDORS": str(vendors)}
    chosen = {"OCL_ICD_VENDORS": "/elsewhere"}
    assert with_venv_icds(chosen, tmp_path) == {"OCL_ICD_VENDORS": "/elsewhere"}
