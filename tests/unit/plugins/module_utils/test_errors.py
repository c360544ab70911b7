"""One error root: every exception the collection's code raises derives from KubeforgeError (read from the source:
every ``raise Name(...)`` and every exception class of plugins/). A private class (``_Name``) may signal within its
module only: it must be caught there. Builtins are raised only where a protocol wants them (ALLOWED_BUILTINS)."""

import ast
import builtins
import importlib
from pathlib import Path

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import InvalidInputError, KubeforgeError

PLUGINS = Path(__file__).resolve().parents[4] / "plugins"
BUILTIN_ERRORS = {name for name, value in vars(builtins).items() if isinstance(value, type) and issubclass(value, BaseException)}
# (file, exception) -> why a builtin is raised there
ALLOWED_BUILTINS = {
    ("module_utils/fbc/golang/json.py", "TypeError"): "the default= hook of json.dumps must raise TypeError",
    # the OS's own error again, with a clearer strerror and its filename: callers and the runner handle OSError
    ("module_utils/files.py", "IsADirectoryError"): "re-raised OS error",
}


def _sources():
    return sorted(p for p in PLUGINS.rglob("*.py") if "__pycache__" not in p.parts)


def _raised_names(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None:
            target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(target, ast.Name):
                yield node.lineno, target.id


def test_no_builtin_exception_is_raised():
    found = []
    for path in _sources():
        rel = path.relative_to(PLUGINS).as_posix()
        for line, name in _raised_names(ast.parse(path.read_text(encoding="utf-8"))):
            if name in BUILTIN_ERRORS and (rel, name) not in ALLOWED_BUILTINS:
                found.append(f"{rel}:{line} raises {name}")
    assert not found, "raise an error of KubeforgeError's tree (InvalidInputError for a bad value):\n" + "\n".join(found)


def _module_name(path):
    rel = path.relative_to(PLUGINS).with_suffix("")
    return "ansible_collections.kubeforge.operators.plugins." + ".".join(rel.parts)


@pytest.mark.parametrize(
    "path", [p for p in _sources() if "module_utils" in p.parts and p.name != "__init__.py"], ids=lambda p: p.relative_to(PLUGINS).as_posix()
)
def test_every_exception_class_derives_from_the_root(path):
    module = importlib.import_module(_module_name(path))
    text = path.read_text(encoding="utf-8")
    for name, value in vars(module).items():
        if not (isinstance(value, type) and issubclass(value, BaseException) and value.__module__ == module.__name__):
            continue
        if name.startswith("_"):
            assert f"except {name}" in text or f", {name})" in text or f"({name}," in text, f"{path.name}: {name} must be caught in its module"
        else:
            assert issubclass(value, KubeforgeError), f"{path.name}: {name} does not derive from KubeforgeError"


def test_bad_values_are_value_errors_too():
    assert issubclass(InvalidInputError, KubeforgeError) and issubclass(InvalidInputError, ValueError)
    error = InvalidInputError("batch must be at least 1")
    assert str(error) == "batch must be at least 1" and error.result == {}
