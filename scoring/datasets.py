"""Where data lives: the bundled UCI sets, the user's data folder, the bnlearn networks.

- **Bundled** (in the package, ``twbn/experiments/data``): eight UCI sets, discretised,
  under CC BY 4.0 (attribution in ``data/ATTRIBUTION.md``): adult, breast, housing,
  letter, mushroom, nursery, wdbc, zoo.
- **The density-estimation benchmark** (DEBD: nltcs, msnbc, plants, baudio, jester, …;
  Lowd & Davis 2010, Van Haaren & Davis 2012). Its source states no licence, so twbn does
  not ship it: it is read from a folder the user names (``--data-dir`` or the
  environment variable ``TWBN_DATA``), laid out as ``DIR/debd/NAME_{train,valid,test}.csv.gz``,
  and ``twbn data download-debd NAME … --data-dir DIR`` fetches it from its public source.
- **bnlearn networks**: the copies pgmpy installs (``pgmpy.utils.get_example_model``).
"""

from __future__ import annotations

import gzip
import os
import urllib.error
import urllib.request
from pathlib import Path
from typing import Iterable

from twbn.scoring.errors import ParameterError, TwbnError

__all__ = ["BUNDLED", "DEBD_SETS", "DataMissing", "bundled_path", "data_dir", "dataset_path", "debd_path", "download_debd",
           "load_network", "network_path"]

#: The folder of the bundled sets.
BUNDLED_DIR = Path(__file__).resolve().parents[1] / "experiments" / "data"
#: Names of the bundled UCI sets.
BUNDLED = ("adult", "audiology", "breast", "housing", "letter", "mushroom", "nursery", "wdbc", "zoo")
#: The binary density-estimation sets the benchmarks use (training split).
DEBD_SETS = ("nltcs", "msnbc", "kdd", "plants", "baudio", "jester", "bnetflix", "accidents", "tretail",
             "pumsb_star", "dna", "kosarek", "msweb", "book", "tmovie", "cwebkb", "cr52", "c20ng", "bbc", "ad")
SPLITS = ("train", "valid", "test")
#: The public copy of the DEBD splits (one ``NAME.SPLIT.data`` per split: rows of 0/1,
#: comma-separated, no header).
DEBD_URL = "https://raw.githubusercontent.com/UCLA-StarAI/Density-Estimation-Datasets/master/datasets"
ENV = "TWBN_DATA"


class DataMissing(TwbnError, FileNotFoundError):
    """A data set that is neither bundled nor in the data folder; the message says how to get it.

    Examples
    --------
    >>> issubclass(DataMissing, TwbnError), issubclass(DataMissing, FileNotFoundError)
    (True, True)
    """


def bundled_path(name: str) -> Path:
    """The CSV.gz of a bundled UCI set (``twbn.example_path``).

    Parameters
    ----------
    name : str
        One of ``BUNDLED`` (``twbn.EXAMPLES``).

    Returns
    -------
    Path
        The file, inside the installed package.

    Raises
    ------
    DataMissing
        Not a bundled set; the message lists them.

    Examples
    --------
    >>> bundled_path("zoo").name
    'zoo.csv.gz'
    >>> bundled_path("iris")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    twbn.scoring.datasets.DataMissing: no bundled data set 'iris'; bundled: adult, ...
    """
    if name not in BUNDLED:
        raise DataMissing(f"no bundled data set {name!r}; bundled: {', '.join(BUNDLED)}")
    return BUNDLED_DIR / f"{name}.csv.gz"


def data_dir(folder: str | Path | None = None) -> Path:
    """The user's data folder: ``folder``, else ``$TWBN_DATA``; DataMissing if neither names one."""
    chosen = folder if folder is not None else os.environ.get(ENV)
    if not chosen:
        raise DataMissing(f"no data folder: pass --data-dir DIR or set {ENV}=DIR "
                          f"(get the DEBD sets with: twbn data download-debd NAME --data-dir DIR)")
    path = Path(chosen)
    if not path.is_dir():
        raise DataMissing(f"data folder {path} does not exist")
    return path


def debd_path(name: str, split: str = "train", folder: str | Path | None = None) -> Path:
    """``DIR/debd/NAME_SPLIT.csv.gz`` of the data folder, or DataMissing naming the command that fetches it."""
    if split not in SPLITS:
        raise ParameterError(f"split must be one of {', '.join(SPLITS)}, got {split!r}")
    base = data_dir(folder)
    path = base / "debd" / f"{name}_{split}.csv.gz"
    if not path.exists():
        raise DataMissing(f"{path} is missing; get it with: twbn data download-debd {name} --data-dir {base}")
    return path


def dataset_path(name: str, folder: str | Path | None = None) -> Path:
    """A bundled set by name, else the training split of a DEBD set in the data folder."""
    if name in BUNDLED:
        return bundled_path(name)
    return debd_path(name, "train", folder)


def _convert(raw: bytes, source: str) -> bytes:
    """DEBD rows (0/1, comma-separated, no header) as a CSV with the header X0 … X{n−1}."""
    lines = [ln.strip() for ln in raw.decode("ascii").splitlines() if ln.strip()]
    if not lines:
        raise ParameterError(f"{source}: no rows")
    width = lines[0].count(",") + 1
    for i, ln in enumerate(lines, 1):
        cells = ln.split(",")
        if len(cells) != width or any(c not in ("0", "1") for c in cells):
            raise ParameterError(f"{source}: line {i} is not {width} comma-separated 0/1 values")
    header = ",".join(f"X{j}" for j in range(width))
    return ("\n".join([header, *lines]) + "\n").encode("ascii")


def download_debd(names: Iterable[str], folder: str | Path, *, base_url: str = DEBD_URL,
                  log=print) -> list[Path]:
    """Fetch the train/valid/test splits of DEBD sets into ``folder/debd/`` as CSV.gz.

    Each split is written whole or not at all (temporary file, rename); files already
    there are kept. Returns the paths written or found.
    """
    from twbn.scoring.jkl import atomic_write_bytes

    out = Path(folder) / "debd"
    out.mkdir(parents=True, exist_ok=True)
    done = []
    for name in names:
        for split in SPLITS:
            target = out / f"{name}_{split}.csv.gz"
            if target.exists():
                done.append(target)
                continue
            url = f"{base_url}/{name}/{name}.{split}.data"
            try:
                with urllib.request.urlopen(url, timeout=60) as resp:
                    raw = resp.read()
            except (urllib.error.URLError, OSError) as exc:
                raise DataMissing(f"cannot fetch {url}: {getattr(exc, 'reason', exc)}") from None
            atomic_write_bytes(target, gzip.compress(_convert(raw, url), mtime=0))
            log(f"wrote {target}")
            done.append(target)
    return done


def network_path(name: str) -> Path:
    """The BIF.gz of a bnlearn network as pgmpy installs it (pgmpy: MIT; the networks from
    the bnlearn repository)."""
    from importlib import resources

    try:
        path = Path(str(resources.files("pgmpy.utils") / "example_models" / f"{name}.bif.gz"))
    except ModuleNotFoundError:
        raise DataMissing("the bnlearn networks come with pgmpy: pip install pgmpy") from None
    if not path.exists():
        raise DataMissing(f"pgmpy has no network {name!r}")
    return path


def load_network(name: str):
    """A bnlearn network (e.g. ``"alarm"``, ``"munin"``) as a pgmpy model, from pgmpy's own copies."""
    from pgmpy.utils import get_example_model

    return get_example_model(name)
