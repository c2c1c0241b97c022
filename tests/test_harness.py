"""The experiment harness: a quick grid end to end into a real SQLite store, failures
and overruns costing one cell, and SIGKILL mid-grid followed by --resume."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from twbn.experiments.cli import main
from twbn.experiments.config import ConfigError, expand, load_config

ROOT = Path(__file__).resolve().parents[1]


def _data(tmp_path) -> Path:
    """Eight columns of 101 rows: a chain with noise, so that networks have arcs."""
    rng = np.random.default_rng(3)
    cols = [rng.integers(0, 3, 101)]
    for _ in range(7):
        cols.append(np.where(rng.random(101) < 0.7, cols[-1], rng.integers(0, 3, 101)))
    p = tmp_path / "chain.csv"
    p.write_text(",".join(f"V{i}" for i in range(8)) + "\n" + "".join(",".join(str(c[r]) for c in cols) + "\n"
                                                                   for r in range(101)))
    return p


def _config(tmp_path, name="g", methods=('name = "kg"',), **over):
    # sweep = false: these grids test other things, and a sweep runs a chain's bounds one
    # after another (the sweep has its own tests below)
    fields = {"score": '"bic"', "max_parents": 1, "folds": 2, "seeds": "[0, 1]", "treewidths": "[1]",
              "time_limit": 3, "memory_limit_mb": 6000, "sweep": "false", **over}
    text = f'name = "{name}"\n' + "".join(f"{k} = {v}\n" for k, v in fields.items())
    text += f'[[data]]\nname = "chain"\npath = "{_data(tmp_path)}"\n'
    text += "".join(f"[[methods]]\n{m}\n" for m in methods)
    p = tmp_path / f"{name}.toml"
    p.write_text(text)
    return p


def _rows(store):
    with sqlite3.connect(store) as db:
        return db.execute("SELECT key, status, score, test_loglik, test_rows, result FROM cells").fetchall()


@pytest.mark.slow  # 6-12 s; moved out of the default run to keep it under 10 min
def test_quick_grid_end_to_end(tmp_path, capsys):
    cfg = _config(tmp_path, methods=('name = "kg"', 'name = "dp"'))
    store = tmp_path / "s.sqlite"
    assert main(["experiment", str(cfg), "--store", str(store), "--jobs", "2"]) == 0
    rows = _rows(store)
    assert len(rows) == len(expand(load_config(cfg))) == 1 * 2 * 1 * 2 * 2  # data, folds, k, methods, seeds
    for key, status, score, ll, n_test, result in rows:
        assert status in ("optimal", "feasible") and score is not None and result
        assert ll < 0 and n_test in (50, 51)  # 101 rows: folds of 51 and 50
    # the DP cells are exact; k-G never beats them on the same fold
    by = {k: s for k, _, s, *_ in rows}
    for fold in (0, 1):
        for seed in (0, 1):
            assert by[f"chain|fold={fold}|k=1|kg|seed={seed}"] <= by[f"chain|fold={fold}|k=1|dp|seed={seed}"] + 1e-6
    with sqlite3.connect(store) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert db.execute("SELECT count(*) FROM runs").fetchone()[0] == 1
    # each fold's scoring statistics are stored, and match the cache the cells used
    from twbn.experiments.store import Store
    from twbn.scoring.jkl import read_jkl

    st = Store(store)
    caches = st.caches()
    st.close()
    assert [(c["data"], c["fold"]) for c in caches] == [("chain", 0), ("chain", 1)]
    for c in caches:
        jkl = read_jkl(next((tmp_path / "s.sqlite.work").glob(f"chain.fold{c['fold']}.bic.*.jkl")))
        assert c["kept"] == jkl.n_parent_sets() <= c["scored"] and c["rows"] in (50, 51)
    # a second run without --resume refuses; with it there is nothing left to do
    assert main(["experiment", str(cfg), "--store", str(store)]) == 1
    assert "--resume" in capsys.readouterr().err
    assert main(["experiment", str(cfg), "--store", str(store), "--resume"]) == 0
    assert len(_rows(store)) == 8


# 17 s: a Dask local cluster
@pytest.mark.slow
def test_quick_grid_through_dask_local_cluster(tmp_path):
    pytest.importorskip("distributed")
    # k-G stops after a number of orders, not at its time limit: with the cores busy, a
    # time-limited run saw fewer orders in one executor than in the other (one cell ended
    # "feasible" locally and "optimal" on Dask, 2026-11-27)
    cfg = _config(tmp_path, methods=('name = "kg"\noptions = { max_iterations = 300 }', 'name = "dp"'))
    local, dask = tmp_path / "local.sqlite", tmp_path / "dask.sqlite"
    assert main(["experiment", str(cfg), "--store", str(local), "--jobs", "2", "-q"]) == 0
    assert main(["experiment", str(cfg), "--store", str(dask), "--executor", "dask", "--jobs", "2", "-q"]) == 0
    rows = {r[0]: r for r in _rows(dask)}
    assert len(rows) == len(expand(load_config(cfg))) == 8
    # the same cells, the same folds: the exact DP's scores and held-out likelihoods agree
    # with the local executor's; k-G is seeded and stops after its orders, so its scores agree too
    for key, status, score, ll, n_test, _ in _rows(local):
        assert rows[key][1] == status and rows[key][2] == pytest.approx(score)
        assert rows[key][3] == pytest.approx(ll) and rows[key][4] == n_test
    # resuming through a running cluster's scheduler after the local run lost one cell
    # runs just that one
    from distributed import LocalCluster

    with sqlite3.connect(local) as db:
        db.execute("DELETE FROM cells WHERE key = ?", ("chain|fold=1|k=1|dp|seed=0",))
    with LocalCluster(n_workers=1, threads_per_worker=1, dashboard_address=None) as cluster:
        assert main(["experiment", str(cfg), "--store", str(local), "--executor", "dask", "--scheduler",
                     cluster.scheduler_address, "--resume", "-q"]) == 0
    assert sorted(r[0] for r in _rows(local)) == sorted(rows)


@pytest.mark.slow  # 6-12 s; moved out of the default run to keep it under 10 min
def test_crash_and_overrun_cost_one_cell(tmp_path):
    # the memory limit leaves the cell no room to build a model (pyomo's import alone needs
    # more); the kill margin is shorter than the start-up of a cell, so kg overruns; the DP
    # cells still complete
    starved = _config(tmp_path, "starved", methods=('name = "milp"',), memory_limit_mb=60, seeds="[0]", folds=1)
    assert main(["experiment", str(starved), "--store", str(tmp_path / "a.sqlite"), "-q"]) == 3  # cells failed
    (key, status, *_), = _rows(tmp_path / "a.sqlite")
    assert status == "failed"
    over = _config(tmp_path, "over", methods=('name = "kg"', 'name = "dp"'), kill_margin=0.05, seeds="[0]", folds=1,
                   time_limit=3)
    store = tmp_path / "b.sqlite"
    assert main(["experiment", str(over), "--store", str(store), "-q"]) == 3
    with sqlite3.connect(store) as db:
        got = dict(db.execute("SELECT method, status FROM cells").fetchall())
        err = db.execute("SELECT error FROM cells WHERE method = 'kg'").fetchone()[0]
    assert got["kg"] == "timeout" and "killed" in err


@pytest.mark.slow  # 26 s; the default run keeps test_contract's kill -9 and resume
def test_sigkill_mid_grid_then_resume_gives_every_cell_once(tmp_path):
    cfg = _config(tmp_path, "kill", methods=('name = "kg"',), seeds="[0, 1, 2]")
    store = tmp_path / "k.sqlite"
    cmd = [sys.executable, "-m", "twbn.experiments.cli", "experiment", str(cfg), "--store", str(store), "-q"]
    proc = subprocess.Popen(cmd, cwd=ROOT, start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if store.exists():
            try:
                if len(_rows(store)) >= 2:
                    break
            except sqlite3.OperationalError:
                pass
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    before = len(_rows(store))
    assert 2 <= before < 6
    assert main(["experiment", str(cfg), "--store", str(store), "--resume", "-q"]) == 0
    rows = _rows(store)
    assert len(rows) == 6 and len({r[0] for r in rows}) == 6


def test_bad_configs_are_clear_errors(tmp_path, capsys):
    bad = _config(tmp_path, "bad", methods=('name = "nope"',))
    with pytest.raises(ConfigError, match="unknown method 'nope'"):
        load_config(bad)
    assert main(["experiment", str(bad)]) == 1
    assert "unknown method" in capsys.readouterr().err
    assert main(["experiment", str(_config(tmp_path)), "--store", str(tmp_path / "x.sqlite"),
                 "--scheduler", "tcp://127.0.0.1:1"]) == 1
    assert "--executor dask" in capsys.readouterr().err
    quick = _config(tmp_path, "quick", policy="{ dask_connect_timeout_s = 1 }")
    assert main(["experiment", str(quick), "--store", str(tmp_path / "y.sqlite"), "--executor", "dask",
                 "--scheduler", "tcp://127.0.0.1:1"]) == 1  # nothing listens on port 1
    assert "cannot reach the dask scheduler" in capsys.readouterr().err


CONFIGS = ROOT / "experiments" / "configs"


@pytest.mark.parametrize("name,cells", [("quick", 6), ("scanagatta2016-table1", 8 * (4 * 4 + 1)),
                                        ("scanagatta2016-table1-quick", 2 * (4 * 2 + 1)),
                                        ("machado-tables2-4", 2 * (2 * 4 + 1)), ("machado-heldout", 2 * 5 * (5 + 1)),
                                        ("machado-tables2-4-quick", 2 * 2 + 1), ("machado-heldout-quick", 2 * (3 + 1))])
def test_shipped_configs_load_and_expand(name, cells):
    path = CONFIGS / f"{name}.toml"
    cfg = load_config(path)
    grid = expand(cfg)
    assert len(grid) == cells and len({c.key for c in grid}) == cells


def test_per_method_treewidths(tmp_path):
    cfg = load_config(_config(tmp_path, methods=('name = "kg"', 'name = "ref"\nmethod = "cuts"\ntreewidths = ["unbounded"]')))
    keys = {c.key.split("|", 2)[2] for c in expand(cfg)}
    assert {k.rsplit("|", 1)[0] for k in keys} == {"k=1|kg", "k=unbounded|ref"}


@pytest.mark.slow
def test_quick_table1_config_runs_and_reports(tmp_path):
    store = tmp_path / "t1.sqlite"
    assert main(["experiment", str(CONFIGS / "scanagatta2016-table1-quick.toml"), "--store", str(store), "--jobs", "2",
                 "-q"]) == 0
    rows = _rows(store)
    assert len(rows) == 18 and all(r[1] in ("optimal", "feasible") for r in rows)
    assert main(["report", str(store), "-o", str(tmp_path / "rep")]) == 0
    assert "unbounded unbounded (optimal)" in (tmp_path / "rep" / "report.md").read_text()


@pytest.mark.slow
@pytest.mark.parametrize("name,cells", [("machado-tables2-4-quick", 5), ("machado-heldout-quick", 8)])
def test_quick_machado_configs_run_and_report(tmp_path, name, cells):
    path = CONFIGS / f"{name}.toml"
    store = tmp_path / "m.sqlite"
    assert main(["experiment", str(path), "--store", str(store), "--jobs", "2", "-q"]) == 0
    rows = _rows(store)
    assert len(rows) == cells and all(r[1] in ("optimal", "feasible") for r in rows)
    assert main(["report", str(store), "-o", str(tmp_path / "rep")]) == 0
    text = (tmp_path / "rep" / "report.md").read_text()
    assert "mean gap" in text
    if "heldout" in name:  # 2 folds: held-out likelihood and inference timing on every network
        assert all(r[3] is not None and r[3] < 0 for r in rows)
        assert "## Exact inference" in text


# 25 s: PCART and approximate scoring in a grid
@pytest.mark.slow
def test_local_structure_and_approximate_scores_in_a_grid(tmp_path):
    """A config may score with PCARTp on mixed data (no held-out likelihood then) or
    explore parent sets approximately; every cell learns a verified network either way."""
    rng = np.random.default_rng(8)
    z = rng.integers(0, 3, 120)
    x = np.round(rng.normal(size=120) + z, 3)
    w = np.where(x > 1, rng.integers(0, 2, 120), 1)
    p = tmp_path / "mixed.csv"
    p.write_text("X,Z,W\n" + "".join(f"{a},{b},{c}\n" for a, b, c in zip(x, z, w)))
    for name, extra in (("ls", 'score = "pcartp"\nmax_splits = 2\n'), ("ap", 'approximate = true\ncandidates = 2\n')):
        data = p if name == "ls" else _data(tmp_path)
        cfg = tmp_path / f"{name}.toml"
        cfg.write_text(f'name = "{name}"\n{extra}max_parents = 2\nfolds = 2\nseeds = [0]\ntreewidths = [1, 2]\n'
                       f'time_limit = 3\n[[data]]\nname = "d"\npath = "{data}"\n[[methods]]\nname = "dp"\n'
                       '[[methods]]\nname = "kg"\n')
        store = tmp_path / f"{name}.sqlite"
        assert main(["experiment", str(cfg), "--store", str(store), "-q"]) == 0
        rows = _rows(store)
        assert len(rows) == 2 * 2 * 2 and all(r[1] in ("optimal", "feasible") for r in rows)
        if name == "ls":
            assert all(r[3] is None for r in rows)  # held-out likelihood needs discrete CPTs
        else:
            assert all(r[3] < 0 for r in rows)
            from twbn.experiments.store import Store

            st = Store(store)
            assert all(c["approximate"] and c["candidates"] == 2 for c in st.caches())
            st.close()
    bad = tmp_path / "bad.toml"
    bad.write_text(f'score = "ftp"\ninference = true\ntreewidths = [1]\n[[data]]\nname = "d"\npath = "{p}"\n'
                   '[[methods]]\nname = "kg"\n')
    with pytest.raises(ConfigError, match="inference"):
        load_config(bad)


def test_kmax2018_config_reads_debd_from_twbn_data(monkeypatch, tmp_path):
    path = CONFIGS / "kmax2018-tables.toml"
    monkeypatch.delenv("TWBN_DATA", raising=False)
    with pytest.raises(ConfigError, match=r"under \$TWBN_DATA, which is not set"):
        load_config(path)
    monkeypatch.setenv("TWBN_DATA", str(tmp_path))
    with pytest.raises(ConfigError, match="nltcs_train.csv.gz does not exist"):
        load_config(path)
    debd = tmp_path / "debd"
    debd.mkdir()
    for name in ("nltcs", "msnbc", "plants", "baudio", "jester"):
        (debd / f"{name}_train.csv.gz").write_bytes(b"")
    cfg = load_config(path)
    grid = expand(cfg)
    assert len(grid) == 5 * 3 * 3 and cfg.approximate and cfg.time_limit == 60
    assert {c.key.split("|", 2)[2] for c in grid if "plants" in c.key} >= {"k=8|improve|seed=1"}
    bnlearn = tmp_path / "bnlearn5000"
    bnlearn.mkdir()
    for name in ("hepar2", "andes", "pigs"):
        (bnlearn / f"{name}.csv.gz").write_bytes(b"")
    grid = expand(load_config(CONFIGS / "kmax2018-bnlearn.toml"))
    # kg, kmax, improve at k = 2, 5, 8 and s2plus at k = 2, on three data sets
    assert len(grid) == 3 * (3 * 3 + 1) and {c.key.split("|", 1)[0] for c in grid} >= {"pigs"}


@pytest.mark.slow  # 15-20 s: four rescorings of a grid
def test_a_cache_of_other_settings_is_never_reused(tmp_path):
    """Issue 31.1: a grid with max_parents 1 and 2 folds, the store deleted, the config
    changed to max_parents 2 and 3 folds: every fold is scored again, with its own split,
    and each cell's cache holds exactly the sets of its own training rows."""
    from twbn.experiments.harness import fold_rows
    from twbn.scoring.data import read_csv
    from twbn.scoring.parent_sets import build_cache

    store = tmp_path / "s.sqlite"
    assert main(["experiment", str(_config(tmp_path, seeds="[0]")), "--store", str(store), "-q"]) == 0
    for suffix in ("", "-wal", "-shm"):
        Path(str(store) + suffix).unlink(missing_ok=True)
    cfg = _config(tmp_path, seeds="[0]", max_parents=2, folds=3)
    assert main(["experiment", str(cfg), "--store", str(store), "-q"]) == 0
    ds = read_csv(tmp_path / "chain.csv")
    with sqlite3.connect(store) as db:
        rows = db.execute("SELECT fold, stats FROM caches ORDER BY fold").fetchall()
    assert [f for f, _ in rows] == [0, 1, 2]
    import json

    for fold, stats in rows:
        stats = json.loads(stats)
        train, test = fold_rows(ds.n_rows, 3, fold)
        assert stats["rows"] == len(train) and stats["max_parents"] == 2
        assert stats["cache_key"]["folds"] == 3 and stats["cache_key"]["max_parents"] == 2
        # the cache on disk is the one of this fold's training rows, in-degree 2
        expect, _ = build_cache(ds.subset_rows(train), score="bic", max_parents=2, pruning="all", progress=False)
        got = _cache_of(tmp_path / "s.sqlite.work", stats)
        for v in range(ds.n_variables):
            assert sorted(got.parent_sets[v]) == sorted(expect.parent_sets[v])


