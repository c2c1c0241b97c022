"""Issue 33.2, past one machine: improve's pieces solved by a Dask cluster's workers
(``scheduler=``, ``twbn learn --scheduler``), on a real LocalCluster of 2 worker
processes; and the refusals of a scheduler that cannot be used."""

import json
import logging

import pytest

import twbn
from twbn.experiments.cli import main
from twbn.formulations.problem import Problem
from twbn.formulations.solution import make_solution
from twbn.formulations.verify import verify_result
from twbn.scoring.jkl import write_jkl
from twbn.solvers.improve import improve
from twbn.solvers.method_options import ImproveOptions
from twbn.solvers.parallel import SchedulerUnavailable
from tests.helpers import random_cache

distributed = pytest.importorskip("distributed")

NOBODY = "tcp://127.0.0.1:1"  # nothing listens on port 1


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=logging.ERROR) as c:
        yield c


def _solved_on(cluster) -> int:
    """Pieces the cluster's workers have finished so far (the scheduler's count)."""
    prefix = cluster.scheduler.task_prefixes.get("solve_piece")
    return 0 if prefix is None else prefix.state_counts["memory"]


def test_pieces_on_a_dask_cluster_are_never_worse_and_valid(cluster):
    cache = random_cache(20, 0, max_size=3, density=0.3)
    problem = Problem(cache, 2)
    start = make_solution(problem, [()] * 20, bound=None, status="feasible", method="start")
    before = _solved_on(cluster)
    sol = improve(problem, start, ImproveOptions(max_pieces=8, start_size=5), time_limit=60.0, seed=0, jobs=2,
                  scheduler=cluster.scheduler_address)
    assert sol.stats["scheduler"] == cluster.scheduler_address and "workers_failed" not in sol.stats
    assert sol.stats["pieces"] == 8 and _solved_on(cluster) - before == 8  # every piece went to the cluster
    assert sol.stats["improvements"] >= 1 and sol.score > start.score
    assert verify_result(cache, sol.to_json(problem), 2) == []
    assert sol.score == pytest.approx(sum(cache.score_of(v, ps) for v, ps in enumerate(sol.parents)))


def test_a_cluster_out_of_reach_leaves_the_pieces_to_this_process():
    cache = random_cache(20, 1, max_size=3, density=0.3)
    problem = Problem(cache, 2)
    start = make_solution(problem, [()] * 20, bound=None, status="feasible", method="start")
    sol = improve(problem, start, ImproveOptions(max_pieces=4, start_size=5), time_limit=60.0, seed=0, jobs=2,
                  scheduler=NOBODY, policy=twbn.Policy(dask_connect_timeout_s=1))
    assert "cannot reach the dask scheduler" in sol.stats["workers_failed"]
    assert sol.stats["pieces"] == 4 and verify_result(cache, sol.to_json(problem), 2) == []


@pytest.mark.slow  # a 4 s run; the default run keeps the direct test above
def test_learn_sends_improve_pieces_to_the_cluster(cluster):
    cache = random_cache(20, 2, max_size=3, density=0.3)
    before = _solved_on(cluster)
    sol = twbn.learn(cache, treewidth=2, method="improve", time_limit=4.0, seed=0, jobs=2,
                     scheduler=cluster.scheduler_address)
    assert sol.stats["scheduler"] == cluster.scheduler_address and "workers_failed" not in sol.stats
    assert sol.stats["pieces"] >= 1 and _solved_on(cluster) - before >= sol.stats["pieces"]
    assert sol.check(cache) == [] and sol.score <= sol.bound


def test_a_scheduler_that_cannot_be_used_is_refused_before_anything_runs(tmp_path, capsys):
    quick = twbn.Policy(dask_connect_timeout_s=1)
    cache = random_cache(6, 0, max_size=2, density=0.5)
    with pytest.raises(SchedulerUnavailable, match="jobs >= 2"):
        twbn.learn(cache, treewidth=2, method="improve", scheduler="tcp://127.0.0.1:8786")
    with pytest.raises(SchedulerUnavailable, match="method kg runs on this machine only"):
        twbn.learn(cache, treewidth=2, method="kg", jobs=2, scheduler="tcp://127.0.0.1:8786")
    with pytest.raises(SchedulerUnavailable, match="cannot reach the dask scheduler at tcp://127.0.0.1:1"):
        twbn.learn(cache, treewidth=2, method="improve", jobs=2, scheduler=NOBODY, policy=quick)
    with pytest.raises(SchedulerUnavailable, match="address"):
        twbn.learn(cache, treewidth=2, method="improve", jobs=2, scheduler="")
    jkl = tmp_path / "c.jkl"
    write_jkl(cache, jkl)
    out = tmp_path / "r.json"
    for argv, says in ((["--scheduler", NOBODY], "--scheduler needs --jobs 2 or more"),
                       (["--scheduler", NOBODY, "--jobs", "2", "--policy", "dask_connect_timeout_s=1"],
                        "cannot reach the dask scheduler"),
                       (["--scheduler", NOBODY, "--jobs", "2", "--method", "kg"], "runs on this machine only")):
        assert main(["learn", str(jkl), "--treewidth", "2", "-o", str(out), *argv]) == 1
        err = capsys.readouterr().err
        assert says in err and err.count("\n") == 1 and "Traceback" not in err
        assert not out.exists()


