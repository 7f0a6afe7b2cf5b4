"""pytest fixtures of the tooling tests (defined in adreno_ws_fixtures.py).

Helpers live in a uniquely named module: tests import ``adreno_ws_fixtures``, never
``conftest``, since the texture suite has a conftest.py of its own in the same pytest run.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# pylint: disable=wrong-import-position,unused-import
from adreno_ws_fixtures import fake_base, site_packages, venv, workspace  # noqa: E402,F401
