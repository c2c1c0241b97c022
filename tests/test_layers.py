"""The import rule of docs/design.md: data flows one way, scoring → formulations →
solvers → the ``twbn`` API → experiments, and no module imports from a layer above its
own — not at the top, not inside a function."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Layers from the bottom; the API is the package's own modules (twbn/*.py).
LAYERS = ("scoring", "formulations", "solvers", "api", "experiments")


def layer_of(module: str) -> str | None:
    """The layer of a ``twbn.…`` module name, None for anything else."""
    parts = module.split(".")
    if parts[0] != "twbn":
        return None
    if len(parts) > 1 and parts[1] in LAYERS:
        return parts[1]
    return "api"


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[0] == "twbn":
        parts = parts[1:]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(["twbn", *parts])


def imports_of(path: Path) -> list[tuple[int, str]]:
    """Every module ``path`` imports, with the line, wherever the import stands."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.lineno, node.module))
            # ``from twbn import learning`` names a module too
            out += [(node.lineno, f"{node.module}.{a.name}") for a in node.names
                    if node.module == "twbn" and a.name in LAYERS]
    return out


def source_files() -> list[Path]:
    files = []
    for folder in ("scoring", "formulations", "solvers", "twbn", "experiments"):
        files += sorted((ROOT / folder).rglob("*.py"))
    return files


def test_layer_of_names_the_five_layers():
    assert layer_of("twbn.scoring.cache") == "scoring"
    assert layer_of("twbn.solvers.improve.search") == "solvers"
    assert layer_of("twbn.learning") == "api"
    assert layer_of("twbn") == "api"
    assert layer_of("twbn.experiments.cli") == "experiments"
    assert layer_of("numpy") is None


def test_the_rule_is_seen_by_the_scan(tmp_path):
    # the scan finds an import inside a function, where the rule is easiest to break
    f = tmp_path / "m.py"
    f.write_text("def f():\n    from twbn.experiments.cli import main\n    return main\n")
    assert imports_of(f) == [(2, "twbn.experiments.cli")]


def test_no_module_imports_from_a_layer_above_its_own():
    rank = {name: i for i, name in enumerate(LAYERS)}
    wrong = []
    for path in source_files():
        own = layer_of(module_name(path))
        for line, target in imports_of(path):
            other = layer_of(target)
            if other is not None and rank[other] > rank[own]:
                wrong.append(f"{path.relative_to(ROOT)}:{line} ({own}) imports {target} ({other})")
    assert wrong == []


def scip_models_made(path: Path) -> list[int]:
    """Lines of ``path`` that make a SCIP model directly: ``pyscipopt.Model(…)``, or a
    ``Model(…)`` imported from pyscipopt."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bare = any(isinstance(n, ast.ImportFrom) and n.module == "pyscipopt" and any(a.name == "Model" for a in n.names)
               for n in ast.walk(tree))
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            if (isinstance(f, ast.Attribute) and f.attr == "Model" and isinstance(f.value, ast.Name)
                    and f.value.id == "pyscipopt") or (bare and isinstance(f, ast.Name) and f.id == "Model"):
                lines.append(node.lineno)
    return lines


def test_every_scip_model_is_made_by_scip_model(tmp_path):
    """A SCIP model made any other way takes Ctrl-C itself, and a run never hears it
    (tests/test_contract.py shows SCIP's default doing so); the scan sees both spellings."""
    f = tmp_path / "m.py"
    f.write_text("import pyscipopt\nfrom pyscipopt import Model\na = pyscipopt.Model()\nb = Model()\n")
    assert scip_models_made(f) == [3, 4]
    made = {str(p.relative_to(ROOT)): scip_models_made(p) for p in source_files()}
    makers = {p: lines for p, lines in made.items() if lines}
    assert list(makers) == ["solvers/models/backends.py"] and len(makers["solvers/models/backends.py"]) == 1


def _import_graph() -> dict[str, set[str]]:
    """Module → the twbn modules it imports, at the top or inside a function (not under
    ``if TYPE_CHECKING``: annotations only)."""
    names = {module_name(p): p for p in source_files()}
    graph: dict[str, set[str]] = {}
    for module, path in names.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        typing_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                       and "TYPE_CHECKING" in ast.unparse(node.test) for n in ast.walk(node)}
        out = set()
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            # a module importing its own package (twbn.solvers.improve.loop → twbn.solvers.improve) is no cycle
            out |= {t for t in targets if t in names and t != module and not module.startswith(t + ".")}
        graph[module] = out
    return graph


def test_no_import_cycle_among_the_modules():
    """Issue 64.4: registry, warm_start, parallel and plugins imported each other inside
    functions (a cycle of four), and methods called back into the registry: now a method
    runs other methods through its Budget (``budget.solve``), and no two modules import
    each other, however indirectly, in a function or not."""
    import networkx as nx

    graph = nx.DiGraph([(a, b) for a, targets in _import_graph().items() for b in targets])
    assert sorted(nx.simple_cycles(graph), key=len)[:3] == []
    # the check finds one: two modules that import each other
    assert list(nx.simple_cycles(nx.DiGraph([("a", "b"), ("b", "a")]))) != []


def test_no_method_imports_the_registry():
    """A method gets its sub-solves and starts from the Budget it is given."""
    offenders = [f"{module_name(p)}:{line}" for p in source_files() if "solvers" in p.parts
                 and p.name != "registry.py" for line, m in imports_of(p) if m == "twbn.solvers.registry"]
    # (sweep.py's docstring example imports it as a user would; ast sees no import there)
    assert offenders == []


def test_every_package_folder_is_in_the_wheels_package_list():
    """pyproject lists the packages one by one (four folders map to twbn.*): a new folder
    missing there installs in editable mode but is absent from the wheel."""
    import tomllib

    root = Path(__file__).resolve().parents[1]
    listed = set(tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {"twbn"}
    for top in ("scoring", "formulations", "solvers", "experiments"):
        for init in (root / top).rglob("__init__.py"):
            rel = init.parent.relative_to(root)
            found.add(".".join(("twbn", *rel.parts)))
    assert found - listed == set()


def test_design_names_every_package_folder():
    """docs/design.md's rooms table names every package folder of the tree, and no other."""
    import re

    text = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    table = text[text.index("## Rooms"):]
    table = table[:table.index("\n## ", 1)]
    named = set(re.findall(r"^\| `([\w/]+)/` \|", table, re.M))
    tree = {str(p.parent.relative_to(ROOT)) for folder in ("scoring", "formulations", "solvers", "twbn", "experiments")
            for p in (ROOT / folder).rglob("__init__.py") if "__pycache__" not in p.parts
            and p.parent.name not in ("configs", "data", "examples")}
    assert named == tree
