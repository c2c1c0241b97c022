import gzip
import os
from pathlib import Path

import pytest

# The data folder of the sets twbn does not ship (DEBD): $TWBN_DATA, else ../shared/data
# beside the checkout (as CI lays it out). The UCI sets are bundled; bnlearn comes with pgmpy.
SHARED = Path(os.environ.get("TWBN_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")
BUNDLED = Path(__file__).resolve().parents[1] / "experiments" / "data"


def shared_or_skip(rel: str) -> Path:
    """A file of the data folder; tests that need it skip where the folder is absent."""
    p = SHARED / rel
    if not p.exists():
        pytest.skip(f"{p} not available")
    return p


@pytest.fixture
def write_csv(tmp_path):
    def _write(text: str, name: str = "data.csv", gz: bool = False) -> Path:
        p = tmp_path / (name + (".gz" if gz else ""))
        if gz:
            with gzip.open(p, "wt", encoding="utf-8") as fh:
                fh.write(text)
        else:
            p.write_text(text, encoding="utf-8")
        return p

    return _write
