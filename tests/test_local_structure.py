"""PCART and FT local scores: the DP against brute-force enumeration of every PCART
tree, the normaliser against the same enumeration, FT against hand computation, the
Normal-inverse-gamma leaf against a product of Student-t predictives, invariance to row
order, and the cache and command line."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from twbn.experiments.cli import main
from twbn.scoring.local_structure import (
    build_local_structure_cache,
    categorical_leaf,
    continuous_leaf,
    ft_score,
    local_structure_score,
    log_tree_normaliser,
    pcart_fit,
)
from twbn.scoring.mixed_data import from_columns


def _data(cols: dict, **kw):
    return from_columns(list(cols), [np.asarray(c).astype(str) for c in cols.values()], **kw)


# --- brute force: every PCART tree of S_P, written independently of the DP -------------

def _all_trees(node, kinds, s):
    """Every tree below ``node`` as a list of leaves. A node is a tuple with, per
    predictor, a frozenset of values (categorical) or a half-open range of finest-level
    cells (continuous, length 2^(levels left))."""
    yield [node]
    for i, (e, kind) in enumerate(zip(node, kinds)):
        if kind == "cat":
            seen = set()
            for k in range(1, len(e)):
                for a in itertools.combinations(sorted(e), k):
                    pair = frozenset({frozenset(a), e - frozenset(a)})
                    if pair in seen:
                        continue
                    seen.add(pair)
                    left, right = node[:i] + (frozenset(a),) + node[i + 1:], node[:i] + (e - frozenset(a),) + node[i + 1:]
                    for tl in _all_trees(left, kinds, s):
                        for tr in _all_trees(right, kinds, s):
                            yield tl + tr
        else:
            lo, hi = e
            if hi - lo > 1:
                mid = (lo + hi) // 2
                left, right = node[:i] + ((lo, mid),) + node[i + 1:], node[:i] + ((mid, hi),) + node[i + 1:]
                for tl in _all_trees(left, kinds, s):
                    for tr in _all_trees(right, kinds, s):
                        yield tl + tr


def _brute(data, v, parents, s):
    kinds, coords, root = [], [], []
    for u in parents:
        if data.kinds[u] == "categorical":
            kinds.append("cat")
            coords.append(data.columns[u])
            root.append(frozenset(range(data.arity(u))))
        else:
            kinds.append("cont")
            x = data.columns[u]
            w = x.max() - x.min()
            cell = np.zeros(len(x), int) if w == 0 else np.minimum(((x - x.min()) / w * 2**s).astype(int), 2**s - 1)
            coords.append(cell)
            root.append((0, 2**s))
    n_splits = sum(2 ** (data.arity(u) - 1) - 1 for u in parents if data.kinds[u] == "categorical") + \
        sum(1 for u in parents if data.kinds[u] != "categorical")
    lg = -math.log(4 * max(1, n_splits))
    y = data.columns[v]
    best, z, count = -math.inf, 0.0, 0
    for leaves in _all_trees(tuple(root), kinds, s):
        count += 1
        total = 0.0
        for leaf in leaves:
            inside = np.ones(data.n_rows, bool)
            for c, e, kind in zip(coords, leaf, kinds):
                inside &= np.isin(c, list(e)) if kind == "cat" else (c >= e[0]) & (c < e[1])
            if data.kinds[v] == "categorical":
                total += lg + categorical_leaf(np.bincount(y[inside], minlength=data.arity(v)))
            else:
                total += lg + continuous_leaf(y[inside])
        best = max(best, total)
        z += math.exp(lg * len(leaves))
    return best, math.log(z), count


@settings(max_examples=25, deadline=None)
@given(rows=st.integers(1, 14), seed=st.integers(0, 10**6), k=st.integers(2, 3), s=st.integers(1, 2),
       response=st.sampled_from(["cat", "cont"]), which=st.sampled_from(["cat", "cont", "both"]))
def test_dp_equals_brute_force_over_all_trees(rows, seed, k, s, response, which):
    rng = np.random.default_rng(seed)
    cols = {"Y": rng.integers(0, 3, rows) if response == "cat" else np.round(rng.normal(size=rows), 3),
            "A": rng.integers(0, k, rows), "B": np.round(rng.normal(size=rows) * 5, 3)}
    # force types: a tiny sample would otherwise look categorical
    data = _data(cols, continuous=["B"] + (["Y"] if response == "cont" else []), categorical=["A"])
    # declare every value of A, seen or not, as the node's full range
    if data.arity(1) < k:
        return
    parents = {"cat": (1,), "cont": (2,), "both": (1, 2)}[which]
    best, log_z, count = _brute(data, 0, parents, s)
    assert count > 1
    for compiled in (True, False):  # the numba kernel and the Python recursion
        fit, _ = pcart_fit(data, 0, parents, s, compiled=compiled)
        assert fit == pytest.approx(best, rel=1e-10, abs=1e-9)
    sizes = tuple(data.arity(u) for u in parents)
    cats = tuple(data.kinds[u] == "categorical" for u in parents)
    assert log_tree_normaliser(sizes, cats, s) == pytest.approx(log_z, rel=1e-12)


def test_normaliser_counts_trees_by_hand():
    """One binary categorical predictor: the leaf, or the one split: Z = γ + γ², with
    C = 2^(2−1) − 1 = 1, γ = 1/4. One continuous predictor with s = 1: the same."""
    g = 1 / 4
    assert log_tree_normaliser((2,), (True,), 3) == pytest.approx(math.log(g + g * g))
    assert log_tree_normaliser((0,), (False,), 1) == pytest.approx(math.log(g + g * g))
    # s = 2: Z2 = γ + Z1², Z1 = γ + γ²
    z1 = g + g * g
    assert log_tree_normaliser((0,), (False,), 2) == pytest.approx(math.log(g + z1 * z1))


def test_ft_with_categorical_variables_is_the_dirichlet_half_table_score():
    """Y given X, both binary. X=0 rows: Y = 0, 0, 1; X=1 rows: Y = 1, 1. Per config,
    lnΓ(1) − lnΓ(N_j + 1) + Σ_k lnΓ(N_jk + 1/2) − 2 lnΓ(1/2)."""
    data = _data({"Y": [0, 0, 1, 1, 1], "X": [0, 0, 0, 1, 1]})
    lg = math.lgamma
    x0 = lg(1) - lg(4) + lg(2.5) + lg(1.5) - 2 * lg(0.5)
    x1 = lg(1) - lg(3) + lg(0.5) + lg(2.5) - 2 * lg(0.5)
    assert ft_score(data, 0, (1,)) == pytest.approx(x0 + x1, rel=1e-12)
    empty = lg(1) - lg(6) + lg(2.5) + lg(3.5) - 2 * lg(0.5)
    assert ft_score(data, 0, ()) == pytest.approx(empty, rel=1e-12)
    # FTp subtracts ln C(n−1, |P|) = ln 1 here (n = 2)
    assert local_structure_score(data, 0, (1,), "ftp") == pytest.approx(x0 + x1)


def test_normal_inverse_gamma_leaf_is_the_product_of_student_t_predictives():
    stats = pytest.importorskip("scipy.stats")
    x = np.array([0.3, -1.2, 2.5, 0.9, 1.1, -0.4])
    nu, lam, mu, a = 1.0, 1.0, 0.0, 1.0
    total = 0.0
    for i, xi in enumerate(x):
        seen = x[:i]
        n = len(seen)
        a_n, nu_n = a + n, nu + n
        mu_n = (a * mu + seen.sum()) / a_n
        ss = ((seen - seen.mean()) ** 2).sum() if n else 0.0
        tt = n * a * (seen.mean() - mu) ** 2 / (n + a) if n else 0.0
        lam_n = (nu * lam + ss + tt) / nu_n
        scale = math.sqrt(lam_n * (a_n + 1) / a_n)
        total += stats.t.logpdf(xi, df=nu_n, loc=mu_n, scale=scale)
    assert continuous_leaf(x) == pytest.approx(total, rel=1e-10)


@pytest.mark.parametrize("score", ["pcart", "pcartp", "ft", "ftp"])
def test_scores_are_invariant_to_row_order(score):
    rng = np.random.default_rng(5)
    n = 120
    z = rng.integers(0, 3, n)
    y = rng.normal(size=n) + z
    x = np.where(y > 1, rng.integers(0, 2, n), rng.integers(0, 3, n))
    data = _data({"X": x, "Y": np.round(y, 4), "Z": z})
    perm = rng.permutation(n)
    shuffled = data.subset_rows(perm)
    for v, ps in ((0, (1,)), (0, (1, 2)), (1, (2,)), (1, (0, 2))):
        assert local_structure_score(shuffled, v, ps, score) == pytest.approx(
            local_structure_score(data, v, ps, score), rel=1e-12)


def test_local_structure_finds_a_dependence():
    """Y depends on Z through a threshold on a continuous variable: with that parent
    the PCART and FT scores beat the empty set; with an independent one they do not."""
    rng = np.random.default_rng(2)
    n = 400
    c = rng.normal(size=n)
    noise = rng.normal(size=n)
    y = np.where(c > 0.3, rng.integers(0, 2, n), 2)
    data = _data({"Y": y, "C": np.round(c, 4), "N": np.round(noise, 4)})
    for score in ("pcart", "ft"):
        assert local_structure_score(data, 0, (1,), score) > local_structure_score(data, 0, (), score) + 50
        assert local_structure_score(data, 0, (2,), score) < local_structure_score(data, 0, (), score)


def test_cache_holds_the_scores_and_no_dominated_set():
    rng = np.random.default_rng(3)
    n = 150
    a = rng.integers(0, 2, n)
    b = np.round(rng.normal(size=n) + a, 4)
    c = rng.integers(0, 3, n)
    data = _data({"A": a, "B": b, "C": c})
    one, st1 = build_local_structure_cache(data, score="pcartp", max_parents=2, jobs=1, progress=False)
    two, _ = build_local_structure_cache(data, score="pcartp", max_parents=2, jobs=2, progress=False)
    assert st1["complete"] and st1["scored"] == 3 * 4
    for v in range(3):
        fam = dict(zip(one.parent_sets[v], one.scores[v].tolist()))
        assert fam == dict(zip(two.parent_sets[v], two.scores[v].tolist()))
        for ps, s in fam.items():
            assert s == pytest.approx(local_structure_score(data, v, ps, "pcartp"))
            assert all(fam[t] < s for t in fam if set(t) < set(ps))
    with pytest.raises(ValueError, match="max_splits"):
        build_local_structure_cache(data, score="pcart", max_splits=0, progress=False)


def test_command_line(tmp_path, capsys):
    rng = np.random.default_rng(4)
    n = 200
    z = rng.integers(0, 3, n)
    x = rng.normal(size=n) + z
    p = tmp_path / "m.csv"
    p.write_text("X,Z\n" + "".join(f"{a:.4f},{b}\n" for a, b in zip(x, z)))
    jkl, res = tmp_path / "m.jkl", tmp_path / "m.json"
    assert main(["score", str(p), "--score", "pcart", "--max-splits", "2", "--max-parents", "1", "-o", str(jkl)]) == 0
    assert "1 continuous" in capsys.readouterr().out
    assert main(["learn", str(jkl), "--method", "dp", "-o", str(res), "-q"]) == 0
    assert main(["check", str(jkl), str(res)]) == 0
    assert main(["score", str(p), "--score", "ft", "--max-bins", "1"]) == 1
    assert "max_bins" in capsys.readouterr().err
    assert main(["score", str(p), "--max-bins", "3"]) == 1
    assert main(["score", str(p), "--score", "ft", "--continuous", "Q"]) == 1
    assert "no column named 'Q'" in capsys.readouterr().err
