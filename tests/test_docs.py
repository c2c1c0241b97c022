"""Every file path the README, docs/ and the docstrings and comments of the code name
exists (issue 32.7): a renamed module leaves no dangling reference."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: scoring/…, solvers/…, docs/… paths with a file extension, not part of a longer path
PATH = re.compile(r"(?<![\w./-])((?:scoring|formulations|solvers|experiments|tests|docs|twbn)/[\w./-]+"
                  r"\.(?:py|md|toml|jsonl|json|csv\.gz|csv|png))(?!\w)")


def _named_paths():
    sources = [ROOT / "README.md", *(ROOT / "docs").glob("*.md"),
               *(p for p in ROOT.rglob("*.py") if ".venv" not in p.parts and "build" not in p.parts
                 and p.name != "test_docs.py")]
    for src in sources:
        for m in PATH.finditer(src.read_text(encoding="utf-8", errors="ignore")):
            yield src, m.group(1).rstrip(".")


def test_every_named_file_exists():
    missing = []
    for src, p in _named_paths():
        # results/… and twbn/… are also named relative to their folder and the package
        where = [ROOT / p, ROOT / "experiments" / "benchmarks" / "results" / p]
        if p.startswith("twbn/"):
            where.append(ROOT / p[len("twbn/"):])
        if not any(w.exists() for w in where):
            missing.append(f"{src.relative_to(ROOT)}: {p}")
    assert missing == []


def test_the_check_finds_a_dangling_path(tmp_path):
    """The pattern catches the kind of path that went stale (solvers/cuts.py)."""
    assert [m.group(1) for m in PATH.finditer("see solvers/cuts.py and solvers/cuts/lns.py.")] == \
        ["solvers/cuts.py", "solvers/cuts/lns.py"]
    assert not (ROOT / "solvers" / "cuts.py").exists()
