"""twbn: learning Bayesian networks of bounded treewidth by mathematical programming.

Exact inference in a Bayesian network costs time exponential in the treewidth of its
moral graph, so a network learned under a treewidth bound k stays usable for inference.
Learning under the bound is NP-hard for k ≥ 2 (Korhonen & Parviainen 2013); twbn states
it as swappable models over a cache of local scores — exact DPs, the elimination-order
MILP of Nie et al. (2014), a GOBNILP-style cluster-cut ILP, a CP-SAT k-tree model — and
the heuristics k-G, k-A*, S2 and S2+ (Scanagatta et al. 2016), and certifies every result.

The front door:

- :func:`score` — data (a pandas DataFrame or a CSV) to a pruned score cache;
- :func:`learn` — data or a cache to a certified :class:`Solution`; ``treewidth="auto"``
  (or a :class:`WhichK` with an inference budget) chooses k by held-out likelihood; its
  options are the fields of :class:`LearnRequest`, each documented and checked there;
- :class:`Solution` — parents by name, score, bound, gap; ``to_pgmpy``, ``to_networkx``,
  ``to_bif``, ``to_json``, ``check``;
- :func:`read_jkl`, :func:`write_jkl` — score caches in the jkl format GOBNILP and BLIP read;
- :func:`example_path` — the bundled UCI data sets;
- :mod:`twbn.models` — the three models as objects to extend (a row, a cut, an
  objective term in pyomo, pyscipopt or OR-tools terms) and solve under a :class:`Budget`;
- :class:`Method`, :func:`register_method` — your own method, usable everywhere a
  built-in one is (docs/extending.md);
- :class:`TwbnError` — the base of every error twbn raises (user errors are also
  ``ValueError``s; an argument it cannot take, :class:`ParameterError`); the ones a caller
  of ``score``/``learn`` can meet are exported. :class:`TwbnWarning`: data that reads,
  but likely not as meant.

Examples
--------
>>> import twbn
>>> cache = twbn.score(twbn.example_path("zoo"))
>>> sol = twbn.learn(cache, treewidth=1)
>>> sol.status, sol.width, len(sol.arcs), sol.check(cache)
('optimal', 1, 16, [])
"""

from twbn.scoring.datasets import BUNDLED as EXAMPLES
from twbn.scoring.datasets import DataMissing
from twbn.scoring.datasets import bundled_path as example_path
from twbn.formulations.problem import InfeasibleError
from twbn.learning import learn
from twbn.request import LearnRequest
from twbn.scoring_phase import score
from twbn.scoring.cache import CacheError, ScoreCache
from twbn.scoring.data import DataError, Dataset, read_csv
from twbn.scoring.errors import ParameterError, ParameterTypeError, ScoringStopped, TwbnError, TwbnWarning
from twbn.scoring.jkl import JklError, OutputError, read_jkl, write_jkl
from twbn.scoring.parent_sets import ScoringTooLarge
from twbn.solution import Solution
from twbn.which_k import WhichK
from twbn.formulations.problem import Problem
from twbn.solvers.budget import Budget
from twbn.solvers.policy import Policy, PolicyError
from twbn.solvers.method_options import OptionError
from twbn.solvers.method import Method, MethodFailed
from twbn.solvers.plugins import register_method
from twbn.solvers.models.backends import BackendUnavailable
from twbn.solvers.registry import MethodUnavailable

__all__ = [
    "score",
    "learn",
    "LearnRequest",
    "Solution",
    "WhichK",
    "Policy",
    "PolicyError",
    "ScoreCache",
    "Dataset",
    "read_csv",
    "read_jkl",
    "write_jkl",
    "example_path",
    "EXAMPLES",
    "TwbnError",
    "TwbnWarning",
    "ParameterError",
    "ParameterTypeError",
    "DataError",
    "DataMissing",
    "CacheError",
    "JklError",
    "OutputError",
    "ScoringTooLarge",
    "ScoringStopped",
    "InfeasibleError",
    "MethodUnavailable",
    "OptionError",
    "BackendUnavailable",
    "MethodFailed",
    "Method",
    "register_method",
    "Problem",
    "Budget",
]

__version__ = "0.1.0"
