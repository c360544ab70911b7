# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Helpers shared by the unit tests (importable because tests/unit/conftest.py's directory is on sys.path)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from pathlib import Path

import pytest


def shared_conformance_data():
    """The shared FBC conformance data (``<repository root>/../shared/fbc-conformance``); fails, never skips, when
    it is missing."""
    for parent in Path(__file__).resolve().parents:
        if (parent / "galaxy.yml").is_file():
            path = parent.parent / "shared" / "fbc-conformance"
            if not path.is_dir():
                pytest.fail("shared conformance data missing: %s" % path)
            return path
    pytest.fail("repository root not found")
