import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from twbn.scoring.cache import CacheError, ScoreCache
from twbn.scoring.data import read_csv
from twbn.scoring.jkl import JklError, format_jkl, read_jkl, sidecar_path, write_jkl
from twbn.scoring.parent_sets import build_cache
from tests.conftest import BUNDLED


@pytest.fixture(scope="module")
def zoo_cache():
    return build_cache(read_csv(BUNDLED / "zoo.csv.gz"), score="bdeu", max_parents=2, pruning="all")[0]


def test_round_trip_is_exact(tmp_path, zoo_cache):
    path = tmp_path / "zoo.jkl"
    write_jkl(zoo_cache, path)
    back = read_jkl(path)
    assert back.names == zoo_cache.names
    assert back.arities == zoo_cache.arities
    assert back.parent_sets == zoo_cache.parent_sets
    for a, b in zip(back.scores, zoo_cache.scores):
        assert np.array_equal(a, b)  # bit for bit: repr round-trips floats


def test_writer_emits_the_strict_dialect(tmp_path, zoo_cache):
    """Header tokens 0..n−1 in order, integer parents, single spaces, no comments or
    trailing blanks: the one form GOBNILP, BLIP, pygobnilp and TWILP all parse."""
    text = format_jkl(zoo_cache)
    lines = text.split("\n")
    assert lines[-1] == "" and lines[0] == str(zoo_cache.n_variables)
    i, v = 1, 0
    while i < len(lines) - 1:
        head = lines[i].split(" ")
        assert head[0] == str(v) and re.fullmatch(r"\d+ \d+", lines[i])
        count = int(head[1])
        for line in lines[i + 1 : i + 1 + count]:
            toks = line.split(" ")
            assert line == line.strip() and "  " not in line and "#" not in line
            float(toks[0])
            assert int(toks[1]) == len(toks) - 2 and all(t.isdigit() for t in toks[2:])
        i += 1 + count
        v += 1
    assert v == zoo_cache.n_variables


def test_lenient_reader_name_dialect_comments_and_whitespace(tmp_path):
    text = (
        "# written by BLIP\n3\n"
        "b 2\n  -10.5   1 a\n-12.0 0\n"
        "# a comment between blocks\n"
        "a 1\n-3.25\t0\n"
        "c 2\n-1.0 2 a b\n-2.0 0\n"
    )
    p = tmp_path / "x.jkl"
    p.write_text(text)
    cache = read_jkl(p)
    assert cache.names == ("b", "a", "c")  # header order, as no sidecar names them
    assert cache.parent_sets[2] == [(0, 1), ()] and cache.scores[2].tolist() == [-1.0, -2.0]
    assert cache.parent_sets[0] == [(1,), ()]


def test_index_dialect_uses_sidecar_names(tmp_path):
    p = tmp_path / "x.jkl"
    p.write_text("2\n1 1\n-1.0 0\n0 2\n-0.5 1 1\n-0.75 0\n")
    sidecar_path(p).write_text("first\t2\nsecond\t3\n")
    cache = read_jkl(p)
    assert cache.names == ("first", "second") and cache.arities == (2, 3)
    assert cache.score_of(0, (1,)) == -0.5


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("2\n0 1\n-1.0 0\n", ":1: announces 2 variables, the file has 1"),
        ("1\n0 2\n-1.0 0\n", ":2: variable '0' announces 2 parent sets, file ends after 1"),
        ("2\n0 1\n-1.0 2 1\n1 1\n-1 0\n", ":3: size 2 but 1 parents listed"),
        ("2\n0 1\nabc 0\n1 1\n-1 0\n", ":3: score 'abc' is not a number"),
        ("2\n0 1\n-1.0 1 0\n1 1\n-1 0\n", ":3: variable '0' listed as its own parent"),
        ("2\n0 1\n-1.0 1 5\n1 1\n-1 0\n", ":3: parent 5 out of range"),
        ("x\n", ":1: number of variables 'x' is not an integer"),
        ("", "empty file"),
    ],
)
def test_malformed_files_name_the_line(tmp_path, text, fragment):
    p = tmp_path / "bad.jkl"
    p.write_text(text)
    with pytest.raises(JklError, match=re.escape(fragment)):
        read_jkl(p)


def test_cache_validation():
    with pytest.raises(CacheError, match="own parent"):
        ScoreCache.from_mapping(["a", "b"], [{(0,): -1.0}, {(): -1.0}])
    with pytest.raises(CacheError, match="no candidate"):
        ScoreCache.from_mapping(["a", "b"], [{(): -1.0}, {}])


def test_without_dominated_matches_definition():
    fam = {(): -10.0, (1,): -9.0, (2,): -11.0, (1, 2): -9.0, (2, 3): -8.0, (1, 2, 3): -8.5}
    cache = ScoreCache.from_mapping(["a", "b", "c", "d"], [fam, {(): 0.0}, {(): 0.0}, {(): 0.0}])
    kept = cache.without_dominated()
    # (2,) < ∅; (1,2) ties (1,); (1,2,3) < (2,3)... but (2,3) > every subset: kept.
    assert kept.parent_sets[0] == [(2, 3), (1,), ()]


