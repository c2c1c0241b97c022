"""The search policy (issue 64.1): one frozen twbn.Policy, validated once, carried by the
Budget to every method, set from Python, the command line and configs, and recorded in
every result that differs from the defaults."""

from __future__ import annotations

import ast
import dataclasses
import json
import math
from pathlib import Path

import pytest

import twbn
from twbn.experiments.cli import main
from twbn.solvers.budget import Budget
from twbn.solvers.policy import DEFAULT_POLICY, Policy, PolicyError, describe_policy
from tests.helpers import random_cache

ROOT = Path(__file__).resolve().parents[1]


def test_a_misspelt_field_names_the_nearest_one():
    with pytest.raises(PolicyError, match="unknown policy field 'stuck_piece'; did you mean 'stuck_pieces'"):
        Policy.from_mapping({"stuck_piece": 6})
    with pytest.raises(PolicyError, match="did you mean 'restart_min_s'"):
        Policy.from_settings(["restart-min-s2=5"])
    with pytest.raises(TypeError):
        Policy(stuck_piece=6)  # the dataclass itself: Python's own error, as for any keyword
    assert issubclass(PolicyError, twbn.TwbnError)


@pytest.mark.parametrize("field,value", [("bound_share", 1.5), ("bound_share", 0.0), ("stuck_pieces", 2.5),
                                         ("stuck_pieces", 0), ("restart_min_s", -1.0), ("auto_time_limit", math.inf),
                                         ("lns_explore", math.nan), ("stall_pieces", True), ("cuts_max_n", "40")])
def test_a_value_of_the_wrong_kind_is_refused(field, value):
    with pytest.raises(PolicyError, match=f"policy field {field} is"):
        Policy(**{field: value})


def test_fields_that_contradict_each_other_are_refused():
    with pytest.raises(PolicyError, match="piece_min_size .* is above piece_max_size"):
        Policy(piece_min_size=12, piece_max_size=8)


def test_settings_are_read_as_numbers_and_changed_lists_what_differs():
    p = Policy.from_settings(["stuck_pieces=6", "bound_share=0.2", "restart_min_s=30"])
    assert (p.stuck_pieces, p.bound_share, p.restart_min_s) == (6, 0.2, 30.0)
    assert isinstance(p.stuck_pieces, int) and isinstance(p.restart_min_s, float)
    assert p.changed() == {"stuck_pieces": 6, "bound_share": 0.2, "restart_min_s": 30.0}
    assert Policy().changed() == {} and Policy(stuck_pieces=DEFAULT_POLICY.stuck_pieces).changed() == {}
    with pytest.raises(PolicyError, match="KEY=VALUE"):
        Policy.from_settings(["stuck_pieces"])
    with pytest.raises(PolicyError, match="'six' is not a number"):
        Policy.from_settings(["stuck_pieces=six"])
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.stuck_pieces = 7  # frozen: a policy handed out is the one that runs


def test_every_field_has_a_kind_and_the_reason_for_its_default():
    text = describe_policy()
    for f in dataclasses.fields(Policy):
        assert f.metadata["kind"] and len(f.metadata["doc"]) > 20, f.name
        assert f"{f.name} = {getattr(DEFAULT_POLICY, f.name)!r}\n" in text
    assert "(default 6)" not in text and "stuck_pieces = 3 (default 12)" in describe_policy(Policy(stuck_pieces=3))


def test_a_budget_carries_its_policy_to_every_stage():
    p = Policy(warm_start_share=0.5)
    b = Budget(10.0, policy=p)
    assert b.child(0.3).policy is p and Budget(None, policy=p).child(0.3).policy is p
    with b.stage("x", 0.5) as stage:
        assert stage.policy is p
    assert Budget(1.0).policy is DEFAULT_POLICY
    with pytest.raises(TypeError, match="policy is a twbn.Policy"):
        Budget(1.0, policy={"stuck_pieces": 6})


def test_learn_records_the_fields_that_differ_and_rejects_a_budget_with_another_policy():
    from twbn.formulations.problem import Problem
    from twbn.solvers.registry import solve

    cache = random_cache(10, 1, max_size=2, density=0.4)
    sol = twbn.learn(cache, 2, "kg", time_limit=1.0, seed=0, policy=Policy(bound_share=0.2))
    assert sol.stats["policy"] == {"bound_share": 0.2}
    assert "policy" not in twbn.learn(cache, 2, "kg", time_limit=1.0, seed=0).stats
    # kg without a limit runs the policy's heuristic_time_limit, not a number of its own
    quick = twbn.learn(cache, 2, "kg", seed=0, policy=Policy(heuristic_time_limit=0.3))
    kg = {st["stage"]: st for st in quick.stats["budget"]["stages"]}["kg"]
    # at most its share of the policy's 0.3 s (the default would be 10 s): no timing asserted
    assert 0 < kg["allotted"] <= (1 - DEFAULT_POLICY.bound_share) * 0.3 + 1e-9
    with pytest.raises(ValueError, match="give the policy on the budget"):
        solve(Problem(cache, 2), "kg", budget=Budget(1.0), policy=Policy(bound_share=0.2))
    with pytest.raises(TypeError, match="policy is a twbn.Policy"):
        twbn.learn(cache, 2, "kg", time_limit=1.0, policy={"bound_share": 0.2})


