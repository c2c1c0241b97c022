"""Which data a result was learned from: a digest of its variables, states and rows that a
result records (``stats["data"]``) and ``twbn check DATA RESULT`` compares."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from twbn.scoring.data import Dataset

__all__ = ["data_identity", "identity_differences"]


def data_identity(data: "Dataset") -> dict[str, object]:
    """What identifies the data a network was learned from: rows, missing cells, and a
    digest of the variables, their states and the rows' codes, whatever the rows' order
    (counts, hence scores, do not depend on it).

    A result records it (``stats["data"]``); ``twbn check DATA RESULT`` compares it, so
    that "valid" means this network belongs to this data, also where nothing else is
    compared (structural EM's score is over its completions, not re-scored).

    Examples
    --------
    >>> import numpy as np
    >>> from twbn.scoring.data import Dataset
    >>> ds = Dataset(("a", "b"), (("0", "1"),) * 2, np.array([[0, 1, -1], [1, 1, 0]], np.int32))
    >>> ident = data_identity(ds)
    >>> ident["rows"], ident["missing_cells"], len(ident["digest"])
    (3, 1, 16)
    >>> data_identity(ds.subset_rows(np.array([2, 0, 1])))["digest"] == ident["digest"]
    True
    """
    import hashlib

    codes = np.asarray(data.data, dtype=np.int32)
    rows = codes[:, np.lexsort(codes[::-1])] if codes.size else codes
    h = hashlib.sha256()
    h.update(repr((tuple(data.names), tuple(tuple(s) for s in data.states))).encode())
    h.update(np.ascontiguousarray(rows).tobytes())
    return {"rows": data.n_rows, "missing_cells": data.n_missing, "digest": h.hexdigest()[:16]}


def identity_differences(recorded: dict, data: "Dataset") -> list[str]:
    """How ``data`` differs from the data a result records (``data_identity``), one line
    each; empty when it is the same data (or the result records nothing to compare)."""
    if not isinstance(recorded, dict):
        return []
    now = data_identity(data)
    out = []
    if recorded.get("rows") is not None and recorded["rows"] != now["rows"]:
        out.append(f"the result was learned from {recorded['rows']:,} rows, the data has {now['rows']:,}")
    if recorded.get("missing_cells") is not None and recorded["missing_cells"] != now["missing_cells"]:
        out.append(f"the result was learned from data with {recorded['missing_cells']:,} missing cells, "
                   f"the data has {now['missing_cells']:,}")
    if not out and recorded.get("digest") not in (None, now["digest"]):
        out.append("the data's rows or states differ from those the result was learned from "
                   f"(digest {now['digest']}, the result records {recorded['digest']})")
    return out
