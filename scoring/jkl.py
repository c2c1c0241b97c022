"""Reading and writing score caches in the jkl text format (GOBNILP, BLIP, pygobnilp, TWILP).

Format: the number of variables; then per variable a line ``VAR COUNT`` and COUNT lines
``SCORE SIZE PARENT1 … PARENTSIZE``.

Writing uses the one dialect every one of those tools loads: header tokens ``0 … n−1``
in order, integer parents, single spaces, no comments, no trailing spaces, scores as
``repr(float)`` (exact round trip). Names and arities go to the sidecar
``CACHE.jkl.names``: one variable per line, ``NAME`` or ``NAME<TAB>ARITY``.

Reading is lenient: index or name headers, blocks in any order, any whitespace, ``#``
comment lines anywhere; without a sidecar the names are the header tokens.
"""

from __future__ import annotations

import errno
import math
import os
import stat
import tempfile
from contextlib import contextmanager
from pathlib import Path

from twbn.scoring.cache import CacheError, ScoreCache
from twbn.scoring.errors import TwbnError

__all__ = ["JklError", "sidecar_path", "OutputError", "is_special_file", "check_output", "atomic_path",
           "atomic_write_bytes", "atomic_write_text", "format_jkl", "format_names", "write_jkl", "read_jkl"]


class JklError(TwbnError, ValueError):
    """A malformed jkl file; the message names the file and line.

    Examples
    --------
    >>> read_jkl("no-such-file.jkl")
    Traceback (most recent call last):
    ...
    twbn.scoring.jkl.JklError: no-such-file.jkl: no such file
    """


def sidecar_path(path: str | Path) -> Path:
    return Path(str(path) + ".names")


#: The largest magnitude a local score may have: log-likelihood scores of any data a
#: machine holds are far below it, and n of them still sum to a finite float.
MAX_ABS_SCORE = 1e100


class OutputError(TwbnError, ValueError):
    """An output the command must not write: an input, a folder, a device for a cache.

    Examples
    --------
    >>> from twbn.scoring.cache import ScoreCache
    >>> write_jkl(ScoreCache.from_mapping("A", [{(): -1.0}]), "/dev/null")
    Traceback (most recent call last):
    ...
    twbn.scoring.jkl.OutputError: /dev/null is a device or pipe; a score cache needs a regular file (and its .names file beside it)
    """


