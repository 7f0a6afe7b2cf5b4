#!/usr/bin/env bash
# Install Intel's CPU OpenCL runtime from PyPI into a venv and register it with the ICD loader.
#
# usage: ci/opencl-intel.sh VENV [VENDORS_DIR]
#
#   VENV         the virtual environment to install into (its bin/python runs pip)
#   VENDORS_DIR  ICD vendors folder to write (default VENV/etc/OpenCL/vendors-tvm)
#
# The runtime is `intel-opencl-rt`; `intel-cmplr-lib-rt` is needed too but not declared (without
# it the loader lists no Intel platform).  The .icd file the package ships names a placeholder
# path (/opt/anaconda1anaconda2anaconda3/...), and its folder also holds an FPGA emulator entry,
# so this writes a folder of its own: intel-cpu.icd with the absolute path of libintelocl.so,
# plus a copy of the system pocl.icd (when there is one) so that both devices are visible and
# a test run picks one by name (TVM_OPENCL_DEVICE=intel or pocl).
#
# The last line printed is the export to use, e.g.
#   eval "$(ci/opencl-intel.sh .venv | tail -n 1)"
# Debian's ocl-icd loader reads OCL_ICD_VENDORS (a folder, one file or a library); it ignores
# OCL_ICD_FILENAMES.  Running it again changes nothing (pip is skipped when both packages are
# installed; the folder is rewritten with the same content).
set -euo pipefail

die() { printf 'opencl-intel: error: %s\n' "$*" >&2; exit 1; }
log() { printf 'opencl-intel: %s\n' "$*" >&2; }

[ $# -ge 1 ] && [ $# -le 2 ] || die "usage: $0 VENV [VENDORS_DIR]"
VENV="$(cd "$1" 2>/dev/null && pwd)" || die "no such venv folder: $1"
VPY="$VENV/bin/python"
[ -x "$VPY" ] || die "$VPY is not an executable python"
VENDORS="${2:-$VENV/etc/OpenCL/vendors-tvm}"
PACKAGES=(intel-opencl-rt intel-cmplr-lib-rt)

if "$VPY" -m pip show --quiet "${PACKAGES[@]}" >/dev/null 2>&1; then
    log "${PACKAGES[*]} already installed in $VENV"
else
    log "installing ${PACKAGES[*]} into $VENV (about 300 MB)"
    "$VPY" -m pip install --quiet --disable-pip-version-check "${PACKAGES[@]}" >&2
fi

# The library lands in VENV/lib (pip's data scheme); look it up through pip's file list
# rather than guessing, so a change of layout is an error, not a silent miss.
LIB="$("$VPY" - <<'EOF'
import importlib.metadata as md, pathlib, sys
dist = md.distribution("intel-opencl-rt")
hits = [pathlib.Path(dist.locate_file(f)).resolve() for f in dist.files or []
        if pathlib.PurePath(str(f)).name == "libintelocl.so"]
hits = [h for h in hits if h.is_file()]
print(hits[0] if hits else "")
EOF
)"
[ -n "$LIB" ] || die "intel-opencl-rt is installed but ships no libintelocl.so"

mkdir -p "$VENDORS"
printf '%s\n' "$LIB" > "$VENDORS/intel-cpu.icd"
if [ -f /etc/OpenCL/vendors/pocl.icd ]; then
    cp /etc/OpenCL/vendors/pocl.icd "$VENDORS/pocl.icd"
else
    rm -f "$VENDORS/pocl.icd"
    log "no /etc/OpenCL/vendors/pocl.icd: only the Intel device is registered"
fi
log "wrote $VENDORS: $(cd "$VENDORS" && echo *.icd)"

if command -v clinfo >/dev/null 2>&1; then
    if ! OCL_ICD_VENDORS="$VENDORS" clinfo -l 2>/dev/null | grep -qi "intel"; then
        die "the ICD loader does not list an Intel platform with OCL_ICD_VENDORS=$VENDORS"
    fi
    OCL_ICD_VENDORS="$VENDORS" clinfo -l >&2
fi

echo "export OCL_ICD_VENDORS=$VENDORS"
