"""The search policy: every time share, threshold and search knob of twbn's methods in one
frozen :class:`Policy`, each default with the measurement behind it.

A method reads its knobs from the policy its :class:`~twbn.solvers.budget.Budget`
carries (``budget.policy``), and an engine handed seconds is handed the policy with them;
no module keeps a knob of its own. Two policies therefore run side by side in one checkout
(``twbn.learn(..., policy=Policy(stuck_pieces=6))``, ``--policy stuck_pieces=6``, a config's
``[policy]`` table, ``bench_field --policy``), and every result records the fields in which
its policy differs from the default (``stats["policy"]``).

Examples
--------
>>> from twbn.solvers.policy import Policy
>>> p = Policy.from_settings(["stuck_pieces=6", "restart_min_s=30"])
>>> p.stuck_pieces, p.changed()
(6, {'stuck_pieces': 6, 'restart_min_s': 30.0})
>>> Policy.from_settings(["stuck_piece=6"])  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
twbn.solvers.policy.PolicyError: unknown policy field 'stuck_piece'; did you mean 'stuck_pieces'? ...
"""

from __future__ import annotations

import dataclasses
import difflib
import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from twbn.scoring.errors import TwbnError

__all__ = ["Policy", "PolicyError", "DEFAULT_POLICY", "describe_policy"]


class PolicyError(TwbnError, ValueError):
    """A policy field that does not exist, or a value it cannot take; the message says
    which, and the nearest field name.

    Examples
    --------
    >>> Policy(bound_share=1.5)
    Traceback (most recent call last):
    ...
    twbn.solvers.policy.PolicyError: policy field bound_share is a share in (0, 1], got 1.5
    """


def _knob(default: Any, kind: str, doc: str):
    """A field with its kind (what values it takes) and its measurement, kept on the field
    so that ``twbn policy`` and the errors can say them."""
    return field(default=default, metadata={"kind": kind, "doc": " ".join(doc.split())})


#: What each kind of field takes.
_KINDS = {
    "share": (float, lambda v: 0 < v <= 1, "a share in (0, 1]"),
    "probability": (float, lambda v: 0 <= v <= 1, "a number in [0, 1]"),
    "seconds": (float, lambda v: v > 0 and not math.isinf(v), "a positive number of seconds"),
    "seconds0": (float, lambda v: v >= 0 and not math.isinf(v), "a number of seconds >= 0"),
    "count": (int, lambda v: v >= 1, "a whole number >= 1"),
    "count0": (int, lambda v: v >= 0, "a whole number >= 0"),
    "factor": (float, lambda v: v > 0 and not math.isinf(v), "a positive number"),
    "factor0": (float, lambda v: v >= 0 and not math.isinf(v), "a number >= 0"),
    "switch": (int, lambda v: v in (0, 1), "0 (off) or 1 (on)"),
    "mode3": (int, lambda v: v in (0, 1, 2), "0, 1 or 2"),
}


