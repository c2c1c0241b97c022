"""``twbn report STORE -o DIR``: tables and plots from an experiment store.

Writes ``cells.csv`` (every cell), ``summary.csv`` and ``report.md`` with
- per (data, treewidth, method): cells, statuses, mean score, mean W-score, mean MIP gap,
  mean held-out log-likelihood per test row, mean time (Tables 1 and II–IV of the papers);
- wins of each method over each other on the same (data, fold, treewidth, seed) with a
  two-sided sign test (Table 5 of Scanagatta et al. 2016);
and PNGs: score and held-out log-likelihood against the treewidth bound (Figs. 7–16 of
Machado et al.), and gap over time from the trajectories. When the config asked for
``inference``, a table and a plot of exact-inference time against the treewidth bound.

The W-score reference of a (data, fold, seed) is the best unbounded cell's score when the
grid has one (the unbounded optimum when that cell is optimal), else the best score any
cell of that (data, fold, seed) reached; the report says which. Every file is written to
a temporary name and renamed.
"""

from __future__ import annotations

import csv
import io
import json
import os
import statistics
from collections import defaultdict
from pathlib import Path

from twbn.scoring.inference import MAX_TABLE_ENTRIES
from twbn.experiments.stats import sign_test, w_score
from twbn.experiments.store import Store
from twbn.scoring.jkl import atomic_write_text
from twbn.scoring.errors import ParameterError

__all__ = ["classification_lines", "missing_lines", "references", "wins_table", "save_png", "candidate_lines",
           "pruning_lines", "write_report", "write_staged"]

CELL_FIELDS = ["key", "data", "fold", "treewidth", "method", "seed", "status", "score", "bound", "gap", "width",
               "wall_time", "test_loglik", "test_rows", "junction_tree_s", "max_clique", "ve_query_s", "table_entries",
               "class_accuracy", "class_log_loss", "nb_accuracy", "nb_log_loss", "missing_share",
               "imputation_accuracy", "shd", "error"]


def _by_cell(items) -> dict:
    """``(cell, value)`` pairs grouped by (data, bound, method), an unbounded cell's bound as
    10**9 so that it sorts last."""
    groups = defaultdict(list)
    for c, value in items:
        groups[c["data"], c["treewidth"] if c["treewidth"] is not None else 10**9, c["method"]].append(value)
    return groups


def missing_lines(cells: list[dict]) -> list[str]:
    """Learning with cells removed from the training rows (a config's ``missing``): per data
    set, bound and method, the held-out log-likelihood per complete test row, the share of
    removed cells filled with their true value, and the structural Hamming distance to the
    generating network where the config names one (means over folds and seeds)."""
    groups = _by_cell([(c, c) for c in cells if c.get("missing_share") is not None])
    if not groups:
        return []
    lines = ["", "## With missing cells (structural EM; the test rows complete)", "",
             "| data | k | method | cells | removed | held-out log-lik / row | imputed right | SHD |",
             "|---|---|---|---|---|---|---|---|"]
    for (d, k, m), cs in sorted(groups.items()):
        lls = [c["test_loglik"] / c["test_rows"] for c in cs if c.get("test_loglik") is not None and c["test_rows"]]
        lines.append(f"| {d} | {_k(None if k == 10**9 else k)} | {m} | {len(cs)} | "
                     f"{_fmt(_mean([c['missing_share'] for c in cs]), '.1f', pct=True)} | {_fmt(_mean(lls), '.4f')} | "
                     f"{_fmt(_mean([c.get('imputation_accuracy') for c in cs]), '.1f', pct=True)} | "
                     f"{_fmt(_mean([c.get('shd') for c in cs]), '.1f')} |")
    return lines


