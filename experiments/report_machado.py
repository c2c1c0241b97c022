"""The study Machado, Mauá & Cozman asked for, reported in their layout.

``twbn report --layout machado STORE [STORE …] -o DIR`` (or ``python -m
twbn.experiments.report_machado STORE [STORE …] -o DIR``) reads the
stores of the ``machado-study-*`` configs (one per data set and ESS), or the ``cells.csv``
of an earlier report (stores come and go, the CSV is committed), and writes
``DIR/report.md``, ``DIR/cells.csv`` (every cell) and PNGs:

- per data set, held-out log-likelihood per test row and BDeu score against the
  treewidth bound (their Figs. 7–16): mean and spread over the folds, one panel per parent
  limit, one line per ESS and method, the unbounded network as a dotted reference line;
- the gap table in the layout of their Tables II–IV, our proved gap (mean over folds)
  beside their figures after two hours of CPLEX;
- the width each network reached, and exact inference on it (largest clique, potential
  entries, junction-tree time);
- predicting the class from the other variables on the test fold, against Naive Bayes.

A cell that failed or timed out is counted in its row ("3 of 5 (2 failed/timeout)"), a
fold not run yet too ("2 of 5 (3 not run yet)": the config's folds), and never
averaged in; a row with no network says so. The held-out likelihood uses the smoothing
of ``twbn evaluate`` (BDeu pseudo-counts), defined for states a training fold never saw.
"""

from __future__ import annotations

import argparse
import json
import math
import sqlite3
import statistics
from collections import defaultdict
from pathlib import Path

from twbn.scoring.inference import MAX_TABLE_ENTRIES
from twbn.scoring.jkl import atomic_write_text
from twbn.scoring.errors import ParameterError

__all__ = ["write", "load", "tables", "gap_table", "inference_lines", "plots", "main", "PAPER_GAPS"]

#: Their Tables II–IV: average remaining MILP gap after 2 h of CPLEX, in %, by treewidth
#: bound (None: unbounded), for (at most 3 parents, ESS 1), (3, ESS 0.5), (4, ESS 1).
PAPER_GAPS = {
    "mushroom": {3: (32.42, 62.98, 62.90), 4: (26.69, 49.54, 51.38), 5: (23.92, 44.06, 45.72),
                 10: (20.27, 32.57, 33.09), 20: (20.51, 33.61, 32.26), None: (20.10, 32.90, 31.88)},
    "wdbc": {3: (25.11, 21.25, 27.32), 4: (22.71, 20.25, 25.46), 5: (23.09, 19.90, 22.82),
             10: (19.90, 18.94, 20.54), 15: (18.98, 17.50, 19.06), 20: (18.48, 16.80, 19.10),
             25: (18.42, 16.58, 18.11), 30: (18.26, 16.65, 18.27), None: (18.36, 16.54, 18.09)},
    # Table IV (Audio) has columns (3 parents, ESS 1) and (4 parents, ESS 1) only
    "audiology": {3: (13.37, None, 19.35), 4: (14.44, None, 16.77), 5: (14.40, None, 20.47),
                  10: (28.40, None, 30.79), 20: (28.40, None, 30.79), 30: (25.42, None, 30.79),
                  40: (22.30, None, 30.79), 50: (17.96, None, 30.55), 60: (12.02, None, 20.15),
                  None: (20.92, None, 26.92)},
}
#: Column of PAPER_GAPS for (max parents, ESS).
PAPER_COLUMN = {(3, 1.0): 0, (3, 0.5): 1, (4, 1.0): 2}
FAILED = ("failed", "timeout")


#: The columns of ``cells.csv``: enough to write the report again from the CSV alone,
#: once the stores are gone (the stores are not committed; the CSV is).
CSV_FIELDS = ["config", "key", "data", "fold", "treewidth", "method", "seed", "status", "score", "bound", "gap",
              "width", "wall_time", "test_loglik", "test_rows", "error", "junction_tree_s", "max_clique", "ve_query_s",
              "table_entries", "class_accuracy", "class_log_loss", "nb_accuracy", "nb_log_loss", "ran",
              "bound_source", "ess", "max_parents", "folds"]