def _cache_of(work: Path, stats: dict):
    """The cache in ``work`` whose bytes have the hash ``stats`` records."""
    from twbn.experiments.harness import file_sha256
    from twbn.scoring.jkl import read_jkl

    hits = [p for p in work.glob("*.jkl") if file_sha256(p) == stats["cache_sha256"]]
    assert len(hits) == 1
    return read_jkl(hits[0])


@pytest.mark.slow  # 9-18 s; moved out of the default run to keep it under 10 min
def test_a_cache_changed_on_disk_is_scored_again(tmp_path, capsys):
    cfg = _config(tmp_path, seeds="[0]", folds=1)
    store = tmp_path / "s.sqlite"
    assert main(["experiment", str(cfg), "--store", str(store), "-q"]) == 0
    (jkl,) = (tmp_path / "s.sqlite.work").glob("chain.fold0.bic.*.jkl")
    good = jkl.read_text()
    jkl.write_text(good.replace(good.splitlines()[2], "-1.0 0", 1))
    with sqlite3.connect(store) as db:
        db.execute("DELETE FROM cells")
    capsys.readouterr()
    assert main(["experiment", str(cfg), "--store", str(store), "--resume"]) == 0
    assert "rescoring chain fold 0: its cache was changed" in capsys.readouterr().out
    assert jkl.read_text() == good