def test_atomic_writes_get_ordinary_permissions(tmp_path):
    import os
    import stat

    from twbn.scoring.jkl import atomic_write_text

    old = os.umask(0o022)
    try:
        atomic_write_text(tmp_path / "x.txt", "hi\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "x.txt").stat().st_mode) == 0o644


def test_gzip_cache_with_the_plain_sidecar(tmp_path, zoo_cache):
    import gzip

    cache = zoo_cache
    write_jkl(cache, tmp_path / "z.jkl")
    (tmp_path / "z.jkl.gz").write_bytes(gzip.compress((tmp_path / "z.jkl").read_bytes()))
    (tmp_path / "z.jkl").unlink()
    again = read_jkl(tmp_path / "z.jkl.gz")  # names from z.jkl.names, as the anchor caches ship
    assert again.names == cache.names and again.families() == cache.families()
    (tmp_path / "bad.jkl.gz").write_bytes(gzip.compress(b"3\n")[:-6])
    with pytest.raises(JklError, match="cannot read"):
        read_jkl(tmp_path / "bad.jkl.gz")


@pytest.mark.parametrize("body,line,text", [
    # issue 31.13: what a reader of the file needs to find the fault
    ("2\n0 1\n1e308 0\n1 1\n-1.0 0\n", 3, "score 1e308 is out of range"),
    ("2\n0 1\ninf 0\n1 1\n-1.0 0\n", 3, "score inf is out of range"),
    ("2\n0 1\nnan 0\n1 1\n-1.0 0\n", 3, "score nan is out of range"),
    ("3\n0 1\n-1.0 0\n1 1\n-2.0 0\n1 1\n-3.0 0\n", 6, "variable '1' has a second block (the first is at line 4)"),
    ("2\n0 3\n-1.0 0\n1 1\n-1.0 0\n", 2, "variable '0' announces 3 parent sets, but line 4 starts another block "
                                         "after 1"),
])
def test_malformed_caches_are_refused_at_the_right_line(tmp_path, body, line, text):
    p = tmp_path / "c.jkl"
    p.write_text(body)
    with pytest.raises(JklError) as err:
        read_jkl(p)
    assert str(err.value).startswith(f"{p}:{line}: ") and text in str(err.value), str(err.value)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 9), seed=st.integers(0, 10**6), shuffle=st.booleans())
def test_the_stream_reader_and_the_line_reader_agree(tmp_path_factory, n, seed, shuffle):
    """Issue 33.5: twbn's own dialect is read as one stream of numbers (jester's 25 MB in
    2.8 s instead of 8.5 s); the result is the line-by-line reader's, blocks and sets in
    any order, ties included."""
    import random

    import twbn.scoring.jkl_stream as stream
    from tests.helpers import random_cache

    cache = random_cache(n, seed, max_size=3, density=0.5)
    blocks = []
    rng = random.Random(seed)
    for v in range(n):
        lines = [f"{s!r} {len(p)}" + "".join(f" {q}" for q in p)
                 for p, s in zip(cache.parent_sets[v], cache.scores[v].tolist())]
        if shuffle:
            rng.shuffle(lines)
        blocks.append(f"{v} {len(lines)}\n" + "\n".join(lines))
    if shuffle:
        rng.shuffle(blocks)
    path = tmp_path_factory.mktemp("s") / "c.jkl"
    path.write_text(f"{n}\n" + "\n".join(blocks) + "\n")
    assert stream.read_index_stream(path.read_bytes(), 1e100) is not None  # the fast path is taken
    fast = read_jkl(path)
    real = stream.read_index_stream
    stream.read_index_stream = lambda *a: None
    try:
        slow = read_jkl(path)
    finally:
        stream.read_index_stream = real
    assert fast.parent_sets == slow.parent_sets == cache.parent_sets
    assert [s.tolist() for s in fast.scores] == [s.tolist() for s in slow.scores] == [s.tolist() for s in cache.scores]


@pytest.mark.parametrize("body", [
    "2\n0 1\n-1.0 2 1\n1 1\n-1 0\n",          # a line short of its parents
    "2\n0 1\n-1.0 1\n1\n1 1\n-1 0\n",          # a parent on a line of its own
    "2\n# BLIP\n0 1\n-1.0 0\n1 1\n-1 0\n",     # a comment
    "2\n0 1\n-1.0 2 1 1\n1 1\n-1 0\n",         # a repeated parent
    "2\n0 2\n-1.0 0\n-1.0 0\n1 1\n-1 0\n",     # a set listed twice
    "2\nA 1\n-1.0 0\nB 1\n-1 0\n",             # names
])
def test_the_stream_reader_leaves_every_other_file_to_the_line_reader(tmp_path, body):
    from twbn.scoring.jkl_stream import read_index_stream

    assert read_index_stream(body.encode(), 1e100) is None


def test_a_cache_says_where_a_family_is_and_remembers_it():
    cache = ScoreCache.from_mapping("ABC", [{(): -5.0, (1,): -3.0, (1, 2): -2.0}, {(): -4.0}, {(): -1.0}])
    # best first: (1, 2) at -2, (1,) at -3, () at -5
    assert [cache.index_of(0, ps) for ps in [(2, 1), (1,), (), (2,)]] == [0, 1, 2, -1]
    assert cache.holds(0, [1]) and not cache.holds(0, [2]) and not cache.holds(1, [0])
    assert cache.score_of(0, (2, 1)) == -2.0
    with pytest.raises(KeyError):
        cache.score_of(0, (2,))
    # a second answer is the first one's, remembered
    assert cache.index_of(0, (1, 2)) == 0 and cache.index_of(0, (2,)) == -1
    assert cache._where[(0, (2,))] == -1
