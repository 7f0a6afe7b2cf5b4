#!/usr/bin/env bash
# The Adreno texture CI job, from nothing on a fresh machine:
#   set up (venv, base, OpenCL packages), apply patches/, build the OpenCL runtime, run the
#   OpenCL runtime tests (tests/python/runtime/opencl) and the texture suite
#   (tests/python/relax/texture) on each OpenCL device, print a summary.
#
# Devices: ADRENO_WS_DEVICES is a space-separated list of selectors (substrings of the OpenCL
# platform or device name, passed to the suite as TVM_OPENCL_DEVICE); default "portable intel":
# PoCL (no cl_khr_fp16, no cl_khr_image2d_from_buffer) and Intel's CPU OpenCL (both), so
# each fallback is exercised on one side and the feature on the other.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

ws_setup
step "patch series (applies, re-exports unchanged, mirror == tip, each patch's tests at its position on PoCL; with patches/stack.toml each PR's tests at its tip and its lint)"
ws series check --jobs 2

status=0
ran_any=0
for device in ${ADRENO_WS_DEVICES:-portable intel}; do
    rc=0
    run_texture_suite "$device" || rc=$?
    case "$rc" in
        0) ran_any=1 ;;
        5) ;;
        *) status=1 ;;
    esac
done
if [ "$status" -ne 0 ]; then
    verdict="FAILED"
elif [ "$ran_any" -eq 0 ]; then
    verdict="FAILED: no texture test ran on any device"
else
    verdict="passed"
fi
summary "job: $verdict"
[ "$verdict" = passed ]
