"""Networks as data sources: the random generator, the BIF reader and writer (checked
against pgmpy's reader), and forward sampling (checked against the CPTs)."""

import gzip

import numpy as np
import pytest

from twbn.experiments.cli import main
from twbn.scoring.data import read_csv
from twbn.scoring.networks import NetworkError, random_network, read_bif, sample, write_bif, write_csv
from twbn.scoring.datasets import network_path


def test_random_network_shape_and_seed():
    net = random_network(300, seed=11)
    net.validate()
    assert all(2 <= len(s) <= 4 for s in net.states)
    assert all(0 <= len(p) <= 6 for p in net.parents)
    assert {len(p) for p in net.parents} == set(range(7))
    again = random_network(300, seed=11)
    assert again.parents == net.parents and all(np.array_equal(a, b) for a, b in zip(again.cpts, net.cpts))
    assert random_network(300, seed=12).parents != net.parents


def test_sampling_reproduces_the_cpts():
    """Empirical conditional frequencies of 200,000 rows are within 4 standard errors of
    the CPT entries that have at least 2,000 rows behind them."""
    net = random_network(6, seed=3, max_parents=2)
    ds = sample(net, 200_000, seed=4)
    assert ds.data.shape == (6, 200_000)
    for v in range(6):
        code = np.zeros(ds.n_rows, dtype=np.int64)
        stride = 1
        for p in net.parents[v]:
            code += ds.data[p] * stride
            stride *= len(net.states[p])
        for j in range(net.cpts[v].shape[0]):
            rows = ds.data[v][code == j]
            if rows.size < 2000:
                continue
            freq = np.bincount(rows, minlength=len(net.states[v])) / rows.size
            se = np.sqrt(net.cpts[v][j] * (1 - net.cpts[v][j]) / rows.size)
            assert np.all(np.abs(freq - net.cpts[v][j]) <= 4 * se + 1e-12)
    assert np.array_equal(sample(net, 100, seed=9).data, sample(net, 100, seed=9).data)


def test_bif_round_trip_through_pgmpy(tmp_path):
    from pgmpy.readwrite import BIFReader

    net = random_network(25, seed=5, max_parents=3)
    write_bif(net, tmp_path / "n.bif")
    back = read_bif(tmp_path / "n.bif")
    assert back.names == net.names and back.states == net.states and back.parents == net.parents
    for a, b in zip(back.cpts, net.cpts):
        np.testing.assert_array_equal(a, b)
    # pgmpy reads what we write: every CPT entry, addressed by state names
    theirs = BIFReader(str(tmp_path / "n.bif")).get_model()
    for v, name in enumerate(net.names):
        f = theirs.get_cpds(name).to_factor()
        ps = net.parents[v]
        for code in range(net.cpts[v].shape[0]):
            states, c = {}, code
            for p in ps:
                states[net.names[p]] = net.states[p][c % len(net.states[p])]
                c //= len(net.states[p])
            for k, s in enumerate(net.states[v]):
                assert f.get_value(**states, **{name: s}) == pytest.approx(net.cpts[v][code, k], abs=1e-12)


def test_reads_the_real_networks_like_pgmpy():
    from pgmpy.readwrite import BIFReader

    path = network_path("alarm")
    ours = read_bif(path)
    theirs = BIFReader(string=gzip.decompress(path.read_bytes()).decode()).get_model()
    assert set(ours.names) == set(theirs.nodes())
    for v, name in enumerate(ours.names):
        cpd = theirs.get_cpds(name)
        assert set(cpd.get_evidence()) == {ours.names[p] for p in ours.parents[v]}
        f = cpd.to_factor()
        for code in range(ours.cpts[v].shape[0]):
            states, c = {}, code
            for p in ours.parents[v]:
                states[ours.names[p]] = ours.states[p][c % len(ours.states[p])]
                c //= len(ours.states[p])
            for k, s in enumerate(ours.states[v]):
                assert f.get_value(**states, **{name: s}) == pytest.approx(ours.cpts[v][code, k])
    munin = read_bif(network_path("munin"))
    assert munin.n_variables == 1041


