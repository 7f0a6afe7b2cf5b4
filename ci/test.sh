#!/usr/bin/env bash
# The whole workspace suite, what .ci/run runs: setup, patch check, then pytest -n 2 over the
# tooling tests (tools/tests), the docs (tests/docs), the unit tests that go upstream with their
# patches (IR tests of the passes, rules and pipelines), the OpenCL runtime tests and the texture
# suite on PoCL, and the unit, runtime and texture tests once more on Intel's CPU OpenCL.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

ws_setup
step "patch series (applies, re-exports unchanged, mirror == tip, each patch's tests at its position on PoCL; with patches/stack.toml each PR's tests at its tip and its lint)"
ws series check --jobs 2
step "license headers"
ws headers || echo "warning: add the ASF header to the files above before sending upstream"

# The unit tests at upstream's test paths, one folder per part of the series.
unit_suites=()
for dir in tests/python/relax/backend/adreno tests/python/relax/backend/gpu_generic \
    tests/python/s_tir/dlight tests/python/s_tir/meta_schedule tests/python/s_tir/base \
    tests/python/s_tir/transform tests/python/tirx-base tests/python/topi; do
    [ -d "$REPO/$dir" ] && unit_suites+=("$dir")
done
# Frontend tests sit beside upstream's own in tests/python/relax (test_frontend_*.py), and
# runtime ones in tests/python/runtime.
for file in "$REPO"/tests/python/relax/test_*.py "$REPO"/tests/python/runtime/test_*.py; do
    [ -f "$file" ] && unit_suites+=("${file#"$REPO"/}")
done
suites=(tools/tests)
[ -d "$REPO/tests/docs" ] && suites+=(tests/docs)
device_suites=("${unit_suites[@]}")
[ -d "$REPO/tests/python/runtime/opencl" ] && device_suites+=(tests/python/runtime/opencl)
[ -d "$REPO/tests/python/relax/texture" ] && device_suites+=(tests/python/relax/texture)
suites+=("${device_suites[@]}")
step "pytest -n 2 ${suites[*]} (OpenCL device: PoCL)"
rc=0
TVM_OPENCL_DEVICE=portable run_pytest workspace "${suites[@]}" || rc=$?
if [ "$rc" -eq 5 ]; then
    # tools/tests always has tests: collecting none means the suite is broken, not empty.
    verdict="FAILED: pytest collected no tests"
elif [ "$rc" -ne 0 ]; then
    verdict="FAILED (pytest exit $rc)"
else
    verdict="passed"
fi
# The second host device: Intel's CPU OpenCL has cl_khr_fp16 and image-from-buffer, PoCL has
# neither, so the texture suite runs on both (ADRENO_WS_SETUP_ARGS=--skip-intel leaves it out).
if OCL_ICD_VENDORS="${OCL_ICD_VENDORS:-}" ws opencl --select intel >/dev/null 2>&1; then
    irc=0
    # The real models run on textures on both devices; their frontend checks against the
    # framework run on the CPU alone (LLVM) and ran above.
    step "${device_suites[*]} on OpenCL device 'intel' (without the CPU-only frontend checks)"
    TVM_OPENCL_DEVICE=intel run_pytest texture-intel \
        -k "not test_frontend_matches_framework_on_cpu" "${device_suites[@]}" || irc=$?
    if [ "$irc" -ne 0 ] && [ "$verdict" = passed ]; then
        verdict="FAILED (tests on Intel OpenCL: pytest exit $irc)"
    fi
else
    echo "note: no Intel OpenCL device (setup ran with --skip-intel?): texture suite ran on PoCL only"
fi
summary "test: $verdict"
[ "$verdict" = passed ]