@dataclass(frozen=True)
class Policy:
    """Every time and search knob of twbn's methods; the defaults are the measured ones.

    Build one with changed fields (``Policy(stuck_pieces=6)``, or
    :meth:`from_settings` from ``KEY=VALUE`` text) and hand it to ``twbn.learn``,
    ``solve``/``run`` or a :class:`~twbn.solvers.budget.Budget`. ``describe_policy()``
    (``twbn policy``) lists every field with its default and the measurement behind it.

    Parameters
    ----------
    **fields
        Any of the fields below, by name; the rest keep their defaults.

    Raises
    ------
    PolicyError
        A value of the wrong kind (a share outside (0, 1], a count that is not a whole
        number, ...), or fields that contradict each other.

    Examples
    --------
    >>> import twbn
    >>> sol = twbn.learn(twbn.example_path("zoo"), treewidth=2, method="kg", time_limit=1, seed=0,
    ...                  policy=twbn.Policy(bound_share=0.2))
    >>> sol.stats["policy"]
    {'bound_share': 0.2}
    """

    # -- shares of a budget, between stages -------------------------------------------------
    warm_start_share: float = _knob(0.2, "share", """A method-name warm start (``--warm-start
        kg``, auto's k-G or k-MAX start) gets this share of the budget; the method the rest.""")
    start_max_s: float = _knob(60.0, "seconds", """... and at most this many seconds, as does
        improve's own k-MAX start: in 1,800 s runs (auto, one job) k-MAX's start had 360 s and
        reached what k-MAX alone reaches in 60 s in 6 of 8 cells (plants, baudio, munin), and at
        most 180 more in the other two, while the improver gained thousands in the time left.""")
    bound_share: float = _knob(0.1, "share", """The cluster LP's bound after an anytime method
        gets this share below ``large_bound_n`` variables (not measured there).""")
    large_bound_n: int = _knob(60, "count", """From this many variables the LP's bound gets
        ``large_bound_share``.""")
    large_bound_share: float = _knob(0.3, "share", """auto (improve from k-MAX, k = 5, 60 s, one
        core): the proved gap at a bound share of 0.1 / 0.2 / 0.3 was 11.25 / 10.47 / 10.09 % on
        plants (n = 69), 3.14 / 2.87 / 2.82 % on baudio (n = 100) with the same network, and 2.92
        / 2.51 / 2.39 % on munin5000 (n = 1,041), whose network lost 0.13 % at 0.3: the gap
        shrinks at every n measured.""")
    improve_start_share: float = _knob(0.2, "share", """improve without a start: k-MAX's network
        on this share first (at most ``start_max_s``).""")
    cuts_improve_share: float = _knob(0.6, "share", """cuts above ``cuts_max_n`` without a start
        gives improve this share (its option improve_share). Unbounded, 300 s: SCIP's root on
        plants reached -223,027 in the rest where the cluster LP gave -227,412, and on baudio did
        not solve its first LP; improve alone for the whole budget ended 2,867 and 4,079 ahead.""")
    unbounded_bound_share: float = _knob(0.25, "share", """auto at n <= ``cuts_max_n`` first solves
        the problem without the treewidth bound (families of at most k parents), as a bound, in
        this share: wdbc (n = 31) took 3-8 s of a 60 s budget.""")
    scoring_share: float = _knob(0.5, "share", """``twbn learn DATA --time-limit S``: scoring the
        data may take this share of what is left after start-up, the method the rest. Not tuned:
        an even split (a 190-variable set spent 53 s of a 60 s limit scoring before this).""")
    data_cache_share: float = _knob(0.25, "share", """``learn`` from data with families scored on
        demand (bic, aic, bdeu): the score cache is exhaustive, level by level, for this share of
        what is left of the limit (at most ``scoring_share``), the search scores the rest. At 60 s
        plants' pairs take 6.8 s, baudio's 15 s, jester's 9.6 s; the half that scoring had before
        spent 30 s on a partial third level that held 11 of the 69 families of the network
        found (plants, k = 5).""")
    data_cache_max_parents: int = _knob(3, "count0", """``learn`` from data without
        --max-parents: the cache holds families of at most this many parents (and k). 0, with a
        time limit: up to the largest bound k, a size of three or more parents entering only
        where ``data_cache_level_margin`` predicts it fits (the run's own scoring rate decides the
        depth, not n). Why 0 is offered: the suite at 60 s, capped at 3, msnbc k = 5 and 8 and
        nltcs k = 8 ended 1.7 %, 2.9 % and 0.2 % behind ETL in 2-6 s, each at the bound of its
        cache (benchmarks/results/field-data-60-etl-suite-n500.md). Not yet the default: 0 has
        not been run side by side on the suite.""")
    data_cache_level_margin: float = _knob(1.5, "factor0", """``learn`` from data: a size of
        three or more parents enters the cache only if this many times its predicted seconds
        fit in ``data_cache_share``, predicted at the rate of the size before (jester's pairs
        took 1.45 times the singles' rate per set). 0: a size may stop part-way. Before, at
        600 s, jester's triples ran 66 s past the share, 216 s of scoring in all, and the
        2.7 M sets kept took 2.8 GB. Pairs may still stop part-way: at 10 s, applied to pairs
        it left singles alone and lost 4,340 at baudio k = 2.""")
    # -- shares inside an engine ----------------------------------------------------------
    milp_build_share: float = _knob(0.4, "share", """The MILP's pyomo build: writing the model
        out takes about as long again (plants k = 2 built in 3.0 s, written in 2.0 s; k = 5 5.4 s
        and 5.7 s); the engine needs the rest.""")
    cuts_build_share: float = _knob(0.45, "share", """The cluster ILP's build, of which SCIP's
        setup takes about as much again (jester, k = 8, 772,774 sets: built in 21 s, then 18 s
        more with a SCIP limit of 0.1 s); past it the start is the answer.""")
    ktree_share: float = _knob(0.5, "share", """S2+: the share of the time left one k-tree
        search may take (at n = 100, k = 5 the A* expands ~700 states a second).""")
    # -- what auto chooses ----------------------------------------------------------------
    auto_time_limit: float = _knob(60.0, "seconds", """auto's budget when it picks an anytime
        method and the caller gave no limit.""")
    dp_unbounded_max_n: int = _knob(22, "count", """Largest n for which the unbounded DP runs
        (about 4 s at n = 22).""")
    dp_bounded_max_n_k2: int = _knob(14, "count", """Largest n for the bounded DP at k = 2
        (9.65 s at n = 14 on housing).""")
    dp_bounded_max_n_k3: int = _knob(12, "count", """Largest n for the bounded DP at k = 3
        (10.65 s at n = 12); from k = 4 auto never picks the DP.""")
    dp_safety: float = _knob(1.6, "factor", """How much slower than its fit the DP may run before
        auto counts it as not finishing: the README's housing k = 2 run took 13.7-14.1 s against
        the fit's 9.65 s.""")
    cuts_max_n: int = _knob(40, "count", """Largest n at which the whole cluster-cut ILP is run:
        above it its root LP may not finish in minutes (bounded, n = 64: not in 60 s; unbounded
        baudio, n = 100: not in 120 s, where improve alone reached -623,428 with a 1.9 % LP bound
        in 60 s), so auto runs improve and cuts keeps the LP bound's share and runs improve
        first.""")
    improve_start_min_k: int = _knob(3, "count0", """Smallest k at which cuts starts from
        improve's network rather than k-G's once the unbounded optimum bounds the problem: at
        k = 2, 60 s, k-G's start did better (insurance 38 more; water and letter proved in 15 and
        14 s instead of 38 s); at k = 3-5 improve's did (mushroom +16 to +98 in 9 of 9, wdbc +17
        to +105 in 5 of 5).""")
    data_cuts_localsearch_min_k: int = _knob(2, "count0", """From data (families scored on
        demand), auto at n <= ``cuts_max_n`` starts the cluster-cut ILP from localsearch's
        network (its ``localsearch_start_share``) from this k, rather than from k-G's (or
        k-MAX's improved); the ILP grows its problem by that network's families. Complete rows
        of bnlearn networks, 5,000, 20 s, two at a time: alarm k = 2 -54,017 against -55,727, k = 5
        -53,849 against -54,057; insurance k = 2 -68,720 against -69,793; water k = 2 -64,945
        against -64,940 (k-G's start proved it optimal in 12 s); equal and optimal at insurance
        and water k = 5, child k = 2 and 5.""")
    rival_start_share: float = _knob(0.05, "probability", """From data at n <= ``cuts_max_n``, after
        localsearch's start, auto runs k-MAX on this share of what is left (at most
        ``start_max_s``) and the better network of the two is the start: what the run measures,
        not a threshold. Mushroom (BDeu, ESS 1, k = 3, 120 s): localsearch's start scored
        -81,244 and cuts from it (through improve) ended at -81,220.5, gap 3.39 %; k-MAX's
        first network, in 1 s, scored -79,151.9, and from it -78,837.7, gap 0.47 %, as from a
        cache of the same families. On the suite's other sets at n <= 40 (nltcs, msnbc,
        insurance5000, alarm5000, k = 2, 5, 8, 60 s, beside 0 in one queue) every network
        was the same with and without it (results/field-data-60-etl-rival-n40-policies-off.md):
        it changes a run only where the other start is better. 0: off, localsearch's start
        alone.""")
    localsearch_start_min_k: int = _knob(2, "count0", """Smallest k at which auto above
        ``cuts_max_n`` starts improve from localsearch's network (its ``warm_start_share``)
        rather than from k-MAX's (up to ``localsearch_max_n``): from the anchor caches at n = 69-100,
        60 s, one core, ahead at k = 2 by 708-2,403 and at k = 5 and 8 by 2,454-9,520
        (benchmarks/results/field-budgets-60-policies-kmaxstart.md); from data at k = 2, 600 s,
        ahead at plants by 3,064 and jester by 360, behind at baudio by 766, where k-MAX's
        network is the better start (notebook/results/field-data-600-policies-kmaxstart.md).""")
    localsearch_max_n: int = _knob(100, "count", """Largest n at which auto runs localsearch (as
        improve's start, or alone from data); k-MAX's start above. From the anchor caches, 60 s,
        one core: ahead of the k-MAX start in all 9 cells at n = 69-100 (by 708-9,520), behind it
        by 22,030-100,874 in all 3 at n = 1,041 (munin5000), where the first climb is far from
        done in its 12 s (benchmarks/results/field-budgets-60-policies-kmaxstart.md).""")
    data_localsearch_max_n: int = _knob(0, "count0", """From data (families scored on demand):
        ``localsearch_max_n``'s place; 0, the default, is no bound. The suite's 11 sets of n =
        135-1,556 at 60 s, one core, side by side: localsearch (alone at k >= 3, improve's start
        at k = 2) ahead of the k-MAX start in 29 of 30 cells (tretail +70 to +73, dna -12 to
        +190, pumsb_star +12,584 to +25,392, andes +2,086 to +10,587, pigs +51,776 to +73,600,
        book +4,735 to +5,615, link +9,694 to +87,212, cwebkb +851 to +6,366, munin5000 +5,682
        to +13,775, ad +1,217 to +1,791); the choice is the same with any one set left out
        (benchmarks/results/suite-rule-lsall-with-ad.md). A bound n makes k-MAX's start the
        path above n.""")
    data_localsearch_widen: int = _knob(1, "mode3", """From data (families scored on
        demand): once localsearch's first climb reaches a hill top over the parents its
        variables' cached sets use (the exploration's 30 candidates by mutual information), its
        additions try every variable as a parent, as ETL's do (122 of the 383 arcs of ETL's
        pumsb_star network at k = 5 were outside). The suite's 16 sets of n <= 500, k = 2, 5, 8,
        60 s, one core, side by side with 0 (benchmarks/results/field-data-60-etl-suite-n500-widen-
        policies-narrow.md): ahead of ETL in 47 of 48 cells against 42; pumsb_star k = 5, 8
        +11,419 and +15,416, pigs +2,262 to +9,158, andes +1,101 to +2,038; elsewhere within
        -0.07 % and +0.03 % (pumsb_star k = 2 -0.18 %); chosen with any one set left out
        (benchmarks/results/suite-rule-widen.md). Every variable from the first climb instead
        lost at book (its first climb, 12 times the families a move, was not done in 27 s;
        notebook/localsearch-widen.md). Above n = 500 (link, cwebkb, munin, ad; results/field-data-
        60-suite-n500up-widen-policies-narrow.md) ahead of 0 in 4 of 12 cells (link k = 8
        +2.17 %, ad k = 2 +1.12 %), behind in 6 (munin k = 5 -0.93 %, link k = 2 -0.21 %): the
        wide climb there takes the time the narrow search's kicks used, and the cells are noisy
        (munin k = 5 widened: -1,020,675 in one queue, -1,009,682 in the next). 2: widen only
        after a climb that does not beat the best (the narrow search stalled), from the best: at
        pumsb_star, andes, pigs, link, munin, ad (k = 5, 8) beside 1, below it in 7 of 12 cells
        (pumsb_star -0.59 %, pigs k = 5 -0.54 %), above in 2 (munin k = 8 +1.07 %; results/
        field-data-60-widen-stall-policies-stall.md). 0: the cache's parents only.""")
    data_localsearch_first_parents: int = _knob(0, "count0", """From data: above 0, localsearch's
        additions first try this many parents a variable (highest mutual information first),
        doubled at each widening; 0: the cache's parents, then every variable. 30 against 0 on
        the suite, 10 and 60 s, one queue: at 10 s better in 16 cells (book k = 2 +1.52 %),
        worse in 18 (ad k = 2 -1.48 %); at 60 s worse in 19, better in 8 (link k = 5 -11 %):
        a lower hill top where one wide sweep fits (notebook/localsearch-stages.md).""")
    localsearch_alone_min_k: int = _knob(3, "count0", """From data (families scored on demand),
        auto above ``cuts_max_n`` runs localsearch alone from this k: improve from its network
        added nothing at k = 5 and 8 in the 6 DEBD cells at 60 s (plants, baudio, jester; its
        exact pieces choose among cached families, and the network's are mostly not cached),
        and 563-2,103 at k = 2.""")
    localsearch_start_share: float = _knob(0.2, "share", """auto's localsearch start (see
        ``localsearch_start_min_k``) begins no new climb after this share of the budget; improve
        gets the rest.""")
    localsearch_first_climb_share: float = _knob(0.5, "share", """... but the climb under way
        at that share, the first one included, may go on to its hill top until this share (at
        least the start's): a first climb cut short leaves most families with one parent or
        none. From jester's training split at k = 2, 10 s a command, the first climb from the
        empty network takes 2-3 s of auto's 5.9 s; cut at 20 % (1.1 s) its network scored
        -530,367 instead of -509,905, and improve ended at -526,583 instead of -509,592.""")
    localsearch_kick_share: float = _knob(0.6, "share", """localsearch resets this share of the
        variables to their required parents between climbs (its option kick overrides). From data,
        one core, 20 s: plants k = 5 ended at -236,889 / -236,787 / -235,730 / -236,068 with kicks
        of 3 / 15 / 45 / 55 variables (n = 69); baudio k = 8 at -621,247 / -620,966 / -619,897 /
        -618,887 / -619,827 with 4 / 20 / 50 / 70 / 85 (n = 100); from the anchor caches, 12 s,
        plants k = 5 -242,730 / -242,433 (3 / 40) and jester k = 8 -494,026 / -493,675 (4 / 60).
        A few variables reset climb back to the same network.""")
    # -- the heuristics -------------------------------------------------------------------
    heuristic_time_limit: float = _knob(10.0, "seconds", """Budget of the anytime heuristics
        (k-G, k-MAX, k-A*, S2, S2+) when neither a time limit nor an iteration limit is given.""")
    kg_first_clique_exact_max: int = _knob(16, "count", """k-G: the first clique's best DAG by
        the exact DP up to this many variables, a greedy DAG above (one DP on random 4-parent
        caches: 0.05 s at 16 variables, 0.79 s at 20; every order has a new first clique).""")
    s2_auto_dp_max_k: int = _knob(3, "count0", """S2's phase 2 "auto": the super-structure DP
        up to this k, the cluster-cut ILP above (the DP's tables grow as 3^(k+1) a bag: zoo 0.02 s
        at k = 2, 17 s at k = 5; the ILP inside a k-tree took 0.1 s at every k).""")
    s2_phase2_min_s: float = _knob(1.0, "seconds0", """S2's phase 2 by the ILP is not started
        with less time left (building the model inside the k-tree took 0.4 s at baudio, k = 5).""")
    s2_max_open: int = _knob(3_000_000, "count", """S2+: the most open states the A* keeps
        (about 210 bytes each); past it the deeper half is dropped and the search is no longer
        exact (munin: 6.8-7.9 GB in 30 s before this).""")
    # -- improve: pieces of a network re-solved exactly ------------------------------------
    piece_min_size: int = _knob(4, "count", """Smallest piece (free variables); improve's first
        pieces have ``start_size``.""")
    piece_neighbours: int = _knob(1, "count0", """From data (families scored on demand): 1 gives a
        piece's free variables the families one step from their own (a parent added, removed or
        swapped inside the piece) scored from the data, beside the cached ones; 0 the cached
        ones and their own family only.""")
    piece_max_size: int = _knob(40, "count", """Largest piece (free variables).""")
    unbounded_start_k: int = _knob(8, "count", """Without a bound (or k >= n - 1) improve starts
        from k-MAX's network under this bound: a network of the problem too.""")
    stuck_pieces: int = _knob(12, "count", """Pieces in a row without a gain after which the
        triangulation H is redrawn: plants (k = 5) gained nothing in its last 30 of 75 pieces
        with one H.""")
    redraw_tries: int = _knob(6, "count", """Random greedy orders of the moral graph tried per
        redraw of H.""")
    redraw_fill_max_n: int = _knob(200, "count0", """Redraws order by min-fill up to this n and by
        min-degree above (min-fill's loop takes seconds at n = 1,041).""")
    stall_pieces: int = _knob(24, "count", """Pieces in a row at the largest piece time limit (or
        k-tree pieces once k-trees took over) without a gain after which the search has stalled
        (two redraws of H gave nothing): improve restarts from another start network. At 12,
        from data at k = 2, 600 s: the same at plants, 34 and 8 behind at baudio and jester
        (notebook/results/field-data-600-policies-stall12.md).""")
    ktree_stuck_pieces: int = _knob(6, "count", """k-tree pieces in a row without a gain that end
        a k-tree: at plants (k = 8, 60 s, two seeds) 6 ended about 1,400 ahead of 12, at k = 5
        level with it.""")
    ktree_seconds: float = _knob(6.0, "seconds0", """Seconds after which a k-tree ends even while
        it gains (k >= ``ktree_only_min_k``): later k-trees, on redrawn H, gain more than the tail
        of one.""")
    ktree_after_pieces: int = _knob(6, "count", """H's pieces in a row without a gain after which
        k-trees take over (k >= ``ktree_only_min_k``): at plants (60 s, 3 seeds) 6 ended 540
        (k = 5) and 890 (k = 8) ahead of 12 with turns back to H's pieces.""")
    ktree_only_min_k: int = _knob(3, "count0", """Smallest k at which k-trees take over once H's
        pieces are stuck; at k = 2 that lost 524 (baudio) and 280 (jester) at 60 s, so below it
        k-trees and H's pieces take turns.""")
    piece_limit_growth: float = _knob(8.0, "factor", """How far a stuck search's doubling takes a
        piece's time limit by default (2 s -> 16 s).""")
    restart_min_s: float = _knob(60.0, "seconds0", """A restart of improve needs at least this
        many seconds: at 60 s a k-MAX start of 8 s and 42 s of pieces reached -245,478 at plants
        k = 8, better than a search that stalled at 1,800 s.""")
    restart_start_max_s: float = _knob(12.0, "seconds", """A restart's start stage takes at most
        this many seconds: at plants (1,800 s, k = 5 and 8, 3 seeds) a k-G start after 60 s was
        6,000-10,000 below where its search ended, and 240 of 1,218 s went to starts.""")
    # -- cuts: the cluster-cut ILP --------------------------------------------------------
    wind_down: float = _knob(1.0, "factor", """SCIP's limit is what is left after building the
        model, less this many times the build time: setting the start, SCIP's set-up and first LP
        grow with the model and SCIP's clock misses some of it.""")
    exact_call_limit_s: float = _knob(10.0, "seconds", """Seconds one exact cluster separation
        may take; beyond it the round returns what it has.""")
    minor_call_limit_s: float = _knob(2.0, "seconds", """Seconds per round of the minor density
        rows (6), bounded: at n = 31 a round takes about 0.1 s.""")
    matroid_seeds: int = _knob(2, "count0", """Greedy clusters that seed the matroid-row search
        besides the fractional variables: mushroom's 600 s bound was -90,453 with none, -90,847
        with 2, -90,721 with all (optimum -91,074).""")
    matroid_max_skip: int = _knob(16, "count", """Rounds the matroid search backs off, at most,
        after searches that find nothing: in wdbc k = 2's root it took 54 of 96 s and found 16
        rows in 144 searches.""")
    lns_call_limit_s: float = _knob(10.0, "seconds", """Seconds of one large-neighbourhood
        sub-solve of cuts.""")
    lns_start_size: int = _knob(8, "count", """The first neighbourhood size of cuts' LNS.""")
    lns_min_size: int = _knob(4, "count", """The smallest neighbourhood size of cuts' LNS.""")
    lns_tries: int = _knob(2, "count", """Bounded LNS: tries of each kind of neighbourhood before
        choosing between them.""")
    lns_explore: float = _knob(0.2, "probability", """Bounded LNS: the chance of trying the kind
        of neighbourhood that has done worse.""")
    lns_decay: float = _knob(0.7, "probability", """Bounded LNS: the decay of past gains and
        times.""")
    # -- the cluster LP's bound -----------------------------------------------------------
    lp_setup_s_per_family: float = _knob(2.5e-6, "factor", """Seconds per candidate family to
        build the first LP: jester's 772,774 families took 1.9 s before its first solve.""")
    lp_rows_per_round: int = _knob(200, "count", """Cluster rows added per separation round, at
        most.""")
    lp_initial_columns: int = _knob(10, "count", """Column generation: the best families of each
        variable the LP starts with.""")
    lp_columns_per_round: int = _knob(5, "count", """Column generation: a variable's families that
        enter per pricing round.""")
    lp_width_rows_per_round: int = _knob(20, "count", """Width rows (W) added per round, at
        most.""")
    lp_width_rows_each_round_max_k: int = _knob(2, "count0", """Up to this k the width rows are
        separated every round; above, only once no cluster row is violated.""")
    lp_minor_rows_max_k: int = _knob(2, "count0", """Up to this k the minor rows (M) are separated
        (every round whose pricing is done): at k = 2 `learn` from data at 600 s ended with
        bounds 505-1,407 tighter on plants, baudio and jester, and auto from the anchor caches
        at 60 s 350-1,197 tighter (munin5000 too); wdbc k = 3 gave none.""")
    lp_minor_max_n: int = _knob(150, "count", """Minor rows are searched in regions of at most this
        many variables: the search's contraction step holds an (m, m, m) array (8 GB at
        m = 1,000); at m = 100 a round's search took 0.3 s.""")
    lp_minor_rows_per_round: int = _knob(10, "count", """Minor rows added per round, at most.""")
    lp_minor_restarts: int = _knob(4, "count0", """Searches for minor rows after the first, each from
        the vertices less one of the first row's.""")
    lp_minor_s_per_round: float = _knob(1.0, "seconds", """The most seconds a round's search for minor
        rows takes.""")
    lp_row_idle_rounds: int = _knob(10, "count", """A row whose multiplier has been 0 for this
        many solves leaves the LP: after 18 s the bound was 1,178 tighter at plants k = 2 and 712
        at munin5000 k = 5, with a fifth to a quarter of the rows.""")
    lp_row_drop_every: int = _knob(5, "count", """Idle rows are looked for every this many
        solves.""")
    # -- structural EM (data with missing cells, twbn.em) -----------------------------------
    em_start_share: float = _knob(0.4, "probability", """EM's start: the network learned on the
        data filled by nearest-neighbour hot deck in this share of the limit, kept at the end
        where its observed cells' score beats EM's network's (0: start from no arcs, no rival). 20 %
        MCAR, 5,000 rows, 60 s, held-out a row: the start against no arcs (both at 0.2 of the
        limit, localsearch): plants k = 5 -13.90 / -14.05, k = 8 -13.73 / -13.84; jester k = 5
        -54.83 / -55.14; alarm k = 2 -10.79 / -10.69 (worse: hence EM from no arcs as a rival);
        better in 12 of 18 cells. 0.4 with auto's start (``em_start_cache_share`` 0.25) and EM
        from no arcs at 0.2, against 0.2 / localsearch / 0.3, side by side on the 18 cells of
        alarm, insurance, hepar2, plants, baudio, jester at k = 2, 5, 8
        (results/missing-debd-mcar-start-policies.md, missing-bnlearn-mcar-start-policies.md):
        better in 10 (plants k = 2 by 0.10, jester k = 5 by 0.10), worse in 4 (jester k = 2 by
        0.06, plants k = 5 by 0.02), equal in 4; within 1 % of the complete rows' network in 14
        against 13. 0.6 without EM from no arcs: plants k = 8 0.03 worse, baudio k = 5 0.03
        better than 0.4 (DEBD only).""")
    em_start_cache_share: float = _knob(0.25, "probability", """The hot-deck start: this share of
        its seconds scores the fill's families level by level (every single parent, then every
        pair, ..., a level begun only where it is predicted to end in time), and auto searches
        the rest, as ``learn`` does with complete data (0: localsearch over single parents, the
        rest scored on demand). At a fifth of 60 s localsearch's start was the better (plants k
        = 5 -13.90 a held-out row against auto's -14.02); at 0.4 of the limit, see
        ``em_start_share``.""")
    em_empty_share: float = _knob(0.0, "probability", """With a learned start (hot deck): EM is first
        run from no arcs, with localsearch M-steps, in this share of the limit, and its network
        (with its own EM tables) is one more contender at the end's choice by the observed
        cells' BIC; the hot-deck EM runs in the rest, its start keeping its seconds (0: no
        second start). 20 %, 60 s, 0.3 beside 0, one run (results/missing-mcar-empty-start.md,
        missing-mar-empty-start.md): held out, better in 8 of 27 cells (insurance k = 2 under
        MAR by 0.115 a row, 1.50 % behind the complete rows' network to 0.64 %; jester k = 5
        by 0.083), worse in 4 (baudio k = 2 by 0.053, hepar2 by at most 0.008), equal in 15;
        within 1 % in 14 of 18 MCAR cells either way, 7 of 9 MAR cells against 6. 0.2 with
        the start at 0.4: ``em_start_share``; 0 since ``em_available_share`` took its
        seconds.""")
    em_available_share: float = _knob(0.2, "probability", """With a learned start (hot deck): EM is
        also run, before it, from the network learned on the available cases (each family's
        gain over none measured on the rows where it is wholly observed, scaled to all rows:
        no completion drawn from a network) in this share of the limit, with localsearch
        M-steps, its start learned in ``em_start_share`` of those seconds; its network is one
        more contender at the end's choice (``em_end_penalty``; 0: none). 20 % MCAR,
        60 s, the 18 cells of alarm, insurance, hepar2, plants, baudio, jester at k = 2, 5, 8,
        side by side (results/missing-bnlearn-mcar-available-start.md,
        missing-debd-mcar-available-start.md): 0.2 in place of EM from no arcs
        (``em_empty_share`` 0.2 before) better held out in 4 cells (insurance k = 5 by 0.081
        a row, 1.15 % behind the complete rows' network to 0.54 %; insurance k = 2 by 0.038,
        plants k = 5 by 0.033), worse in 4 (jester k = 2 by 0.022, plants k = 8 by 0.011),
        equal in 10; within 1 % in 16 of 18 against 14. Beside EM from no arcs (0.2 each, the
        hot-deck EM with 0.2 of its own): within 1 % in 16 too, better in 8, worse in 4
        (plants k = 2 by 0.146).""")
    em_available_max_parents: int = _knob(2, "count", """The start learned on the available cases
        holds families of at most this many parents (or a variable's required ones): a
        family's gain over none is measured on the rows where it is wholly observed, and the
        more parents, the fewer rows (0.8^4 of them for three parents at 20 % MCAR) and the
        noisier the gain; searched over every family up to the bound k, the start took the
        lucky ones (alarm k = 8: 69 arcs against the 46 of the generating network).""")
    em_end_penalty: float = _knob(1.0, "factor0", """The end's choice among EM's end, its start and
        the other runs' ends: the observed cells' log-likelihood (exact, under the bound) less
        this many times each network's free parameters (1: AIC; BIC's is ln(N) / 2, 4.26 at
        5,000 rows). 20 % MCAR, 60 s, the 18 cells of alarm, insurance, hepar2, plants, baudio,
        jester at k = 2, 5, 8, every network the end compared held out with its own tables, one
        run (notebook/results/missing-end-criterion-mcar.jsonl): AIC kept the best held out in
        16 of 18 cells, BIC in 10; AIC's choice better in 6 (jester k = 5 by 0.108 a row,
        insurance k = 8 by 0.075, hepar2 k = 2, 5, 8 by 0.014-0.032, plants k = 8 by 0.010),
        never worse.""")
    em_m_step_share: float = _knob(0.1, "share", """Each M-step runs for at most this share of
        the limit (the first at most half of what is left, later ones 35 %). 20 % MCAR, 5,000
        rows, 20 s, localsearch M-steps over singles: alarm k = 5 held-out -10.84 a row in 6
        iterations, against -10.91 in 3 with M-steps of half of what is left.""")
    em_final_share: float = _knob(0.3, "probability", """method auto: auto itself re-solves the
        last completions in this share of the limit (all that is left where the iterations
        ran to the end, at most this where EM converged before; 0: none). auto (the cluster-cut
        ILP over the cache) in every M-step ended at -12.00 (alarm k = 2) and -13.77
        (insurance k = 5) a held-out row where localsearch M-steps ended at -10.87 and
        -13.29.""")
    em_copies: int = _knob(10, "count", """Draws of each row's missing cells per E-step; the
        M-step scores families on the draws of every row (5,000 rows, 10 copies: 50,000), so
        fewer copies search faster on noisier expected counts. At 10 the expected counts of a
        family over 5,000 rows move by well under one count between two draws of the same
        network.""")
    em_cache_families: int = _knob(100_000, "count", """The M-step's cache holds every family of
        up to the most parents L for which n C(n - 1, L) stays within this many (L >= 1): n = 17
        gets every family of 5 parents, n = 27 and 37 every pair, n = 100 every single parent.
        alarm (n = 37, 20 % MCAR, k = 2, 20 s): held-out -11.56 a row with pairs, -12.00 with
        singles (the cluster-cut ILP chooses among cached families only).""")

    # -- which k (treewidth="auto", twbn.which_k) ---------------------------------------------
    which_k_refit_share: float = _knob(0.5, "share", """treewidth="auto": the share of the whole
        time for learning the chosen k again on every row, from the chosen network; the rest
        measures the curve. On eleven DEBD sets at 30 s (results/which-k-30-refit50.md; 0.25 run
        twice: which-k-30-ladder-branching.md, -default-again.md) 0.5 put 9 of 11 within 0.5 %
        of the best fixed k, 0.25 8 of 11 (pumsb_star -0.53 against -2.10 %: the curve's k = 8
        network needs the refit's time); chosen without each set (which-k-30-refit-rule.md). On
        the suite's 20 sets at 30 s (2026-12-07, auto beside the same fixed-k records): 0.5 and
        0.6 17 of 20 each (which-k-30-suite.md, -refit60.md); 0.7 left the curve too little at
        180,000 rows and n = 1,041: kdd measured k = 1 only and chose it (-5.63 %), munin
        measured no bound and ended in an error (which-k-30-refit70.md).""")
    which_k_split_min_rows: int = _knob(2000, "count", """treewidth="auto": from this many rows one
        validation split (``which_k_validation_share`` of them) measures each k; below it,
        ``which_k_folds``-fold cross-validation, so that every row is held out once and the
        per-row spread is over all of them.""")
    which_k_validation_share: float = _knob(0.2, "share", """treewidth="auto": the rows held out
        when there are ``which_k_split_min_rows`` or more.""")
    which_k_folds: int = _knob(5, "count", """treewidth="auto": folds of the cross-validation
        below ``which_k_split_min_rows`` rows.""")
    which_k_patience: int = _knob(2, "count", """treewidth="auto": the sweep stops after this many
        bounds in a row whose held-out likelihood is not above the best so far (the curve
        has flattened), or at ``max_treewidth``. On six DEBD sets (results/which-k-30.md) the
        curve rose to k = 8 at four, and stopped at 6 (dna) and 7 (tretail) after two flat
        bounds: at dna fixed k = 7 was 0.06 % better on the test split than the k = 5 chosen.""")
    which_k_bound_cost: float = _knob(3.0, "factor", """treewidth="auto": each bound after k = 1
        gets at least this many times k = 1's seconds (a bound's cost without a search), else
        fewer bounds, spread out to ``max_treewidth``. At cwebkb (n = 839, 30 s) the seven bounds
        after k = 1 got a second each, none moved, and the flat curve chose k = 1, 10 % below
        fixed k = 2 held out; a 2.8 s k = 2 search moved. With 3 (not tuned): k = 8, 0.26 % below
        the best fixed k; 8 of 11 DEBD sets within 0.5 % (6 before; results/which-k-30-ladder.md).""")
    which_k_min_refit_s: float = _knob(1.0, "seconds0", """treewidth="auto": with less than this
        left the chosen k is not learned again: the chosen network, scored on every row, is the
        answer (a method needs its start-up and a search to improve on it). Not tuned.""")
    which_k_default_s: float = _knob(60.0, "seconds", """treewidth="auto" without a time limit:
        the seconds of the whole choice, curve and refit.""")

    # -- processes and the clock ----------------------------------------------------------
    min_engine_s: float = _knob(0.05, "seconds", """The least time limit an engine is handed: one
        handed an expired budget still returns the network it was given rather than refusing a
        zero limit.""")
    parallel_margin_s: float = _knob(2.5, "seconds0", """Seconds a method run alone in a second
        process keeps back for that process's start (a spawned interpreter importing twbn: 1.5-2
        s here) and for sending its network back.""")
    beside_return_s: float = _knob(1.0, "seconds0", """Seconds a bound computed beside the method
        keeps back for its last round's overrun and its answer (munin5000: 0.6 s over).""")
    join_min_s: float = _knob(3.0, "seconds0", """A job the LP's bound gives back with less than
        this left is not given back: a piece worker takes about a second to start.""")
    resume_min_s: float = _knob(5.0, "seconds0", """The LP's bound that ends with no violated row
        left gives the time it did not use back to the method when at least this much is left: at
        munin (1,800 s) the LP completed after a third of its share.""")
    cp_margin_s: float = _knob(0.2, "seconds0", """CP-SAT: seconds allowed beyond the limit before
        its child process is stopped (building the model is not timed: at n = 1,041 it outlasts a
        minute); 2 s put munin at 7.7 s of a 5 s limit.""")
    cp_return_s: float = _knob(0.5, "seconds0", """CP-SAT's own limit ends this long before the
        deadline, for sending the result back and certifying it.""")
    overrun_grace_s: float = _knob(2.0, "seconds0", """Seconds a method may run past its deadline,
        or a stop request, before it is abandoned; the built-in methods stop within it.""")
    dask_connect_timeout_s: float = _knob(10.0, "seconds", """Seconds to wait for a Dask scheduler
        before saying it cannot be reached.""")

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            kind, ok, what = _KINDS[f.metadata["kind"]]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                    (kind is int and not float(value).is_integer()) or math.isnan(value):
                raise PolicyError(f"policy field {f.name} is {what}, got {value!r}")
            value = kind(value)
            if not ok(value):
                raise PolicyError(f"policy field {f.name} is {what}, got {value!r}")
            object.__setattr__(self, f.name, value)
        if self.piece_min_size > self.piece_max_size:
            raise PolicyError(f"policy: piece_min_size ({self.piece_min_size}) is above piece_max_size "
                              f"({self.piece_max_size})")
        if self.lns_min_size > self.lns_start_size:
            raise PolicyError(f"policy: lns_min_size ({self.lns_min_size}) is above lns_start_size "
                              f"({self.lns_start_size})")

    # -- building and reading -----------------------------------------------------------
    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], base: "Policy | None" = None) -> "Policy":
        """``base`` (default: the defaults) with the fields of ``values`` changed;
        PolicyError naming the nearest field for a name that is not one."""
        names = [f.name for f in dataclasses.fields(cls)]
        for key in values:
            if key not in names:
                near = difflib.get_close_matches(str(key), names, n=1, cutoff=0.5)
                hint = f"did you mean {near[0]!r}? " if near else ""
                raise PolicyError(f"unknown policy field {key!r}; {hint}(`twbn policy` lists them)")
        return dataclasses.replace(base or DEFAULT_POLICY, **dict(values))

    @classmethod
    def from_settings(cls, settings: Iterable[str], base: "Policy | None" = None) -> "Policy":
        """From ``KEY=VALUE`` texts (the command line's ``--policy``), values read as
        numbers."""
        values: dict[str, Any] = {}
        for text in settings:
            key, eq, raw = str(text).partition("=")
            key = key.strip().replace("-", "_")
            if not eq or not key:
                raise PolicyError(f"--policy takes KEY=VALUE, got {text!r}")
            try:
                values[key] = float(raw) if any(c in raw.lower() for c in ".e") else int(raw.replace("_", ""))
            except ValueError:
                raise PolicyError(f"policy field {key}: {raw.strip()!r} is not a number") from None
        return cls.from_mapping(values, base)

    def changed(self) -> dict[str, Any]:
        """The fields that differ from the defaults, by name: what a result records."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if getattr(self, f.name) != getattr(DEFAULT_POLICY, f.name)}

    def bound_share_at(self, n: int) -> float:
        """The share of an anytime method's budget kept for the cluster LP's bound at ``n``
        variables.

        Examples
        --------
        >>> p = Policy()
        >>> p.bound_share_at(31), p.bound_share_at(69), p.bound_share_at(1041)
        (0.1, 0.3, 0.3)
        """
        return self.large_bound_share if n >= self.large_bound_n else self.bound_share

    def dp_bounded_max_n(self, k: int) -> int | None:
        """Largest n at which auto runs the bounded DP at ``k`` (None: never, k >= 4)."""
        return {2: self.dp_bounded_max_n_k2, 3: self.dp_bounded_max_n_k3}.get(k)


DEFAULT_POLICY = Policy()


def describe_policy(policy: Policy = DEFAULT_POLICY) -> str:
    """Every field: its value (and the default where it differs), and the measurement
    behind the default; what ``twbn policy`` prints."""
    lines = []
    for f in dataclasses.fields(policy):
        value, default = getattr(policy, f.name), getattr(DEFAULT_POLICY, f.name)
        shown = f"{value!r}" + ("" if value == default else f" (default {default!r})")
        lines.append(f"{f.name} = {shown}\n    {f.metadata['doc']}")
    return "\n".join(lines)
