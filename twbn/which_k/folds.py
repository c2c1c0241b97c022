"""The rows each bound is measured on: one validation split, or k-fold cross-validation
when rows are few (``Policy.which_k_split_min_rows``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Fold", "folds"]


@dataclass(frozen=True)
class Fold:
    """Row indices to learn on (``train``) and to measure on (``test``)."""

    train: np.ndarray
    test: np.ndarray


def folds(n_rows: int, seed: int | None, policy) -> tuple[list[Fold], str]:
    """The folds of ``n_rows`` rows, shuffled by ``seed``, and a sentence saying which.

    Every row is in the test part of at most one fold, so per-row figures of all folds
    together are one sample of held-out rows.

    Examples
    --------
    >>> from twbn.solvers.policy import Policy
    >>> fs, how = folds(10, 0, Policy())
    >>> len(fs), how, sorted(np.concatenate([f.test for f in fs]).tolist()) == list(range(10))
    (5, '5-fold cross-validation (10 rows, fewer than 2,000)', True)
    >>> fs, how = folds(5000, 0, Policy())
    >>> len(fs), len(fs[0].test), how
    (1, 1000, 'one validation split: 1,000 of 5,000 rows held out')
    """
    order = np.random.default_rng(seed).permutation(n_rows)
    if n_rows >= policy.which_k_split_min_rows:
        held = max(1, int(round(policy.which_k_validation_share * n_rows)))
        return [Fold(np.sort(order[held:]), np.sort(order[:held]))], \
            f"one validation split: {held:,} of {n_rows:,} rows held out"
    k = min(policy.which_k_folds, n_rows)
    parts = np.array_split(order, k)
    out = [Fold(np.sort(np.concatenate(parts[:i] + parts[i + 1:])), np.sort(parts[i])) for i in range(k)]
    return out, f"{k}-fold cross-validation ({n_rows:,} rows, fewer than {policy.which_k_split_min_rows:,})"
