"""The experiment store: one SQLite file in WAL mode.

Tables: ``runs`` (each invocation: config text, environment, start time), ``caches``
(the scoring and pruning statistics of each (data, fold)'s cache) and ``cells``
(one row per finished cell, keyed by the cell's key, so a cell can never be stored
twice). A cell's row — status, score, bound, gap, width, time, held-out log-likelihood,
exact-inference times when asked for, the result JSON and its trajectory — is written in one transaction when the cell ends,
so a kill at any moment loses at most the cells in flight. Only the harness's main
process writes.
"""

from __future__ import annotations

import json
import os
import platform
import sqlite3
import time
from importlib import metadata
from pathlib import Path

from twbn.scoring.errors import TwbnError

__all__ = ["environment", "StoreError", "Store"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    config_name TEXT NOT NULL,
    config TEXT NOT NULL,
    environment TEXT NOT NULL,
    started REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS caches (
    data TEXT NOT NULL,
    fold INTEGER NOT NULL,
    stats TEXT NOT NULL,
    PRIMARY KEY (data, fold)
);
CREATE TABLE IF NOT EXISTS cells (
    key TEXT PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    data TEXT NOT NULL,
    fold INTEGER NOT NULL,
    treewidth INTEGER,
    method TEXT NOT NULL,
    seed INTEGER NOT NULL,
    status TEXT NOT NULL,
    score REAL,
    bound REAL,
    gap REAL,
    width INTEGER,
    wall_time REAL,
    test_loglik REAL,
    test_rows INTEGER,
    error TEXT,
    result TEXT,
    trajectory TEXT,
    finished REAL NOT NULL,
    junction_tree_s REAL,
    max_clique INTEGER,
    ve_query_s REAL,
    table_entries INTEGER
);
"""
#: Columns added after the first stores were written: (name, type), added on open.
LATER_COLUMNS = (("junction_tree_s", "REAL"), ("max_clique", "INTEGER"), ("ve_query_s", "REAL"),
                 ("table_entries", "INTEGER"), ("class_accuracy", "REAL"), ("class_log_loss", "REAL"),
                 ("nb_accuracy", "REAL"), ("nb_log_loss", "REAL"), ("missing_share", "REAL"),
                 ("imputation_accuracy", "REAL"), ("shd", "INTEGER"))

PACKAGES = ("numpy", "numba", "pyomo", "highspy", "PySCIPOpt", "ortools", "networkx")


def environment() -> dict:
    env = {"python": platform.python_version(), "machine": platform.machine(), "system": platform.system()}
    for p in PACKAGES:
        try:
            env[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            env[p] = None
    return env


class StoreError(TwbnError, ValueError):
    """A store that cannot be used: not SQLite, or in use by another writer."""


class Store:
    def __init__(self, path: str | Path, *, writer: bool = False, readonly: bool = False):
        """Open (or create) the store. A ``writer`` holds an exclusive lock on the file
        (flock, which SQLite's own fcntl locks do not touch) for as long as it is open,
        so that a second ``twbn experiment`` on the same store refuses at once."""
        self.path = Path(path)
        self._lock = None
        if writer:
            import fcntl

            self._lock = open(self.path, "ab")
            try:
                fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                self._lock.close()
                raise StoreError(f"{self.path} is in use by another twbn experiment; wait for it or choose "
                                 "another --store") from None
        self.readonly = readonly
        created = not self.path.exists() or self.path.stat().st_size == 0
        try:
            if readonly:
                self.db = self._connect_readonly()
                self.db.execute("SELECT count(*) FROM cells").fetchone()
                return
            self.db = sqlite3.connect(self.path, timeout=30)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.executescript(SCHEMA)
        except sqlite3.DatabaseError as exc:
            self._abandon(created)
            if isinstance(exc, sqlite3.OperationalError) and "no such table" not in str(exc):
                raise StoreError(f"{self.path}: cannot open the store ({exc})") from None  # e.g. a full disk
            raise StoreError(f"{self.path} is not a twbn store ({exc})") from None
        have = {r[1] for r in self.db.execute("PRAGMA table_info(cells)")}
        for name, kind in LATER_COLUMNS:
            if name not in have:
                self.db.execute(f"ALTER TABLE cells ADD COLUMN {name} {kind}")
        self.db.commit()

    def _connect_readonly(self) -> sqlite3.Connection:
        """Read-only, and on media nothing can be written to (a read-only mount, an archive),
        immutable: SQLite then reads the file as it is, without the -shm file WAL mode needs."""
        uri = self.path.resolve().as_uri()
        if os.access(self.path.parent, os.W_OK):
            try:
                db = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=30)
                db.execute("SELECT count(*) FROM sqlite_master").fetchone()
                return db
            except sqlite3.OperationalError as exc:
                if "unable to open" not in str(exc):
                    raise
        return sqlite3.connect(f"{uri}?immutable=1", uri=True, timeout=30)

    def start_run(self, config_name: str, config_text: str) -> int:
        with self.db:
            cur = self.db.execute("INSERT INTO runs (config_name, config, environment, started) VALUES (?, ?, ?, ?)",
                                  (config_name, config_text, json.dumps(environment()), time.time()))
        return int(cur.lastrowid)

    def done_keys(self) -> set[str]:
        return {r[0] for r in self.db.execute("SELECT key FROM cells")}

    def record(self, run_id: int, cell, row: dict) -> None:
        """Store one finished cell atomically (a second write of the same key fails)."""
        with self.db:
            self.db.execute(
                "INSERT INTO cells (key, run_id, data, fold, treewidth, method, seed, status, score, bound, gap, width, "
                "wall_time, test_loglik, test_rows, error, result, trajectory, finished, junction_tree_s, max_clique, "
                "ve_query_s, table_entries, class_accuracy, class_log_loss, nb_accuracy, nb_log_loss, missing_share, "
                "imputation_accuracy, shd) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (cell.key, run_id, cell.data, cell.fold, cell.treewidth, cell.method, cell.seed, row["status"],
                 row.get("score"), row.get("bound"), row.get("gap"), row.get("width"), row.get("wall_time"),
                 row.get("test_loglik"), row.get("test_rows"), row.get("error"),
                 None if row.get("result") is None else json.dumps(row["result"]),
                 None if row.get("trajectory") is None else json.dumps(row["trajectory"]), time.time(),
                 row.get("junction_tree_s"), row.get("max_clique"), row.get("ve_query_s"),
                 row.get("table_entries"), row.get("class_accuracy"), row.get("class_log_loss"),
                 row.get("nb_accuracy"), row.get("nb_log_loss"), row.get("missing_share"),
                 row.get("imputation_accuracy"), row.get("shd")))

    def record_cache(self, data: str, fold: int, stats: dict) -> None:
        """The scoring and pruning statistics of one (data, fold)'s cache."""
        with self.db:
            self.db.execute("INSERT OR REPLACE INTO caches (data, fold, stats) VALUES (?, ?, ?)",
                            (data, fold, json.dumps(stats)))

    def caches(self) -> list[dict]:
        return [{"data": d, "fold": f, **json.loads(s)}
                for d, f, s in self.db.execute("SELECT data, fold, stats FROM caches ORDER BY data, fold")]

    def cells(self) -> list[dict]:
        cur = self.db.execute("SELECT * FROM cells ORDER BY data, fold, treewidth, method, seed")
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r)) for r in cur]

    def _abandon(self, created: bool) -> None:
        """After a failed open: close, and remove what this open created (no partial store)."""
        db = getattr(self, "db", None)
        if db is not None:
            db.close()
        if created and not self.readonly:
            for suffix in ("", "-wal", "-shm", "-journal"):
                Path(str(self.path) + suffix).unlink(missing_ok=True)
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def close(self) -> None:
        self.db.close()
        if self._lock is not None:
            self._lock.close()  # releases the flock
            self._lock = None
