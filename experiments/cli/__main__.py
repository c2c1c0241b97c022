"""``python -m twbn.experiments.cli``: the ``twbn`` command."""

import sys

from twbn.experiments.cli import main

sys.exit(main())
