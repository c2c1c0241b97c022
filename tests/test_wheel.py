"""The wheel: built from the checkout, installed into a fresh virtual environment outside
it, and used from an unrelated folder: one import name, the package data, the demo."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(cmd, cwd, timeout=900):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.mark.slow
def test_wheel_installs_one_import_name_and_runs_the_demo(tmp_path):
    dist, src = tmp_path / "dist", tmp_path / "src"
    # build from a copy, so that no build/ folder of the checkout (stale or new) takes part
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(".venv", ".git", "build", "out", "*.egg-info",
                                                             "__pycache__", ".hypothesis"))
    built = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", dist, src], cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    # a clean build: no warning from the project's own packaging
    assert "warning" not in (built.stdout + built.stderr).lower(), built.stdout + built.stderr
    (wheel,) = dist.glob("twbn-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert {n.split("/")[0] for n in names} == {"twbn", "twbn-0.1.0.dist-info"}
    for data in ("twbn/experiments/configs/quick.toml", "twbn/experiments/data/housing.csv.gz",
                 "twbn/experiments/data/ATTRIBUTION.md", "twbn/solvers/cuts/branch_and_cut.py"):
        assert data in names
    # the benchmarks and the notebook stay in the checkout; the report layout is the package's
    assert not [n for n in names if "benchmarks" in n or "notebook" in n]
    assert "twbn/experiments/report_machado.py" in names

    venv = tmp_path / "venv"
    assert _run([sys.executable, "-m", "venv", venv], cwd=tmp_path).returncode == 0
    py = venv / "bin" / "python"
    inst = _run([py, "-m", "pip", "install", "--quiet", "-c", ROOT / "constraints.txt", wheel], cwd=tmp_path)
    assert inst.returncode == 0, inst.stderr
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for top in ("scoring", "formulations", "solvers", "experiments"):
        r = _run([py, "-c", f"import {top}"], cwd=elsewhere)
        assert r.returncode != 0 and "ModuleNotFoundError" in r.stderr, top
    r = _run([py, "-c", "import twbn, twbn.solvers.registry as r; print(twbn.__file__); print(sorted(twbn.__all__)[:3])"],
             cwd=elsewhere)
    assert r.returncode == 0, r.stderr
    assert str(venv) in r.stdout.splitlines()[0] and str(ROOT) not in r.stdout
    demo = _run([venv / "bin" / "twbn", "demo"], cwd=elsewhere)
    assert demo.returncode == 0, demo.stdout[-2000:] + demo.stderr[-2000:]
    assert "valid" in demo.stdout and "report:" in demo.stdout
    assert (elsewhere / "out" / "demo" / "report" / "report.md").exists()
