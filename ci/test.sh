#!/usr/bin/env bash
# The whole workspace suite, what .ci/run runs: setup, patch check, then one pytest -n 2 run
# over the tooling tests (tools/tests) and the texture suite (tests/python/relax/texture).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

ws_setup
step "patch series"
ws patches check
step "license headers"
ws headers || echo "warning: add the ASF header to the files above before sending upstream"

suites=(tools/tests)
[ -d "$REPO/tests/python/relax/texture" ] && suites+=(tests/python/relax/texture)
step "pytest -n 2 ${suites[*]}"
rc=0
run_pytest workspace "${suites[@]}" || rc=$?
if [ "$rc" -eq 5 ]; then
    # tools/tests always has tests: collecting none means the suite is broken, not empty.
    verdict="FAILED: pytest collected no tests"
elif [ "$rc" -ne 0 ]; then
    verdict="FAILED (pytest exit $rc)"
else
    verdict="passed"
fi
summary "test: $verdict"
[ "$verdict" = passed ]