_INTS = {"fold", "treewidth", "seed", "width", "test_rows", "max_clique", "table_entries", "max_parents", "folds"}
_TEXT = {"config", "key", "data", "method", "status", "error", "ran", "bound_source"}


def _with_derived(c: dict) -> dict:
    c["ll_row"] = c["test_loglik"] / c["test_rows"] if c.get("test_loglik") is not None and c.get("test_rows") \
        else None
    return c


def _bundled_config(name: str) -> dict:
    """The bundled config of that name (for a CSV written before it had ess and max_parents)."""
    import tomllib

    path = Path(__file__).resolve().parents[1] / "configs" / f"{name}.toml"
    return tomllib.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def _load_csv(path: Path) -> list[dict]:
    """The cells of a ``cells.csv`` this module wrote, typed as the store's."""
    import csv

    cells = []
    with open(path, newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            c: dict = {}
            for field in CSV_FIELDS:
                text = row.get(field, "")
                c[field] = (text or None) if field in _TEXT else None if text in ("", None) else \
                    int(float(text)) if field in _INTS else float(text)
            if c["ess"] is None or c["max_parents"] is None or c["folds"] is None:
                raw = _bundled_config(c["config"] or "")
                c["ess"] = float(raw.get("ess", 1.0)) if c["ess"] is None else c["ess"]
                c["max_parents"] = int(raw.get("max_parents", 3)) if c["max_parents"] is None else c["max_parents"]
                c["folds"] = int(raw.get("folds", 5)) if c["folds"] is None else c["folds"]
            cells.append(_with_derived(c))
    return cells


def _load_store(path: Path) -> list[dict]:
    try:
        return _read_store(path)
    except sqlite3.Error as exc:
        raise ParameterError(f"{path}: not an experiment store ({exc})") from None


def _read_store(path: Path) -> list[dict]:
    import tomllib

    db = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True)
    db.row_factory = sqlite3.Row
    try:
        config = db.execute("SELECT config FROM runs ORDER BY id DESC LIMIT 1").fetchone()
        raw = tomllib.loads(config["config"]) if config else {}
        cells = []
        for row in db.execute("SELECT * FROM cells"):
            c = dict(row)
            result = json.loads(c["result"]) if c.get("result") else {}
            c["config"] = raw.get("name")
            c["ess"] = float(raw.get("ess", 1.0))
            c["max_parents"] = int(raw.get("max_parents", 3))
            c["folds"] = int(raw.get("folds", 5))
            c["ran"] = result.get("method")
            c["bound_source"] = (result.get("stats") or {}).get("bound_source")
            cells.append(_with_derived(c))
    finally:
        db.close()
    return cells


def load(inputs: list[Path]) -> list[dict]:
    """Every cell of ``inputs``: stores of the ``machado-study-*`` configs, or the
    ``cells.csv`` of an earlier report; each with its config's ESS and in-degree and the
    result's own method (what ``auto`` ran). A cell in several inputs (the same config
    and key) is taken from the last."""
    cells: dict[tuple, dict] = {}
    for path in inputs:
        for c in (_load_csv(path) if Path(path).suffix == ".csv" else _load_store(path)):
            cells[c["config"], c["key"]] = c
    return list(cells.values())


def _stats(xs: list[float]) -> tuple[float | None, float | None]:
    xs = [x for x in xs if x is not None]
    if not xs:
        return None, None
    return statistics.fmean(xs), (statistics.stdev(xs) if len(xs) > 1 else 0.0)


def _f(x, spec: str) -> str:
    return "—" if x is None else format(x, spec)


def _k(k) -> str:
    return "unbounded" if k is None else str(k)


def _order(k) -> float:
    return math.inf if k is None else k


