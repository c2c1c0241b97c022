"""The k-tree code: every code decodes to a k-tree, each k-tree has the same number of
codes (so sampling is uniform), and a chi-square test on sampled k-trees."""

import itertools
import random
from collections import Counter

import pytest

from twbn.formulations.graphs import is_k_tree
from twbn.formulations.ktree_codes import decode_k_tree, n_k_trees, random_k_tree


def _key(adj):
    return frozenset((a, b) for a in adj for b in adj[a] if a < b)


def test_counts_by_hand():
    assert n_k_trees(4, 1) == 16  # Cayley: 4^2 labelled trees
    assert n_k_trees(5, 2) == 70  # C(5,2)·7^1, the formula
    assert n_k_trees(5, 4) == 1  # only K5


@pytest.mark.parametrize("n,k", [(4, 1), (5, 1), (5, 2), (6, 2), (6, 3)])
def test_every_code_gives_a_k_tree_and_every_k_tree_has_the_same_number_of_codes(n, k):
    m = n - k
    counts = Counter()
    for root in itertools.combinations(range(n), k):
        for code in itertools.product(range(k * m + 1), repeat=m - 1):
            adj = decode_k_tree(n, k, root, code)
            counts[_key(adj)] += 1
    assert len(counts) == n_k_trees(n, k)  # onto all k-trees ...
    assert set(counts.values()) == {k * m + 1}  # ... each once per k-clique
    assert all(is_k_tree({v: {b for a, b in e if a == v} | {a for a, b in e if b == v} for v in range(n)}, k)
               for e in counts)


def test_sampling_is_uniform_chi_square():
    """n = 5, k = 2: 70 k-trees; 14,000 draws, 69 degrees of freedom. The 0.999 quantile
    of chi-square(69) is about 111.1; a uniform sampler exceeds it once in a thousand."""
    rng = random.Random(2026)
    draws = 14_000
    counts = Counter(_key(random_k_tree(5, 2, rng)) for _ in range(draws))
    assert len(counts) == 70
    expected = draws / 70
    chi2 = sum((c - expected) ** 2 / expected for c in counts.values())
    assert chi2 < 111.1


def test_a_biased_sampler_fails_the_same_test():
    """The test has power: attaching each new vertex to a uniformly chosen k-clique (the
    naive sampler) is not uniform over k-trees and is rejected."""
    rng = random.Random(7)
    draws = 14_000
    counts = Counter()
    for _ in range(draws):
        verts = list(range(5))
        rng.shuffle(verts)
        cliques = [tuple(sorted(c)) for c in itertools.combinations(verts[:3], 2)]
        adj = {v: set(verts[:3]) - {v} for v in verts[:3]}
        for v in verts[3:]:
            c = rng.choice(cliques)
            adj[v] = set(c)
            for u in c:
                adj[u].add(v)
            cliques += [tuple(sorted({u, v})) for u in c]
        counts[_key(adj)] += 1
    expected = draws / 70
    assert sum((counts.get(t, 0) - expected) ** 2 / expected for t in set(counts)) > 111.1


def test_bad_codes_are_rejected():
    with pytest.raises(ValueError, match="root"):
        decode_k_tree(5, 2, (0, 0), [0, 0])
    with pytest.raises(ValueError, match="code"):
        decode_k_tree(5, 2, (0, 1), [0, 99])