def is_special_file(path: str | Path) -> bool:
    """An existing file that is neither a regular file nor a folder: a device, a pipe, a
    socket (``/dev/null``, ``/dev/stdout``)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def check_output(path: str | Path, *, inputs=(), sidecar: bool = False) -> Path:
    """Refuse, before any work, an output that could not be written or must not be.

    Parameters
    ----------
    path : str or Path
        The file the command will write.
    inputs : iterable of str or Path
        Files the command reads; the output may be none of them (links followed).
    sidecar : bool
        The output has a ``.names`` sidecar (a score cache): it may not be a device
        either, and its sidecar may not be an input.

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    OutputError
        ``path`` is a folder, an input, or (with ``sidecar``) a device or pipe.
    OSError
        Its folder does not exist or nothing can be created in it.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> (d / "data.csv").write_text("A")
    1
    >>> check_output(d / "out.json", inputs=[d / "data.csv"]).name
    'out.json'
    >>> check_output(d / "data.csv", inputs=[d / "data.csv"])
    Traceback (most recent call last):
    ...
    twbn.scoring.jkl.OutputError: the output ... is also an input: choose another file
    """
    path = Path(path)
    targets = [path, sidecar_path(path)] if sidecar else [path]
    for inp in inputs:
        if inp is None:
            continue
        for t in targets:
            same = t.exists() and Path(inp).exists() and os.path.samefile(t, inp)
            if same or Path(os.path.realpath(t)) == Path(os.path.realpath(inp)):
                raise OutputError(f"the output {t} is also an input: choose another file")
    if path.is_dir():
        raise OutputError(f"the output {path} is a folder: name a file")
    if is_special_file(path):
        if sidecar:
            raise OutputError(f"the output {path} is a device or pipe; a score cache needs a regular file "
                              "(and its .names file beside it)")
        return path  # written directly (see atomic_path)
    folder = path.parent
    if not folder.is_dir():
        raise OSError(errno.ENOENT, "output folder does not exist", str(folder))
    try:  # the one sure test that a file can be made there (permissions, read-only media)
        fd, probe = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".probe", dir=folder)
    except OSError as exc:
        raise OSError(exc.errno, f"cannot write: {exc.strerror}", str(path)) from None
    os.close(fd)
    os.unlink(probe)
    return path


@contextmanager
def atomic_path(path: str | Path):
    """Yield a temporary path beside ``path`` to write; on success it is renamed onto
    ``path`` with the permissions open() would give, on failure removed: never a
    partial file. A device or pipe (``/dev/null``) is written directly instead, so that
    it stays what it is."""
    path = Path(path)
    if is_special_file(path):
        try:
            yield str(path)
        except OSError as exc:
            raise OSError(exc.errno, f"cannot write: {exc.strerror}", str(path)) from None
        return
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    except OSError as exc:  # name the file the user asked for, not the temporary one
        raise OSError(exc.errno, f"cannot write: {exc.strerror}", str(path)) from None
    os.close(fd)
    try:
        yield tmp
        # mkstemp makes the file private (0600)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise OSError(exc.errno, f"cannot write: {exc.strerror}", str(path)) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (see ``atomic_path``)."""
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        fh.write(data)


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write UTF-8 text with \\n line ends atomically (see ``atomic_path``)."""
    atomic_write_bytes(path, text.encode("utf-8"))


def format_jkl(cache: ScoreCache) -> str:
    lines = [str(cache.n_variables)]
    for v in range(cache.n_variables):
        psets, scores = cache.parent_sets[v], cache.scores[v]
        lines.append(f"{v} {len(psets)}")
        for ps, s in zip(psets, scores.tolist()):
            lines.append(" ".join([repr(float(s)), str(len(ps)), *map(str, ps)]))
    return "\n".join(lines) + "\n"


def format_names(cache: ScoreCache) -> str:
    out = []
    for v, name in enumerate(cache.names):
        if "\t" in name or "\n" in name:
            raise CacheError(f"variable name {name!r} contains a tab or newline")
        arity = cache.arities[v] if cache.arities is not None else None
        out.append(name if arity is None else f"{name}\t{arity}")
    return "\n".join(out) + "\n"


def write_jkl(cache: ScoreCache, path: str | Path, *, names: bool = True) -> None:
    """Write ``cache`` as a jkl file, the format GOBNILP and BLIP read.

    Parameters
    ----------
    cache : ScoreCache
        The scores to write.
    path : str or Path
        The file; ``path.names`` beside it holds the variable names and arities.
    names : bool
        Write the ``.names`` sidecar (default). Each file is written atomically; if the
        sidecar cannot be written, the cache file is removed too (never one without the
        other).

    Returns
    -------
    None

    Raises
    ------
    OutputError
        ``path`` is a device or pipe (a cache needs its sidecar beside it).
    OSError
        The file system refused; nothing is left half-written.

    Examples
    --------
    >>> import os, tempfile
    >>> from twbn.scoring.cache import ScoreCache
    >>> cache = ScoreCache.from_mapping("AB", [{(): -5.0, (1,): -3.0}, {(): -4.0}])
    >>> path = os.path.join(tempfile.mkdtemp(), "ab.jkl")
    >>> write_jkl(cache, path)
    >>> read_jkl(path).parent_sets == cache.parent_sets, os.path.exists(path + ".names")
    (True, True)
    """
    if is_special_file(path):
        raise OutputError(f"{path} is a device or pipe; a score cache needs a regular file "
                          "(and its .names file beside it)")
    body = format_jkl(cache)
    side = format_names(cache) if names else None  # its checks run before anything is written
    atomic_write_text(path, body)
    if side is not None:
        try:
            atomic_write_text(sidecar_path(path), side)
        except BaseException:
            Path(path).unlink(missing_ok=True)
            raise


def _read_sidecar(path: Path) -> tuple[list[str], list[int | None]]:
    names, arities = [], []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) > 2:
            raise JklError(f"{path}:{lineno}: expected NAME or NAME<TAB>ARITY")
        names.append(parts[0])
        if len(parts) == 2:
            try:
                arities.append(int(parts[1]))
            except ValueError:
                raise JklError(f"{path}:{lineno}: arity {parts[1]!r} is not an integer") from None
        else:
            arities.append(None)
    return names, arities


def _sidecar_of(path: Path, n: int) -> tuple[list[str] | None, list[int | None] | None]:
    """(names, arities) from the sidecar of ``path`` (also ``X.jkl.names`` for ``X.jkl.gz``),
    (None, None) without one; arities None where the sidecar gives none."""
    side = sidecar_path(path)
    if not side.exists() and path.name.endswith(".gz"):
        side = sidecar_path(path.with_name(path.name[:-3]))
    if not side.exists():
        return None, None
    names, arities = _read_sidecar(side)
    if len(names) != n:
        raise JklError(f"{side}: {len(names)} names for {n} variables")
    return names, (arities if any(a is not None for a in arities) else None)


def read_jkl(path: str | Path) -> ScoreCache:
    """Read a jkl cache (lenient dialects, see module doc; gzip-compressed too) and its
    sidecar if present (``X.jkl.names``, also for ``X.jkl.gz``).

    Parameters
    ----------
    path : str or Path
        A jkl file, from twbn, GOBNILP or BLIP.

    Returns
    -------
    ScoreCache
        Its parent sets best first, variable names from the sidecar (else ``0``, ``1``…).

    Raises
    ------
    JklError
        No such file, or a malformed one: the message names the line.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "two.jkl")
    >>> with open(path, "w") as fh:
    ...     _ = fh.write("2\\n0 2\\n-3.0 1 1\\n-5.0 0\\n1 1\\n-4.0 0\\n")
    >>> cache = read_jkl(path)
    >>> cache.names, cache.parent_sets[0], cache.scores[0].tolist()
    (('0', '1'), [(1,), ()], [-3.0, -5.0])
    """
    path = Path(path)
    data, raw = _read_bytes(path)
    from twbn.scoring.jkl_stream import read_index_stream

    fast = read_index_stream(data, MAX_ABS_SCORE)  # the dialect twbn writes, read as one stream
    if fast is not None:
        n, psets, scores = fast
        names, arities = _sidecar_of(path, n)
        return ScoreCache(tuple(str(v) for v in range(n)) if names is None else tuple(names), psets, scores,
                          None if arities is None else tuple(arities), {"source": str(path)})
    text = _Text(path, raw)
    n = text.count_line()
    blocks = text.blocks()
    if len(blocks) != n:
        text.fail(text.lines[0][0], f"announces {n} variables, the file has {len(blocks)}")
    text.no_repeats(blocks)
    names, arities = _sidecar_of(path, n)
    names, var_of_block, by_index = text.variables(blocks, names, n)
    families = text.families(blocks, var_of_block, names, by_index, n)
    try:
        return ScoreCache.from_mapping(names, families, arities, {"source": str(path)})
    except CacheError as exc:
        raise JklError(f"{path}: {exc}") from None


def _read_bytes(path: Path) -> tuple[bytes, str]:
    """The file's bytes (gunzipped) and their text; JklError where it cannot be read."""
    import gzip
    import zlib

    if not path.exists():
        raise JklError(f"{path}: no such file")
    try:
        data = path.read_bytes()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        return data, data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JklError(f"{path}: not a text file ({exc})") from None
    except (OSError, EOFError, zlib.error) as exc:
        raise JklError(f"{path}: cannot read ({exc})") from None