def test_the_command_line_takes_and_lists_the_policy(tmp_path, capsys):
    jkl, out = tmp_path / "c.jkl", tmp_path / "r.json"
    twbn.write_jkl(random_cache(10, 1, max_size=2, density=0.4), jkl)
    assert main(["learn", str(jkl), "--treewidth", "2", "--method", "kg", "--time-limit", "1", "-o", str(out),
                 "-q", "--policy", "stuck_pieces=6", "--policy", "bound_share=0.2"]) == 0
    assert json.loads(out.read_text())["stats"]["policy"] == {"bound_share": 0.2, "stuck_pieces": 6}
    capsys.readouterr()
    assert main(["learn", str(jkl), "--treewidth", "2", "-o", str(tmp_path / "s.json"),
                 "--policy", "stuck_piece=6"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "did you mean 'stuck_pieces'" in err and not (tmp_path / "s.json").exists()
    assert main(["policy", "stuck_pieces=3"]) == 0
    printed = capsys.readouterr().out
    assert "stuck_pieces = 3 (default 12)" in printed and "bound_share = 0.1\n" in printed


def test_a_config_sets_the_policy_for_all_its_methods_and_per_method(tmp_path):
    from twbn.experiments.config import ConfigError, load_config

    def config(text: str) -> Path:
        p = tmp_path / "c.toml"
        p.write_text('name = "c"\ntreewidths = [2]\n[[data]]\nname = "zoo"\n' + text)
        return p

    c = load_config(config('[policy]\nstuck_pieces = 6\n[[methods]]\nname = "improve"\n'
                           '[[methods]]\nname = "improve-fast"\nmethod = "improve"\npolicy = { restart_min_s = 30 }\n'))
    assert c.policy == {"stuck_pieces": 6}
    assert c.methods["improve"]["policy"] == {"stuck_pieces": 6}
    assert c.methods["improve-fast"]["policy"] == {"stuck_pieces": 6, "restart_min_s": 30.0}
    with pytest.raises(ConfigError, match=r"\[policy\]: unknown policy field 'stuck_piece'; did you mean"):
        load_config(config('[policy]\nstuck_piece = 6\n[[methods]]\nname = "kg"\n'))
    with pytest.raises(ConfigError, match="method 'kg': policy: policy field bound_share is a share"):
        load_config(config('[[methods]]\nname = "kg"\npolicy = { bound_share = 2 }\n'))


#: Module-level numbers in solvers/ that are not knobs of the search policy, and why.
NOT_POLICY = {
    "LNS_SHARE": "the default of cuts' option lns_share",
    "KASTAR_MAX_EXPANSIONS": "the default of k-A*'s option max_expansions",
    "S2_MAX_EXPANSIONS": "the default of S2+'s option max_expansions",
    "MIN_VIOLATION": "a numerical tolerance: how violated a row must be to count",
    "_SUPPORT": "a numerical tolerance of the LP point",
    "_EPS": "a numerical tolerance: the local search's least gain that is not rounding",
    "_SEEDS_PER_CALL": "the separation's batch size, not its time or search",
    "_FIXED": "a fixed-point scale",
    "SERIES_WEIGHT": "a weight of the minor rows' formula",
    "MINOR_RESTARTS": "the minor separation's restarts, bounded by its round's time",
    "POOL_THREAD_WAIT_S": "how long to wait for an ended pool's thread: cleaning up, not searching",
    "MAX_VARIABLES": "the unbounded DP's capacity, refused above",
    "DEFAULT_MEMORY_LIMIT": "the bounded DP's memory cap",
    "NEG": "minus infinity",
}


def test_no_knob_is_left_outside_the_policy():
    """Every module-level number in solvers/ and structural EM is either a Policy field's old home (gone) or
    named above with the reason it is not a knob: a new time or search knob goes into the
    Policy, where a user and a benchmark can change it."""
    found = {}
    for path in [*(ROOT / "solvers").rglob("*.py"), *(ROOT / "twbn" / "em").rglob("*.py")]:
        if path.name == "policy.py":
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                value = node.value
                numeric = value is not None and all(isinstance(n, ast.Constant) and isinstance(n.value, (int, float))
                                                    and not isinstance(n.value, bool)
                                                    for n in ast.walk(value) if isinstance(n, ast.Constant))
                has_number = value is not None and any(isinstance(n, ast.Constant) and type(n.value) in (int, float)
                                                       for n in ast.walk(value))
                for t in targets:
                    if isinstance(t, ast.Name) and t.id.isupper() and numeric and has_number:
                        found[t.id] = path.relative_to(ROOT)
    assert {name: where for name, where in found.items() if name not in NOT_POLICY} == {}
