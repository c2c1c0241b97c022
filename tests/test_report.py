"""``twbn report`` on a real SQLite store filled with cells whose figures are set by hand."""

import csv

import pytest

from experiments.cli import main
from experiments.config import Cell
from experiments.stats import sign_test, structural_hamming_distance, w_score
from experiments.store import Store


def test_sign_test_and_w_score_by_hand():
    assert sign_test(5, 0) == pytest.approx(2 / 32)  # two-sided: 2·(1/2)^5
    assert sign_test(3, 3) == 1.0 and sign_test(0, 0) == 1.0
    assert sign_test(9, 1) == pytest.approx(2 * 11 / 1024)  # 2·(C(10,0)+C(10,1))/2^10
    assert w_score(-100.0, -110.0) == pytest.approx(0.10)  # 10% worse than the reference
    assert w_score(-100.0, -100.0) == 0.0


def _row(score, status="feasible", ll=None, traj=None):
    return {"status": status, "score": score, "bound": None if traj is None else traj[-1]["bound"], "gap": None,
            "width": 2, "wall_time": 1.0, "test_loglik": ll, "test_rows": None if ll is None else 10,
            "result": {"score": score}, "trajectory": traj}


def test_structural_hamming_distance_by_hand():
    chain = [(), (0,), (1,)]  # 0 → 1 → 2
    assert structural_hamming_distance(chain, chain) == 0
    assert structural_hamming_distance(chain, [(1,), (), (1,)]) == 1  # 0 → 1 reversed
    assert structural_hamming_distance(chain, [(), (), (0, 1)]) == 2  # 0 → 1 missing, 0 → 2 extra
    assert structural_hamming_distance(chain, [(), (), ()]) == 2
    assert structural_hamming_distance([(), ()], [(1,), ()]) == 1


def test_report_tables_and_figures(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    run = store.start_run("hand", "name = 'hand'")
    # two instances (seeds); the unbounded cell of each is the W-score reference
    for seed, (unb, a, b) in enumerate([(-100.0, -110.0, -120.0), (-200.0, -210.0, -205.0)]):
        store.record(run, Cell("d", 0, None, "exact", seed), _row(unb, "optimal"))
        store.record(run, Cell("d", 0, 2, "A", seed), _row(a, ll=-30.0,
                                                            traj=[{"time": 0.5, "incumbent": a, "bound": a + 5}]))
        store.record(run, Cell("d", 0, 2, "B", seed), _row(b, ll=-40.0))
    store.close()
    out = tmp_path / "rep"
    assert main(["report", str(tmp_path / "s.sqlite"), "-o", str(out)]) == 0
    with open(out / "summary.csv") as fh:
        rows = {(r["treewidth"], r["method"]): r for r in csv.DictReader(fh)}
    # A: W = 10/100 and 10/200 → mean 0.075; B: 20/100 and 5/200 → mean 0.1125
    assert float(rows["2", "A"]["mean_w_score"]) == pytest.approx(0.075)
    assert float(rows["2", "B"]["mean_w_score"]) == pytest.approx(0.1125)
    assert float(rows["2", "A"]["mean_test_loglik_per_row"]) == pytest.approx(-3.0)
    assert float(rows["unbounded", "exact"]["mean_w_score"]) == 0.0
    md = (out / "report.md").read_text()
    # A beats B on seed 0 and loses on seed 1; the unbounded cells are other instances
    assert "| A | — | 1 (p=1.000) | 0 (p=1.000) |" in md
    assert "| B | 1 (p=1.000) | — | 0 (p=1.000) |" in md
    for png in ("score_by_treewidth.png", "loglik_by_treewidth.png", "gap_over_time.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with open(out / "cells.csv") as fh:
        assert len(list(csv.DictReader(fh))) == 6


def test_report_of_a_missing_or_empty_store_is_a_clear_error(tmp_path, capsys):
    assert main(["report", str(tmp_path / "none.sqlite"), "-o", str(tmp_path / "r")]) == 1
    assert "no store" in capsys.readouterr().err
    Store(tmp_path / "e.sqlite").close()
    assert main(["report", str(tmp_path / "e.sqlite"), "-o", str(tmp_path / "r")]) == 1
    assert "holds no cells" in capsys.readouterr().err