def group(cells: list[dict]) -> dict:
    """(data, ESS, max parents, method, k) → its cells."""
    out = defaultdict(list)
    for c in cells:
        out[c["data"], c["ess"], c["max_parents"], c["method"], c["treewidth"]].append(c)
    return out


def _row(cs: list[dict], key: str):
    good = [c for c in cs if c["status"] not in FAILED and c[key] is not None]
    return _stats([c[key] for c in good])


def tables(cells: list[dict]) -> list[str]:
    g = group(cells)
    lines = []
    for data in sorted({c["data"] for c in cells}):
        mine = {k: v for k, v in g.items() if k[0] == data}
        lines += [f"## {data}", "",
                  "Held-out log-likelihood per test row and BDeu score, mean ± standard deviation over the folds "
                  "that returned a network; gap: the proved gap of each result (bound − score)/|score|, mean; "
                  "width: the widest network's certified width; ran: what the method ran (auto's pick).", "",
                  "| ESS | parents | method | k | folds | held-out LL/row | score | mean gap | width ≤ | ran |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for (d, ess, mp, m, k), cs in sorted(mine.items(), key=lambda kv: (-kv[0][1], kv[0][2], kv[0][3],
                                                                              _order(kv[0][4]))):
            ok = [c for c in cs if c["status"] not in FAILED and c["score"] is not None]
            ll, ll_sd = _row(cs, "ll_row")
            sc, sc_sd = _row(cs, "score")
            gap, _ = _row(cs, "gap")
            failed = len(cs) - len(ok)
            planned = max(max(c["folds"] or 0 for c in cs), len(cs))  # the config's folds
            folds = f"{len(ok)} of {planned}" + (f" ({failed} failed/timeout)" if failed else "") + \
                (f" ({planned - len(cs)} not run yet)" if len(cs) < planned else "")
            width = max((c["width"] for c in ok if c["width"] is not None), default=None)
            ran = ", ".join(sorted({c["ran"] for c in ok if c["ran"]}))
            lines.append(f"| {ess:g} | {mp} | {m} | {_k(k)} | {folds} | {_f(ll, '.4f')} ± {_f(ll_sd, '.4f')} | "
                         f"{_f(sc, ',.1f')} ± {_f(sc_sd, ',.1f')} | {_f(None if gap is None else 100 * gap, '.2f')} % | "
                         f"{_f(width, 'd')} | {ran} |")
        lines += [""] + gap_table(data, cells) + [""]
    return lines


def gap_table(data: str, cells: list[dict]) -> list[str]:
    """Tables II–IV's layout: our proved gap of the near-optimal method beside theirs."""
    paper = PAPER_GAPS.get(data)
    mine = [c for c in cells if c["data"] == data and c["method"] == "auto"]
    if not mine:
        return []
    columns = sorted({(c["max_parents"], c["ess"]) for c in mine}, key=lambda t: (t[0], -t[1]))
    head = " | ".join(f"twbn, {mp} parents, ESS {ess:g} | Machado et al." for mp, ess in columns)
    lines = [f"Proved gap by treewidth bound, twbn `auto` (mean over folds, 60 s a cell, 1 core) beside Machado et "
             f"al.'s average remaining MILP gap after 2 h of CPLEX (their Table "
             f"{ {'mushroom': 'II', 'wdbc': 'III', 'audiology': 'IV'}.get(data, '?') }):", "",
             f"| k | {head} |", "|---|" + "---|---|" * len(columns)]
    for k in sorted({c["treewidth"] for c in mine}, key=_order):
        row = [_k(k)]
        for mp, ess in columns:
            cs = [c for c in mine if c["treewidth"] == k and c["max_parents"] == mp and c["ess"] == ess]
            gap, _ = _row(cs, "gap")
            col = PAPER_COLUMN.get((mp, ess))
            theirs = None if paper is None or col is None or k not in paper else paper[k][col]
            row += [_f(None if gap is None else 100 * gap, ".2f") + " %", _f(theirs, ".2f") + (" %" if theirs else "")]
        lines.append("| " + " | ".join(row) + " |")
    return lines


