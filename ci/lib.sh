#!/usr/bin/env bash
# Shared functions of ci/job.sh and ci/test.sh (sourced, not run).
#
# Environment:
#   PYTHON                 interpreter that runs the tooling and makes the venv (python3, >= 3.11)
#   ADRENO_WS_VENV         the venv (default <repo>/.venv)
#   ADRENO_WS_TEST_TIMEOUT seconds one pytest run may take (default 3000)
#   TVM_OPENCL_DEVICE      set per run by run_texture_suite (substring of platform/device name)
#   ADRENO_WS_SETUP_ARGS   extra arguments of `adreno_ws setup` (e.g. --skip-intel)

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
VENV="${ADRENO_WS_VENV:-$REPO/.venv}"
VPY="$VENV/bin/python"
OUT="$REPO/build/ci"
# The real-model tests append one JSON line per model: texture vs buffer operator counts.
export TEXTURE_CENSUS_FILE="$OUT/census.jsonl"
TEST_TIMEOUT="${ADRENO_WS_TEST_TIMEOUT:-3000}"
START_TIME=$(date +%s)

step() { printf '\n==== %s\n' "$*"; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

ws() { PYTHONPATH="$REPO/tools${PYTHONPATH:+:$PYTHONPATH}" "$PYTHON" -m adreno_ws "$@"; }

# Everything a fresh machine needs: venv, requirements, OpenCL packages, patches, runtime.
ws_setup() {
    "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
        || die "$PYTHON is older than 3.11: set PYTHON to a python3.11 or newer"
    mkdir -p "$OUT" && rm -f "$OUT"/*.xml "$TEXTURE_CENSUS_FILE"
    step "setup ($VENV)"
    ws setup --venv "$VENV" ${ADRENO_WS_SETUP_ARGS:-}
    # Intel's CPU OpenCL (installed by setup) is registered beside PoCL in this folder.
    if [ -d "$VENV/etc/OpenCL/vendors-tvm" ]; then
        export OCL_ICD_VENDORS="$VENV/etc/OpenCL/vendors-tvm"
    fi
}

# run_pytest NAME ARGS...: pytest -n 2 in the venv, JUnit XML to build/ci/NAME.xml.
# Returns pytest's status; 5 (no tests collected) is returned as is for the caller to judge.
run_pytest() {
    local name="$1"; shift
    local rc=0
    rm -f "$OUT/$name.xml"
    (cd "$REPO" && timeout --signal=INT --kill-after=60 "$TEST_TIMEOUT" \
        "$VPY" -m pytest -n 2 -p no:cacheprovider -rfE --junitxml="$OUT/$name.xml" "$@") || rc=$?
    if [ "$rc" -eq 124 ]; then
        echo "error: pytest ($name) ran past ${TEST_TIMEOUT}s (ADRENO_WS_TEST_TIMEOUT)" >&2
    fi
    return "$rc"
}

# run_texture_suite SELECTOR: the texture suite on the OpenCL device whose platform or device
# name contains SELECTOR (empty: the first device). Results: build/ci/texture-<slug>.xml.
# Returns 0 (passed), 5 (no tests collected) or pytest's failure status.
run_texture_suite() {
    local selector="$1"
    local slug
    slug="texture-$(printf '%s' "${selector:-default}" | tr -c 'A-Za-z0-9' '-' | tr 'A-Z' 'a-z')"
    step "texture suite on OpenCL device '${selector:-<first>}'"
    ws opencl --select "$selector" || return 1
    local rc=0
    # The OpenCL runtime tests run on the same device, before the texture suite that needs it.
    TVM_OPENCL_DEVICE="$selector" run_pytest "$slug" tests/python/runtime/opencl \
        tests/python/relax/texture || rc=$?
    if [ "$rc" -eq 5 ]; then
        echo "warning: no texture tests were collected for '${selector:-<first>}'"
    fi
    return "$rc"
}

elapsed() { local s=$(( $(date +%s) - START_TIME )); printf '%dm%02ds' $((s / 60)) $((s % 60)); }

# summary VERDICT: devices, patches, time, the verdict, then per-run and total test counts
# (the totals line, "total: N passed, N failed, N skipped", is the last line printed).
summary() {
    step "summary"
    echo "OpenCL devices:"
    ws opencl 2>/dev/null | sed 's/^/  /' || echo "  (none)"
    echo "patches applied ($(grep -cv '^\s*\(#\|$\)' "$REPO/patches/series") in series):"
    grep -v '^\s*\(#\|$\)' "$REPO/patches/series" | sed 's/^/  /'
    echo "time: $(elapsed)"
    echo "$1"
    echo "real models: right or wrong per device; kernels on textures / buffers / layout transforms:"
    ws census-summary "$TEXTURE_CENSUS_FILE"
    echo "tests:"
    local files=("$OUT"/*.xml)
    if [ -e "${files[0]}" ]; then
        ws junit-summary "${files[@]}"
    else
        echo "total: 0 passed, 0 failed, 0 skipped"
    fi
}
