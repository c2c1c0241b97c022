"""One experiment cell, run in its own process: ``python -m twbn.experiments.cell SPEC.json OUT.json``.

SPEC names the cache, the data and fold rows for held-out evaluation, the problem and
the method. OUT receives one JSON object (written atomically): the result JSON and the
held-out log-likelihood. A crash leaves no OUT; the harness records the cell as failed.
"""

from __future__ import annotations

import json
import resource
import sys
import time

__all__ = ["run", "main"]


def run(spec: dict) -> dict:
    import twbn
    from twbn.formulations.verify import verify_result

    if spec.get("em"):
        return _run_missing(spec)
    cache = twbn.read_jkl(spec["cache"])
    t0 = time.monotonic()
    # in a sweep: the best network of the smaller bounds, a start and a floor
    best = None if not spec.get("start") else twbn.Solution(spec["start"])
    sol = twbn.learn(cache, spec["treewidth"], spec["method"], solver=spec.get("solver"),
                     time_limit=spec["time_limit"], seed=spec["seed"], warm_start=spec.get("warm_start"),
                     options=spec.get("options") or None, best_so_far=best, jobs=spec.get("jobs", 1),
                     scheduler=spec.get("scheduler"), policy=twbn.Policy.from_mapping(spec.get("policy") or {}),
                     catch_signals=False)  # a stopped cell is not kept: SIGTERM ends it at once
    result = sol.to_json()
    errors = verify_result(cache, result, spec["treewidth"])
    if errors:  # never store an uncertified network as a result
        raise RuntimeError("result failed verification: " + "; ".join(errors))
    out = {"result": result, "wall_time": round(time.monotonic() - t0, 4), "test_loglik": None, "test_rows": None}
    # held-out likelihood and inference need discrete CPTs; local-structure caches skip them
    if sol.is_network and spec.get("discrete", True) and (spec.get("test_rows") or spec.get("inference")):
        names, parents = list(sol.variables), sol.parent_indices()
        import numpy as np

        from twbn.scoring.data import read_csv
        from twbn.scoring.likelihood import held_out_log_likelihood

        ds = read_csv(spec["data"], missing=spec.get("read_missing", "em"))
        train = ds.subset_rows(np.asarray(spec["train_rows"], dtype=np.int64))
        if spec.get("test_rows"):
            test = ds.subset_rows(np.asarray(spec["test_rows"], dtype=np.int64))
            ll, rows = held_out_log_likelihood(train, test, names, parents,
                                               ess=spec.get("ess", 1.0))
            out["test_loglik"], out["test_rows"] = ll, rows
            if spec.get("class_variable"):
                from twbn.scoring.classify import classification_scores, naive_bayes_parents

                target, ess = spec["class_variable"], spec.get("ess", 1.0)
                net = classification_scores(train, test, names, parents, target, ess)
                nb = classification_scores(train, test, names, naive_bayes_parents(names, target), target, ess)
                out["classification"] = {"class_accuracy": net["accuracy"], "class_log_loss": net["log_loss"],
                                         "nb_accuracy": nb["accuracy"], "nb_log_loss": nb["log_loss"]}
        if spec.get("inference"):
            from twbn.scoring.inference import inference_time, learned_model

            model = learned_model(train, names, parents, ess=spec.get("ess", 1.0))
            out["inference"] = inference_time(model, result["elimination_order"], seed=spec["seed"])
    return out


