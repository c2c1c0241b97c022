"""The picture of ``treewidth="auto"``'s choice: held-out likelihood and inference cost
against k, the chosen k marked (``twbn learn --treewidth auto --plot FILE``, ``twbn
report RESULT.json``)."""

from __future__ import annotations

from pathlib import Path

from twbn.scoring.errors import ParameterError

__all__ = ["plot_which_k"]


def plot_which_k(which_k: dict, path: str | Path) -> Path:
    """Draw ``stats["which_k"]`` of a result to the PNG ``path`` (written whole or not at all).

    The left axis is the held-out log-likelihood per row with its standard error; the right
    axis, on a log scale, the junction tree's table entries; the chosen k is marked, and a
    table-size budget drawn where one was given.

    Raises
    ------
    ParameterError
        ``which_k`` has no curve (a result not learned with ``treewidth="auto"``).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from twbn.experiments.report import save_png

    curve = (which_k or {}).get("curve")
    if not curve:
        raise ParameterError("this result has no curve of k: learn it with --treewidth auto")
    ks = [p["k"] for p in curve]
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    ax.errorbar(ks, [p["held_out"] for p in curve], yerr=[p["held_out_se"] for p in curve], marker="o",
                color="tab:blue", capsize=3, label="held-out log-likelihood per row")
    ax.set_xlabel("treewidth bound k")
    ax.set_ylabel("held-out log-likelihood per row", color="tab:blue")
    ax.set_xticks(ks)
    cost = ax.twinx()
    cost.plot(ks, [p["table_size"] for p in curve], marker="s", color="tab:red", label="junction tree entries")
    cost.set_yscale("log")
    cost.set_ylabel("junction tree entries", color="tab:red")
    if which_k.get("max_table_size"):
        cost.axhline(which_k["max_table_size"], color="tab:red", linestyle=":", label="max_table_size")
    ax.axvline(which_k["chosen"], color="0.4", linestyle="--")
    ax.set_title(f"chosen k = {which_k['chosen']} ({which_k.get('validation', '')})", fontsize=9)
    path = Path(path)
    save_png(fig, path)
    plt.close(fig)
    return path
