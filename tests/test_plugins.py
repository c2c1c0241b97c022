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