def _run_missing(spec: dict) -> dict:
    """A cell of a config with ``missing``: cells removed from the training rows (the fold's,
    by the config's mechanism and seed), the network learned by structural EM; held-out
    likelihood on the complete test rows (tables fitted by EM), the share of removed cells
    its most probable completion fills with their true value, and the structural Hamming
    distance to the generating network where the config names one."""
    import numpy as np

    import twbn
    from twbn.formulations.verify import verify_against_data
    from twbn.scoring.data import read_csv
    from twbn.scoring.likelihood import align, em_cpts, held_out_log_likelihood
    from twbn.scoring.missingness import remove_cells
    from twbn.scoring.posterior import cheapest_order, most_probable_missing

    ds = read_csv(spec["data"])
    train = ds.subset_rows(np.asarray(spec["train_rows"], dtype=np.int64))
    m = spec.get("missing")  # cells removed on purpose (their truth known), or the data's own holes
    gappy = remove_cells(train, m["fraction"], m["mechanism"], m["seed"]) if m else train
    t0 = time.monotonic()
    sol = twbn.learn(gappy, spec["treewidth"], spec["method"], solver=spec.get("solver"), score=spec.get("score", "bic"),
                     time_limit=spec["time_limit"], seed=spec["seed"], options=spec.get("options") or None,
                     policy=twbn.Policy.from_mapping(spec.get("policy") or {}), catch_signals=False)
    result = sol.to_json()
    errors = verify_against_data(gappy, result, spec["treewidth"])
    if errors:
        raise RuntimeError("result failed verification: " + "; ".join(errors))
    out = {"result": result, "wall_time": round(time.monotonic() - t0, 4), "test_loglik": None, "test_rows": None}
    names, parents = list(sol.variables), sol.parent_indices()
    ess = spec.get("ess", 1.0)
    codes, _, arities = align(gappy, gappy, names)
    cpts = em_cpts(codes, arities, parents, ess)
    if spec.get("test_rows"):
        test = ds.subset_rows(np.asarray(spec["test_rows"], dtype=np.int64))
        out["test_loglik"], out["test_rows"] = held_out_log_likelihood(gappy, test, names, parents, ess, cpts=cpts)
    order = cheapest_order(parents, arities, [names.index(v) for v in result["elimination_order"]])
    filled = most_probable_missing(codes, arities, parents, cpts, order)
    truth, _, _ = align(train, train, names)
    holes = codes < 0
    removed = holes & (truth >= 0)  # the truth of the data's own holes is unknown
    missing = {"missing_share": float(holes.mean()),
               "imputation_accuracy": float((filled[removed] == truth[removed]).mean()) if removed.any() else None}
    if spec.get("network"):
        from twbn.scoring.networks import read_bif

        net = spec["network"]
        if not net.endswith((".bif", ".bif.gz")):
            from twbn.scoring.datasets import network_path

            net = str(network_path(net))
        reference = read_bif(net)
        pos = {name: i for i, name in enumerate(names)}
        true_arcs = {(reference.names[p], reference.names[v]) for v in range(len(reference.names))
                     for p in reference.parents[v]}
        learned = {(names[p], names[v]) for v, ps in enumerate(parents) for p in ps}
        if {a for arc in true_arcs for a in arc} - set(pos):
            raise RuntimeError(f"the network {spec['network']} has variables the data lacks")
        from twbn.formulations.graphs import structural_hamming_distance

        missing["shd"] = structural_hamming_distance(learned, true_arcs)
    out["missing"] = missing
    return out


def main(argv: list[str]) -> int:
    spec_path, out_path = argv[:2]
    if len(argv) > 2:
        from twbn.solvers.control import die_with_parent

        die_with_parent(int(argv[2]))
    with open(spec_path, encoding="utf-8") as fh:
        spec = json.load(fh)
    if spec.get("memory_limit_mb"):
        # set here, before the heavy imports, rather than in a preexec_fn of the harness,
        # which is unsafe in a threaded parent (the local pool, a Dask worker)
        limit = int(spec["memory_limit_mb"]) * 1024 * 1024
        # a shell's own limit below the config's stays (raising it is refused): the lower holds
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    from twbn.scoring.jkl import atomic_write_text
    from twbn.solvers.control import return_large_frees

    return_large_frees()  # a cell is a process of its own, as a command is
    out = run(spec)
    atomic_write_text(out_path, json.dumps(out, allow_nan=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
