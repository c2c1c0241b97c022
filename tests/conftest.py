import gzip
import os
import signal
from pathlib import Path

import pytest

# The data folder of the sets twbn does not ship (DEBD): $TWBN_DATA, else ../shared/data
# beside the checkout (as CI lays it out). The UCI sets are bundled; bnlearn comes with pgmpy.
SHARED = Path(os.environ.get("TWBN_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")
BUNDLED = Path(__file__).resolve().parents[1] / "experiments" / "data"


# A test still running after this long fails, by name, with the stack where it waited: a
# hang would otherwise hold CI until its own limit and say nothing of which test it was
# (faulthandler's dump at 900 s, pyproject.toml, shows every thread's stack first).
TEST_LIMIT_S = 1200


class TestTookTooLong(Exception):
    pass


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    def _expire(_signum, _frame):
        raise TestTookTooLong(f"{item.nodeid} still running after {TEST_LIMIT_S} s")

    previous = signal.signal(signal.SIGALRM, _expire)
    signal.alarm(TEST_LIMIT_S)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


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


def or_chain_frame(n_vars: int = 250, n_rows: int = 2500, seed: int = 1):
    """Binary columns, each after the first three the OR of two earlier ones with 10 % of
    its cells flipped: data whose k >= 2 networks beat the trees, and whose families take
    seconds to score."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    x = np.zeros((n_vars, n_rows), dtype=int)
    x[:3] = rng.integers(0, 2, (3, n_rows))
    for i in range(3, n_vars):
        a, b = rng.choice(i, 2, replace=False)
        x[i] = (x[a] | x[b]) ^ (rng.random(n_rows) < 0.1)
    return pd.DataFrame({f"x{i}": x[i] for i in range(n_vars)})
