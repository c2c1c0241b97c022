"""Methods from outside twbn: registration, entry points found without an import, the
contract helper, and every way a plugin can go wrong giving one line."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import twbn
from tests.conftest import BUNDLED
from twbn.experiments.cli import main
from twbn.testing import check_method

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = re.search(r"```python\n(\"\"\"Best-first forest.*?)```", (ROOT / "docs" / "extending.md").read_text(),
                    re.S).group(1)


def _install(tmp_path: Path, module: str, code: str, entries: dict[str, str]) -> dict:
    """A module and a dist-info declaring ``entries`` under twbn.methods, on PYTHONPATH."""
    (tmp_path / f"{module}.py").write_text(code)
    info = tmp_path / f"{module}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[twbn.methods]\n" + "".join(f"{k} = {v}\n" for k, v in entries.items()))
    import os

    return {**os.environ, "PYTHONPATH": str(tmp_path)}


def _twbn(env, *args, cwd=None):
    return subprocess.run([sys.executable, "-m", "twbn.experiments.cli", *map(str, args)], capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=300)


def test_the_documented_plugin_keeps_the_contract():
    space: dict = {}
    exec(compile(EXAMPLE, "docs/extending.md", "exec"), space)
    method = space["METHOD"]
    assert check_method(method) == []
    sol = twbn.learn(twbn.example_path("zoo"), treewidth=2, method="forest", time_limit=2,
                     options={"restarts": 20})
    assert sol.method == "forest" and sol.width <= 1 and sol.check(twbn.score(twbn.example_path("zoo"))) == []
    assert all(len(p) <= 1 for p in sol.parents.values())


@pytest.mark.slow  # 9 s: out of the default run, which must stay under 10 min
def test_an_entry_point_plugin_is_found_without_an_import_everywhere(tmp_path):
    env = _install(tmp_path, "my_twbn_plugin", EXAMPLE,
                   {"forest": "my_twbn_plugin:METHOD", "broken": "no_such_module:METHOD"})
    listed = _twbn(env, "methods")
    assert listed.returncode == 0
    assert "forest: best-first forests over random orders (an example plugin) (needs k >= 1; plugin)" in listed.stdout
    assert re.search(r"broken: unavailable: cannot import no_such_module:METHOD: ModuleNotFoundError", listed.stdout)
    out = tmp_path / "r.json"
    learned = _twbn(env, "learn", BUNDLED / "zoo.csv.gz", "--treewidth", 2, "--method", "forest", "--option",
                    "restarts=30", "--time-limit", 3, "-o", out, "-q")
    assert learned.returncode == 0, learned.stderr
    assert json.loads(out.read_text())["method"] == "forest"
    typo = _twbn(env, "learn", BUNDLED / "zoo.csv.gz", "--treewidth", 2, "--method", "forest", "--option",
                 "restart=3", "-o", tmp_path / "x.json")
    assert typo.returncode == 1 and "method forest has no option 'restart' (did you mean restarts?)" in typo.stderr
    broken = _twbn(env, "learn", BUNDLED / "zoo.csv.gz", "--treewidth", 2, "--method", "broken", "-o",
                   tmp_path / "x.json")
    assert broken.returncode == 1 and "method broken is unavailable: cannot import" in broken.stderr
    assert not (tmp_path / "x.json").exists()
    # an experiment's cells run in their own processes and find it there too
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'name = "p"\ntreewidths = [2]\ntime_limit = 2\nmax_parents = 2\n[[data]]\nname = "zoo"\n'
                   f'path = "{BUNDLED / "zoo.csv.gz"}"\n[[methods]]\nname = "forest"\noptions = {{ restarts = 10 }}\n')
    grid = _twbn(env, "experiment", cfg, "--store", tmp_path / "s.sqlite")
    assert grid.returncode == 0, grid.stderr
    assert "[1/1] zoo|fold=0|k=2|forest|seed=0: feasible" in grid.stdout


BAD = {
    "raises": ("raise RuntimeError('out of ideas')", "method bad failed: RuntimeError: out of ideas"),
    "cyclic": ("return [(1,), (0,)] + [()] * (problem.n - 2)", None),
    "uncached": ("return [tuple(range(1, problem.n))] + [()] * (problem.n - 1)", "returned an invalid network"),
    "short": ("return [()]", "returned 1 parent sets for 17 variables"),
}


@pytest.mark.parametrize("kind", list(BAD))
def test_a_plugin_that_goes_wrong_is_one_line_and_no_file(tmp_path, kind):
    body, text = BAD[kind]
    code = f"import twbn\n\ndef run(problem, options, budget):\n    {body}\n\nMETHOD = twbn.Method('bad', run)\n"
    env = _install(tmp_path, "bad_plugin", code, {"bad": "bad_plugin:METHOD"})
    proc = _twbn(env, "learn", BUNDLED / "zoo.csv.gz", "--treewidth", 2, "--method", "bad", "-o",
                 tmp_path / "r.json")
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 1 and len(lines) == 1 and lines[0].startswith("twbn: error: method bad"), proc.stderr
    if text:
        assert text in lines[0]
    assert not (tmp_path / "r.json").exists()


def test_a_name_that_clashes_is_refused_and_a_bad_method_fails_the_contract():
    with pytest.raises(twbn.TwbnError, match="method name 'kg' is taken"):
        twbn.register_method(twbn.Method("kg", lambda p, o, b: [()] * p.n))
    wide = twbn.Method("too-wide-test", lambda p, o, b: [max((ps for ps, _ in p.parent_sets(v)), key=len)
                                                         for v in range(p.n)], lp_bound=False)
    failures = check_method(wide, time_limit=1.0, seeds=(0,))
    assert failures and all("raised MethodFailed" in f or "unknown option" in f for f in failures), failures


BUSY = """import twbn

