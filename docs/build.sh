#!/usr/bin/env bash
# Build the workspace docs with warnings as errors and check their internal links.
#
# usage: docs/build.sh [OUTDIR]        (default build/docs)
#
# Environment:
#   PYTHON            interpreter with the patched tvm (default: <repo>/.venv/bin/python if it
#                     exists, else python3). Sphinx runs under it, since autodoc imports tvm.
#   DOCS_NO_INSTALL=1 fail instead of installing ci/requirements-docs.txt when Sphinx is missing
#
# Steps: (1) sphinx-build -W -n (nitpicky: every :doc:, :ref: and Python cross reference must
# resolve, every warning fails the build); (2) docs/check_links.py: every relative link, image
# and anchor in the built HTML must exist. No network is used (no external link check).
set -euo pipefail

DOCS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(dirname "$DOCS")"
OUTDIR="${1:-$REPO/build/docs}"
if [ -z "${PYTHON:-}" ]; then
    if [ -x "$REPO/.venv/bin/python" ]; then PYTHON="$REPO/.venv/bin/python"; else PYTHON=python3; fi
fi

if ! "$PYTHON" -c 'import sphinx, furo' 2>/dev/null; then
    if [ "${DOCS_NO_INSTALL:-0}" = 1 ]; then
        echo "docs: error: Sphinx is not installed for $PYTHON: pip install -r ci/requirements-docs.txt" >&2
        exit 1
    fi
    echo "docs: installing ci/requirements-docs.txt into $PYTHON" >&2
    "$PYTHON" -m pip install --quiet --disable-pip-version-check -r "$REPO/ci/requirements-docs.txt" >&2
fi
"$PYTHON" -c 'import tvm' 2>/dev/null \
    || { echo "docs: error: $PYTHON cannot import tvm: run 'python -m adreno_ws setup' or set PYTHON" >&2; exit 1; }

start=$(date +%s)
rm -rf "$OUTDIR/html"
# -E: no saved environment (always a full build); -j 1: autodoc imports tvm once.
"$PYTHON" -m sphinx -b html -W --keep-going -n -E -q "$DOCS" "$OUTDIR/html"
"$PYTHON" "$DOCS/check_links.py" "$OUTDIR/html"
echo "docs: built $OUTDIR/html in $(( $(date +%s) - start ))s (no warnings, internal links ok)"
