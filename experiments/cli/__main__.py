"""``python -m twbn.experiments.cli``: the ``twbn`` command."""

import sys

from twbn.experiments.cli import main

__all__: list[str] = []

if __name__ == "__main__":
    sys.exit(main())
