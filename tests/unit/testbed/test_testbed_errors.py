"""Every error the testbed raises derives from one root, TestbedError (testbed/errors.py), so `python -m testbed` and
the fixtures report any component's failure the same way."""

import ast
import importlib
from pathlib import Path

import testbed
from testbed import errors

TESTBED = Path(testbed.__file__).parent


def error_classes():
    for path in sorted(TESTBED.glob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef) and node.name.endswith("Error"):
                yield path.stem, node.name


def test_every_testbed_error_derives_from_testbed_error():
    found = list(error_classes())
    assert len(found) >= 6  # the root, the registry's, the real node's, the operator's two, OpenShift config's
    for module, name in found:
        assert issubclass(getattr(importlib.import_module(f"testbed.{module}"), name), errors.TestbedError), f"testbed.{module}.{name}"