@pytest.mark.slow  # 11 s
def test_two_stores_of_one_stem_have_their_own_work_folders(tmp_path):
    """Issue 31.5: same.sqlite and same.db, run at once, each keep their cells."""
    cfg = _config(tmp_path, seeds="[0]", folds=1, treewidths="[1, 2]")
    procs = [subprocess.Popen([sys.executable, "-m", "twbn.experiments.cli", "experiment", str(cfg), "--store",
                               str(tmp_path / f"same.{ext}"), "-q"], stderr=subprocess.PIPE, text=True)
             for ext in ("sqlite", "db")]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    for ext in ("sqlite", "db"):
        assert (tmp_path / f"same.{ext}.work").is_dir()
        statuses = [r[1] for r in _rows(tmp_path / f"same.{ext}")]
        assert len(statuses) == 2 and set(statuses) <= {"feasible", "optimal"}, statuses


def test_dask_executor_without_dask_leaves_no_store(tmp_path, capsys, monkeypatch):
    """Issue 31.15 (dask is installed here: its import is made to fail)."""
    import builtins

    real = builtins.__import__

    def no_distributed(name, *a, **kw):
        if name == "distributed" or name.startswith("distributed."):
            raise ImportError("No module named 'distributed'")
        return real(name, *a, **kw)

    monkeypatch.setattr(builtins, "__import__", no_distributed)
    store = tmp_path / "s.sqlite"
    assert main(["experiment", str(_config(tmp_path)), "--store", str(store), "--executor", "dask"]) == 1
    assert "pip install 'twbn[dask]'" in capsys.readouterr().err
    assert not store.exists() and not (tmp_path / "s.sqlite.work").exists()


