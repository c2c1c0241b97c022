"""Every file path the README, docs/ and the docstrings and comments of the code name
exists (issue 32.7): a renamed module leaves no dangling reference."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: scoring/…, solvers/…, docs/… paths with a file extension, not part of a longer path
PATH = re.compile(r"(?<![\w./-])((?:scoring|formulations|solvers|experiments|benchmarks|tests|docs|twbn)/[\w./-]+"
                  r"\.(?:py|md|toml|jsonl|json|csv\.gz|csv|png))(?!\w)")


def _named_paths():
    # not the notebook: its dated runs name what was there then, and nothing pins them
    sources = [ROOT / "README.md", *(ROOT / "docs").glob("*.md"),
               *(p for p in ROOT.rglob("*.py") if ".venv" not in p.parts and "build" not in p.parts
                 and "notebook" not in p.parts and p.name != "test_docs.py")]
    for src in sources:
        for m in PATH.finditer(src.read_text(encoding="utf-8", errors="ignore")):
            yield src, m.group(1).rstrip(".")


def test_every_named_file_exists():
    missing = []
    for src, p in _named_paths():
        # results/… and twbn/… are also named relative to their folder and the package
        where = [ROOT / p, ROOT / "benchmarks" / "results" / p]
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


def test_the_layout_table_names_files_that_exist():
    """Issue 63.9: docs/experiments.md's layout listed solvers/milp.py, solvers/kg.py, … —
    each name in a row is relative to that row's folder."""
    text = (ROOT / "docs" / "experiments.md").read_text(encoding="utf-8")
    table = text[text.index("## Layout"):]
    missing, rows = [], 0
    for line in table.splitlines():
        m = re.match(r"\| `([\w]+)/` (?:\(also\) )?\| (.*) \|$", line)
        if not m:
            continue
        rows += 1
        for name in re.findall(r"`([\w./]+(?:\.py|/))`", m.group(2)):
            folder = ROOT / (m.group(1) if m.group(1) != "twbn" else "twbn")
            if not (folder / name).exists():
                missing.append(f"{m.group(1)}/{name}")
    assert rows >= 6 and missing == []


def test_every_markdown_file_the_docs_name_exists():
    """Issue 63.9: docs/methods.md pointed at a NOTES.md that is not in the project."""
    missing = []
    for src in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]:
        for name in re.findall(r"(?<![\w/.-])([A-Za-z][\w-]*\.md)\b", src.read_text(encoding="utf-8")):
            if name == "report.md":  # what `twbn report` writes, not a file of the project
                continue
            where = [ROOT / name, ROOT / "docs" / name, ROOT / "benchmarks" / "results" / name]
            if not any(w.exists() for w in where):
                missing.append(f"{src.relative_to(ROOT)}: {name}")
    assert missing == []
