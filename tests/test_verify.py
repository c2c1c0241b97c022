"""The independent checker rejects each kind of corrupted result, one test per violation."""

import copy
import json


from twbn.experiments.cli import main
from twbn.formulations.problem import Problem
from twbn.formulations.verify import verify_result
from twbn.scoring.jkl import write_jkl
from twbn.solvers.registry import solve
from tests.helpers import random_cache

CACHE = random_cache(6, 21, max_size=2, density=0.7)
PROBLEM = Problem(CACHE, 2, forbidden={(0, 1)}, required={(2, 3)})
GOOD = solve(PROBLEM, "dp").to_json(PROBLEM)
NAMES = list(CACHE.names)


def corrupt(fn):
    r = copy.deepcopy(GOOD)
    fn(r)
    return verify_result(CACHE, r)


def test_the_good_result_is_valid():
    assert GOOD["status"] == "optimal" and verify_result(CACHE, GOOD) == []
    assert any(GOOD["parents"].values()), "a network without arcs would make the tests below weak"


def _child_with_parents():
    return next(v for v in NAMES if GOOD["parents"][v])


def test_parent_set_not_in_cache():
    def f(r):
        v = NAMES[4]
        r["parents"][v] = [n for n in NAMES if n != v]  # 5 parents: never cached (size <= 2)
    assert any("not in the cache" in e for e in corrupt(f))


def test_cycle():
    v = _child_with_parents()
    p = GOOD["parents"][v][0]

    def f(r):
        r["parents"][p] = [v]
    errs = verify_result(CACHE, (lambda r: (f(r), r)[1])(copy.deepcopy(GOOD)))
    assert any("directed cycle" in e for e in errs)


def test_score_not_the_sum():
    assert any("differs from the sum" in e for e in corrupt(lambda r: r.update(score=r["score"] + 0.5, bound=r["bound"] + 0.5, gap=0.0)))


def test_order_missing_a_variable():
    assert any("every variable exactly once" in e for e in corrupt(lambda r: r["elimination_order"].pop()))


def test_width_above_bound():
    errs = verify_result(CACHE, GOOD, treewidth=0)
    assert any("width" in e and "> treewidth bound 0" in e for e in errs)


def test_reported_width_wrong():
    assert any("differs from the elimination order's width" in e for e in corrupt(lambda r: r.update(width=r["width"] + 1)))


def test_bound_below_score():
    assert any("below the score" in e for e in corrupt(lambda r: r.update(bound=r["score"] - 1, status="feasible",
                                                                            gap=-1 / abs(r["score"]))))


def test_gap_inconsistent():
    assert any("gap" in e for e in corrupt(lambda r: r.update(gap=0.5)))


def test_optimal_without_matching_bound():
    assert any("status optimal" in e for e in corrupt(lambda r: r.update(bound=r["score"] + 1, gap=1 / abs(r["score"]))))


def test_forbidden_arc_present():
    def f(r):
        r["forbidden"] = [[p, v] for v in NAMES for p in r["parents"][v]][:1]
    assert any("forbidden arc" in e for e in corrupt(f))


def test_required_arc_absent():
    def f(r):
        r["required"] = [[NAMES[5], NAMES[0]]] if NAMES[5] not in r["parents"][NAMES[0]] else [[NAMES[0], NAMES[5]]]
    assert any("required arc" in e for e in corrupt(f))


def test_wrong_variables():
    assert corrupt(lambda r: r.update(variables=list(reversed(r["variables"]))))


def test_missing_fields():
    assert any("missing fields" in e for e in corrupt(lambda r: r.pop("elimination_order")))


def test_check_command_exit_codes(tmp_path, capsys):
    jkl = tmp_path / "c.jkl"
    write_jkl(CACHE, jkl)
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps(GOOD))
    r = copy.deepcopy(GOOD)
    r["score"] += 1
    bad.write_text(json.dumps(r))
    assert main(["check", str(jkl), str(good)]) == 0
    assert main(["check", str(jkl), str(bad)]) == 1
    out = capsys.readouterr().out.strip().splitlines()
    assert out[0] == (f"{good}: valid network: every parent set in the cache, acyclic, elimination order of width "
                      f"{GOOD['width']}" + ("" if GOOD["treewidth_bound"] is None else f" <= {GOOD['treewidth_bound']}")
                      + f", score {GOOD['score']!r} recomputed")
    assert out[1].startswith(f"{good}: claimed by {GOOD.get('method') or 'the method'}, not verified here: "
                             f"status {GOOD['status']}")
    assert all(line.startswith(str(bad)) for line in out[2:]) and len(out) >= 3


def test_certificate_tries_the_hint_before_the_greedy_orders(monkeypatch):
    """A valid hint is used without computing min-fill or min-degree, which are O(n²) and
    took minutes at n = 10,000; without a hint they are still the fallback."""
    import twbn.formulations.solution as solution

    def boom(_adj):
        raise AssertionError("greedy order computed although the hint suffices")

    parents = [()] + [(v - 1,) for v in range(1, 50)]  # a chain: treewidth 1
    hint = list(range(49, -1, -1))
    monkeypatch.setattr(solution, "min_fill_order", boom)
    monkeypatch.setattr(solution, "min_degree_order", boom)
    order, width = solution.certificate_order(50, parents, 1, hint)
    assert order == hint and width == 1
    monkeypatch.undo()
    order, width = solution.certificate_order(50, parents, 1, None)
    assert width == 1 and sorted(order) == list(range(50))