def inference_lines(cells: list[dict]) -> list[str]:
    g = defaultdict(list)
    for c in cells:
        if c.get("max_clique") is not None:
            g[c["data"], c["ess"], c.get("max_parents"), c["method"], c["treewidth"]].append(c)
    if not g:
        return []
    lines = ["## Exact inference and predicting the class", "",
             "Junction tree from each network's certificate (pgmpy): largest clique and potential entries (mean); "
             "the class predicted from all other variables on the test fold (exact, from its Markov blanket), "
             "accuracy and log-loss mean ± sd over folds, beside a Naive Bayes fitted on the same rows. "
             f"Junction trees above {MAX_TABLE_ENTRIES:,} potential entries are not built: their time is the mean "
             "over the folds whose tree was built, with how many (— if none).", "",
             "| data | ESS | parents | method | k | largest clique | potential entries | junction tree (ms) | accuracy | "
             "log-loss | Naive Bayes accuracy | Naive Bayes log-loss |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for (d, ess, mp, m, k), cs in sorted(g.items(), key=lambda kv: (kv[0][0], -kv[0][1], kv[0][2] or 0, kv[0][3],
                                                                     _order(kv[0][4]))):
        mc, _ = _stats([c["max_clique"] for c in cs])
        te, _ = _stats([c["table_entries"] for c in cs])
        built = [1000 * c["junction_tree_s"] for c in cs if c["junction_tree_s"] is not None]
        jt, _ = _stats(built)
        jt_text = _f(jt, '.1f') + ("" if jt is None or len(built) == len(cs) else f" ({len(built)} of {len(cs)})")
        acc = _stats([c.get("class_accuracy") for c in cs])
        loss = _stats([c.get("class_log_loss") for c in cs])
        nba = _stats([c.get("nb_accuracy") for c in cs])
        nbl = _stats([c.get("nb_log_loss") for c in cs])
        lines.append(f"| {d} | {ess:g} | {_f(mp, 'd')} | {m} | {_k(k)} | {_f(mc, '.1f')} | {_f(te, ',.0f')} | "
                     f"{jt_text} | {_f(acc[0], '.4f')} ± {_f(acc[1], '.4f')} | "
                     f"{_f(loss[0], '.4f')} ± {_f(loss[1], '.4f')} | {_f(nba[0], '.4f')} | {_f(nbl[0], '.4f')} |")
    return lines


#: One colour per method and one line style (and marker) per ESS, the same in every panel.
_COLOURS = {"auto": "C0", "kg": "C1", "kmax": "C2"}
_STYLES = {1.0: ("-", "o"), 0.5: ("--", "s")}


