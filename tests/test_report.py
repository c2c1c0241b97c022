"""``twbn report`` on a real SQLite store filled with cells whose figures are set by hand."""

import csv

import pytest

from twbn.experiments.cli import main
from twbn.experiments.config import Cell
from twbn.experiments.stats import sign_test, structural_hamming_distance, w_score
from twbn.experiments.store import Store


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
    # A is an anytime heuristic: 10 and 30 candidates, medians −130 and −250
    store.db.execute("UPDATE cells SET result = ? WHERE method = 'A' AND seed = 0",
                     ('{"stats": {"iterations": 10, "median_score": -130.0, "max_score": -110.0}}',))
    store.db.execute("UPDATE cells SET result = ? WHERE method = 'A' AND seed = 1",
                     ('{"stats": {"iterations": 30, "median_score": -250.0, "max_score": -210.0}}',))
    store.db.commit()
    store.record_cache("d", 0, {"score": "bic", "variables": 5, "rows": 50, "max_parents": 2, "space": 55,
                                "scored": 40, "kept": 12, "pruned_unscored": {"rule2": 7, "rule4": 3, "rule5": 5},
                                "dominated_removed": 28, "seconds": 0.25})
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
    # against the best proved bound of each (seed, k): A's bounds −105 and −205 (B has none)
    assert float(rows["2", "A"]["mean_w_vs_best_bound"]) == pytest.approx((5 / 105 + 5 / 205) / 2)
    assert float(rows["2", "B"]["mean_w_vs_best_bound"]) == pytest.approx((15 / 105 + 0 / 205) / 2)
    assert rows["unbounded", "exact"]["mean_w_vs_best_bound"] == ""  # no cell of it has a bound
    md = (out / "report.md").read_text()
    # A beats B on seed 0 and loses on seed 1; the unbounded cells are other instances
    assert "| A | — | 1 (p=1.000) | 0 (p=1.000) |" in md
    assert "| B | 1 (p=1.000) | — | 0 (p=1.000) |" in md
    assert "| d | 2 | A | 2 | 20 | -190.00 | -160.00 |" in md  # means of the two cells' statistics
    assert "| d | 0 | bic | 5 | 50 | 2 | 55 | 40 | 12 | 7 | 0 | 3 | 5 | 0 | 0 | 28 | 0.25 |" in md
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


def test_the_study_report_counts_folds_against_the_config_not_the_cells_present(tmp_path):
    """A grid still running (or stopped) shows how many of the config's folds are in each
    row, and which failed; a committed CSV without the folds column takes them from the
    bundled config (5)."""
    from twbn.experiments.report_machado import _load_csv, tables

    def cell(fold, status, score):
        return {"data": "audiology", "ess": 1.0, "max_parents": 4, "method": "auto", "treewidth": 3, "fold": fold,
                "status": status, "score": score, "ll_row": None if score is None else -17.0, "gap": 0.02,
                "width": 3, "ran": "improve", "folds": 5, "config": "machado-study-audiology-ess1"}

    text = "\n".join(tables([cell(0, "feasible", -2860.0), cell(1, "timeout", None)]))
    assert "| 1 | 4 | auto | 3 | 1 of 5 (1 failed/timeout) (3 not run yet) |" in text
    old = tmp_path / "cells.csv"
    old.write_text("config,key,data,fold,treewidth,method,seed,status,score\n"
                   "machado-study-audiology-ess1,k,audiology,0,3,auto,0,feasible,-2860.0\n")
    assert [c["folds"] for c in _load_csv(old)] == [5]


