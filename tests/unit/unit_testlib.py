# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Helpers shared by the unit tests (importable because tests/unit/conftest.py's directory is on sys.path)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from testdata import data_path


def shared_conformance_data():
    """The FBC conformance data committed under ``tests/data`` (see tests/data/README.md; located by
    ``tests/testdata.py``); fails, never skips, when it is missing."""
    return data_path()