class _Text:
    """The lenient reader of a jkl's text: its meaningful lines (blank and ``#`` lines
    dropped), each error naming the line."""

    def __init__(self, path: Path, raw: str):
        self.path = path
        self.lines = [(lineno, line.split()) for lineno, line in enumerate(raw.splitlines(), 1)
                      if line.strip() and not line.strip().startswith("#")]
        if not self.lines:
            raise JklError(f"{path}: empty file")

    def fail(self, lineno: int, msg: str):
        raise JklError(f"{self.path}:{lineno}: {msg}")

    def as_int(self, tok: str, lineno: int, what: str) -> int:
        try:
            return int(tok)
        except ValueError:
            self.fail(lineno, f"{what} {tok!r} is not an integer")

    def count_line(self) -> int:
        """The number of variables, the first line."""
        lineno, toks = self.lines[0]
        if len(toks) != 1:
            self.fail(lineno, f"expected the number of variables, got {' '.join(toks)!r}")
        n = self.as_int(toks[0], lineno, "number of variables")
        if n < 1:
            self.fail(lineno, f"number of variables must be positive, got {n}")
        return n

    def blocks(self) -> list[tuple[int, str, list[tuple[int, float, list[str]]]]]:
        """Each variable's block: its header's line, its name or index, its entries
        (line, score, parent tokens)."""
        blocks, i, lines = [], 1, self.lines
        while i < len(lines):
            lineno, toks = lines[i]
            if len(toks) != 2:
                self.fail(lineno, f"expected a variable header 'VAR COUNT', got {' '.join(toks)!r}")
            count = self.as_int(toks[1], lineno, "parent-set count")
            if count < 1:
                self.fail(lineno, f"variable {toks[0]!r} has {count} parent sets; at least 1 is needed")
            entries = []
            for j in range(count):
                i += 1
                if i >= len(lines):
                    self.fail(lineno, f"variable {toks[0]!r} announces {count} parent sets, file ends after {j}")
                entries.append(self._entry(lineno, toks[0], count, j, *lines[i]))
            blocks.append((lineno, toks[0], entries))
            i += 1
        return blocks

    def no_repeats(self, blocks) -> None:
        """No variable has two blocks."""
        first_line: dict[str, int] = {}
        for lineno, h, _ in blocks:
            if h in first_line:
                self.fail(lineno, f"variable {h!r} has a second block (the first is at line {first_line[h]})")
            first_line[h] = lineno

    def _entry(self, lineno: int, var: str, count: int, j: int, eline: int, etoks: list[str]):
        """One 'SCORE SIZE PARENTS…' line of the block of ``var`` (its ``j``-th of ``count``)."""
        if len(etoks) < 2:
            self.fail(eline, f"expected 'SCORE SIZE PARENTS…', got {' '.join(etoks)!r}")
        if len(etoks) == 2 and etoks[1] != "0" and etoks[1].isdigit():
            # 'VAR COUNT' of the next block: this one's count is too large
            self.fail(lineno, f"variable {var!r} announces {count} parent sets, but line {eline} starts "
                              f"another block after {j}")
        try:
            score = float(etoks[0])
        except ValueError:
            self.fail(eline, f"score {etoks[0]!r} is not a number")
        if not math.isfinite(score) or abs(score) > MAX_ABS_SCORE:
            self.fail(eline, f"score {etoks[0]} is out of range (a local score is finite and of magnitude below "
                             f"{MAX_ABS_SCORE:g})")
        size = self.as_int(etoks[1], eline, "parent-set size")
        if size < 0 or len(etoks) != 2 + size:
            self.fail(eline, f"size {size} but {len(etoks) - 2} parents listed")
        return eline, score, etoks[2:]

    def variables(self, blocks, names, n: int):
        """(names, the variable of each block, whether headers and parents are indices):
        indices 0..n-1 as headers, else names (the sidecar's, or the headers themselves)."""
        headers = [b[1] for b in blocks]
        if all(h.lstrip("-").isdigit() for h in headers) and sorted(int(h) for h in headers) == list(range(n)):
            return (names if names is not None else [str(v) for v in range(n)]), [int(h) for h in headers], True
        names = names if names is not None else list(headers)
        pos = {name: v for v, name in enumerate(names)}
        var_of_block = []
        for lineno, h, _ in blocks:
            if h not in pos:
                self.fail(lineno, f"variable {h!r} is not among the names")
            var_of_block.append(pos[h])
        if len(set(var_of_block)) != n:
            self.fail(self.lines[0][0], "a variable appears in more than one block")
        return names, var_of_block, False

    def families(self, blocks, var_of_block, names, by_index: bool, n: int) -> list[dict]:
        """Each variable's {parent set: score}; a parent by index or by name."""
        name_pos = {name: v for v, name in enumerate(names)}

        def parent_index(tok: str, eline: int) -> int:
            if by_index or tok not in name_pos:
                p = self.as_int(tok, eline, "parent")
                if not 0 <= p < n:
                    self.fail(eline, f"parent {p} out of range 0..{n - 1}")
                return p
            return name_pos[tok]

        families: list[dict] = [dict() for _ in range(n)]
        for (_, h, entries), v in zip(blocks, var_of_block):
            fam = families[v]
            for eline, score, ptoks in entries:
                ps = tuple(sorted(parent_index(t, eline) for t in ptoks))
                if v in ps:
                    self.fail(eline, f"variable {h!r} listed as its own parent")
                if len(set(ps)) != len(ps):
                    self.fail(eline, "a parent is repeated")
                if ps in fam:
                    self.fail(eline, f"parent set {list(ps)} of {h!r} listed twice")
                fam[ps] = score
        return families
