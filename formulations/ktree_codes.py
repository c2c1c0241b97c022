"""Codes for labelled k-trees, and uniform sampling of k-trees through them.

Labelled k-trees on n vertices number C(n, k)·(k(n−k)+1)^(n−k−2) (Beineke & Pippert 1969).
Caminiti, Fusco & Petreschi (2010, "Bijective linear time coding and decoding for
k-trees") code them with a k-set Q and a Dandelion-like sequence of n−k−2 pairs, through
the *characteristic tree* of a Rényi k-tree; S2 (Nie, de Campos & Ji 2014/2015) samples
k-trees uniformly by drawing such codes. We use the same characteristic tree with one
redundancy kept, because it makes decoding a plain Prüfer decoding:

- a code is (R, S): R a k-subset of the vertices (the root clique) and S a sequence of
  n−k−1 symbols from an alphabet of size k(n−k)+1;
- a k-tree with a marked k-clique R is a Rényi k-tree: every other vertex v was attached
  to a k-clique K_v; its *parent* p is the vertex of K_v attached last (the root 0 if
  K_v = R), and K_v = ({p} ∪ K_p) ∖ {x} for one x ∈ K_p, whose position in the sorted
  K_p is the edge label l ∈ 1…k (label 0 on edges to the root). This labelled tree on
  the root and the m = n − k other vertices is the characteristic tree; it determines the
  k-tree, and every such labelled tree arises (Caminiti et al., Sec. 3);
- S is the Prüfer code of the characteristic tree (the root sorts last, so it is never
  removed and every code entry is the parent of a removed leaf) with each entry carrying
  its edge's label: symbol 0 = (root, 0), symbol (p−1)·k + l = (p, l). There are
  (km + 1)^(m−1) sequences: the weighted Cayley formula for these trees.

Every k-tree has exactly k(n−k)+1 k-cliques, so each has exactly that many codes (one per
choice of R): a uniform code gives a uniform k-tree. Decoding is O(n log n + n·k).
"""

from __future__ import annotations

import heapq
import itertools
import math
import random
from typing import Sequence

from twbn.formulations.graphs import Adjacency
from twbn.scoring.errors import ParameterError

__all__ = ["n_k_trees", "decode_k_tree", "random_k_tree"]


def n_k_trees(n: int, k: int) -> int:
    """The number of labelled k-trees on n ≥ k+1 vertices."""
    if n == k + 1:
        return 1
    return math.comb(n, k) * (k * (n - k) + 1) ** (n - k - 2)


def decode_k_tree(n: int, k: int, root: Sequence[int], code: Sequence[int]) -> Adjacency:
    """The k-tree of the code (``root``, ``code``) on vertices 0…n−1."""
    if not 1 <= k < n:
        raise ParameterError(f"k-trees on {n} vertices need 1 <= k < n, got k = {k}")
    root = tuple(sorted(root))
    if len(root) != k or len(set(root)) != k or not all(0 <= v < n for v in root):
        raise ParameterError(f"the root must be {k} distinct vertices of 0..{n - 1}")
    m = n - k
    alphabet = k * m + 1
    if len(code) != m - 1 or not all(0 <= s < alphabet for s in code):
        raise ParameterError(f"the code must be {m - 1} symbols in 0..{alphabet - 1}")
    others = [v for v in range(n) if v not in set(root)]  # tree node i (1..m) is others[i-1]
    # Prüfer decoding over nodes 1..m and the root, which sorts last (key m+1)
    degree = [1] * (m + 1)
    for s in code:
        degree[0 if s == 0 else (s - 1) // k + 1] += 1
    parent = [0] * (m + 1)
    label = [0] * (m + 1)
    leaves = [i for i in range(1, m + 1) if degree[i] == 1]
    heapq.heapify(leaves)
    for s in code:
        leaf = heapq.heappop(leaves)
        p, lab = (0, 0) if s == 0 else ((s - 1) // k + 1, (s - 1) % k + 1)
        parent[leaf], label[leaf] = p, lab
        degree[p] -= 1
        if p != 0 and degree[p] == 1:
            heapq.heappush(leaves, p)
    last = leaves[0] if leaves else 1  # the one node left beside the root
    parent[last], label[last] = 0, 0
    children: list[list[int]] = [[] for _ in range(m + 1)]
    for i in range(1, m + 1):
        children[parent[i]].append(i)
    adj: Adjacency = {v: set() for v in range(n)}
    for a, b in itertools.combinations(root, 2):
        adj[a].add(b)
        adj[b].add(a)
    clique = {0: root}  # K_i for tree node i, as a sorted tuple of vertices
    stack = [0]
    while stack:
        p = stack.pop()
        for c in children[p]:
            if p == 0:
                kc = root
            else:
                kp = clique[p]
                kc = tuple(sorted((set(kp) - {kp[label[c] - 1]}) | {others[p - 1]}))
            clique[c] = kc
            v = others[c - 1]
            for u in kc:
                adj[v].add(u)
                adj[u].add(v)
            stack.append(c)
    return adj


def random_k_tree(n: int, k: int, rng: random.Random) -> Adjacency:
    """A k-tree drawn uniformly from all labelled k-trees on 0…n−1."""
    root = rng.sample(range(n), k)
    alphabet = k * (n - k) + 1
    return decode_k_tree(n, k, root, [rng.randrange(alphabet) for _ in range(n - k - 1)])
