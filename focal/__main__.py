"""``python -m focal``: the focal command line."""

import sys

from .cli import main

sys.exit(main())