def classification_lines(cells: list[dict]) -> list[str]:
    """Predicting each data set's class from the other variables on the test folds: the
    learned networks by bound and method beside a Naive Bayes fitted on the same rows
    (mean and spread over folds; cells without a network are counted, not averaged)."""
    groups = defaultdict(list)
    for c in cells:
        if c.get("nb_accuracy") is not None or c.get("class_accuracy") is not None:
            groups[c["data"], c["treewidth"] if c["treewidth"] is not None else 10**9, c["method"]].append(c)
    if not groups:
        return []
    lines = ["", "## Predicting the class (test folds; mean ± standard deviation over folds)", "",
             "| data | k | method | folds | accuracy | log-loss | Naive Bayes accuracy | Naive Bayes log-loss |",
             "|---|---|---|---|---|---|---|---|"]

    def spread(xs, fmt):
        xs = [x for x in xs if x is not None]
        if not xs:
            return "—"
        sd = statistics.stdev(xs) if len(xs) > 1 else 0.0
        return f"{format(statistics.fmean(xs), fmt)} ± {format(sd, fmt)}"

    for (d, k, m), cs in sorted(groups.items()):
        lines.append(f"| {d} | {_k(None if k == 10**9 else k)} | {m} | {len(cs)} | "
                     f"{spread([c['class_accuracy'] for c in cs], '.4f')} | {spread([c['class_log_loss'] for c in cs], '.4f')} | "
                     f"{spread([c['nb_accuracy'] for c in cs], '.4f')} | {spread([c['nb_log_loss'] for c in cs], '.4f')} |")
    return lines


def _mean(xs):
    xs = [x for x in xs if x is not None]
    return statistics.fmean(xs) if xs else None


def _ms(xs):
    m = _mean(xs)
    return None if m is None else 1000 * m


def _fmt(x, spec=".2f", pct=False):
    if x is None:
        return "—"
    return f"{100 * x:{spec}}%" if pct else f"{x:{spec}}"


