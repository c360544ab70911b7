# Makes the repository importable as ansible_collections.kubeforge.operators for pytest, by linking the
# working tree into .build/collections (Ansible's collection loader needs that path shape).
import os
import sys

_ROOT = os.path.dirname(os.path.abspath(__file__))
_COLLECTIONS = os.path.join(_ROOT, ".build", "collections")
_LINK = os.path.join(_COLLECTIONS, "ansible_collections", "kubeforge", "operators")

if not os.path.islink(_LINK):
    os.makedirs(os.path.dirname(_LINK), exist_ok=True)
    os.symlink(_ROOT, _LINK)
if _COLLECTIONS not in sys.path:
    sys.path.insert(0, _COLLECTIONS)
_TESTS = os.path.join(_ROOT, "tests")
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

# Fixtures more than one test directory uses (tests/lib/fixtures.py); pytest accepts pytest_plugins only here.
pytest_plugins = ["lib.fixtures"]
