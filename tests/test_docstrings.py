"""Issue 32.7: every name in ``twbn.__all__`` (and Method, Budget, Problem) has a
numpy-style docstring whose Examples run."""

import doctest
import inspect

import pytest

import twbn

CONSTANTS = {"EXAMPLES"}
NAMES = [n for n in twbn.__all__ if n not in CONSTANTS]


@pytest.fixture(autouse=True)
def registry_as_shipped():
    """Examples register methods ("empty-doc", "cyclic-doc"), which the module doctests of
    tests/test_frontdoor.py may have registered in this process already: run each on the
    registry as shipped, and put it back after."""
    from twbn.solvers.registry import METHODS, is_builtin

    saved = dict(METHODS)
    for name in [n for n in METHODS if not is_builtin(n) and n.endswith("-doc")]:
        del METHODS[name]
    yield
    METHODS.clear()
    METHODS.update(saved)


@pytest.mark.parametrize("name", NAMES)
def test_every_public_name_has_sections_and_examples_that_run(name):
    obj = getattr(twbn, name)
    doc = inspect.getdoc(obj) or ""
    assert "Examples\n--------" in doc, name
    if inspect.isfunction(obj):
        for section in ("Parameters", "Returns", "Raises"):
            assert f"{section}\n{'-' * len(section)}" in doc, (name, section)
    elif inspect.isclass(obj) and not issubclass(obj, BaseException):
        assert "Parameters\n----------" in doc, name
    tests = [t for t in doctest.DocTestFinder(recurse=False).find(obj, name, globs={"twbn": twbn, **vars(
        inspect.getmodule(obj))}) if t.examples]
    assert tests, name
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for t in tests:
        runner.run(t)
    assert runner.failures == 0, name


def test_every_error_a_user_can_meet_is_exported_and_derives_from_the_base():
    errors = [getattr(twbn, n) for n in NAMES if inspect.isclass(getattr(twbn, n))
              and issubclass(getattr(twbn, n), BaseException)]
    assert len(errors) >= 12
    assert all(issubclass(e, twbn.TwbnError) for e in errors)
