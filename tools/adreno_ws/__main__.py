"""``python -m adreno_ws``."""

import sys

from .cli import main

sys.exit(main())
