"""Local scores against hand computation and against pgmpy."""

import itertools
import math
import random

import pytest

from twbn.scoring.data import read_csv
from twbn.scoring.local_scores import Scorer
from tests.conftest import BUNDLED

LN2, LN3 = math.log(2), math.log(3)


@pytest.fixture
def tiny(write_csv):
    # X = 0,0,1,1 and Y = 0,1,1,1 (N = 4): worked out by hand below.
    return read_csv(write_csv("X,Y\n0,0\n0,1\n1,1\n1,1\n"))


def test_bic_by_hand(tiny):
    s = Scorer(tiny, "bic")
    # LL(X|∅) = 4·ln(1/2); penalty (ln 4 / 2)·1·1 = ln 2.
    assert s.local_score(0, ()) == pytest.approx(-5 * LN2, abs=1e-12)
    # LL(X|Y) = 1·ln 1 + ln(1/3) + 2 ln(2/3) = 2 ln 2 − 3 ln 3; penalty ln 2 · 2.
    assert s.local_score(0, (1,)) == pytest.approx(-3 * LN3, abs=1e-12)
    assert s.entropy(0) == pytest.approx(LN2, abs=1e-12)
    assert s.entropy(0, (1,)) == pytest.approx(-(2 * LN2 - 3 * LN3) / 4, abs=1e-12)


def test_aic_by_hand(tiny):
    s = Scorer(tiny, "aic")
    assert s.local_score(0, ()) == pytest.approx(-4 * LN2 - 1, abs=1e-12)
    assert s.local_score(0, (1,)) == pytest.approx(2 * LN2 - 3 * LN3 - 2, abs=1e-12)


def test_bdeu_by_hand(tiny):
    s = Scorer(tiny, "bdeu", ess=1.0)
    # q = 1: lnΓ(1) − lnΓ(5) + 2·[lnΓ(5/2) − lnΓ(1/2)] = −ln 24 + 2 ln(3/4) = ln(3/128).
    assert s.local_score(0, ()) == pytest.approx(math.log(3 / 128), abs=1e-12)
    # q = 2, α/q = 1/2, α/(qr) = 1/4. Y=0: ln 2 + ln(1/4) = −ln 2;
    # Y=1: −ln(15/8) + ln(1/4) + ln(5/16) = −ln 24. Total −ln 48.
    assert s.local_score(0, (1,)) == pytest.approx(-math.log(48), abs=1e-12)


def test_rejects_bad_arguments(tiny):
    with pytest.raises(ValueError, match="unknown score"):
        Scorer(tiny, "k2")
    with pytest.raises(ValueError, match="positive equivalent sample size"):
        Scorer(tiny, "bdeu", ess=0)
    with pytest.raises(ValueError, match="own parent"):
        Scorer(tiny).local_score(0, (0,))


@pytest.mark.parametrize("fname", ["zoo.csv.gz", "housing.csv.gz"])
@pytest.mark.parametrize("score", ["bic", "aic", "bdeu"])
def test_agrees_with_pgmpy(fname, score):
    pd = pytest.importorskip("pandas")
    structure_score = pytest.importorskip("pgmpy.structure_score")
    path = BUNDLED / fname
    ds = read_csv(path)
    df = pd.read_csv(path, dtype=str)
    ess = 2.5
    ref = {
        "bic": lambda: structure_score.BIC(df),
        "aic": lambda: structure_score.AIC(df),
        "bdeu": lambda: structure_score.BDeu(df, equivalent_sample_size=ess),
    }[score]()
    ours = Scorer(ds, score, ess=ess)
    rng = random.Random(7)
    n = ds.n_variables
    for _ in range(40):
        child = rng.randrange(n)
        size = rng.randrange(4)
        parents = tuple(sorted(rng.sample([v for v in range(n) if v != child], size)))
        expected = ref.local_score(ds.names[child], tuple(ds.names[p] for p in parents))
        assert ours.local_score(child, parents) == pytest.approx(expected, rel=1e-10, abs=1e-9)


def test_batch_equals_single_and_prefix_reuse():
    ds = read_csv(BUNDLED / "zoo.csv.gz")
    s = Scorer(ds, "bic")
    for parents in itertools.combinations(range(5), 3):
        children = [v for v in range(ds.n_variables) if v not in parents]
        batch, _ = s.family(parents, children)
        fresh = Scorer(ds, "bic")
        for c, v in zip(children, batch.tolist()):
            assert v == pytest.approx(fresh.local_score(c, parents), abs=1e-9)
