import gzip
import os
from pathlib import Path

import pytest

# ../shared beside the checkout (as CI lays it out), or $TWBN_SHARED
SHARED = Path(os.environ.get("TWBN_SHARED", Path(__file__).resolve().parents[2] / "shared")) / "data"
BUNDLED = Path(__file__).resolve().parents[1] / "experiments" / "data"


def shared_or_skip(rel: str) -> Path:
    """A file of ../shared/data; tests that need it skip where the folder is absent."""
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