@pytest.mark.slow  # a 6 s run through the command line
def test_the_command_line_learns_with_a_cluster(cluster, tmp_path, capsys):
    cache = random_cache(20, 3, max_size=3, density=0.3)
    jkl = tmp_path / "c.jkl"
    write_jkl(cache, jkl)
    out = tmp_path / "r.json"
    assert main(["learn", str(jkl), "--treewidth", "3", "--method", "improve", "--time-limit", "6", "--jobs", "2",
                 "--scheduler", cluster.scheduler_address, "--seed", "0", "-o", str(out), "-q"]) == 0
    result = json.loads(out.read_text())
    assert result["stats"]["scheduler"] == cluster.scheduler_address and result["stats"]["pieces"] >= 1
    assert main(["check", str(jkl), str(out), "--treewidth", "3"]) == 0


def test_a_method_is_distributed_only_if_it_is_parallel():
    def empty(problem, options, budget, jobs, scheduler):
        return [() for _ in range(problem.n)]

    with pytest.raises(twbn.MethodFailed, match="distributed needs parallel"):
        twbn.Method("dist-only", empty, distributed=True)
    twbn.Method("dist-ok", empty, parallel=True, distributed=True)  # declared both: accepted


@pytest.mark.slow  # 3 worker processes and two 4 s cells
def test_harness_cells_send_their_pieces_to_the_cluster_and_leave_threads_for_them(tmp_path, capsys):
    """A grid on a remote scheduler with cell_jobs = 2: improve's cells send their pieces to
    the cluster (the scheduler counts them), k-G's cell (not distributed) solves where it
    runs, and with 3 threads only 1 cell runs at a time (1 thread for it, 2 for its pieces)."""
    from tests.test_harness import _config, _rows

    methods = ('name = "improve"\noptions = { start_size = 3 }', 'name = "kg"')
    cfg = _config(tmp_path, methods=methods, seeds="[0]", folds=1, max_parents=2, treewidths="[2]", time_limit=4)
    store = tmp_path / "d.sqlite"
    # dashboard ":0": any free port (the module's cluster holds the default one)
    with distributed.LocalCluster(n_workers=3, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  silence_logs=logging.ERROR) as three:
        assert main(["experiment", str(cfg), "--store", str(store), "--executor", "dask", "--scheduler",
                     three.scheduler_address, "--cell-jobs", "2"]) == 0
        sent = _solved_on(three)
    assert "1 cell at a time on its 3 threads" in capsys.readouterr().out
    rows = {key.split("|")[3]: (status, json.loads(result)) for key, status, _s, _ll, _n, result in _rows(store)}
    assert set(rows) == {"improve", "kg"} and all(s in ("feasible", "optimal") for s, _ in rows.values())
    improved = rows["improve"][1]["stats"]
    assert improved["scheduler"] == three.scheduler_address and "workers_failed" not in improved
    assert improved["pieces"] >= 1 and sent >= improved["pieces"]
    assert "scheduler" not in rows["kg"][1]["stats"]


@pytest.mark.slow  # a 2-worker cluster: too few threads for a cell and its pieces
def test_harness_cells_keep_their_pieces_when_the_cluster_is_too_small(cluster, tmp_path, capsys):
    from tests.test_harness import _config, _rows

    cfg = _config(tmp_path, methods=('name = "improve"\noptions = { start_size = 3 }',), seeds="[0]", folds=1,
                  max_parents=2, treewidths="[2]", time_limit=3)
    store = tmp_path / "e.sqlite"
    before = _solved_on(cluster)
    assert main(["experiment", str(cfg), "--store", str(store), "--executor", "dask", "--scheduler",
                 cluster.scheduler_address, "--cell-jobs", "2"]) == 0
    assert "fewer than a cell and its 2 pieces need" in capsys.readouterr().out
    (_key, status, *_rest, result), = _rows(store)
    assert status in ("feasible", "optimal") and "scheduler" not in json.loads(result)["stats"]
    assert _solved_on(cluster) == before