@pytest.mark.parametrize("signum,executor", [pytest.param(signal.SIGINT, "local", marks=pytest.mark.slow),  # 22 s each
                                             pytest.param(signal.SIGTERM, "local", marks=pytest.mark.slow),
                                             pytest.param(signal.SIGINT, "dask", marks=pytest.mark.slow)])
def test_a_signal_stops_the_grid_and_keeps_every_finished_cell(tmp_path, signum, executor):
    """Issue 31.4: after the first cell is stored, a signal: no new cell starts, the running
    one stops, what finished stays, the message says how to resume, no cell folder is left;
    --resume then runs exactly the rest."""
    cfg = _config(tmp_path, seeds="[0, 1]", folds=1, treewidths="[1, 2]", time_limit=4)
    store = tmp_path / "s.sqlite"
    proc = subprocess.Popen([sys.executable, "-m", "twbn.experiments.cli", "experiment", str(cfg), "--store",
                             str(store), "--executor", executor], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if store.exists() and len(_rows(store)) >= 1:
                break
        except sqlite3.OperationalError:  # the file exists a moment before its table
            pass
        time.sleep(0.1)
    t0 = time.monotonic()
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=60)
    assert time.monotonic() - t0 < 10  # a kg cell takes 4 s: stopped, not waited for
    assert proc.returncode == 130, err
    kept = len(_rows(store))
    assert 1 <= kept < 4
    assert f"{kept} cell{'s' if kept != 1 else ''} of this run {'are' if kept != 1 else 'is'} kept" in err and "--resume" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    assert not list((tmp_path / "s.sqlite.work").glob("twbn-cell-*"))
    assert main(["experiment", str(cfg), "--store", str(store), "--resume", "-q"]) == 0
    assert len(_rows(store)) == 4


