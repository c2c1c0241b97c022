import json
import subprocess
import sys

import pytest

from twbn.experiments.cli import main
from twbn.scoring.jkl import read_jkl
from tests.conftest import BUNDLED


def test_score_writes_cache_names_and_stats(tmp_path, capsys):
    out, stats = tmp_path / "h.jkl", tmp_path / "h.json"
    rc = main(["score", str(BUNDLED / "housing.csv.gz"), "--max-parents", "2", "-o", str(out),
               "--stats", str(stats), "-q"])
    assert rc == 0
    cache = read_jkl(out)
    assert cache.names[0] == "CRIM" and cache.arities[8] == 9
    st = json.loads(stats.read_text())
    assert st["kept"] == cache.n_parent_sets() and st["complete"] and st["rules"] == [1, 2, 3, 4, 5, 6]
    assert capsys.readouterr().out == ""


def test_bdeu_with_ess(tmp_path):
    out = tmp_path / "z.jkl"
    assert main(["score", str(BUNDLED / "zoo.csv.gz"), "--score", "bdeu", "--ess", "10",
                 "--max-parents", "1", "-o", str(out), "-q"]) == 0
    assert len(read_jkl(out).parent_sets) == 17


def test_bad_row_one_line_nonzero_no_output(tmp_path):
    data = tmp_path / "bad.csv"
    data.write_text("a,b,c\n0,1,0\n1,1\n0,0,1\n")
    out = tmp_path / "bad.jkl"
    proc = subprocess.run([sys.executable, "-m", "twbn.experiments.cli", "score", str(data), "-o", str(out)],
                          capture_output=True, text=True)
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "line 3" in lines[0] and "Traceback" not in proc.stderr
    assert not out.exists() and not (tmp_path / "bad.jkl.names").exists()
    assert list(tmp_path.iterdir()) == [data]  # no temporary files left either


def test_ess_only_for_bdeu(tmp_path, capsys):
    assert main(["score", str(BUNDLED / "zoo.csv.gz"), "--ess", "2", "-o", str(tmp_path / "x.jkl")]) == 1
    assert "--ess applies to --score bdeu only" in capsys.readouterr().err


def test_unknown_method_and_missing_config_are_clear_errors(tmp_path, capsys):
    assert main(["experiment", str(tmp_path / "grid.toml")]) == 1
    assert "grid.toml" in capsys.readouterr().err
    out = tmp_path / "z.jkl"
    assert main(["score", str(BUNDLED / "zoo.csv.gz"), "--max-parents", "1", "-o", str(out), "-q"]) == 0
    assert main(["learn", str(out), "--method", "s3", "-o", str(tmp_path / "r.json")]) == 1
    err = capsys.readouterr().err
    assert "unknown method 's3'" in err and "s2plus" in err and not (tmp_path / "r.json").exists()
    assert main(["learn", str(out), "--method", "s2", "-o", str(tmp_path / "r.json")]) == 1
    assert "needs a treewidth bound" in capsys.readouterr().err and not (tmp_path / "r.json").exists()


def test_learn_refuses_a_bad_request_before_reading_the_data(tmp_path, capsys):
    # the data is broken (a short row): had it been read first, the error would be the row's
    data = tmp_path / "bad.csv"
    data.write_text("a,b,c\n0,1,0\n1,1\n0,0,1\n")
    out = tmp_path / "r.json"
    cases = [
        (["--method", "kmax", "--treewidth", "2", "--option", "restarts=3"], "method kmax has no option 'restarts'"),
        (["--method", "cuts", "--solver", "cbc"], "method cuts has no backend 'cbc'"),
        (["--method", "kg"], "method kg needs a treewidth bound"),
        (["--method", "dp", "--warm-start", "kg"], "method dp takes no warm start"),
        (["--method", "cuts", "--treewidth", "2", "--warm-start", str(tmp_path / "none.json")], "no such file"),
        (["--method", "cuts", "--warm-start", "kg"], "warm start kg needs a treewidth bound"),
        (["--option", "x=1"], "method auto has no option 'x'"),
    ]
    for flags, message in cases:
        assert main(["learn", str(data), *flags, "-o", str(out)]) == 1
        err = capsys.readouterr().err
        assert message in err and "line 3" not in err, (flags, err)
    assert list(tmp_path.iterdir()) == [data]
    # and the request alone being fine, the data's own error comes through
    assert main(["learn", str(data), "--method", "kg", "--treewidth", "2", "-o", str(out)]) == 1
    assert "line 3" in capsys.readouterr().err


def test_learn_then_check(tmp_path, capsys):
    cache = tmp_path / "h.jkl"
    assert main(["score", str(BUNDLED / "housing.csv.gz"), "--max-parents", "1", "-o", str(cache), "-q"]) == 0
    res = tmp_path / "r.json"
    assert main(["learn", str(cache), "--treewidth", "1", "--method", "dp", "-o", str(res),
                 "--forbid", "NOX,CRIM", "--require", "TAX,RAD", "-q"]) == 0
    r = json.loads(res.read_text())
    assert r["status"] == "optimal" and r["treewidth_bound"] == 1 and r["width"] <= 1
    assert "TAX" in r["parents"]["RAD"] and "NOX" not in r["parents"]["CRIM"]
    assert r["required"] == [["TAX", "RAD"]] and r["forbidden"] == [["NOX", "CRIM"]]
    assert main(["check", str(cache), str(res)]) == 0
    # an unknown variable in an arc is a one-line user error
    assert main(["learn", str(cache), "--method", "dp", "--forbid", "NOPE,CRIM", "-o", str(tmp_path / "x.json")]) == 1
    assert "'NOPE' is not a variable" in capsys.readouterr().err
    # issue 63.7: a reader that leaves early (``| true``) is no error to report
    proc = subprocess.Popen([sys.executable, "-m", "twbn.experiments.cli", "check", str(cache), str(res)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # before check prints: its first line meets a closed pipe
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141 and err == ""


def test_usage_error_exits_2():
    with pytest.raises(SystemExit) as exc:
        main(["score", "x.csv", "--max-parents", "-1"])
    assert exc.value.code == 2


# 67 s: the whole demo; `make demo` is the user's own check, CI runs this one
@pytest.mark.slow
def test_demo_runs(tmp_path, capsys):
    assert main(["demo", "--output-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "Best parent set of each variable" in out
    assert (tmp_path / "housing.bic.jkl").exists() and (tmp_path / "housing.bic.jkl.names").exists()


@pytest.mark.parametrize("method,extra", [("cuts", ["--warm-start", "kg"]), ("kg", []), ("kastar", []), ("s2", []),
                                          ("s2plus", [])])
def test_every_new_method_learns_a_valid_network_from_the_command_line(tmp_path, capsys, method, extra):
    cache = tmp_path / "h.jkl"
    assert main(["score", str(BUNDLED / "housing.csv.gz"), "--max-parents", "2", "-o", str(cache), "-q"]) == 0
    res = tmp_path / "r.json"
    capsys.readouterr()
    assert main(["learn", str(cache), "--treewidth", "2", "--method", method, "--time-limit", "3", "--seed", "1",
                 "-o", str(res), *extra]) == 0
    r = json.loads(res.read_text())
    assert r["method"] == method and r["width"] <= 2 and r["score"] is not None
    printed = capsys.readouterr().out  # the summary line shows the result's own figures
    assert f"score {r['score']:.4f}" in printed and f"width {r['width']}" in printed
    assert ("bound none" in printed) == (r["bound"] is None)
    assert main(["check", str(cache), str(res)]) == 0
