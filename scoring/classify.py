"""Predicting one variable (the class) from all the others with a learned network.

The posterior of the class C given every other variable x depends only on C's Markov
blanket: P(c | x) ∝ θ(c | pa(C)) · Π_{V : C ∈ pa(V)} θ(x_V | pa(V) with C = c), so it is
exact and costs O(rows · r_C · |children of C|) — no junction tree needed. The CPTs are
fitted on the training rows with the smoothing of ``twbn.scoring.likelihood.fit_cpts``
(BDeu pseudo-counts ess/(q·r)), so a state never seen in training still has a positive
probability and the log-loss stays finite.

Machado, Mauá & Cozman ask for "the posterior inference capabilities of the learned
network"; the reference classifier is Naive Bayes (the class the only parent of every
other variable), fitted the same way.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from twbn.scoring.data import DataError, Dataset
from twbn.scoring.likelihood import align, fit_cpts
from twbn.scoring.posterior import table_rows

__all__ = ["class_posterior", "classification_scores", "naive_bayes_parents"]


def naive_bayes_parents(names: Sequence[str], target: str) -> list[tuple[int, ...]]:
    """The Naive Bayes structure over ``names``: ``target`` the one parent of every other
    variable, itself without parents."""
    if target not in names:
        raise DataError(f"class variable {target!r} is not a variable of the network")
    c = list(names).index(target)
    return [() if v == c else (c,) for v in range(len(names))]


def class_posterior(train: Dataset, test: Dataset, names: Sequence[str], parents: Sequence[Sequence[int]],
                    target: str, ess: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """P(target | every other variable) for each test row, and the true class codes.

    Parameters
    ----------
    train, test : Dataset
        Rows to fit the CPTs on, and rows to predict.
    names : sequence of str
        The network's variables; ``parents[i]`` are the parent indices of ``names[i]``.
    target : str
        The class variable.
    ess : float, default 1.0
        Smoothing (BDeu-style pseudo-counts ess/(q·r) per CPT cell).

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        A (test rows, class states) array of posteriors (rows sum to 1) and each row's
        class as a column index of it.

    Raises
    ------
    DataError
        ``target`` or a variable of the network is not a column of the data.
    """
    names = list(names)
    if target not in names:
        raise DataError(f"class variable {target!r} is not a variable of the network")
    tr, te, arities = align(train, test, names)
    cpts = fit_cpts(tr, arities, parents, ess)
    c = names.index(target)
    r = int(arities[c])
    blanket = [c] + [v for v, ps in enumerate(parents) if c in ps]
    logp = np.zeros((te.shape[1], r))
    data = te.copy()
    for s in range(r):
        data[c] = s
        for v in blanket:
            code, _ = table_rows(data, arities, parents[v])
            logp[:, s] += np.log(cpts[v][code, data[v]])
    logp -= logp.max(axis=1, keepdims=True)
    probs = np.exp(logp)
    probs /= probs.sum(axis=1, keepdims=True)
    return probs, te[c]


def classification_scores(train: Dataset, test: Dataset, names: Sequence[str], parents: Sequence[Sequence[int]],
                          target: str, ess: float = 1.0) -> dict:
    """Accuracy (the most probable class, ties to the first state) and log-loss (mean of
    −ln P(true class | the rest)) of predicting ``target`` on the test rows.

    Examples
    --------
    >>> import numpy as np
    >>> from twbn.scoring.data import encode_columns
    >>> rows = [("a", "x"), ("a", "x"), ("b", "y"), ("b", "y"), ("a", "x"), ("b", "x")]
    >>> ds = encode_columns(["C", "F"], [np.array([r[0] for r in rows]), np.array([r[1] for r in rows])])
    >>> got = classification_scores(ds, ds, ["C", "F"], [(), (0,)], "C")
    >>> got["rows"], round(got["accuracy"], 4)
    (6, 0.8333)
    """
    probs, truth = class_posterior(train, test, names, parents, target, ess)
    rows = len(truth)
    if rows == 0:
        return {"accuracy": None, "log_loss": None, "rows": 0}
    picked = probs.argmax(axis=1)
    p_true = probs[np.arange(rows), truth]
    return {"accuracy": float((picked == truth).mean()), "log_loss": float(-np.log(p_true).mean()), "rows": rows}
