"""The two things :func:`twbn.learn` adds around a bounded run:
rows with continuous columns cut first (``discretize=``), and the bound chosen by held-out
likelihood (``treewidth="auto"``, :mod:`twbn.which_k`), its arguments checked here."""

from __future__ import annotations

from twbn.scoring.errors import ParameterError
from twbn.solution import Solution

__all__ = ["cut_first", "with_cuts", "recording", "learn_which_k_checked"]

#: ``learn``'s keywords that treewidth="auto" passes to each bound it learns.
_WHICH_K_PASSES = ("method", "solver", "forbid", "require", "score", "max_parents", "ess", "pruning", "approximate",
                   "options", "jobs", "scheduler", "missing", "missing_token")


def cut_first(data, spec, *, missing_token: str | None = None):
    """The cuts ``spec`` gives on ``data`` (``twbn.scoring.discretize``) and ``data`` cut by
    them, as a DataFrame; raw rows only (a DataFrame or a CSV path)."""
    from twbn.scoring.cache import ScoreCache
    from twbn.scoring.data import Dataset
    from twbn.scoring.discretize import fit_discretizer

    if isinstance(data, (ScoreCache, Dataset)) or str(data).endswith((".jkl", ".jkl.gz")):
        raise ParameterError(f"discretize= cuts raw rows: give a DataFrame or a CSV path, not a "
                             f"{'score cache' if not isinstance(data, Dataset) else 'Dataset (already encoded)'}")
    cuts = fit_discretizer(data, spec, missing_token=missing_token)
    return cuts, cuts.apply(data, missing_token=missing_token)


def with_cuts(sol: Solution, cuts) -> Solution:
    """``sol`` recording ``cuts`` (``stats["data"]["discretize"]``), so that its methods
    apply them to raw rows."""
    record = sol.to_json()
    record.setdefault("stats", {}).setdefault("data", {})["discretize"] = cuts.to_json()
    return Solution(record)


def recording(on_result, cuts):
    """``on_result`` given each Solution with ``cuts`` recorded."""
    return lambda sol: on_result(with_cuts(sol, cuts))


def learn_which_k_checked(data, which, request, learn) -> Solution:
    """``learn`` with ``treewidth="auto"`` (:mod:`twbn.which_k`): ``request``, learn's
    :class:`~twbn.request.LearnRequest`, checked, and the options it has no use for refused
    by name; ``learn`` learns each bound (``twbn.learn`` itself, handed down so that
    nothing here imports it)."""
    from twbn.which_k import learn_which_k

    for name in ("cache", "warm_start", "best_so_far"):
        if getattr(request, name) is not None:
            raise ParameterError(f"treewidth='auto' learns every bound itself: {name}= does not apply")
    _, policy, _ = request.check(treewidth=1)
    given = request.as_dict()
    sol = learn_which_k(data, which, time_limit=request.time_limit, seed=request.seed, started=request.started,
                        policy=policy, log=request.log, learn_args={name: given[name] for name in _WHICH_K_PASSES},
                        learn=learn)
    if request.on_result is not None:
        request.on_result(sol)
    return sol