@pytest.mark.parametrize("text,msg", [
    ("variable A {\n type discrete [ 3 ] { a, b };\n}\n", "declares 3 states"),
    ("variable A {\n type discrete [ 2 ] { a, b };\n}\n", "no probability block"),
    ("variable A {\n type discrete [ 2 ] { a, b };\n}\nprobability ( A | B ) {\n table 0.5, 0.5;\n}\n",
     "unknown variable 'B'"),
    ("variable A {\n type discrete [ 2 ] { a, b };\n}\nprobability ( A ) {\n table 0.5;\n}\n", "1 values"),
    ("network x {\n}\n", "no variable blocks"),
])
def test_malformed_bif_is_a_clear_error(tmp_path, text, msg):
    p = tmp_path / "bad.bif"
    p.write_text(text)
    with pytest.raises(NetworkError, match=msg):
        read_bif(p)


def test_csv_written_reads_back(tmp_path):
    net = random_network(12, seed=2)
    ds = sample(net, 300, seed=3)
    write_csv(ds, tmp_path / "d.csv.gz")
    back = read_csv(tmp_path / "d.csv.gz")
    assert back.names == ds.names
    for v in range(12):  # the reader orders states by label; compare labels row by row
        assert [back.states[v][i] for i in back.data[v]] == [ds.states[v][i] for i in ds.data[v]]


def test_a_state_named_none_survives_sampling_and_reading(tmp_path):
    # bnlearn's insurance has ThisCarDam in {None, Mild, Moderate, Severe}: the text
    # "None" is a state, not a missing value
    import dataclasses

    net = random_network(5, seed=2, max_parents=1)
    net = dataclasses.replace(net, states=(("None",) + net.states[0][1:],) + net.states[1:])
    write_bif(net, tmp_path / "n.bif")
    ds = sample(read_bif(tmp_path / "n.bif"), 400, seed=1)
    write_csv(ds, tmp_path / "d.csv")
    back = read_csv(tmp_path / "d.csv")
    assert "None" in back.states[0]
    assert [back.states[0][i] for i in back.data[0]] == [ds.states[0][i] for i in ds.data[0]]


def test_generate_sample_and_approximate_scoring_from_the_command_line(tmp_path, capsys):
    prefix = tmp_path / "syn"
    assert main(["generate", "--variables", "80", "--rows", "400", "--seed", "1", "-o", str(prefix)]) == 0
    assert (tmp_path / "syn.bif.gz").exists() and (tmp_path / "syn.csv.gz").exists()
    assert main(["sample", str(tmp_path / "syn.bif.gz"), "--rows", "50", "-o", str(tmp_path / "more.csv")]) == 0
    assert read_csv(tmp_path / "more.csv").n_rows == 50
    jkl, res = tmp_path / "syn.jkl", tmp_path / "r.json"
    capsys.readouterr()
    assert main(["score", str(tmp_path / "syn.csv.gz"), "--approximate", "--candidates", "5",
                 "--time-per-variable", "0.02", "-o", str(jkl), "--stats", str(tmp_path / "s.json")]) == 0
    assert "APPROXIMATE" in capsys.readouterr().out
    assert main(["learn", str(jkl), "--treewidth", "3", "--method", "kg", "--time-limit", "2", "-o", str(res),
                 "-q"]) == 0
    assert main(["check", str(jkl), str(res)]) == 0
    assert main(["score", str(tmp_path / "syn.csv.gz"), "--candidates", "5"]) == 1
    assert "--approximate" in capsys.readouterr().err
    assert main(["sample", str(tmp_path / "nope.bif"), "--rows", "5", "-o", str(tmp_path / "x.csv")]) == 1
    assert not (tmp_path / "x.csv").exists()
