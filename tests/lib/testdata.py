# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Location of the test data committed under ``tests/data`` (provenance: tests/data/README.md).

The one place the unit tests, the integration tests and the benchmarks get their data paths from. ``tests/`` is on
``sys.path`` for pytest (the repository's conftest.py puts it there), so tests import this as ``testdata``.
Missing data is a failure, never a skip: the data is part of the repository.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from pathlib import Path

DATA_DIR = Path(__file__).resolve().parents[1] / "data"
OPM_TESTDATA = DATA_DIR / "opm-testdata"
COMMUNITY_OPERATORS_PROD = DATA_DIR / "community-operators-prod"


def data_path(*parts):
    """``tests/data/<parts...>`` as a Path; raises AssertionError (a test failure, never a skip) when it is missing."""
    path = DATA_DIR.joinpath(*parts)
    if not path.exists():
        raise AssertionError("test data missing: %s (committed under tests/data; see tests/data/README.md)" % path)
    return path