@pytest.mark.slow
def test_a_signal_while_scoring_stops_at_once_and_keeps_the_folds_scored(tmp_path):
    """A Ctrl-C while a fold is scored (exhaustive: audiology's folds took 415 s each) is
    heard at once, not when that fold is done: exit 130, the folds scored before are kept
    for --resume, nothing of the stopped fold is written and no cell is stored."""
    import numpy as np

    rng = np.random.default_rng(0)
    data = tmp_path / "wide.csv"  # 60 binary variables, in-degree 3, no pruning: ~10 s a fold
    data.write_text(",".join(f"V{i}" for i in range(60)) + "\n"
                    + "".join(",".join(map(str, row)) + "\n" for row in rng.integers(0, 2, size=(400, 60))))
    cfg = tmp_path / "wide.toml"
    cfg.write_text('name = "wide"\nscore = "bdeu"\nmax_parents = 3\npruning = "none"\nfolds = 2\nseeds = [0]\n'
                   f'treewidths = [1]\ntime_limit = 2\n[[data]]\nname = "wide"\npath = "{data}"\n'
                   '[[methods]]\nname = "kg"\n')
    store, work = tmp_path / "s.sqlite", tmp_path / "s.sqlite.work"
    proc = subprocess.Popen([sys.executable, "-m", "twbn.experiments.cli", "experiment", str(cfg), "--store",
                             str(store)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and not list(work.glob("wide.fold0.*.stats.json")):
        time.sleep(0.05)
    assert list(work.glob("wide.fold0.*.stats.json")), "fold 0 was never scored"
    time.sleep(0.5)  # fold 1 is being scored
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert time.monotonic() - t0 < 4  # the fold alone takes ~10 s
    assert proc.returncode == 130, err
    assert "0 cells of this run are kept" in err and "--resume" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    assert list(work.glob("wide.fold0.*.jkl")) and not list(work.glob("wide.fold1.*"))
    assert _rows(store) == []

def test_auto_runs_in_a_grid_and_records_its_pick(tmp_path, capsys):
    """Issue 32.3 (in part): the default method can be a config's method; each cell's
    result says what auto ran and why. A solver or options for auto are refused."""
    import json

    cfg = _config(tmp_path, methods=('name = "auto"',), seeds="[0]", folds=1, treewidths='[1, 2, "unbounded"]')
    store = tmp_path / "s.sqlite"
    assert main(["experiment", str(cfg), "--store", str(store), "-q"]) == 0
    picks = {r[0].split("|")[2]: json.loads(r[5])["method"] for r in _rows(store)}
    assert picks == {"k=1": "dp", "k=2": "dp", "k=unbounded": "dp"}  # n = 8: the DP everywhere
    bad = _config(tmp_path, "bad", methods=('name = "auto"\nsolver = "scip"',))
    with pytest.raises(ConfigError, match=r"method auto has no backend .scip. \(it has none\)"):
        load_config(bad)


# its report's gap plot has one value (every gap closed): matplotlib warned of a 0-high axis
@pytest.mark.filterwarnings("error:Attempting to set identical low and high ylims")
def test_a_class_variable_is_predicted_on_each_test_fold(tmp_path):
    """Issue 34.2: with `class` on a data set each cell stores the accuracy and log-loss of
    predicting it from the others, beside a Naive Bayes; the report has the table."""
    import json

    from twbn.experiments.harness import fold_rows
    from twbn.experiments.report import write_report
    from twbn.scoring.classify import classification_scores, naive_bayes_parents
    from twbn.scoring.data import read_csv

    cfg = _config(tmp_path, methods=('name = "dp"',), seeds="[0]", folds=2)
    cfg.write_text(cfg.read_text().replace('name = "chain"\n', 'name = "chain"\nclass = "V7"\n'))
    store = tmp_path / "s.sqlite"
    assert main(["experiment", str(cfg), "--store", str(store), "-q"]) == 0
    with sqlite3.connect(store) as db:
        rows = db.execute("SELECT fold, result, class_accuracy, class_log_loss, nb_accuracy, nb_log_loss FROM cells "
                          "ORDER BY fold").fetchall()
    ds = read_csv(tmp_path / "chain.csv")
    names = list(ds.names)
    for fold, result, acc, loss, nb_acc, nb_loss in rows:
        train, test = (ds.subset_rows(r) for r in fold_rows(ds.n_rows, 2, fold))
        r = json.loads(result)
        parents = [tuple(sorted(names.index(p) for p in r["parents"][n])) for n in names]
        want = classification_scores(train, test, names, parents, "V7")
        nb = classification_scores(train, test, names, naive_bayes_parents(names, "V7"), "V7")
        assert (acc, loss, nb_acc, nb_loss) == pytest.approx((want["accuracy"], want["log_loss"], nb["accuracy"],
                                                              nb["log_loss"]))
        assert 0 <= acc <= 1 and loss > 0
    report = (write_report(store, tmp_path / "rep")[-1]).read_text()
    assert "## Predicting the class" in report and "| chain | 1 | dp | 2 |" in report
    bad = _config(tmp_path, "bad", seeds="[0]", folds=2)
    bad.write_text(bad.read_text().replace('name = "chain"\n', 'name = "chain"\nclass = "nope"\n'))
    assert main(["experiment", str(bad), "--store", str(tmp_path / "b.sqlite"), "-q"]) == 1
    assert not (tmp_path / "b.sqlite").exists()


@pytest.mark.slow
def test_the_study_report_from_the_quick_config(tmp_path):
    """Issue 34: the quick study config runs (auto, kg, a class, inference) and the study
    report has the paper's layout: the table by bound, the gap table beside Table II, the
    class table, and one figure per measure."""
    from twbn.experiments.report_machado import PAPER_GAPS, write

    store = tmp_path / "q.sqlite"
    assert main(["experiment", "machado-study-quick", "--store", str(store), "-q"]) == 0
    written = write([store], tmp_path / "rep")
    text = written[0].read_text()
    assert "| 1 | 2 | auto | 3 | 2 of 2 |" in text and "| 1 | 2 | kg | 3 | 2 of 2 |" in text
    assert "their Table II" in text and "Naive Bayes accuracy" in text
    assert {p.name for p in written[2:]} == {"mushroom_loglik_by_treewidth.png", "mushroom_score_by_treewidth.png"}
    # the committed cells.csv alone writes the same report (the stores are not committed)
    again = write([written[1]], tmp_path / "rep2")
    assert again[0].read_text().splitlines()[3:] == text.splitlines()[3:]
    assert again[1].read_text() == written[1].read_text()
    # the paper's figures as printed (Table II, 4 parents, ESS 1)
    assert PAPER_GAPS["mushroom"][3][2] == 62.90 and PAPER_GAPS["mushroom"][None][2] == 31.88


@pytest.mark.slow  # two grids of 12 cells: 15 s
def test_a_sweep_never_scores_lower_at_a_larger_bound_and_waits_for_the_smaller_bound(tmp_path):
    """Issue 33.4 in the harness: each (data, fold, method, seed) runs its bounds in
    increasing order, each cell starting from the best network of the smaller ones (2 jobs:
    a cell waits for its chain's smaller bound), against the same grid with sweep = false."""
    import json

    methods = ('name = "s2"\noptions = { max_iterations = 1 }',)
    over = dict(max_parents=3, folds=1, seeds="[0, 1, 2, 3]", treewidths="[1, 2, 3]", time_limit=5)
    own = _config(tmp_path, "own", methods=methods, sweep="false", **over)
    swept = _config(tmp_path, "swept", methods=methods, sweep="true", **over)
    for cfg in (own, swept):
        assert main(["experiment", str(cfg), "--store", str(tmp_path / f"{cfg.stem}.sqlite"), "--jobs", "2",
                     "-q"]) == 0
    alone = {key: score for key, _, score, *_ in _rows(tmp_path / "own.sqlite")}
    rows = {key: (score, json.loads(result)) for key, _, score, _, _, result in _rows(tmp_path / "swept.sqlite")}
    assert set(rows) == set(alone)
    kept = 0
    for seed in range(4):
        scores = [rows[f"chain|fold=0|k={k}|s2|seed={seed}"][0] for k in (1, 2, 3)]
        assert scores == sorted(scores)
        for k in (1, 2, 3):
            score, result = rows[f"chain|fold=0|k={k}|s2|seed={seed}"]
            assert score >= alone[f"chain|fold=0|k={k}|s2|seed={seed}"] - 1e-9  # the same s2 run, or better
            assert result["width"] <= k
            kept += "kept_from_smaller_bound" in result["stats"]
    # S2 with one random k-tree dips somewhere without the sweep on this data, and the sweep kept
    # the smaller bound's network there
    dips = sum(alone[f"chain|fold=0|k={k + 1}|s2|seed={s}"] < alone[f"chain|fold=0|k={k}|s2|seed={s}"]
               for s in range(4) for k in (1, 2))
    assert kept >= 1 and dips >= 1


@pytest.mark.slow  # 6-12 s; moved out of the default run to keep it under 10 min
def test_each_cell_uses_the_processes_it_is_given(tmp_path, capsys):
    # improve with small pieces: at n = 8 it solves them two at a time with cell_jobs = 2
    methods = ('name = "improve"\noptions = { start_size = 3 }',)
    cfg = _config(tmp_path, methods=methods, cell_jobs=2, seeds="[0]", max_parents=2, treewidths="[2]", time_limit=5)
    assert load_config(cfg).cell_jobs == 2
    store = tmp_path / "j.sqlite"
    assert main(["experiment", str(cfg), "--store", str(store)]) == 0
    assert "1 at a time, 2 processes each" in capsys.readouterr().out
    rows = _rows(store)
    assert len(rows) == 2
    for _key, status, _score, _ll, _n, result in rows:
        stats = json.loads(result)["stats"]
        assert status in ("feasible", "optimal") and stats["jobs"] == 2 and "workers_failed" not in stats
    # the command line's --cell-jobs overrides the config's; 0 and non-integers are refused
    assert main(["experiment", str(cfg), "--store", str(tmp_path / "k.sqlite"), "--cell-jobs", "0"]) == 1
    assert "--cell-jobs must be at least 1" in capsys.readouterr().err
    for bad in ("0", "true", '"2"'):
        with pytest.raises(ConfigError, match="cell_jobs"):
            load_config(_config(tmp_path, name="b", cell_jobs=bad))


@pytest.mark.slow  # 9-18 s; moved out of the default run to keep it under 10 min
def test_cells_runs_only_the_matching_cells_and_scores_only_their_folds(tmp_path, capsys):
    cfg = _config(tmp_path, time_limit=1)  # kg, 2 folds, 2 seeds: 4 cells
    store = tmp_path / "c.sqlite"
    assert main(["experiment", str(cfg), "--store", str(store), "--cells", "chain|fold=9|*"]) == 1
    err = capsys.readouterr().err
    assert "--cells 'chain|fold=9|*' matches no cell of g" in err and "chain|fold=0|k=1|kg|seed=0" in err
    assert not store.exists()
    assert main(["experiment", str(cfg), "--store", str(store), "--cells", "chain|fold=1|*", "-q"]) == 0
    assert sorted(r[0] for r in _rows(store)) == ["chain|fold=1|k=1|kg|seed=0", "chain|fold=1|k=1|kg|seed=1"]
    assert [p.name.split(".")[1] for p in (tmp_path / "c.sqlite.work").glob("*.jkl")] == ["fold1"]
    # two patterns; then the rest of the grid on --resume
    assert main(["experiment", str(cfg), "--store", str(store), "--resume", "-q", "--cells", "*seed=0",
                 "--cells", "*fold=1*"]) == 0
    assert len(_rows(store)) == 3
    assert main(["experiment", str(cfg), "--store", str(store), "--resume", "-q"]) == 0
    assert len(_rows(store)) == 4


def test_a_config_names_a_bundled_data_set_without_a_path(tmp_path):
    """Issue 63.9: ``[[data]] name = "zoo"`` needed a path, unlike the command line."""
    from twbn.experiments.config import ConfigError, load_config
    from twbn.scoring.datasets import bundled_path

    cfg = tmp_path / "c.toml"
    cfg.write_text('name = "b"\ntreewidths = [2]\n[[data]]\nname = "zoo"\n[[methods]]\nname = "kg"\n')
    assert load_config(cfg).data == {"zoo": bundled_path("zoo")}
    cfg.write_text('name = "b"\ntreewidths = [2]\n[[data]]\nname = "mine"\n[[methods]]\nname = "kg"\n')
    with pytest.raises(ConfigError, match="data 'mine' needs a path \\(without one, name a bundled set: adult,"):
        load_config(cfg)


@pytest.mark.slow  # 16 s
def test_a_grid_with_missing_cells_learns_by_structural_em_and_reports_it(tmp_path):
    # a network sampled at 600 rows, its BIF named in the config: 20 % of the training
    # fold's cells removed (MCAR), the test fold complete; every cell learns by structural
    # EM and the report gives held-out likelihood, imputation accuracy and the distance
    from twbn.scoring.networks import random_network, sample, write_bif, write_csv

    net = random_network(7, seed=5, max_parents=2)
    write_bif(net, tmp_path / "true.bif")
    write_csv(sample(net, 600, seed=1), tmp_path / "net.csv")
    cfg = tmp_path / "m.toml"
    cfg.write_text('name = "m"\nscore = "bic"\nfolds = 2\nseeds = [0]\ntreewidths = [2]\ntime_limit = 4\n'
                   'memory_limit_mb = 6000\nmissing = { fraction = 0.2, mechanism = "mcar", seed = 1 }\n'
                   f'[[data]]\nname = "net"\npath = "{tmp_path / "net.csv"}"\nnetwork = "{tmp_path / "true.bif"}"\n'
                   '[[methods]]\nname = "localsearch"\n')
    store = tmp_path / "m.sqlite"
    assert main(["experiment", str(cfg), "--store", str(store)]) == 0
    with sqlite3.connect(store) as db:
        rows = db.execute("SELECT status, missing_share, imputation_accuracy, shd, test_loglik, result "
                          "FROM cells").fetchall()
    assert len(rows) == 2
    for status, share, accuracy, shd, ll, result in rows:
        assert status == "feasible" and 0.15 < share < 0.25 and 0 < accuracy <= 1 and shd >= 0 and ll < 0
        assert json.loads(result)["stats"]["structural_em"]["iterations"]
    assert main(["report", str(store), "-o", str(tmp_path / "rep")]) == 0
    report = (tmp_path / "rep" / "report.md").read_text()
    assert "## With missing cells" in report and "| net | 2 | localsearch | 2 |" in report


def test_a_missing_table_is_checked(tmp_path):
    for table, fragment in [("{ fraction = 1.5 }", "missing.fraction must be a number in (0, 1)"),
                            ('{ fraction = 0.2, mechanism = "nmar" }', "missing.mechanism must be one of mcar, mar"),
                            ("{ fraction = 0.2, share = 1 }", "missing has no field 'share'")]:
        cfg = _config(tmp_path, missing=table)
        with pytest.raises(ConfigError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
            load_config(cfg)
    with pytest.raises(ConfigError, match="structural EM, which scores bic or aic, not 'bdeu'"):
        load_config(_config(tmp_path, missing="{ fraction = 0.2 }", score='"bdeu"'))
