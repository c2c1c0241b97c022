"""Issue 84: the suite's bookkeeping, on records whose answers are worked out by hand: ETL's
better variant per cell, the margins against it, a policy chosen on the whole suite and
the leave-one-data-set-out table."""

from benchmarks.field_data import etl_best, margins
from benchmarks.suite_rule import cells, choose, leave_one_out, shortfalls


def _twbn(data, k, score, policy="default", budget=60.0, command_s=60.5):
    return {"data": data, "k": k, "budget": budget, "policy": policy, "score": score, "valid": True,
            "command_s": command_s}


def _etl(data, k, variant, score, valid=True, command_s=3.0):
    return {"data": data, "k": k, "peer": "etl", "variant": variant, "score": score, "valid": valid,
            "command_s": command_s}


def test_etl_best_takes_the_better_valid_variant_and_keeps_both_times():
    got = etl_best([_etl("a", 2, "hc-et", -100.0), _etl("a", 2, "hc-et-poly", -90.0, valid=False, command_s=9.0),
                    _etl("b", 2, "hc-et", -50.0), _etl("b", 2, "hc-et-poly", -40.0)])
    assert got[("a", 2)] == {"score": -100.0, "variant": "hc-et", "seconds": {"hc-et": 3.0, "hc-et-poly": 9.0}}
    assert got[("b", 2)]["score"] == -40.0 and got[("b", 2)]["variant"] == "hc-et-poly"


def test_margins_count_cells_ahead_median_worst_and_overruns():
    records = [_etl("a", 2, "hc-et", -100.0), _etl("b", 2, "hc-et", -200.0), _etl("c", 2, "hc-et", -400.0),
               _twbn("a", 2, -99.0), _twbn("b", 2, -202.0, command_s=61.2), _twbn("c", 2, -396.0)]
    # margins: a +1 %, b -1 %, c +1 %: median +1 %, worst -1 % at b; b's command 61.2 s > 61
    assert margins(records) == ["- 60 s, default: ahead of ETL's better variant in **2 of 3** cells; median margin "
                                "+1.00 %, worst -1.00 % (b k = 2); 1 command(s) over limit + 1 s"]


def test_a_policy_chosen_on_the_suite_and_left_out_set_by_set():
    records = [_twbn("a", 2, -100.0), _twbn("a", 2, -99.0, "x"),     # x ahead by 1 % at a
               _twbn("b", 2, -100.0), _twbn("b", 2, -99.5, "x"),     # and by 0.5 % at b
               _twbn("c", 2, -100.0), _twbn("c", 2, -103.0, "x"),    # behind by 3 % at c
               _twbn("d", 2, -100.0)]                                # one policy only: not a cell
    table = cells(records)
    assert sorted(table) == [("a", 2, 60.0), ("b", 2, 60.0), ("c", 2, 60.0)]
    assert [round(s, 4) for s in shortfalls(table, "default")] == [round(100 / 99, 4), round(50 / 99.5, 4), 0.0]
    # mean shortfalls: default (1.0101 + 0.5025 + 0) / 3 = 0.504; x (0 + 0 + 3) / 3 = 1.0
    assert choose(table, ["default", "x"]) == "default"
    rows = {r["data"]: r for r in leave_one_out(table, ["default", "x"])}
    assert rows["c"]["chosen_without"] == "x"        # without c, x wins a and b
    assert rows["a"]["chosen_without"] == "default"  # without a: default 0.25 % against x 1.5 %
    assert rows["c"]["shortfall_without"] == [3.0] and rows["c"]["chosen_full"] == "default"