@pytest.mark.slow  # 4 s: matplotlib draws two figures
def test_twbn_report_writes_the_study_layout_from_several_inputs(tmp_path, capsys):
    """``twbn report --layout machado`` reads stores or an earlier report's cells.csv (the
    last input wins for a cell in both) and writes the study's report, all files or none."""
    from twbn.experiments.report_machado import _csv

    def cell(fold, score):
        return {"config": "machado-study-audiology-ess1", "key": f"audiology|fold={fold}|k=3|auto|seed=0",
                "data": "audiology", "fold": fold, "treewidth": 3, "method": "auto", "seed": 0, "status": "feasible",
                "score": score, "bound": score + 50.0, "gap": 50.0 / -score, "test_loglik": -17.0 * 45,
                "test_rows": 45, "width": 3,
                "ran": "improve", "ess": 1.0, "max_parents": 4, "folds": 5}

    first, second = tmp_path / "a.csv", tmp_path / "b.csv"
    first.write_text(_csv([cell(0, -2900.0), cell(1, -2800.0)]))
    second.write_text(_csv([cell(1, -2700.0)]))  # fold 1 again: this one is kept
    out = tmp_path / "study"
    assert main(["report", "--layout", "machado", str(first), str(second), "-o", str(out)]) == 0
    text = (out / "report.md").read_text()
    # mean of -2900 and -2700, sd of the two (141.4); gaps 50/2900 and 50/2700: 1.79 % on average
    assert "| 1 | 4 | auto | 3 | 2 of 5 (3 not run yet) | -17.0000 ± 0.0000 | -2,800.0 ± 141.4 | 1.79 % | 3 | improve |" \
        in text
    assert (out / "audiology_loglik_by_treewidth.png").read_bytes()[:4] == b"\x89PNG"
    capsys.readouterr()
    # a store that is not there, a file that is not a store, two stores for the grid layout
    for argv, says in ((["--layout", "machado", str(tmp_path / "none.sqlite")], "no store"),
                       (["--layout", "machado", str(tmp_path / "junk.sqlite")], "not an experiment store"),
                       ([str(first), str(second)], "reads one store")):
        (tmp_path / "junk.sqlite").write_text("not sqlite")
        assert main(["report", *argv, "-o", str(tmp_path / "no")]) == 1
        assert says in capsys.readouterr().err
        assert not (tmp_path / "no").exists() and not list(tmp_path.glob(".no.*"))


def test_the_study_report_says_over_how_many_folds_a_junction_tree_time_is():
    """A tree above the limit is not built: its fold has no time, so the mean of the others
    (12 and 20 ms → 16.0) says it covers 2 of 3 folds; a row with every tree built says
    nothing more, and one with none built shows a dash. A 3-parent config's network of the
    same data, ESS, method and k is a row of its own (30 ms), not a fourth fold."""
    from twbn.experiments.report_machado import inference_lines

    def cell(k, fold, seconds, entries, parents=4):
        return {"data": "audiology", "ess": 1.0, "max_parents": parents, "method": "auto", "treewidth": k,
                "fold": fold, "max_clique": 4, "table_entries": entries, "junction_tree_s": seconds,
                "class_accuracy": 0.7, "class_log_loss": 1.1, "nb_accuracy": 0.76, "nb_log_loss": 2.7}

    lines = inference_lines([cell(3, 0, 0.012, 100), cell(3, 1, None, 9_000_000), cell(3, 2, 0.020, 300),
                             cell(4, 0, 0.010, 100), cell(5, 0, None, 9_000_000), cell(3, 0, 0.030, 100, parents=3)])
    rows = {tuple(line.split(" | ")[2:5:2]): line.split(" | ")[7] for line in lines if line.startswith("| audiology")}
    assert rows == {("4", "3"): "16.0 (2 of 3)", ("4", "4"): "10.0", ("4", "5"): "—", ("3", "3"): "30.0"}
    assert "not built" in "\n".join(lines)


def test_a_report_onto_a_file_says_it_is_not_a_folder(tmp_path, capsys):
    """Issue 63.7: ``report -o /dev/null`` said "File exists"."""
    from twbn.experiments.report_machado import _csv

    cells = tmp_path / "a.csv"
    cells.write_text(_csv([{"config": "machado-study-audiology-ess1", "key": "audiology|fold=0|k=3|auto|seed=0",
                            "data": "audiology", "fold": 0, "treewidth": 3, "method": "auto", "seed": 0,
                            "status": "feasible", "score": -2900.0, "bound": -2850.0, "gap": 50.0 / 2900,
                            "test_loglik": -765.0, "test_rows": 45, "width": 3, "ran": "improve", "ess": 1.0,
                            "max_parents": 4, "folds": 5}]))
    plain = tmp_path / "plain.txt"
    plain.write_text("kept")
    for target in (plain, "/dev/null"):
        assert main(["report", "--layout", "machado", str(cells), "-o", str(target)]) == 1
        assert f"twbn: error: {target} is not a folder: -o names the folder" in capsys.readouterr().err
    assert plain.read_text() == "kept" and not list(tmp_path.glob(".plain.*"))
