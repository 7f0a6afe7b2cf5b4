"""compiler_ext: the series' compiler C++ is installed where ``import tvm`` loads it."""

import importlib.metadata
import subprocess
import sys
from pathlib import Path

import pytest

from adreno_ws import compiler_ext


def _fake_site_packages(root: Path) -> Path:
    (root / "tvm" / "lib").mkdir(parents=True)
    (root / "tvm" / "lib" / "libtvm_compiler.so").write_bytes(b"")
    return root


def test_install_writes_the_library_and_a_tvm_backends_entry_point(tmp_path):
    site = _fake_site_packages(tmp_path / "site")
    built = tmp_path / compiler_ext.LIB_NAME
    built.write_bytes(b"\x7fELF stand-in")
    dest = compiler_ext.install(built, site)
    assert dest == site / "tvm" / "lib" / compiler_ext.LIB_NAME
    assert dest.read_bytes() == built.read_bytes()
    found = [
        ep
        for dist in importlib.metadata.distributions(path=[str(site)])
        for ep in dist.entry_points
        if ep.group == "tvm.backends"
    ]
    assert [ep.value for ep in found] == [f"{compiler_ext.DIST_NAME}:load"]
    # the loader module imports (it is written as text)
    loader = site / f"{compiler_ext.DIST_NAME}.py"
    compile(loader.read_text(), str(loader), "exec")


def test_install_into_a_folder_without_the_compiler_library_is_refused(tmp_path):
    (tmp_path / "site" / "tvm" / "lib").mkdir(parents=True)
    built = tmp_path / compiler_ext.LIB_NAME
    built.write_bytes(b"")
    with pytest.raises(compiler_ext.RuntimeBuildError, match="no libtvm_compiler.so in"):
        compiler_ext.install(built, tmp_path / "site")


def test_the_series_sources_are_the_mirror_files():
    assert [p.name for p in compiler_ext.sources()] == ["pass_config.cc"]
    assert all("TVM_REGISTER_PASS_CONFIG_OPTION" in p.read_text() for p in compiler_ext.sources())


def test_every_registered_option_is_documented():
    text = "".join(p.read_text() for p in compiler_ext.sources())
    keys = [
        line.split('"')[1]
        for line in text.splitlines()
        if 'TVM_REGISTER_PASS_CONFIG_OPTION("' in line
    ]
    assert keys, "no option registered"
    page = (compiler_ext.REPO_ROOT / "docs" / "reference" / "options.rst").read_text()
    assert [k for k in keys if f"``{k}``" not in page] == []
