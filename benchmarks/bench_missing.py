"""Learning with missing cells: structural EM against the ways users get by without it.

Data: bnlearn networks (pgmpy's copies) forward-sampled, 5,000 training rows (seed 1) and
2,000 complete test rows (seed 2). Cells of the training rows are removed:

- MCAR: each cell with probability f;
- MAR: the even-numbered columns stay complete; a cell of an odd column is removed with
  probability 1.5·2f where the column before it is in its first state, else 0.5·2f
  (capped at 0.95): whether it is missing depends on an observed cell only
  (``twbn.scoring.missingness``).

Each cell of the grid (network, mechanism, f, k) learns with ``twbn.learn`` (``auto``,
``--budget`` seconds for the whole call, scoring included, seed 1 or each of ``--seeds``,
one process each, two at a time):

- **complete**: the training rows before removal (the ceiling);
- **em**: structural EM on the rows with holes (``missing="em"``);
- **state**: missing as a state of its own (``missing="state"``);
- **rows**: complete rows only (``missing="complete-rows"``);
- **mode**: each column's most frequent observed state filled in, then learned as complete;
- **hotdeck**: each missing cell filled from the nearest rows that have it
  (``twbn.scoring.hot_deck``, EM's own start), then learned as complete;
- **em:NAME** (``--policy NAME:KEY=VALUE,...``): structural EM under a twbn.Policy variant
  (``em_start_share=0``: from the network without arcs), beside the default.

Measured: held-out log-likelihood per test row (tables fitted on the training rows each
method saw: by EM for em, complete and rows on the rows with holes where they impute);
imputation accuracy on the removed cells (em, complete and rows impute by their network's
most probable completion, ``Solution.impute``; mode and hotdeck by their fill; state
cannot); the
structural Hamming distance to the generating network (arcs added, removed or reversed,
a reversal counted once); the command's seconds.

- **pgmpy** (with ``em``): pgmpy's EM (``pgmpy.parameter_estimator.DiscreteEM``) fitting
  the tables of structural EM's network on the rows with holes, its test log-likelihood
  computed as for the others. pgmpy's EM treats a column with no observed cell as latent
  and drops every row with a missing cell elsewhere, so its tables are the complete rows'
  maximum-likelihood ones; where no row is complete it has nothing to fit (the row says
  so), and a test value a table gives probability 0 makes the log-likelihood −inf.

DEBD sets (``--data DIR --sets plants baudio jester``): the first 5,000 rows of the
training split, the first 2,000 of the test split; no generating network, no SHD.

Run: ``python -m benchmarks.bench_missing [--networks alarm insurance hepar2] [--data DIR
--sets plants ...] [--fractions 0.2] [--mechanisms mcar mar] [--cells mcar:0.1 mar:0.2 ...] [--ks 2 5 8] [--budget 60]
[--methods ...] [--policy NAME:KEY=VALUE,...] [--seeds 1 2 3] [--output missing]``; writes
``results/OUTPUT.md`` (about 55 minutes with the defaults).
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from benchmarks.common import machine, parse_variant, write_result

METHODS = ("complete", "em", "state", "rows", "mode", "hotdeck", "pgmpy")
BASELINES = ("state", "rows", "mode", "hotdeck", "pgmpy")


def gappy_frame(ds, fraction: float, mechanism: str, seed: int):
    """The sampled rows with cells removed by ``twbn.scoring.missingness.remove_cells``, as
    a DataFrame with NaN where a cell is missing."""
    import pandas as pd

    from twbn.scoring.missingness import remove_cells

    gappy = remove_cells(ds, fraction, mechanism, seed)
    return pd.DataFrame({name: np.where(codes < 0, None, np.asarray(states, dtype=object)[np.maximum(codes, 0)])
                         for name, states, codes in zip(ds.names, ds.states, gappy.data)})


def shd(learned: dict, truth: dict) -> int:
    """Structural Hamming distance between two DAGs given as {child: parents}."""
    from twbn.formulations.graphs import structural_hamming_distance

    return structural_hamming_distance([(p, c) for c, ps in learned.items() for p in ps],
                                       [(p, c) for c, ps in truth.items() for p in ps])


def _text(cells) -> np.ndarray:
    return np.array([str(int(x)) if isinstance(x, float) and float(x).is_integer() else str(x) for x in cells])


def one(task: dict) -> list[dict]:
    """One method on one cell of the grid, in a worker process: its row (and pgmpy's). The
    complete rows' network does not depend on the cells removed: learned once, it gives a
    row for each removal of ``task["also"]`` too, imputing that removal's cells."""
    import pandas as pd

    import twbn
    from benchmarks.common import load_bif
    from twbn.scoring.data import dataset_from_frame
    from twbn.scoring.hot_deck import hot_deck

    truth = None
    if not task.get("folder"):  # a bnlearn network: its arcs are the truth
        net = load_bif(task["network"])
        truth = {v: list(net.get_parents(v)) for v in net.nodes()}
    train = pd.read_pickle(task["train"])
    test = pd.read_pickle(task["test"])
    gappy = pd.read_pickle(task["gappy"])
    holes = gappy.isna().to_numpy()
    method, k, budget = task["method"], task["k"], task["budget"]
    seed = task.get("seed", 1)
    t0 = time.monotonic()
    row = {key: task[key] for key in ("network", "mechanism", "fraction", "k", "method")}
    row["seed"] = seed
    try:
        if method == "complete":
            data, fit = train, train
        elif method.startswith("em"):
            data, fit = gappy, gappy
        elif method == "state":
            data = gappy.fillna("missing").astype(str)
            fit = data
        elif method == "rows":
            data = gappy.dropna()
            fit = data
            if len(data) < 2:
                raise ValueError(f"{len(data)} complete rows")
        elif method == "mode":
            mode = {c: gappy[c].dropna().mode().iloc[0] for c in gappy.columns}
            data = gappy.fillna(mode)
            fit = data
        else:  # hotdeck
            ds = dataset_from_frame(gappy, missing="em")
            codes = hot_deck(ds.data, ds.arities, seed=seed)
            data = pd.DataFrame({n: np.asarray(st, dtype=object)[c] for n, st, c in zip(ds.names, ds.states, codes)})
            fit = data
        # started: scoring the data shares the budget, as on the command line (structural
        # EM counts its own scoring in it)
        sol = twbn.learn(data, treewidth=k, time_limit=budget, seed=seed, started=t0,
                         policy=twbn.Policy.from_mapping(task.get("policy") or {}))
        row["seconds"] = round(time.monotonic() - t0, 2)
        row["loglik"] = sol.log_likelihood(fit, test.astype(str) if method == "state" else test)
        if truth is not None:
            row["shd"] = shd(sol.parents, truth)
        if method.startswith("em") or method in ("complete", "rows"):
            filled = sol.impute(gappy, seed=seed)[list(gappy.columns)].to_numpy()
            row["imputed"] = float((_text(filled[holes]) == _text(train.to_numpy()[holes])).mean())
        elif method in ("mode", "hotdeck"):
            row["imputed"] = float((_text(data[list(gappy.columns)].to_numpy()[holes]) == _text(train.to_numpy()[holes])).mean())
        if method.startswith("em"):
            row["iterations"] = len(sol.stats["structural_em"]["iterations"])
            row["chosen"] = sol.stats["structural_em"]["chosen"]  # which network the end kept
        rows = [row]
        for other in task.get("also", []):  # the same network, another removal's cells imputed
            gap2 = pd.read_pickle(other["gappy"])
            holes2 = gap2.isna().to_numpy()
            filled = sol.impute(gap2, seed=seed)[list(gap2.columns)].to_numpy()
            rows.append({**row, "mechanism": other["mechanism"], "fraction": other["fraction"],
                         "imputed": float((_text(filled[holes2]) == _text(train.to_numpy()[holes2])).mean()),
                         "note": "its network learned once for every removal"})
    except Exception as exc:  # noqa: BLE001 - a baseline that cannot run is a blank cell, said why
        row["error"] = f"{type(exc).__name__}: {exc}"[:200]
        return [row]
    if method == "em" and task.get("pgmpy"):
        try:
            rows.append(pgmpy_row(sol, gappy, test, row))
        except Exception as exc:  # noqa: BLE001 - as above
            rows.append({**row, "method": "pgmpy", "error": f"{type(exc).__name__}: {exc}"[:200]})
    return rows


def _label(x) -> str:
    """A state as twbn names it: booleans as 0/1, whole floats as integers."""
    if isinstance(x, (bool, np.bool_)):
        return str(int(x))
    if isinstance(x, float) and x.is_integer():
        return str(int(x))
    return str(x)


def pgmpy_tables(model, names, states, parents) -> list[np.ndarray]:
    """A fitted pgmpy model's tables in twbn's layout: for variable v, rows over its
    parents' configurations (the first parent varying fastest) and columns over
    ``states[v]``; a state pgmpy never saw has probability 0."""
    out = []
    for v, ps in enumerate(parents):
        cpd = model.get_cpds(names[v])
        family = (v, *ps)
        vals = np.transpose(np.asarray(cpd.values, float), [cpd.variables.index(names[x]) for x in family])
        for ax, x in enumerate(family):  # each axis in twbn's state order, a zero slice for unseen states
            pos = {_label(s): i for i, s in enumerate(cpd.state_names[names[x]])}
            pad = np.zeros_like(np.take(vals, [0], axis=ax))
            vals = np.take(np.concatenate([vals, pad], axis=ax),
                           [pos.get(_label(s), vals.shape[ax]) for s in states[x]], axis=ax)
        # (v, p1, ..., pm) → (pm, ..., p1, v): a C-order reshape then lets p1 vary fastest
        vals = np.transpose(vals, [*range(len(family) - 1, 0, -1), 0])
        out.append(vals.reshape(-1, len(states[v])))
    return out


def pgmpy_row(sol, gappy, test, row: dict) -> dict:
    """pgmpy's EM fitting the tables of ``sol``'s network on ``gappy``; its held-out
    log-likelihood per test row on ``test``."""
    import warnings

    import pandas as pd
    from pgmpy.models import DiscreteBayesianNetwork
    from pgmpy.parameter_estimator import DiscreteEM

    from twbn.scoring.data import dataset_from_frame, state_order
    from twbn.scoring.likelihood import held_out_log_likelihood

    out = {key: row[key] for key in ("network", "mechanism", "fraction", "k") if key in row}
    out["method"] = "pgmpy"
    t0 = time.monotonic()
    complete = int(len(gappy.dropna()))
    out["note"] = f"{complete} complete rows"
    if complete == 0:
        out["error"] = "pgmpy's EM drops every row with a missing cell (outside latent columns): none left"
        return out
    names = list(gappy.columns)
    train_ds, test_ds = dataset_from_frame(gappy, missing="em"), dataset_from_frame(test)
    states = [state_order(set(train_ds.states[train_ds.names.index(c)]) | set(test_ds.states[test_ds.names.index(c)]))
              for c in names]
    model = DiscreteBayesianNetwork([(p, c) for c, ps in sol.parents.items() for p in ps])
    model.add_nodes_from(names)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = DiscreteEM(state_names={c: list(s) for c, s in zip(names, states)},
                            show_progress=False, seed=1).fit(model, gappy.astype(object)
                                                                 .map(lambda x: np.nan if pd.isna(x) else _label(x)))
    model.add_cpds(*fitted.parameters_)
    index = {c: i for i, c in enumerate(names)}
    parents = [tuple(index[p] for p in sol.parents[c]) for c in names]
    cpts = pgmpy_tables(model, names, states, parents)
    ll, rows = held_out_log_likelihood(train_ds, test_ds, names, parents, cpts=cpts)
    out["loglik"] = ll / rows
    out["seconds"] = round(time.monotonic() - t0, 2)
    return out


def report(rows: list[dict], budget: float) -> str:
    """The markdown table of every run, and each EM variant against the ceiling and the
    best baseline of its cell (means over the seeds, where several ran)."""
    seeds = sorted({r.get("seed", 1) for r in rows})
    several = len(seeds) > 1
    lines = ["# Learning with missing cells: structural EM and the ways around it", "", machine(), "",
             f"5,000 training rows (seed 1), 2,000 complete test rows (seed 2; DEBD sets: the first 5,000 and 2,000 "
             f"rows of their training and test splits), `twbn.learn` (auto, "
             f"{budget:g} s, seed{'s ' + ', '.join(map(str, seeds)) if several else ' ' + str(seeds[0])}: the "
             "learning's, the hot-deck fill's and the imputation's) per cell, two processes at a time. "
             "log-lik: held-out log-likelihood per "
             "test row; imputed: share of the removed cells filled with their true value; SHD: structural Hamming "
             "distance to the generating network. Module docstring of benchmarks/bench_missing.py for the "
             "mechanisms and methods.", "",
             "| network | mechanism | f | k | method | seed | log-lik | imputed | SHD | seconds | note |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ll = f"{r['loglik']:.4f}" if "loglik" in r else "—"
        imp = f"{100 * r['imputed']:.1f} %" if "imputed" in r else "—"
        kept = f", kept {'its own end' if r['chosen'] == 'em' else 'its ' + r['chosen']}" if r.get("chosen") else ""
        note = "; ".join(x for x in (r.get("note", ""), r.get("error", "")) if x) \
            or ((f"{r['iterations']} iterations" if "iterations" in r else "") + kept)
        lines.append(f"| {r['network']} | {r['mechanism']} | {r['fraction']:g} | {r['k']} | {r['method']} | "
                     f"{r.get('seed', 1)} | {ll} | "
                     f"{imp} | {r.get('shd', '—')} | {r.get('seconds', '—')} | {note} |")
    lines += ["", "Structural EM against the ceiling and the best baseline (held-out log-likelihood a row"
              + (f", the mean over the {len(seeds)} seeds, each method's range of them beside it" if several else "")
              + "; behind the ceiling as a share of its magnitude):", "",
              "| network | mechanism | f | k | method | complete | em | em behind complete | best baseline | "
              "em ahead of it |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    runs: dict = {}
    for r in rows:
        runs.setdefault((r["network"], r["mechanism"], r["fraction"], r["k"]), {}).setdefault(
            r["method"], []).append(r.get("loglik"))
    cells = {cell: {m: None if None in v else float(np.mean(v)) for m, v in got.items()} for cell, got in runs.items()}

    def spread(cell, m) -> str:  # the range over the seeds
        v = runs[cell].get(m) or []
        return f" ({min(v):.4f} to {max(v):.4f})" if several and None not in v and len(v) > 1 else ""

    for (net, mech, f, k), got in cells.items():
        full = got.get("complete")
        others = [(got[m], m) for m in BASELINES if got.get(m) is not None]
        best, which = max(others) if others else (None, "—")
        for m, em in got.items():
            if not m.startswith("em") or em is None or full is None:
                continue
            ahead = "—" if best is None else f"{em - best:+.4f} ({which})"
            cell = (net, mech, f, k)
            lines.append(f"| {net} | {mech} | {f:g} | {k} | {m} | {full:.4f}{spread(cell, 'complete')} | "
                         f"{em:.4f}{spread(cell, m)} | {100 * (full - em) / abs(full):.2f} % | "
                         f"{'—' if best is None else f'{best:.4f}' + spread(cell, which)} | {ahead} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    import tempfile
    from pathlib import Path

    import pandas as pd

    from benchmarks.common import sample_network
    from twbn.scoring.data import dataset_from_frame

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--networks", nargs="*", default=["alarm", "insurance", "hepar2"])
    ap.add_argument("--data", help="a folder of DEBD splits (NAME_train.csv.gz, NAME_test.csv.gz) for --sets")
    ap.add_argument("--sets", nargs="*", default=[], help="DEBD sets in --data (plants, baudio, jester, ...)")
    ap.add_argument("--fractions", nargs="+", type=float, default=[0.2])
    ap.add_argument("--mechanisms", nargs="+", default=["mcar", "mar"], choices=["mcar", "mar"])
    ap.add_argument("--cells", nargs="+", metavar="MECHANISM:FRACTION",
                    help="the removals to run, in place of every --mechanisms with every --fractions "
                         "(mcar:0.1 mcar:0.3 mar:0.2); the complete rows' network is learned once for all")
    ap.add_argument("--ks", nargs="+", type=int, default=[2, 5, 8])
    ap.add_argument("--budget", type=float, default=60.0)
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS,
                    help="pgmpy: pgmpy's EM fitting the tables of em's network (needs em)")
    ap.add_argument("--policy", action="append", type=parse_variant, default=[], metavar="NAME:KEY=VALUE,...",
                    help="structural EM also under this named twbn.Policy variant, as method em:NAME (repeatable)")
    ap.add_argument("--seeds", nargs="+", type=int, default=[1],
                    help="each cell's methods once a seed (the learning's, the fill's, the imputation's; the "
                         "removal stays that of seed 3): the report gives the mean and range")
    ap.add_argument("--output", default="missing", help="results/OUTPUT.md and .json (default: missing)")
    args = ap.parse_args()
    if args.sets and not args.data:
        ap.error("--sets needs --data, the folder that holds them")
    if "pgmpy" in args.methods and "em" not in args.methods:
        ap.error("--methods pgmpy fits the tables of em's network: add em")
    cells = [(m, f) for m in args.mechanisms for f in args.fractions]
    if args.cells:
        cells = []
        for text in args.cells:
            mech, _, f = text.partition(":")
            try:
                cells.append((mech, float(f)))
            except ValueError:
                ap.error(f"--cells {text!r}: MECHANISM:FRACTION, e.g. mcar:0.2")
            if mech not in ("mcar", "mar"):
                ap.error(f"--cells {text!r}: the mechanism is mcar or mar")
    work = Path(tempfile.mkdtemp(prefix="twbn-missing-"))
    tasks = []
    sources = [(name, None) for name in args.networks] + [(name, args.data) for name in args.sets]
    for name, folder in sources:
        if folder is None:
            train_ds, train = sample_network(name, 5000, seed=1)
            _, test = sample_network(name, 2000, seed=2)
        else:  # a DEBD set: the first 5,000 training rows, the first 2,000 test rows
            train, test = (pd.read_csv(Path(folder) / f"{name}_{part}.csv.gz", dtype=str, nrows=rows)
                           for part, rows in (("train", 5000), ("test", 2000)))
            train_ds = dataset_from_frame(train)
        train.to_pickle(work / f"{name}-train.pkl")
        test.to_pickle(work / f"{name}-test.pkl")
        removals = []
        for mech, f in cells:
            gappy = gappy_frame(train_ds, f, mech, seed=3)
            path = work / f"{name}-{mech}-{f}.pkl"
            gappy.to_pickle(path)
            removals.append({"mechanism": mech, "fraction": f, "gappy": str(path),
                             "removed": float(gappy.isna().to_numpy().mean())})
        for k in args.ks:
            for at, removal in enumerate(removals):
                runs = [(m, {}) for m in args.methods if m != "pgmpy" and (m != "complete" or at == 0)]
                for seed, (m, fields) in itertools.product(args.seeds, runs + [(f"em:{v}", p) for v, p in args.policy]):
                    task = {"network": name, **removal, "k": k, "method": m, "policy": fields, "seed": seed,
                            "pgmpy": "pgmpy" in args.methods, "budget": args.budget,
                            "train": str(work / f"{name}-train.pkl"), "test": str(work / f"{name}-test.pkl"),
                            "folder": folder}
                    if m == "complete":
                        task["also"] = removals[1:]
                    tasks.append(task)
    rows = []
    with ProcessPoolExecutor(max_workers=2) as pool:
        for got in pool.map(one, tasks):
            for row in got:
                print(json.dumps(row), flush=True)
                rows.append(row)
    (Path(__file__).parent / "results" / f"{args.output}.json").write_text(json.dumps(rows, indent=1))
    print(write_result(f"{args.output}.md", report(rows, args.budget)))


if __name__ == "__main__":
    main()