def busy(problem, options, budget):  # never looks at its budget
    while True:
        pass

def offers(problem, options, budget):  # offers a network, then never looks at its budget
    budget.offer([()] * problem.n)
    while True:
        pass

def swallows(problem, options, budget):  # catches everything it can, budget ignored
    while True:
        try:
            while True:
                pass
        except Exception:
            pass

METHOD = twbn.Method("busy", busy, min_treewidth=1)
OFFERS = twbn.Method("offers", offers, min_treewidth=1)
SWALLOWS = twbn.Method("swallows", swallows, min_treewidth=1)
"""


def _started(env, *args):
    import time

    proc = subprocess.Popen([sys.executable, "-m", "twbn.experiments.cli", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    time.sleep(4)  # past start-up and scoring, inside the method (its limit is far away)
    return proc


@pytest.mark.slow  # 34 s: five commands, two of them waiting out the grace after a stop
def test_a_method_that_ignores_its_budget_is_abandoned_at_its_limit_or_a_stop(tmp_path):
    import signal
    import time

    env = _install(tmp_path, "busy_plugin", BUSY,
                   {"busy": "busy_plugin:METHOD", "offers": "busy_plugin:OFFERS", "swallows": "busy_plugin:SWALLOWS"})
    zoo = BUNDLED / "zoo.csv.gz"
    # the limit: abandoned with one line naming it, no network, exit 3 (the timeout is a hang, not a timing)
    out = tmp_path / "r.json"
    proc = _twbn(env, "learn", zoo, "--treewidth", 2, "--method", "busy", "--time-limit", 3, "-o", out)
    assert proc.returncode == 3, proc.stderr
    assert re.search(r"busy: no network: unknown .*method busy ran 2 s past the end of its budget .* was abandoned",
                     proc.stdout)
    result = json.loads(out.read_text())
    assert result["parents"] is None and "abandoned" in result["stats"]
    # the network it offered is kept, certified, and said
    out = tmp_path / "o.json"
    proc = _twbn(env, "learn", zoo, "--treewidth", 2, "--method", "offers", "--time-limit", 3, "-o", out, "-q")
    assert proc.returncode == 0 and "twbn: method offers ran 2 s past" in proc.stderr, proc.stderr
    result = json.loads(out.read_text())
    assert result["status"] == "feasible" and all(p == [] for p in result["parents"].values())
    assert twbn.Solution(result).check(twbn.score(zoo)) == []
    # one Ctrl-C: abandoned 2 s later, even when it catches Exception; SIGTERM alike
    for method, sig in (("swallows", signal.SIGINT), ("busy", signal.SIGTERM)):
        out = tmp_path / f"{method}.json"
        proc = _started(env, "learn", zoo, "--treewidth", 2, "--method", method, "--time-limit", 600, "-o", out, "-q")
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 130, err
        assert f"twbn: interrupted; method {method} ran 2 s past a stop request and was abandoned; wrote a result " \
               f"without a network to {out}" in err
        assert json.loads(out.read_text())["stats"]["interrupted"] is True
    # a second Ctrl-C stops at once: before the 2 s grace of the first has passed
    out = tmp_path / "twice.json"
    proc = _started(env, "learn", zoo, "--treewidth", 2, "--method", "busy", "--time-limit", 600, "-o", out, "-q")
    proc.send_signal(signal.SIGINT)
    time.sleep(0.5)  # two signals at once are one (the kernel keeps one pending)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and "abandoned" not in err, err
    # the contract check, in a fresh process, by the entry point's name: the overrun is a failure
    check = subprocess.run([sys.executable, "-c", "from twbn.testing import check_method; "
                            "print(check_method('busy', seeds=(0,)))"], capture_output=True, text=True, env=env,
                           timeout=120)
    assert check.returncode == 0, check.stderr
    assert "seed 0, k = 2: method busy ran 2 s past the end of its budget" in check.stdout


def test_check_method_refuses_an_unknown_name_with_one_twbn_error():
    with pytest.raises(twbn.TwbnError, match="unknown method 'no-such-method'; available: auto, dp"):
        check_method("no-such-method")


def test_a_method_that_overruns_its_limit_is_reported_by_check_method():
    import time

    def late(problem, options, budget):  # returns, but 1.5 s after its deadline
        end = time.monotonic() + budget.left() + 1.5
        while time.monotonic() < end:
            pass
        return [()] * problem.n

    def offers_late(problem, options, budget):
        budget.offer([()] * problem.n)
        while True:
            pass

    assert check_method(twbn.Method("late-test", late, min_treewidth=1, lp_bound=False), time_limit=1.0,
                        seeds=(0,)) == []  # within the grace: kept
    failures = check_method(twbn.Method("offers-late-test", offers_late, min_treewidth=1), time_limit=1.0,
                            seeds=(0,))
    assert len(failures) == 1 and "method offers-late-test ran 2 s past the end of its budget" in failures[0]
    assert "the last network it offered is kept" in failures[0]
