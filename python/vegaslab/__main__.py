"""``python -m vegaslab``: the same command line as ``vegaslab``."""

import sys

from vegaslab.cli import main

sys.exit(main())