def plots(cells: list[dict], out: Path) -> list[str]:
    """Per data set: held-out LL and score against k, mean with the fold spread as error
    bars; one panel per parent limit, one line per (method, ESS) (colour: method; line
    style: ESS), the points of a k drawn a little apart so their bars do not hide each
    other; ``auto``'s unbounded network's mean as a dotted reference line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from twbn.experiments.report import save_png

    written = []
    g = group(cells)
    for data in sorted({c["data"] for c in cells}):
        for key, label, fname in (("ll_row", "held-out log-likelihood per test row", "loglik"),
                                  ("score", "BDeu score of the training folds", "score")):
            series: dict = defaultdict(dict)
            refs = {}
            for (d, ess, mp, m, k), cs in g.items():
                if d != data:
                    continue
                mean, sd = _row(cs, key)
                if mean is None:
                    continue
                if k is None:
                    refs[mp, m, ess] = mean
                else:
                    series[mp, m, ess][k] = (mean, sd)
            limits = sorted({mp for mp, _, _ in series})
            if not limits:
                continue
            fig, axes = plt.subplots(1, len(limits), figsize=(5.2 * len(limits), 4.4), sharey=True, squeeze=False,
                                     layout="constrained")
            handles = {}
            for ax, mp in zip(axes[0], limits):
                mine = sorted((m, -ess) for p_, m, ess in series if p_ == mp)
                for i, (m, neg_ess) in enumerate(mine):
                    ess = -neg_ess
                    pts = series[mp, m, ess]
                    ks = sorted(pts)
                    dodge = 0.18 * (i - (len(mine) - 1) / 2)
                    style, marker = _STYLES.get(ess, (":", "^"))
                    name = f"{m}, ESS {ess:g}"
                    line = ax.errorbar([k + dodge for k in ks], [pts[k][0] for k in ks],
                                       yerr=[pts[k][1] or 0.0 for k in ks], color=_COLOURS.get(m), linestyle=style,
                                       marker=marker, markersize=4, capsize=2, elinewidth=0.8, label=name)
                    handles.setdefault(name, line)
                    if (mp, m, ess) in refs:
                        ref = f"{m} unbounded, ESS {ess:g}"
                        handles.setdefault(ref, ax.axhline(refs[mp, m, ess], color=_COLOURS.get(m), linestyle=":",
                                                           linewidth=1.2 if ess == 1.0 else 0.8, label=ref))
                ax.set_title(f"at most {mp} parents", fontsize=10)
                ax.set_xlabel("treewidth bound k")
                ax.grid(alpha=0.3)
            axes[0][0].set_ylabel(label)
            fig.suptitle(f"{data}: {label} against the treewidth bound (mean ± sd over folds)", fontsize=11)
            fig.legend(list(handles.values()), list(handles), loc="outside lower center", fontsize=8,
                       ncol=min(4, len(handles)))
            name = f"{data}_{fname}_by_treewidth.png"
            save_png(fig, out / name)
            plt.close(fig)
            written.append(name)
    return written


def write(stores: list[Path], out: Path) -> list[Path]:
    """The study's report.md, cells.csv and figures from ``stores`` (or cells.csv files)
    into ``out``. Raises FileNotFoundError for a store that is not there, ValueError if
    they hold no cells."""
    for path in stores:
        if not Path(path).exists():
            raise FileNotFoundError(f"no store {path}")
    cells = load(stores)
    if not cells:
        raise ParameterError("the stores hold no cells")
    out.mkdir(parents=True, exist_ok=True)
    pngs = plots(cells, out)
    counts = defaultdict(int)
    for c in cells:
        counts[c["status"]] += 1
    lines = ["# Bounded treewidth and generalisation, with proved gaps (Machado et al.'s study)", "",
             f"{len(cells)} cells from {', '.join(Path(s).name for s in stores)}; statuses: "
             + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) + ". A cell that failed or timed out "
             "is counted in its row and never averaged in. Held-out log-likelihood and class log-loss use the "
             "smoothing of `twbn evaluate`: a pseudo-count ess/(q·r) in every cell of a variable's table (the "
             "cell's ESS), so a state or parent configuration a training fold never saw, or a variable constant "
             "in it, still has a defined probability.", ""]
    lines += tables(cells) + inference_lines(cells)
    if pngs:
        lines += ["", "## Figures", ""] + [f"![{p}]({p})" for p in pngs]
    atomic_write_text(out / "report.md", "\n".join(lines) + "\n")
    atomic_write_text(out / "cells.csv", _csv(cells))
    return [out / "report.md", out / "cells.csv", *(out / p for p in pngs)]


def _csv(cells: list[dict]) -> str:
    import csv
    import io

    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_FIELDS, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for c in sorted(cells, key=lambda c: (c["config"] or "", c["key"])):
        w.writerow({f: "" if c.get(f) is None else c[f] for f in CSV_FIELDS})
    return buf.getvalue()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("stores", nargs="+", type=Path, help="stores (.sqlite), or an earlier report's cells.csv")
    p.add_argument("-o", "--output", type=Path, required=True)
    args = p.parse_args(argv)
    try:
        written = write(args.stores, args.output)
    except (OSError, ValueError) as exc:
        raise SystemExit(f"twbn: error: {exc}") from None
    for path in written:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