def _csv(rows: list[dict], fields: list[str]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=fields, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def _k(t):
    return "unbounded" if t is None else str(t)


def references(cells: list[dict]) -> dict[tuple, tuple[float, str]]:
    """(data, fold, seed) → (reference score, where it comes from)."""
    out = {}
    groups = defaultdict(list)
    for c in cells:
        if c["score"] is not None:
            groups[c["data"], c["fold"], c["seed"]].append(c)
    for key, cs in groups.items():
        unb = [c for c in cs if c["treewidth"] is None]
        if unb:
            best = max(unb, key=lambda c: c["score"])
            out[key] = (best["score"], f"unbounded {best['method']} ({best['status']})")
        else:
            best = max(cs, key=lambda c: c["score"])
            out[key] = (best["score"], "best score in the grid")
    return out


def wins_table(cells: list[dict], methods: list[str]) -> list[list[str]]:
    by = {(c["data"], c["fold"], c["treewidth"], c["seed"], c["method"]): c["score"] for c in cells}
    instances = {k[:4] for k in by}
    rows = []
    for a in methods:
        row = [a]
        for b in methods:
            if a == b:
                row.append("—")
                continue
            wins = losses = 0
            for inst in instances:
                x, y = by.get((*inst, a)), by.get((*inst, b))
                if x is None or y is None or abs(x - y) <= 1e-9 * max(1.0, abs(y)):
                    continue
                wins += x > y
                losses += x < y
            p = sign_test(wins, losses)
            mark = "**" if p < 0.05 and wins > losses else ""
            row.append(f"{mark}{wins}{mark} (p={p:.3f})")
        rows.append(row)
    return rows


def save_png(fig, path: Path) -> None:
    """Save a matplotlib figure atomically (temporary name, rename)."""
    tmp = path.with_name(path.name + ".tmp.png")
    fig.savefig(tmp, dpi=110, bbox_inches="tight")
    os.replace(tmp, path)


def _plots(cells: list[dict], methods: list[str], out: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    made = []
    datas = sorted({c["data"] for c in cells})
    for what, label, fname in (("score", "score (BIC/BDeu)", "score_by_treewidth.png"),
                               ("ll", "held-out log-likelihood per row", "loglik_by_treewidth.png")):
        fig, axes = plt.subplots(1, len(datas), figsize=(4.5 * len(datas), 3.4), squeeze=False)
        drew = False
        for ax, d in zip(axes[0], datas):
            for i, m in enumerate(methods):
                pts = defaultdict(list)
                for c in cells:
                    if c["data"] != d or c["method"] != m or c["treewidth"] is None:
                        continue
                    v = c["score"] if what == "score" else (
                        None if c["test_loglik"] is None else c["test_loglik"] / c["test_rows"])
                    if v is not None:
                        pts[c["treewidth"]].append(v)
                if pts:
                    ks = sorted(pts)
                    # methods that tie (e.g. two exact ones) stay visible: markers differ in shape and size
                    ax.plot(ks, [statistics.fmean(pts[k]) for k in ks], marker="os^Dv<>"[i % 7],
                            markersize=max(4, 10 - 2 * i), fillstyle="none" if i % 2 else "full", label=m)
                    drew = True
            ks_all = sorted({c["treewidth"] for c in cells if c["data"] == d and c["treewidth"] is not None})
            if ks_all:
                ax.set_xticks(ks_all)
                if len(ks_all) == 1:
                    ax.set_xlim(ks_all[0] - 1, ks_all[0] + 1)
            ax.set_title(d)
            ax.set_xlabel("treewidth bound k")
            ax.set_ylabel(label)
            if ax.get_lines():
                ax.legend(fontsize=7)
        if drew:
            save_png(fig, out / fname)
            made.append(fname)
        plt.close(fig)
    inf = [c for c in cells if c.get("junction_tree_s") is not None]
    if inf:
        fig, ax = plt.subplots(figsize=(6, 3.6))
        for d in datas:
            pts = defaultdict(list)
            for c in inf:
                if c["data"] == d:
                    pts[c["treewidth"] if c["treewidth"] is not None else max(
                        (x["treewidth"] or 0 for x in inf), default=0) + 1].append(c["junction_tree_s"])
            ks = sorted(pts)
            ax.plot(ks, [1000 * statistics.fmean(pts[k]) for k in ks], marker="o", label=d)
        xs = sorted({x for line in ax.get_lines() for x in line.get_xdata()})
        ax.set_xticks(xs)
        if len(xs) == 1:
            ax.set_xlim(xs[0] - 1, xs[0] + 1)
        ax.set_xlabel("treewidth bound k (rightmost: unbounded, if run)")
        ax.set_ylabel("junction tree: build + calibrate (ms)")
        ax.set_yscale("log")
        ax.legend(fontsize=7)
        save_png(fig, out / "inference_by_treewidth.png")
        made.append("inference_by_treewidth.png")
        plt.close(fig)
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    drew = False
    gaps: list[float] = []
    for c in cells:
        traj = json.loads(c["trajectory"]) if c.get("trajectory") else []
        pts = [(p["time"], 100 * max(GAP_FLOOR, (p["bound"] - p["incumbent"]) / abs(p["incumbent"])))
               for p in traj if _finite_bound(p.get("bound")) and p.get("incumbent") not in (None, 0)]
        if pts:
            gaps += [g for _, g in pts]
            ax.step([t for t, _ in pts], [g for _, g in pts], where="post", marker="o", markersize=3,
                    label=f"{c['data']} k={_k(c['treewidth'])} {c['method']} f{c['fold']} s{c['seed']}")
            drew = True
    if drew:
        from matplotlib.ticker import LogLocator

        ax.set_xlabel("seconds")
        ax.set_ylabel("gap (%), log scale")
        if min(gaps) == max(gaps):  # one value (every gap closed): a decade either side, not a 0-high axis
            ax.set_ylim(gaps[0] / 10, gaps[0] * 10)
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(LogLocator(numticks=7))
        ax.axhline(100 * GAP_FLOOR, color="grey", lw=0.6, ls=":")
        ax.set_title(f"gap over time (points at {100 * GAP_FLOOR:g}%: closed)", fontsize=9)
        ax.legend(fontsize=6, loc="upper right")
        save_png(fig, out / "gap_over_time.png")
        made.append("gap_over_time.png")
    plt.close(fig)
    return made


#: Gaps below this (a fraction) are drawn at it: a log axis has no zero.
GAP_FLOOR = 1e-6


def _finite_bound(b) -> bool:
    """A bound worth drawing: finite, and not an engine's stand-in for infinity (SCIP 1e20)."""
    import math

    return isinstance(b, (int, float)) and math.isfinite(b) and abs(b) < 1e19


def candidate_lines(cells: list[dict]) -> list[str]:
    """Candidate-solution statistics of the anytime heuristics (Tables 2, 3 and 7 of
    Scanagatta et al. 2016): networks tried, their median and best score."""
    groups = defaultdict(list)
    for c in cells:
        st = (json.loads(c["result"]) if c.get("result") else {}).get("stats") or {}
        if st.get("iterations") is not None and st.get("median_score") is not None:
            groups[c["data"], c["treewidth"] if c["treewidth"] is not None else 10**9, c["method"]].append(st)
    if not groups:
        return []
    out = ["", "## Candidate solutions of the anytime methods (Tables 2, 3, 7 layout)", "",
           "| data | k | method | cells | mean candidates | mean median score | mean best score |",
           "|---|---|---|---|---|---|---|"]
    for (d, k, m), sts in sorted(groups.items()):
        out.append(f"| {d} | {_k(None if k == 10**9 else k)} | {m} | {len(sts)} | "
                   f"{_fmt(_mean([s['iterations'] for s in sts]), ',.0f')} | "
                   f"{_fmt(_mean([s['median_score'] for s in sts]))} | {_fmt(_mean([s['max_score'] for s in sts]))} |")
    return out


def pruning_lines(caches: list[dict]) -> list[str]:
    """What scoring kept and what each rule skipped, per (data, fold) (the layout of
    Tables 2–4 of the entropy-pruning paper)."""
    if not caches:
        return []
    out = ["", "## Scoring and pruning of each cache", "",
           "| data | fold | score | n | rows | in-degree | possible | scored | kept | rule 2 | rule 3 | rule 4 | rule 5 "
           "| rule 6 | supersets of pruned | dominated removed | seconds |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for c in caches:
        pr = c.get("pruned_unscored") or {}
        out.append(f"| {c['data']} | {c['fold']} | {c.get('score', '—')} | {c.get('variables', '—')} | {c.get('rows', '—')} | "
                   f"{c.get('max_parents', '—')} | {c.get('space', 0):,} | {c.get('scored', 0):,} | {c.get('kept', 0):,} | "
                   + " | ".join(f"{pr.get(k, 0):,}" for k in ("rule2", "rule3", "rule4", "rule5", "rule6",
                                                             "superset_of_pruned"))
                   + f" | {c.get('dominated_removed', 0):,} | {_fmt(c.get('seconds'), '.2f')} |")
    return out


def write_report(store_path: str | Path, out_dir: str | Path) -> list[Path]:
    """Write the report of a store into ``out_dir``: every file or none (they are made in a
    temporary folder beside it and moved in at the end)."""
    store_path = Path(store_path)
    if not store_path.exists():
        raise FileNotFoundError(f"no store {store_path}")
    return write_staged(out_dir, lambda stage: _write_report(store_path, stage))


def write_staged(out_dir: str | Path, make) -> list[Path]:
    """``make(folder)`` writes a report's files into a temporary folder beside ``out_dir``
    and returns them; they are moved into ``out_dir`` once all are made, so a failure leaves
    no half-written report."""
    import shutil
    import tempfile

    from twbn.scoring.jkl import OutputError

    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise OutputError(f"{out} is not a folder: -o names the folder the report is written into")
    if not out.parent.exists():
        raise FileNotFoundError(f"folder {out.parent} of the report does not exist")
    try:
        stage = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    except OSError as exc:
        raise OSError(exc.errno, f"cannot write: {exc.strerror}", str(out)) from None
    try:
        made = make(stage)
        out.mkdir(exist_ok=True)
        for p in made:
            os.replace(p, out / p.name)
    except OSError as exc:
        raise OSError(exc.errno, f"cannot write: {exc.strerror}", str(out)) from None
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return [out / p.name for p in made]


def _write_report(store_path: Path, out: Path) -> list[Path]:
    store = Store(store_path, readonly=True)
    try:
        cells = store.cells()
        caches = store.caches()
    finally:
        store.close()
    if not cells:
        raise ParameterError(f"{store_path} holds no cells")
    refs = references(cells)
    # the best proved bound of each instance: every cell's bound holds for all networks of
    # its (data, fold, seed, k), so the smallest is the tightest known
    best_bound: dict[tuple, float] = {}
    for c in cells:
        key = (c["data"], c["fold"], c["seed"], c["treewidth"])
        if c["bound"] is not None:
            best_bound[key] = min(best_bound.get(key, c["bound"]), c["bound"])
    methods = sorted({c["method"] for c in cells})
    groups = defaultdict(list)
    for c in cells:
        groups[c["data"], c["treewidth"] if c["treewidth"] is not None else 10**9, c["method"]].append(c)
    summary = []
    for (d, k, m), cs in sorted(groups.items()):
        ws = [w_score(refs[c["data"], c["fold"], c["seed"]][0], c["score"]) for c in cs if c["score"] is not None]
        wb = [w_score(best_bound[key], c["score"]) for c in cs
              if c["score"] is not None and (key := (c["data"], c["fold"], c["seed"], c["treewidth"])) in best_bound
              and best_bound[key] != 0]
        lls = [c["test_loglik"] / c["test_rows"] for c in cs if c["test_loglik"] is not None and c["test_rows"]]
        status = defaultdict(int)
        for c in cs:
            status[c["status"]] += 1
        summary.append({"data": d, "treewidth": _k(None if k == 10**9 else k), "method": m, "cells": len(cs),
                        "statuses": " ".join(f"{s}:{n}" for s, n in sorted(status.items())),
                        "mean_score": _mean([c["score"] for c in cs]), "mean_w_score": _mean(ws),
                        "mean_w_vs_best_bound": _mean(wb),
                        "mean_gap": _mean([c["gap"] for c in cs]), "mean_test_loglik_per_row": _mean(lls),
                        "mean_time": _mean([c["wall_time"] for c in cs])})
    written = []
    atomic_write_text(out / "cells.csv", _csv(cells, CELL_FIELDS))
    written.append(out / "cells.csv")
    sfields = list(summary[0])
    atomic_write_text(out / "summary.csv", _csv(summary, sfields))
    written.append(out / "summary.csv")
    pngs = _plots(cells, methods, out)
    written += [out / p for p in pngs]
    lines = [f"# Report of {store_path.name}", "", f"{len(cells)} cells; methods {', '.join(methods)}.", "",
             "W-score references: " + "; ".join(sorted({f'{d} fold {f} seed {s}: {src}'
                                                         for (d, f, s), (_, src) in refs.items()})), "",
             "## By data, treewidth bound and method", "",
             "W vs best bound: (B − score)/|B| with B the smallest proved bound any cell of the same data, fold, seed "
             "and k reported (an upper estimate of the W-score against the optimum).", "",
             "| data | k | method | cells | statuses | mean score | mean W-score | mean W vs best bound | mean gap | "
             "held-out LL/row | mean time (s) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in summary:
        lines.append(f"| {r['data']} | {r['treewidth']} | {r['method']} | {r['cells']} | {r['statuses']} | "
                     f"{_fmt(r['mean_score'])} | {_fmt(r['mean_w_score'], '.3f', pct=True)} | "
                     f"{_fmt(r['mean_w_vs_best_bound'], '.3f', pct=True)} | {_fmt(r['mean_gap'], '.2f', pct=True)} | {_fmt(r['mean_test_loglik_per_row'], '.4f')} | "
                     f"{_fmt(r['mean_time'], '.1f')} |")
    lines += ["", "## Wins of the row method over the column method (sign test; bold: p < 0.05)", "",
              "| | " + " | ".join(methods) + " |", "|---|" + "---|" * len(methods)]
    lines += ["| " + " | ".join(r) + " |" for r in wins_table(cells, methods)]
    lines += candidate_lines(cells) + pruning_lines(caches)
    inf = defaultdict(list)
    for c in cells:
        if c.get("max_clique") is not None:
            inf[c["data"], c["treewidth"] if c["treewidth"] is not None else 10**9].append(c)
    if inf:
        lines += ["", "## Exact inference on the learned networks (pgmpy; junction tree from the certificate)", "",
                  f"Junction trees above {MAX_TABLE_ENTRIES:,} potential entries are not built (time —).", "",
                  "| data | k | networks | mean width | largest clique | potential entries | junction tree (ms) "
                  "| VE query (ms) |", "|---|---|---|---|---|---|---|---|"]
        for (d, k), cs in sorted(inf.items()):
            lines.append(f"| {d} | {_k(None if k == 10**9 else k)} | {len(cs)} | {_fmt(_mean([c['width'] for c in cs]), '.1f')} | "
                         f"{max(c['max_clique'] for c in cs)} | {_fmt(_mean([c['table_entries'] for c in cs]), ',.0f')} | {_fmt(_ms([c['junction_tree_s'] for c in cs]), '.1f')} | "
                         f"{_fmt(_ms([c['ve_query_s'] for c in cs]), '.2f')} |")
    lines += classification_lines(cells)
    lines += missing_lines(cells)
    if pngs:
        lines += ["", "## Figures", ""] + [f"![{p}]({p})" for p in pngs]
    atomic_write_text(out / "report.md", "\n".join(lines) + "\n")
    written.append(out / "report.md")
    return written
