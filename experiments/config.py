"""Experiment configs (TOML) and their grids.

A config names data sets, how to score them, treewidth bounds, methods with options,
folds, seeds and budgets; ``expand`` turns it into cells, one per
(data, fold, treewidth, method, seed), each with a stable key so that a store can tell
which cells are done.

    name = "quick"
    score = "bic"              # bic | bdeu | aic; pcart | pcartp | ft | ftp (local structure,
                               # continuous columns allowed; no held-out likelihood or inference)
    max_splits = 3             # pcart: dyadic splits per continuous predictor
    max_bins = 7               # ft: most quantile bins per continuous predictor
    approximate = false        # bic/aic/bdeu: approximate exploration for large n, with
    candidates = 30            #   these candidate parents per variable
    time_per_variable = 0.5    #   and this many seconds per variable
    max_parents = 2
    pruning = "all"
    folds = 1                  # 1: learn on all rows; k ≥ 2: k-fold cross-validation
    seeds = [0]
    treewidths = [2, 3]        # "unbounded" allowed for methods that support it
    time_limit = 10            # seconds per cell (the method's budget)
    memory_limit_mb = 4000     # per cell process
    kill_margin = 60           # seconds beyond time_limit before a cell is killed
    inference = false          # time exact inference (pgmpy) on each learned network
    sweep = true               # each (data, fold, method, seed) runs its bounds in increasing
                               # order, each from the best network of the smaller ones, never
                               # scoring below it; false: every cell on its own
    cell_jobs = 1              # processes each cell's method may use (improve's pieces)
    missing = "em"             # the data's own missing cells: em (default: learned by
                               # structural EM, bic/aic), state, complete-rows, error
    missing = { fraction = 0.2, mechanism = "mcar", seed = 0 }
                               # or: remove cells of the training rows (mcar | mar,
                               # twbn.scoring.missingness) and learn by structural EM;
                               # the test rows stay complete; the report adds imputation
                               # accuracy and, with a network, structural distance
    [[data]]
    name = "housing"
    class = "class"            # optional: predict this variable on the test fold (folds >= 2)
    network = "alarm"          # optional: the network the data was sampled from (a bnlearn
                               # name or a BIF file): the report gives the structural Hamming
                               # distance to it
    path = "experiments/data/housing.csv.gz"   # relative to the config file; $VAR and ${VAR}
                                               # expand (e.g. $TWBN_DATA/debd/plants_train.csv.gz);
                                               # none: the bundled set of that name (twbn data list)
    [[methods]]
    name = "auto"              # the rule twbn learn applies, per cell (the result records its pick)
    [[methods]]
    name = "kg"                # label; defaults to the method
    [[methods]]
    name = "reference"         # a method may have its own treewidths, e.g. the unbounded
    method = "cuts"            # W-score reference
    treewidths = ["unbounded"]
    [[methods]]
    name = "milp-warm"
    method = "milp"
    solver = "highs"
    warm_start = "kg"
    options = { aggregate = false }   # the method's options (twbn learn --method M --help-options)
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from twbn.scoring.local_scores import SCORES
from twbn.scoring.local_structure import LOCAL_STRUCTURE_SCORES
from twbn.scoring.parent_sets import PRUNING_MODES
from twbn.scoring.errors import TwbnError

__all__ = ["ConfigError", "Cell", "Config", "load_config", "expand"]

#: The top-level keys a config may have.
KEYS = frozenset({"name", "score", "ess", "max_splits", "max_bins", "approximate", "candidates", "time_per_variable",
                  "max_parents", "pruning", "folds", "seeds", "treewidths", "time_limit", "memory_limit_mb",
                  "kill_margin", "inference", "sweep", "cell_jobs", "data", "methods", "policy", "missing"})


class ConfigError(TwbnError, ValueError):
    """A config that cannot be run; the message names the field."""


@dataclass(frozen=True)
class Cell:
    data: str
    fold: int
    treewidth: int | None
    method: str  # label
    seed: int

    @property
    def chain(self) -> tuple:
        """The cells of a sweep share this: all but the bound."""
        return (self.data, self.fold, self.method, self.seed)

    @property
    def key(self) -> str:
        k = "unbounded" if self.treewidth is None else self.treewidth
        return f"{self.data}|fold={self.fold}|k={k}|{self.method}|seed={self.seed}"


@dataclass(frozen=True)
class Config:
    name: str
    path: Path
    data: dict[str, Path]
    score: str
    max_parents: int
    pruning: str
    ess: float
    folds: int
    seeds: tuple[int, ...]
    treewidths: tuple[int | None, ...]
    methods: dict[str, dict]  # label → {"method", "solver", "warm_start"}
    time_limit: float
    memory_limit_mb: int
    kill_margin: float
    raw: dict
    inference: bool = False
    max_splits: int = 3
    max_bins: int = 7
    approximate: bool = False
    candidates: int = 30
    time_per_variable: float = 0.5
    #: data name → its class variable: each cell also predicts it from the others on the
    #: test fold (accuracy, log-loss), beside a Naive Bayes fitted on the same rows
    classes: dict[str, str] = field(default_factory=dict)
    #: run each (data, fold, method, seed)'s bounds as a sweep (solvers/sweep.py)
    sweep: bool = True
    #: processes each cell's method may use (``twbn.learn(jobs=)``: improve's pieces)
    cell_jobs: int = 1
    #: the ``[policy]`` table: the twbn.Policy fields every method runs with, changed from
    #: the defaults (a method's own ``policy`` changes more)
    policy: dict = field(default_factory=dict)
    #: how the data's missing cells are read (``twbn.scoring.data.MISSING_MODES``)
    read_missing: str = "em"
    #: the ``missing`` table: {"fraction", "mechanism", "seed"} of the cells removed from each
    #: training fold, learned by structural EM; None: none removed
    missing: dict | None = None
    #: data name → the network it was sampled from (a bnlearn name or a BIF path)
    networks: dict[str, str] = field(default_factory=dict)


def load_config(path: str | Path) -> Config:
    path = Path(path)
    raw = _read_toml(path)
    get = _Getter(path, raw)
    data, classes, networks = {}, {}, {}
    for d in get("data", kind=list):
        name, p, cls, net = _data_entry(path, d)
        data[name] = p
        if cls is not None:
            classes[name] = cls
        if net is not None:
            networks[name] = net
    score, pruning, extra = _scoring(path, get)
    tws = _bounds(path, get("treewidths", kind=list), "treewidths")
    shared = _policy(path, "[policy]", get("policy", {}, dict))
    methods = _methods(path, get("methods", kind=list), tws, shared)
    seeds, memory, margin, folds, cell_jobs, time_limit = _run_limits(path, get)
    read_missing, missing = _missing(path, raw.get("missing"), score)
    return Config(
        name=str(get("name", path.stem)), path=path, data=data, score=score, max_parents=get("max_parents", 3, int),
        pruning=pruning, ess=float(get("ess", 1.0)), folds=folds, seeds=tuple(seeds),
        treewidths=tuple(tws), methods=methods, time_limit=time_limit,
        memory_limit_mb=memory, kill_margin=float(margin), raw=raw,
        inference=get("inference", False, bool), classes=classes, sweep=get("sweep", True, bool),
        cell_jobs=cell_jobs, policy=shared, read_missing=read_missing, missing=missing, networks=networks, **extra)


def _read_toml(path: Path) -> dict:
    """The config's table; ConfigError for bad TOML or an unknown top-level key."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: not a config table")
    unknown = sorted(set(raw) - KEYS)
    if unknown:
        import difflib

        close = difflib.get_close_matches(unknown[0], sorted(KEYS), n=1)
        raise ConfigError(f"{path}: unknown key {unknown[0]!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    return raw


class _Getter:
    """``get(key, default, kind)``: a top-level value, required where ``default`` is None,
    of ``kind`` where given."""

    def __init__(self, path: Path, raw: dict):
        self.path, self.raw = path, raw

    def __call__(self, key, default=None, kind=None):
        v = self.raw.get(key, default)
        if v is None:
            raise ConfigError(f"{self.path}: '{key}' is required")
        if kind is not None and not isinstance(v, kind):
            raise ConfigError(f"{self.path}: '{key}' must be {kind.__name__ if isinstance(kind, type) else kind}")
        return v


def _data_entry(path: Path, d) -> tuple[str, Path, "str | None", "str | None"]:
    """One [[data]]: its name, its file (a bundled set's without a path; ``$VAR`` expanded),
    its class column and its network (a bnlearn name or a BIF file), each checked."""
    if not isinstance(d, dict) or "name" not in d:
        raise ConfigError(f"{path}: every [[data]] needs a name (and a path, unless it names a bundled set)")
    from twbn.scoring.datasets import BUNDLED, bundled_path

    if "path" not in d:
        if d["name"] not in BUNDLED:
            raise ConfigError(f"{path}: data {d['name']!r} needs a path (without one, name a bundled set: "
                              f"{', '.join(BUNDLED)})")
        d = {**d, "path": str(bundled_path(d["name"]))}
    if set(d) - {"name", "path", "class", "network"}:
        raise ConfigError(f"{path}: data {d['name']!r} has no field "
                          f"{sorted(set(d) - {'name', 'path', 'class', 'network'})[0]!r} "
                          "(fields: name, path, class, network; top-level keys go before the first [[data]])")
    net = None
    if "network" in d:
        if not isinstance(d["network"], str) or not d["network"]:
            raise ConfigError(f"{path}: data {d['name']!r}: network must be a bnlearn name or a BIF file")
        net = d["network"]
        if net.endswith((".bif", ".bif.gz")):
            net = str((path.parent / os.path.expandvars(net)).resolve())
            if not Path(net).exists():
                raise ConfigError(f"{path}: data {d['name']!r}: network file {net} does not exist")
    if "class" in d and (not isinstance(d["class"], str) or not d["class"]):
        raise ConfigError(f"{path}: data {d['name']!r}: class must be a variable name")
    spelled = str(d["path"])
    # data that cannot ship in the repo (DEBD, sampled bnlearn sets) is named by an
    # environment variable, e.g. $TWBN_DATA/debd/plants_train.csv.gz
    unset = [v for v in re.findall(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)", spelled) if v not in os.environ]
    if unset:
        raise ConfigError(f"{path}: data {d['name']!r} is under ${unset[0]}, which is not set "
                          f"(export {unset[0]}=DIR, the folder holding it)")
    p = (path.parent / os.path.expandvars(spelled)).resolve()
    if not p.exists():
        raise ConfigError(f"{path}: data file {p} does not exist (a path is relative to the config's folder"
                          + (f"; {d['name']!r} is a bundled set: without a path, twbn reads its own copy)"
                             if d["name"] in BUNDLED else ")"))
    return str(d["name"]), p, d.get("class"), net


def _scoring(path: Path, get) -> tuple[str, str, dict]:
    """The score, the pruning mode, and the exploration's and local structure's settings."""
    score = get("score", "bic", str)
    if score not in (*SCORES, *LOCAL_STRUCTURE_SCORES):
        raise ConfigError(f"{path}: score must be one of {', '.join((*SCORES, *LOCAL_STRUCTURE_SCORES))}")
    local = score in LOCAL_STRUCTURE_SCORES
    approximate = get("approximate", False, bool)
    if local and approximate:
        raise ConfigError(f"{path}: approximate exploration is for bic, aic and bdeu")
    if local and get("inference", False, bool):
        raise ConfigError(f"{path}: inference timing needs discrete CPTs; not with score {score!r}")
    extra = {"max_splits": get("max_splits", 3, int), "max_bins": get("max_bins", 7, int),
             "approximate": approximate, "candidates": get("candidates", 30, int),
             "time_per_variable": float(get("time_per_variable", 0.5))}
    if extra["max_splits"] < 1 or extra["max_bins"] < 2 or extra["candidates"] < 1 or not extra["time_per_variable"] > 0:
        raise ConfigError(f"{path}: need max_splits >= 1, max_bins >= 2, candidates >= 1, time_per_variable > 0")
    pruning = get("pruning", "all", str)
    if pruning not in PRUNING_MODES:
        raise ConfigError(f"{path}: pruning must be one of {', '.join(PRUNING_MODES)}")
    return score, pruning, extra


def _bounds(path: Path, values, where: str) -> tuple:
    """Treewidths: integers >= 1 or "unbounded" (None)."""
    if not isinstance(values, list) or not values:
        raise ConfigError(f"{path}: {where} must be a non-empty list")
    out = []
    for t in values:
        if t == "unbounded":
            out.append(None)
        elif isinstance(t, int) and not isinstance(t, bool) and t >= 1:
            out.append(t)
        else:
            raise ConfigError(f"{path}: treewidths are integers >= 1 or \"unbounded\", got {t!r}")
    return tuple(out)


def _methods(path: Path, entries: list, tws: tuple, shared) -> dict:
    """The [[methods]] by label, each checked against the registry."""
    from twbn.solvers.registry import all_methods  # the one list of method names

    known = all_methods()
    methods = {}
    for m in entries:
        if not isinstance(m, dict) or "name" not in m:
            raise ConfigError(f"{path}: every [[methods]] needs a name")
        method = m.get("method", m["name"])
        if method not in known:
            raise ConfigError(f"{path}: unknown method {method!r} (one of {', '.join(known)})")
        if m["name"] in methods:
            raise ConfigError(f"{path}: method label {m['name']!r} is used twice")
        own = _bounds(path, m["treewidths"], f"treewidths of method {m['name']!r}") if "treewidths" in m else None
        unknown = set(m) - {"name", "method", "solver", "warm_start", "treewidths", "options", "policy"}
        if unknown:
            raise ConfigError(f"{path}: method {m['name']!r} has no field {sorted(unknown)[0]!r} "
                              "(fields: name, method, solver, warm_start, treewidths, options, policy)")
        _check_method(path, m["name"], method, m.get("solver"), m.get("warm_start"), m.get("options"), own or tws)
        methods[m["name"]] = {"method": method, "solver": m.get("solver"), "warm_start": m.get("warm_start"),
                              "treewidths": own, "options": dict(m.get("options") or {}),
                              "policy": _policy(path, f"method {m['name']!r}: policy", m.get("policy") or {}, shared)}
    return methods


def _run_limits(path: Path, get):
    """(seeds, memory_limit_mb, kill_margin, folds, cell_jobs, time_limit), checked."""
    seeds = get("seeds", [0], list)
    if not seeds or any(isinstance(s, bool) or not isinstance(s, int) or s < 0 for s in seeds):
        raise ConfigError(f"{path}: seeds must be a non-empty list of integers >= 0, got {seeds!r}")
    memory = get("memory_limit_mb", 4000, int)
    if isinstance(memory, bool) or memory < 1:
        raise ConfigError(f"{path}: memory_limit_mb must be a positive integer, got {memory!r}")
    margin = get("kill_margin", 60.0, (int, float))
    if isinstance(margin, bool) or not margin >= 0:
        raise ConfigError(f"{path}: kill_margin must be a number of seconds >= 0, got {margin!r}")
    folds = get("folds", 1, int)
    if folds < 1:
        raise ConfigError(f"{path}: folds must be >= 1")
    cell_jobs = get("cell_jobs", 1, int)
    if isinstance(cell_jobs, bool) or cell_jobs < 1:
        raise ConfigError(f"{path}: cell_jobs must be an integer >= 1, got {cell_jobs!r}")
    time_limit = float(get("time_limit", 60))
    if not time_limit > 0:
        raise ConfigError(f"{path}: time_limit must be positive")
    return seeds, memory, margin, folds, cell_jobs, time_limit


def _missing(path: Path, table, score: str) -> tuple[str, dict | None]:
    """``missing``, checked: how the data's own missing cells are read, and the cells
    removed on purpose (a table) or None."""
    from twbn.scoring.data import MISSING_MODES
    from twbn.scoring.missingness import MECHANISMS

    if table is None:
        return "em", None
    if isinstance(table, str):
        if table not in MISSING_MODES:
            raise ConfigError(f"{path}: missing must be one of {', '.join(MISSING_MODES)} or a table "
                              f"{{ fraction, mechanism, seed }}, got {table!r}")
        return table, None
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: missing must be a table, e.g. missing = {{ fraction = 0.2, mechanism = \"mcar\" }}")
    unknown = sorted(set(table) - {"fraction", "mechanism", "seed"})
    if unknown:
        raise ConfigError(f"{path}: missing has no field {unknown[0]!r} (fields: fraction, mechanism, seed)")
    fraction = table.get("fraction")
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0 < fraction < 1:
        raise ConfigError(f"{path}: missing.fraction must be a number in (0, 1), got {fraction!r}")
    mechanism = table.get("mechanism", "mcar")
    if mechanism not in MECHANISMS:
        raise ConfigError(f"{path}: missing.mechanism must be one of {', '.join(MECHANISMS)}, got {mechanism!r}")
    seed = table.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ConfigError(f"{path}: missing.seed must be an integer >= 0, got {seed!r}")
    if score not in ("bic", "aic"):
        raise ConfigError(f"{path}: missing cells are learned by structural EM, which scores bic or aic, not {score!r}")
    return "em", {"fraction": float(fraction), "mechanism": mechanism, "seed": seed}


def _policy(path: Path, where: str, table, base: dict | None = None) -> dict:
    """The twbn.Policy fields a table changes (on top of ``base``), checked: a ConfigError
    naming the nearest field for a misspelt one."""
    from twbn.solvers.policy import Policy, PolicyError

    if not isinstance(table, dict):
        raise ConfigError(f"{path}: {where} must be a table, e.g. policy = {{ stuck_pieces = 6 }}")
    try:
        return Policy.from_mapping({**(base or {}), **table}).changed()
    except PolicyError as exc:
        raise ConfigError(f"{path}: {where}: {exc}") from None


def _check_method(path: Path, label: str, method: str, solver, warm_start, options, treewidths) -> None:
    """The solver, warm start and options of one [[methods]] entry, checked by the
    registry (the checks ``twbn learn`` makes) at each of its bounds, before anything is
    scored."""
    from twbn.solvers.registry import MethodUnavailable, check_request

    if options is not None and not isinstance(options, dict):
        raise ConfigError(f"{path}: method {label!r}: options must be a table, e.g. options = {{ cluster_k = 2 }}")
    if warm_start is not None and not isinstance(warm_start, str):
        raise ConfigError(f"{path}: method {label!r}: warm_start must be tree, a method or a result file, "
                          f"got {warm_start!r}")
    for k in treewidths:
        try:
            check_request(method, k, solver=solver, warm_start=warm_start, options=options or None)
        except (MethodUnavailable, ValueError) as exc:
            raise ConfigError(f"{path}: method {label!r}: {exc}") from None


def expand(config: Config) -> list[Cell]:
    """Every cell of the grid, in a fixed order."""
    return [Cell(d, f, k, m, s) for d in config.data for f in range(config.folds) for m, spec in config.methods.items()
            for k in (spec["treewidths"] or config.treewidths) for s in config.seeds]
